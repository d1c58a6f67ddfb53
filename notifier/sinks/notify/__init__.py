"""Desktop notifications: a sink fed by the engine's transitions.

Linux talks to ``org.freedesktop.Notifications`` directly through jeepney (ids, replace, close,
actions, urgency). Without a session bus or server it falls back to plyer, then to nothing (the
tray alone); macOS and Windows use plyer; WSL shows a Windows toast through powershell.exe. Which
notifications to raise, when, and when to withdraw them is decided by the pure
:class:`notifier.core.planner.Planner` (quiet hours: :mod:`notifier.core.quiet`); this package
only renders and delivers:

- :mod:`.render`: title and body of a notice (the one sanitizer and its escaping)
- :mod:`.backend`: what a backend offers, the one that shows nothing, their errors
- :mod:`.bus`: one session-bus connection, replies matched by serial (duplicates, strays dropped)
- :mod:`.dbus`: D-Bus through jeepney, following the server; the real round-trip check
- :mod:`.fallback`: plyer, and powershell.exe toasts on WSL
- :mod:`.choose`: which backend delivers here, and the doctor line
- :mod:`.sink`: :class:`AlertSink`, its worker thread, the server coming and going
"""

from notifier.sinks.notify.backend import Backend, BackendError, NullBackend, ServerGone, is_wsl
from notifier.sinks.notify.choose import (
    NO_BUS_HINT,
    NO_SERVER_HINT,
    ODD_SERVER_HINT,
    choose_backend,
    doctor_line,
)
from notifier.sinks.notify.dbus import NOTIFICATIONS, DBusBackend, server_owner
from notifier.sinks.notify.fallback import PlyerBackend, PowerShellBackend
from notifier.sinks.notify.render import Message, render
from notifier.sinks.notify.screen import RECONNECT_S
from notifier.sinks.notify.sink import SNOOZE_S, AlertSink

__all__ = [
    "NOTIFICATIONS",
    "NO_BUS_HINT",
    "NO_SERVER_HINT",
    "ODD_SERVER_HINT",
    "RECONNECT_S",
    "SNOOZE_S",
    "AlertSink",
    "Backend",
    "BackendError",
    "DBusBackend",
    "Message",
    "NullBackend",
    "PlyerBackend",
    "PowerShellBackend",
    "ServerGone",
    "choose_backend",
    "doctor_line",
    "is_wsl",
    "render",
    "server_owner",
]
