"""Which backend delivers notifications here, chosen only where it can really deliver (a real
round trip to the server), and the line ``pi-notifier doctor`` prints about it."""

from __future__ import annotations

import shutil
import sys
from collections.abc import Callable, Sequence

from notifier.core.text import clean
from notifier.sinks.notify.backend import Backend, BackendError, NullBackend, is_wsl
from notifier.sinks.notify.dbus import DBusBackend, server_answers
from notifier.sinks.notify.fallback import PlyerBackend, PowerShellBackend
from notifier.system.config import Config

NO_SERVER_HINT = (
    "install and start a notification server (dunst, mako, xfce4-notifyd or notification-daemon) or run "
    "a desktop that has one; pi-notifier picks it up as soon as it appears"
)
NO_BUS_HINT = (
    "start pi-notifier inside your desktop session (where DBUS_SESSION_BUS_ADDRESS is set), which runs "
    "a notification server (or install one: dunst, mako, xfce4-notifyd or notification-daemon)"
)


# What still shows questions when notifications cannot (said with the reason): the app says
# what it has instead (no tray icon either: see app/alerts.py).
TRAY_ALONE = "the tray icon alone will show questions"


def choose_backend(
    preference: str,
    on_action: Callable[[int, str], None] | None = None,
    on_closed: Callable[[int, int], None] | None = None,
    on_server: Callable[[str], None] | None = None,
    expire: str | int = "never",
    sound: str = "default",
    instead: str = TRAY_ALONE,
) -> tuple[Backend, str]:
    """The backend to use and one line saying why. A backend is chosen only where it can really
    deliver: for D-Bus (and plyer/notify-send, which go through the same server on Linux) a server
    must answer ``GetServerInformation``. With ``on_server`` (the running app), a bus without a
    server gives back the D-Bus backend offline, so it reports the server when one appears."""
    reasons: list[str] = []
    order: Sequence[str]
    if preference != "auto":
        order = [preference]
    elif is_wsl():
        order = ["powershell", "plyer"]
    elif sys.platform.startswith("linux") or "bsd" in sys.platform:
        order = ["dbus", "plyer"]
    else:
        order = ["plyer"]
    waiting: DBusBackend | None = None
    server_problem = ""  # what the D-Bus attempt found: plyer/notify-send go through the same server
    for name in order:
        try:
            if name == "none":
                return NullBackend(), "notifications are off"
            if name == "dbus":
                backend = DBusBackend(on_action, on_closed, on_server, expire, sound)
                if backend.connect():
                    return backend, backend.describe()
                reasons.append(backend.problem)
                server_problem = backend.problem
                if on_server is not None:
                    waiting = backend
                else:
                    backend.shutdown()
            if name == "plyer":
                if sys.platform.startswith("linux") and not is_wsl():
                    if server_problem:
                        raise BackendError("plyer and notify-send show nothing without one either")
                    ok, why = server_answers()
                    if not ok:
                        raise BackendError(why)
                    if not shutil.which("notify-send"):
                        try:
                            import dbus  # noqa: F401  (plyer's D-Bus path)
                        except ImportError as exc:
                            raise BackendError("plyer has neither dbus-python nor notify-send here") from exc
                return PlyerBackend(expire), "plyer (no ids: notifications cannot be withdrawn)"
            if name == "powershell":
                return PowerShellBackend(), "Windows toasts through powershell.exe (WSL)"
        except (BackendError, ImportError) as exc:
            reasons.append(clean(exc, 160))
    reason = "; ".join(dict.fromkeys(r for r in reasons if r))
    if sys.platform.startswith("linux") and not is_wsl():
        hint = NO_BUS_HINT if "no session bus" in reason else NO_SERVER_HINT
        why = f"no notification server: {reason} — {instead}; {hint}"
    else:
        why = f"no way to show notifications: {reason} — {instead}"
    return (waiting or NullBackend()), why


def doctor_line(config: Config) -> str:
    """One line for ``pi-notifier doctor``, from a real round trip (the same choice the app makes)."""
    preference = config["notifications.backend"]
    if preference == "none":
        return '[note] notifications: off (notifications.backend = "none"); the tray icon shows questions'
    backend, why = choose_backend(preference, expire=config["notifications.expire"])
    backend.shutdown()
    if backend.name == "none":
        return f"[FAIL] notifications: {why}"
    expire = config["notifications.expire"]
    stay = "stay until answered" if expire == "never" else f"close after {expire} s (notifications.expire)"
    return f"[ok  ] notifications: {backend.name} — {why}; questions {stay}"
