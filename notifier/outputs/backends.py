"""Which backend delivers desktop notifications here, chosen only where it can really deliver (a
real round trip to the server), and the line ``pi-notifier doctor`` prints about it. Linux talks
to ``org.freedesktop.Notifications`` directly (:mod:`notifier.outputs.dbus`: ids, replace, close,
actions, urgency); without a session bus or server it falls back to plyer, then to nothing (the
tray alone); macOS and Windows use plyer (through notify-send or dbus-python on Linux); WSL shows a
Windows toast through powershell.exe. Neither plyer nor a toast can be withdrawn."""

from __future__ import annotations

import base64
import os
import platform
import shutil
import sys
from collections.abc import Callable, Sequence

from notifier import APP_NAME
from notifier.config import Config
from notifier.core.text import clean
from notifier.outputs.dbus import NOTIFICATIONS, Backend, BackendError, DBusBackend, server_available
from notifier.outputs.render import Message, expire_ms, offer_line
from notifier.resources import app_icon
from notifier.system import processes

TOAST_TIMEOUT_S = 20.0  # how long showing one toast through powershell.exe may take


def is_wsl() -> bool:
    return sys.platform.startswith("linux") and "microsoft" in platform.release().lower()


class PlyerBackend(Backend):
    name = "plyer"
    online = True

    def __init__(self, expire: str | int = "never") -> None:
        from plyer import notification  # (here: optional, the last-resort backend)

        self._notify = notification.notify
        # on Linux plyer's own D-Bus path takes seconds, 0 = until closed; elsewhere it is a toast's life
        self._timeout = expire_ms(expire) // 1000 if sys.platform.startswith("linux") else 10

    def show(self, message: Message, replaces: int) -> int:
        try:
            timeout = self._timeout if message.sticky else 10
            self._notify(title=message.title, message=message.body, app_name=APP_NAME, app_icon=app_icon(),
                         timeout=timeout)
        except Exception as exc:
            raise BackendError(clean(exc, 160)) from exc
        return 0


_TOAST_PS = r"""
$ErrorActionPreference = 'Stop'
function D($s) { [System.Text.Encoding]::UTF8.GetString([System.Convert]::FromBase64String($s)) }
$title = [System.Security.SecurityElement]::Escape((D '{title}'))
$body = [System.Security.SecurityElement]::Escape((D '{body}'))
[Windows.UI.Notifications.ToastNotificationManager, Windows.UI.Notifications, ContentType = WindowsRuntime] > $null
[Windows.Data.Xml.Dom.XmlDocument, Windows.Data.Xml.Dom.XmlDocument, ContentType = WindowsRuntime] > $null
$xml = New-Object Windows.Data.Xml.Dom.XmlDocument
$text = "<text>$title</text><text>$body</text>"
$xml.LoadXml("<toast><visual><binding template='ToastGeneric'>$text</binding></visual></toast>")
$app = '{1AC14E77-02E7-4E5D-B744-2EB1AE5198B7}\WindowsPowerShell\v1.0\powershell.exe'
[Windows.UI.Notifications.ToastNotificationManager]::CreateToastNotifier($app).Show([Windows.UI.Notifications.ToastNotification]::new($xml))
"""


def _b64(text: str) -> str:
    return base64.b64encode(text.encode("utf-8")).decode("ascii")


class PowerShellBackend(Backend):
    """WSL: notify-send goes nowhere there, so show a Windows toast. Strings travel base64-encoded
    and are XML-escaped on the Windows side: nothing from the model is ever parsed as script."""

    name = "powershell"
    online = True

    def __init__(self) -> None:
        self.exe = shutil.which("powershell.exe") or "/mnt/c/Windows/System32/WindowsPowerShell/v1.0/powershell.exe"
        if not os.path.exists(self.exe):
            raise BackendError("powershell.exe not found")

    def show(self, message: Message, replaces: int) -> int:
        script = _TOAST_PS.replace("{title}", _b64(message.title)).replace("{body}", _b64(message.body))
        try:
            argv = [self.exe, "-NoProfile", "-NonInteractive", "-Command", script]
            done = processes.run_or_raise(argv, TOAST_TIMEOUT_S)
        except processes.CannotRun as exc:
            raise BackendError(f"powershell.exe: {exc}") from exc
        if done.returncode != 0:
            raise BackendError(f"powershell.exe exited with {done.returncode}: {clean(done.stderr, 160)}")
        return 0


# ---- the choice ----

NO_SERVER_HINT = (
    "install and start a notification server (dunst, mako, xfce4-notifyd or notification-daemon) or run "
    "a desktop that has one; pi-notifier picks it up as soon as it appears"
)
NO_BUS_HINT = (
    "start pi-notifier inside your desktop session (where DBUS_SESSION_BUS_ADDRESS is set), which runs "
    "a notification server (or install one: dunst, mako, xfce4-notifyd or notification-daemon)"
)

ODD_SERVER_HINT = (
    "restart that server (or see its log), or set notifications.backend = \"plyer\" in the config, which "
    "sends through notify-send or dbus-python"
)

NO_PLYER_PATH_HINT = (
    "install notify-send (Debian/Ubuntu: libnotify-bin), or set notifications.backend = \"auto\" to talk "
    "to the server over D-Bus directly"
)


# What still shows questions when notifications cannot (said with the reason): the app says
# what it has instead (no tray icon either: see App._instead in app.py).
TRAY_ALONE = "the tray icon alone will show questions"


def choose_backend(
    preference: str,
    dbus: Callable[[], DBusBackend] = DBusBackend,
    *,
    expire: str | int = "never",
    instead: str = TRAY_ALONE,
) -> tuple[Backend, str]:
    """The backend to use and one line saying why. A backend is chosen only where it can really
    deliver: for D-Bus a server must answer ``GetServerInformation`` and ``GetCapabilities``;
    plyer/notify-send go through the same server on Linux, so for them something must own its
    name (asked of the bus: the server itself is not called, so a server that answers jeepney
    oddly does not keep plyer from it). ``dbus`` makes the D-Bus backend; one with ``on_server``
    (the running app's) is given back offline on a bus without a working server, so it reports
    the server when one appears."""
    reasons: list[str] = []
    waiting: DBusBackend | None = None
    found = ""  # what the D-Bus attempt found (DBusBackend.found)
    server_there = False  # a server owns the name (whatever could not use it)
    for name in _order(preference):
        try:
            if name == "none":
                return Backend(), "notifications are off"
            if name == "dbus":
                backend = dbus()
                if backend.connect():
                    return backend, backend.describe()
                reasons.append(backend.problem)
                found = backend.found
                if backend.on_server is not None:
                    waiting = backend
                else:
                    backend.shutdown()
            if name == "plyer":
                plyer, how = _plyer(expire, found)
                if waiting is not None:
                    waiting.shutdown()
                said = f" (D-Bus: {reasons[-1]})" if reasons else ""
                return plyer, f"plyer{how} (no ids: notifications cannot be withdrawn){said}"
            if name == "powershell":
                return PowerShellBackend(), "Windows toasts through powershell.exe (WSL)"
        except (BackendError, ImportError) as exc:
            reasons.append(clean(exc, 160))
            server_there = server_there or isinstance(exc, _NoPlyerPath)
    return (waiting or Backend()), _none_because(reasons, found, server_there, instead)


def _order(preference: str) -> Sequence[str]:
    """The backends to try, in order, for ``notifications.backend``."""
    if preference != "auto":
        return [preference]
    if is_wsl():
        return ["powershell", "plyer"]
    if sys.platform.startswith("linux"):  # (jeepney, for D-Bus, is a dependency there only)
        return ["dbus", "plyer"]
    return ["plyer"]


def _none_because(reasons: list[str], found: str, server_there: bool, instead: str) -> str:
    """Why no backend can show anything, and what to do."""
    reason = "; ".join(dict.fromkeys(r for r in reasons if r))
    if found == "odd":  # a server is there: installing one is no advice
        return f"{reason} — {instead}; {ODD_SERVER_HINT}"
    if server_there:
        return f"{reason} — {instead}; {NO_PLYER_PATH_HINT}"
    if sys.platform.startswith("linux") and not is_wsl():
        hint = NO_BUS_HINT if "no session bus" in reason else NO_SERVER_HINT
        return f"no notification server: {reason} — {instead}; {hint}"
    return f"no way to show notifications: {reason} — {instead}"


class _NoPlyerPath(BackendError):
    """A server is there, but plyer has no way to reach it."""


def _plyer(expire: str | int, found: str) -> tuple[PlyerBackend, str]:
    """plyer, where it can deliver; and how it does (" through notify-send to mako, pid 812")."""
    if not sys.platform.startswith("linux") or is_wsl():
        return PlyerBackend(expire), ""
    if found in ("none", "bus"):  # (asked already, through D-Bus)
        raise BackendError("plyer and notify-send show nothing without one either")
    available, who = server_available()
    if not available:
        raise BackendError(who)
    name = NOTIFICATIONS + (f" ({who})" if who else "")
    try:
        import dbus  # noqa: F401  (plyer's D-Bus path, tried first)

        through = "dbus-python"
    except ImportError:
        if not shutil.which("notify-send"):
            why = f"a server owns {name}, but plyer has neither dbus-python nor notify-send here"
            raise _NoPlyerPath(why) from None
        through = "notify-send"
    return PlyerBackend(expire), f" through {through} to the server that owns {name}"


def doctor_line(config: Config) -> str:
    """One line for ``pi-notifier doctor``, from the same choice the app makes: OK only for what
    was really tried, and it says what that was (the server's answers for D-Bus; for plyer, which
    would put a notification on screen, that the bus says a server owns the name)."""
    preference = config["notifications.backend"]
    if preference == "none":
        return '[note] notifications: off (notifications.backend = "none"); the tray icon shows questions'
    backend, why = choose_backend(preference, expire=config["notifications.expire"])
    try:
        if not backend.online:
            return f"[FAIL] notifications: {why}"
        if isinstance(backend, DBusBackend):
            why = tested(backend)
        elif isinstance(backend, PlyerBackend) and sys.platform.startswith("linux") and not is_wsl():
            why += ", so the bus says (plyer itself was not tried: that would show a notification)"
    finally:
        backend.shutdown()
    expire = config["notifications.expire"]
    stay = "stay until answered" if expire == "never" else f"close after {expire} s (notifications.expire)"
    head = why if why.startswith(backend.name) else f"{backend.name} — {why}"
    return f"[ok  ] notifications: {head}; questions {stay}"


def tested(backend: DBusBackend) -> str:
    """What a D-Bus server that answered said about itself: "dunst 1.9.0 (knopwob; process dunst,
    pid 4) answered GetServerInformation and GetCapabilities: actions, body"."""
    server = backend.description
    about = "; ".join(x for x in (server.vendor, f"process {backend.process}" if backend.process else "") if x)
    caps = ", ".join(backend.capabilities) or "none"
    return (
        f"{server.name or 'a server with no name'} {server.version}".rstrip()
        + (f" ({about})" if about else "")
        + f" answered GetServerInformation and GetCapabilities: {caps}"
        + f" — there: {offer_line(server)}"
    )
