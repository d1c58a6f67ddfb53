"""Which backend delivers notifications here, chosen only where it can really deliver (a real
round trip to the server), and the line ``pi-notifier doctor`` prints about it."""

from __future__ import annotations

import shutil
import sys
from collections.abc import Callable, Sequence

from notifier.config import Config
from notifier.core.text import clean
from notifier.sinks.notify.backend import Backend, BackendError, NullBackend, is_wsl
from notifier.sinks.notify.dbus import DBusBackend
from notifier.sinks.notify.fallback import PlyerBackend, PowerShellBackend
from notifier.sinks.notify.name_owner import NOTIFICATIONS, server_owner
from notifier.sinks.notify.servers import summary

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
# what it has instead (no tray icon either: see App._instead in app/runtime.py).
TRAY_ALONE = "the tray icon alone will show questions"


def choose_backend(
    preference: str,
    *,
    on_action: Callable[[int, str], None] | None = None,
    on_reply: Callable[[int, str], None] | None = None,
    on_server: Callable[[str], None] | None = None,
    expire: str | int = "never",
    sound: str = "default",
    instead: str = TRAY_ALONE,
) -> tuple[Backend, str]:
    """The backend to use and one line saying why. A backend is chosen only where it can really
    deliver: for D-Bus a server must answer ``GetServerInformation`` and ``GetCapabilities``;
    plyer/notify-send go through the same server on Linux, so for them something must own its
    name (asked of the bus: the server itself is not called, so a server that answers jeepney
    oddly does not keep plyer from it). With ``on_server`` (the running app), a bus without a
    working server gives back the D-Bus backend offline, so it reports the server when one
    appears."""
    reasons: list[str] = []
    order: Sequence[str]
    if preference != "auto":
        order = [preference]
    elif is_wsl():
        order = ["powershell", "plyer"]
    elif sys.platform.startswith("linux"):  # (jeepney, for D-Bus, is a dependency there only)
        order = ["dbus", "plyer"]
    else:
        order = ["plyer"]
    waiting: DBusBackend | None = None
    found = ""  # what the D-Bus attempt found (DBusBackend.found)
    server_there = False  # a server owns the name (whatever could not use it)
    for name in order:
        try:
            if name == "none":
                return NullBackend(), "notifications are off"
            if name == "dbus":
                backend = DBusBackend(
                    on_action=on_action, on_reply=on_reply, on_server=on_server, expire=expire, sound=sound
                )
                if backend.connect():
                    return backend, backend.describe()
                reasons.append(backend.problem)
                found = backend.found
                if on_server is not None:
                    waiting = backend
                else:
                    backend.shutdown()
            if name == "plyer":
                plyer, how = _plyer(expire, found)
                if waiting is not None:
                    waiting.shutdown()
                    waiting = None
                said = f" (D-Bus: {reasons[-1]})" if reasons else ""
                return plyer, f"plyer{how} (no ids: notifications cannot be withdrawn){said}"
            if name == "powershell":
                return PowerShellBackend(), "Windows toasts through powershell.exe (WSL)"
        except (BackendError, ImportError) as exc:
            reasons.append(clean(exc, 160))
            server_there = server_there or isinstance(exc, _NoPlyerPath)
    reason = "; ".join(dict.fromkeys(r for r in reasons if r))
    if found == "odd":  # a server is there: installing one is no advice
        why = f"{reason} — {instead}; {ODD_SERVER_HINT}"
    elif server_there:
        why = f"{reason} — {instead}; {NO_PLYER_PATH_HINT}"
    elif sys.platform.startswith("linux") and not is_wsl():
        hint = NO_BUS_HINT if "no session bus" in reason else NO_SERVER_HINT
        why = f"no notification server: {reason} — {instead}; {hint}"
    else:
        why = f"no way to show notifications: {reason} — {instead}"
    return (waiting or NullBackend()), why


class _NoPlyerPath(BackendError):
    """A server is there, but plyer has no way to reach it."""


def _plyer(expire: str | int, found: str) -> tuple[PlyerBackend, str]:
    """plyer, where it can deliver; and how it does (" through notify-send to mako, pid 812")."""
    if not sys.platform.startswith("linux") or is_wsl():
        return PlyerBackend(expire), ""
    if found in ("none", "bus"):  # (asked already, through D-Bus)
        raise BackendError("plyer and notify-send show nothing without one either")
    owned, who = server_owner()
    if not owned:
        raise BackendError(who)
    try:
        import dbus  # noqa: F401  (plyer's D-Bus path, tried first)

        through = "dbus-python"
    except ImportError:
        if not shutil.which("notify-send"):
            who = f" ({who})" if who else ""
            raise _NoPlyerPath(
                f"a server owns {NOTIFICATIONS}{who}, but plyer has neither dbus-python nor notify-send here"
            ) from None
        through = "notify-send"
    server = f"the server that owns {NOTIFICATIONS}" + (f" ({who})" if who else "")
    return PlyerBackend(expire), f" through {through} to {server}"


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
    name, vendor, version = (list(backend.server) + ["", "", ""])[:3]
    about = "; ".join(x for x in (vendor, f"process {backend.process}" if backend.process else "") if x)
    caps = ", ".join(backend.capabilities) or "none"
    return (
        f"{name or 'a server with no name'} {version}".rstrip()
        + (f" ({about})" if about else "")
        + f" answered GetServerInformation and GetCapabilities: {caps}"
        + f" — there: {summary(backend.shows)}"
    )
