"""Desktop notifications: a sink fed by the engine's transitions.

Linux talks to ``org.freedesktop.Notifications`` directly through jeepney (ids, replace, close,
actions, urgency). Without a session bus or server it falls back to plyer, then to nothing (the
tray alone); macOS and Windows use plyer; WSL shows a Windows toast through powershell.exe. Which
notifications to raise, when, and when to withdraw them is decided by the pure
:class:`notifier.core.planner.Planner`; this module only renders and delivers.
"""

from __future__ import annotations

import base64
import logging
import os
import platform
import queue
import shutil
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any, Protocol

from notifier import APP_NAME
from notifier.core.model import Snapshot, Transition, TurnChange
from notifier.core.planner import Key, Notice, Planner, Withdraw
from notifier.core.preferences import Preferences
from notifier.core.text import clean, duration, markup
from notifier.resources import app_icon
from notifier.system.config import Config, parse_quiet_hours

log = logging.getLogger(__name__)

SNOOZE_S = 15 * 60
MAX_WAIT_S = 60.0
OPTIONS_SHOWN = 6
TEXT_LIMIT = 300



def is_wsl() -> bool:
    return sys.platform.startswith("linux") and "microsoft" in platform.release().lower()


# ---- rendering ----


@dataclass(frozen=True)
class Message:
    title: str
    body: str
    critical: bool = False
    sticky: bool = False  # needs an answer: stays on screen until answered (notifications.expire)


def _neutral(text: str) -> str:
    """For servers that do not advertise markup (some render it anyway): no tag, entity or link
    can form, and the text still reads naturally."""
    return text.replace("&", "＆").replace("<", "‹").replace(">", "›")


def render(notice: Notice, show_text: bool, markup_ok: bool) -> Message:
    """Title and body for a notice. Every untrusted string goes through the one sanitizer, then is
    escaped (markup servers) or neutralized (others)."""
    esc: Callable[[str], str] = (lambda s: markup(s)) if markup_ok else (lambda s: _neutral(clean(s)))
    items = notice.items
    if notice.kind in ("burst", "startup"):
        projects = sorted({i.project for i in items})
        sessions = len({i.ref.key for i in items})
        title = (
            f"{sessions} pi sessions need answers"
            if sessions > 1
            else f"{projects[0]}: {len(items)} questions"
        )
        lines = []
        for item in items[:5]:
            proj = esc(item.project)
            lines.append(f"{proj} — {esc(clean(item.question.text, 80))}" if show_text else proj)
        if len(items) > 5:
            lines.append(f"+{len(items) - 5} more")
        return Message(_neutral(clean(title, 120)), "\n".join(lines), sticky=True)
    item = items[0]
    q = item.question
    if notice.kind in ("idle", "failed"):
        what = "finished its turn" if notice.kind == "idle" else "stopped with an error"
        body = (
            "pi is waiting for your next instruction"
            if notice.kind == "idle"
            else "The run ended with an error"
        )
        return Message(_neutral(f"{item.project} {what}"), body)
    title = _neutral(f"{item.project} needs an answer")
    lines = []
    if notice.kind == "reminder" or notice.waited_s >= 60:  # reminders, and questions first seen late
        lines.append(f"Waiting for {duration(notice.waited_s)}")
    if show_text:
        text = clean(q.text, TEXT_LIMIT)
        if q.header and q.header != q.text:
            text = f"[{clean(q.header, 40)}] {text}"
        lines.append(esc(text))
        options = [clean(o, 40) for o in q.options]
        if options and len(options) <= OPTIONS_SHOWN and sum(len(o) for o in options) <= 160:
            lines.append(esc(" · ".join(options)))
    else:
        lines.append("pi is waiting for your answer")
    if q.count > 1:
        lines.append(f"+{q.count - 1} more question{'s' if q.count > 2 else ''}")
    return Message(title, "\n".join(lines), notice.critical, sticky=True)


# ---- backends ----

NOTIFICATIONS = "org.freedesktop.Notifications"
NO_SERVER_HINT = (
    "install and start a notification server (dunst, mako, xfce4-notifyd or notification-daemon) or run "
    "a desktop that has one; pi-notifier picks it up as soon as it appears"
)
NO_BUS_HINT = (
    "start pi-notifier inside your desktop session (where DBUS_SESSION_BUS_ADDRESS is set), which runs "
    "a notification server (or install one: dunst, mako, xfce4-notifyd or notification-daemon)"
)


class Backend(Protocol):
    name: str
    markup: bool
    online: bool  # can deliver right now

    def show(self, message: Message, replaces: int) -> int: ...

    def close(self, server_id: int) -> None: ...

    def shutdown(self) -> None: ...


class NullBackend:
    name = "none"
    markup = False
    online = False

    def show(self, message: Message, replaces: int) -> int:
        return 0

    def close(self, server_id: int) -> None:
        pass

    def shutdown(self) -> None:
        pass


class BackendError(Exception):
    pass


class ServerGone(BackendError):
    """The notification server (``what == "server"``) or the whole session bus (``"bus"``) is gone."""

    def __init__(self, what: str, detail: str) -> None:
        super().__init__(detail)
        self.what = what


_NO_OWNER = ("org.freedesktop.DBus.Error.ServiceUnknown", "org.freedesktop.DBus.Error.NameHasNoOwner")


def _expire_ms(expire: str | int) -> int:
    """The Notify ``expire_timeout`` for a needs-answer notification: 0 = until closed."""
    return 0 if expire == "never" else int(expire) * 1000


def _has_bus() -> bool:
    return bool(os.environ.get("DBUS_SESSION_BUS_ADDRESS")) or os.path.exists(f"/run/user/{os.getuid()}/bus")


class DBusBackend:
    """org.freedesktop.Notifications over jeepney (pure Python).

    The connection to the session bus outlives the server: it also listens for the server's name
    changing owner, so a server that starts late, goes away or comes back is reported through
    ``on_server`` ("up", "down"; "lost" when the bus itself is gone) instead of being discovered by
    notifications that fail one by one."""

    name = "dbus"

    def __init__(
        self,
        on_action: Callable[[int, str], None] | None = None,
        on_closed: Callable[[int, int], None] | None = None,
        on_server: Callable[[str], None] | None = None,
        expire: str | int = "never",
    ) -> None:
        self.on_action = on_action
        self.on_closed = on_closed
        self.on_server = on_server
        self.expire = expire
        self.server: tuple[str, ...] = ()
        self.capabilities: tuple[str, ...] = ()
        self.markup = False
        self.online = False
        self.problem = ""
        self._conn: Any = None
        self._router: Any = None
        self._signals: queue.Queue[Any] = queue.Queue()
        self._thread: threading.Thread | None = None
        self._closed = threading.Event()

    def connect(self, timeout: float = 3.0) -> bool:
        """Open the bus and listen; then :meth:`probe`. Raises BackendError when there is no bus."""
        try:
            from jeepney import DBusAddress, MatchRule, message_bus, new_method_call
            from jeepney.io.threading import DBusRouter, open_dbus_connection
            from jeepney.low_level import HeaderFields
        except ImportError as exc:
            raise BackendError("jeepney is not installed") from exc
        if not _has_bus():
            raise BackendError("no session bus (DBUS_SESSION_BUS_ADDRESS is not set)")
        try:
            self._conn = open_dbus_connection(bus="SESSION")
        except Exception as exc:  # no socket, refused
            raise BackendError(f"no session bus ({clean(exc, 120)})") from exc

        class Router(DBusRouter):  # type: ignore[misc, valid-type]
            def _receiver(self) -> None:
                try:
                    super()._receiver()
                except (OSError, ValueError):
                    pass  # the bus went away: the signal listener reports it, once, without a traceback

        self._router = Router(self._conn)
        self._addr = DBusAddress(
            "/org/freedesktop/Notifications", bus_name=NOTIFICATIONS, interface=NOTIFICATIONS
        )
        self._call = new_method_call
        self._member_field = HeaderFields.member
        ours = MatchRule(type="signal", interface=NOTIFICATIONS, path="/org/freedesktop/Notifications")
        owner = MatchRule(
            type="signal",
            sender="org.freedesktop.DBus",
            interface="org.freedesktop.DBus",
            member="NameOwnerChanged",
            path="/org/freedesktop/DBus",
        )
        owner.add_arg_condition(0, NOTIFICATIONS)
        try:
            for rule in (ours, owner):
                self._router.filter(rule, queue=self._signals, bufsize=0)
                self._router.send_and_get_reply(message_bus.AddMatch(rule), timeout=timeout)
        except Exception as exc:
            self.shutdown()
            raise BackendError(f"the session bus does not answer ({clean(exc, 120)})") from exc
        self._thread = threading.Thread(target=self._listen, name="pi-notifier-dbus-signals", daemon=True)
        self._thread.start()
        return self.probe(timeout)

    def probe(self, timeout: float = 3.0) -> bool:
        """A real round trip to the server (``GetServerInformation``; the bus starts an activatable
        server for it). Sets :attr:`online`, and :attr:`problem` when nothing answered."""
        try:
            info = self._send("GetServerInformation", "", (), timeout)
            caps = self._send("GetCapabilities", "", (), timeout)[0]
        except Exception as exc:
            self.online = False
            if getattr(exc, "name", None) in _NO_OWNER:
                self.problem = f"nothing owns {NOTIFICATIONS} on the session bus, and no server is set up to start for it"
            else:
                self.problem = f"nothing answers as {NOTIFICATIONS} on the session bus ({clean(exc, 120)})"
            return False
        # what the server says about itself is shown in logs and doctor: sanitize it here
        self.server = tuple(clean(x, 60) for x in info)
        self.capabilities = tuple(clean(c, 60) for c in caps)
        self.markup = "body-markup" in self.capabilities
        self.online = True
        self.problem = ""
        return True

    def describe(self) -> str:
        server = " ".join(self.server[:3]) or "unknown server"
        return f"D-Bus notification server {server} (capabilities: {', '.join(self.capabilities)})"

    def _bus_alive(self) -> bool:
        thread = getattr(self._router, "_rcv_thread", None)  # jeepney's receiver: it ends with the bus
        return self._router is not None and (thread is None or thread.is_alive())

    def _send(
        self, method: str, signature: str, body: tuple[Any, ...], timeout: float = 3.0
    ) -> tuple[Any, ...]:
        from jeepney.wrappers import unwrap_msg

        msg = self._call(self._addr, method, signature, body)
        reply = self._router.send_and_get_reply(msg, timeout=timeout)
        return tuple(unwrap_msg(reply))

    def _request(self, method: str, signature: str, body: tuple[Any, ...]) -> tuple[Any, ...]:
        from jeepney.wrappers import DBusErrorResponse

        try:
            return self._send(method, signature, body)
        except DBusErrorResponse as exc:
            if exc.name in _NO_OWNER:
                self.online = False
                raise ServerGone("server", clean(exc, 160)) from exc
            raise BackendError(clean(exc, 160)) from exc
        except Exception as exc:
            if not self._bus_alive():
                self.online = False
                raise ServerGone("bus", clean(exc, 160)) from exc
            raise BackendError(clean(exc, 160)) from exc

    def _listen(self) -> None:
        while not self._closed.is_set():
            try:
                msg = self._signals.get(timeout=0.5)
            except queue.Empty:
                if not self._closed.is_set() and not self._bus_alive():
                    self.online = False
                    if self.on_server:
                        self.on_server("lost")
                    return
                continue
            member = msg.header.fields.get(self._member_field)
            try:
                if member == "ActionInvoked" and self.on_action:
                    self.on_action(int(msg.body[0]), str(msg.body[1]))
                elif member == "NotificationClosed" and self.on_closed:
                    self.on_closed(int(msg.body[0]), int(msg.body[1]))
                elif member == "NameOwnerChanged" and self.on_server:
                    self.on_server("up" if msg.body[2] else "down")
            except Exception:
                log.exception("a notification signal failed")

    def show(self, message: Message, replaces: int) -> int:
        actions = ["default", "Show", "snooze", "Snooze 15 min"] if "actions" in self.capabilities else []
        timeout = -1  # the server's default for what needs no answer
        hints: dict[str, tuple[str, Any]] = {
            "category": ("s", "im.received"),
            "desktop-entry": ("s", APP_NAME),
        }
        critical = message.critical
        if message.sticky:
            timeout = _expire_ms(self.expire)
            if timeout == 0:
                # stays until answered: servers that ignore expire_timeout (GNOME) keep only critical
                # notifications on screen, and 'resident' keeps it there after an action
                hints["resident"] = ("b", True)
                critical = True
        hints["urgency"] = ("y", 2 if critical else 1)
        (server_id,) = self._request(
            "Notify",
            "susssasa{sv}i",
            (APP_NAME, replaces, app_icon(), message.title, message.body, actions, hints, timeout),
        )
        return int(server_id)

    def close(self, server_id: int) -> None:
        try:
            self._request("CloseNotification", "u", (server_id,))
        except ServerGone:
            raise
        except BackendError:
            pass  # already closed (by the user, or it expired): nothing to withdraw

    def shutdown(self) -> None:
        self._closed.set()
        self.online = False
        for obj in (self._router, self._conn):
            if obj is not None:
                try:
                    obj.close()
                except Exception:
                    pass
        self._router = self._conn = None


def server_answers(timeout: float = 3.0) -> tuple[bool, str]:
    """Whether a notification server answers a real round trip on the session bus, and if not why.
    notify-send and plyer deliver through that same server on Linux, so without one they show
    nothing (and notify-send prints 'Cannot autolaunch D-Bus' where there is no bus at all)."""
    probe = DBusBackend()
    try:
        ok = probe.connect(timeout)
    except BackendError as exc:
        if "jeepney" not in str(exc):
            return False, str(exc)
        return _server_answers_cli(timeout)
    finally:
        probe.shutdown()
    return ok, probe.problem


def _server_answers_cli(timeout: float) -> tuple[bool, str]:
    tool = shutil.which("gdbus") or shutil.which("dbus-send")
    if not _has_bus():
        return False, "no session bus (DBUS_SESSION_BUS_ADDRESS is not set)"
    if tool is None:
        return False, "cannot check for a notification server (jeepney, gdbus and dbus-send are all missing)"
    if os.path.basename(tool) == "gdbus":
        cmd = [
            tool,
            "call",
            "--session",
            "--dest",
            NOTIFICATIONS,
            "--object-path",
            "/org/freedesktop/Notifications",
            "--method",
            f"{NOTIFICATIONS}.GetServerInformation",
        ]
    else:
        cmd = [
            tool,
            "--session",
            "--print-reply",
            f"--dest={NOTIFICATIONS}",
            "/org/freedesktop/Notifications",
            f"{NOTIFICATIONS}.GetServerInformation",
        ]
    try:
        done = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout + 2)
    except (OSError, subprocess.SubprocessError) as exc:
        return False, clean(exc, 120)
    if done.returncode != 0:
        return False, f"nothing answers as {NOTIFICATIONS} ({clean(done.stderr, 120)})"
    return True, ""


class PlyerBackend:
    name = "plyer"
    markup = False
    online = True

    def __init__(self, expire: str | int = "never") -> None:
        from plyer import notification

        self._notify = notification.notify
        # on Linux plyer's own D-Bus path takes seconds, 0 = until closed; elsewhere it is a toast's life
        self._timeout = _expire_ms(expire) // 1000 if sys.platform.startswith("linux") else 10

    def show(self, message: Message, replaces: int) -> int:
        try:
            self._notify(
                title=message.title,
                message=message.body,
                app_name=APP_NAME,
                app_icon=app_icon(),
                timeout=self._timeout if message.sticky else 10,
            )
        except Exception as exc:
            raise BackendError(clean(exc, 160)) from exc
        return 0

    def close(self, server_id: int) -> None:
        pass  # plyer cannot withdraw a notification

    def shutdown(self) -> None:
        pass


_TOAST_PS = r"""
$ErrorActionPreference = 'Stop'
function D($s) { [System.Text.Encoding]::UTF8.GetString([System.Convert]::FromBase64String($s)) }
$title = [System.Security.SecurityElement]::Escape((D '{title}'))
$body = [System.Security.SecurityElement]::Escape((D '{body}'))
[Windows.UI.Notifications.ToastNotificationManager, Windows.UI.Notifications, ContentType = WindowsRuntime] > $null
[Windows.Data.Xml.Dom.XmlDocument, Windows.Data.Xml.Dom.XmlDocument, ContentType = WindowsRuntime] > $null
$xml = New-Object Windows.Data.Xml.Dom.XmlDocument
$xml.LoadXml("<toast><visual><binding template='ToastGeneric'><text>$title</text><text>$body</text></binding></visual></toast>")
$app = '{{1AC14E77-02E7-4E5D-B744-2EB1AE5198B7}}\WindowsPowerShell\v1.0\powershell.exe'
[Windows.UI.Notifications.ToastNotificationManager]::CreateToastNotifier($app).Show([Windows.UI.Notifications.ToastNotification]::new($xml))
"""


class PowerShellBackend:
    """WSL: notify-send goes nowhere there, so show a Windows toast. Strings travel base64-encoded
    and are XML-escaped on the Windows side: nothing from the model is ever parsed as script."""

    name = "powershell"
    markup = False
    online = True

    def __init__(self) -> None:
        self.exe = (
            shutil.which("powershell.exe") or "/mnt/c/Windows/System32/WindowsPowerShell/v1.0/powershell.exe"
        )
        if not os.path.exists(self.exe):
            raise BackendError("powershell.exe not found")

    def show(self, message: Message, replaces: int) -> int:
        enc = lambda s: base64.b64encode(s.encode("utf-8")).decode("ascii")  # noqa: E731
        script = _TOAST_PS.replace("{title}", enc(message.title)).replace("{body}", enc(message.body))
        script = script.replace("{{", "{").replace("}}", "}")
        try:
            subprocess.run(
                [self.exe, "-NoProfile", "-NonInteractive", "-Command", script],
                capture_output=True,
                timeout=20,
                check=True,
            )
        except (OSError, subprocess.SubprocessError) as exc:
            raise BackendError(clean(exc, 160)) from exc
        return 0

    def close(self, server_id: int) -> None:
        pass

    def shutdown(self) -> None:
        pass


def choose_backend(
    preference: str,
    on_action: Callable[[int, str], None] | None = None,
    on_closed: Callable[[int, int], None] | None = None,
    on_server: Callable[[str], None] | None = None,
    expire: str | int = "never",
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
                backend = DBusBackend(on_action, on_closed, on_server, expire)
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
        why = f"no notification server: {reason} — the tray icon alone will show questions; {hint}"
    else:
        why = f"no way to show notifications: {reason} — the tray icon alone will show questions"
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


# ---- the sink ----

RECONNECT_S = 30.0  # after the session bus itself went away, look for it again this often


def in_quiet_hours(window: tuple[int, int] | None, now: float) -> bool:
    if window is None:
        return False
    local = datetime.fromtimestamp(now)
    minute = local.hour * 60 + local.minute
    start, end = window
    if start == end:
        return False
    return start <= minute < end if start < end else (minute >= start or minute < end)


class AlertSink:
    """Fed by the engine thread; does its own timing (settle, reminders) on a worker thread.

    Whether notifications can be shown is decided once at start (and logged once); after that the
    server coming, going and coming back arrive as events and are logged once each way. What is
    showing when the server goes away is shown again when it is back."""

    def __init__(
        self,
        config: Config,
        store: Any = None,
        on_show: Callable[[str | None, str | None], None] | None = None,
        on_snooze: Callable[[str | None, float], None] | None = None,
        backend: Backend | None = None,
        clock: Callable[[], float] = time.time,
    ) -> None:
        self.config = config
        self.store = store
        self.on_show = on_show
        self.on_snooze = on_snooze
        self.clock = clock
        self.show_text = bool(config["notifications.show_text"])
        self.skip_focused = bool(config["notifications.skip_when_focused"])
        self.quiet_window = parse_quiet_hours(config["quiet_hours"])
        self.planner = Planner(
            settle_s=config["settle_ms"] / 1000.0,
            remind_after_s=tuple(m * 60.0 for m in config["remind_after"]),
            notified=store.notified() if store is not None else set(),
            reminded=store.reminders() if store is not None else {},
        )
        self.planner.notify_on = frozenset(s for s in config["notify_on"] if s in ("idle", "failed"))
        self._inbox: queue.Queue[Any] = queue.Queue()
        self._handles: dict[int, int] = {}  # planner handle → server id (0: not on screen)
        self._keys: dict[int, list[Key]] = {}  # planner handle → question keys
        self._notices: dict[int, Notice] = {}  # planner handle → the question notice it shows now
        self._backend = backend
        self._why = ""
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="pi-notifier-alerts", daemon=True)
        self._warned: set[str] = set()
        self._reconnect_at: float | None = None
        self._ever_online = False
        self._told_down = False  # the user was told notifications are not shown (until they are back)

    def _choose(self) -> tuple[Backend, str]:
        return choose_backend(
            self.config["notifications.backend"],
            self._action_from_server,
            self._closed_by_server,
            self._server_event,
            self.config["notifications.expire"],
        )

    def start(self) -> None:
        if self._backend is None:
            self._backend, self._why = self._choose()
            if self._backend.online:
                self._ever_online = True
                log.info("notifications: %s", self._why)
            else:
                log.warning("%s", self._why)  # told once; the server appearing later is logged too
                if isinstance(self._backend, NullBackend) and _has_bus():
                    self._reconnect_at = self.clock() + RECONNECT_S  # a bus that is not up yet
        self._thread.start()

    def stop(self) -> None:
        self._stop.set()
        self._inbox.put(None)
        self._thread.join(2)
        backend = self._backend
        if backend is not None:
            if backend.online:
                for server_id in list(self._handles.values()):
                    if server_id:
                        try:
                            backend.close(server_id)
                        except BackendError:
                            break
            backend.shutdown()

    # Sink protocol (engine thread): hand over, never block.
    def ready(self, info: Any, snapshot: Snapshot) -> None:
        self._inbox.put(("tick", None))

    def transitions(self, items: Sequence[Transition], snapshot: Snapshot) -> None:
        if items:
            self._inbox.put(("transitions", list(items)))

    def turns(self, items: Sequence[TurnChange]) -> None:
        self._inbox.put(("turns", list(items)))

    # Control (any thread): the user's snoozes and mutes, from their owner (the app).
    def set_preferences(self, preferences: Preferences) -> None:
        self._inbox.put(("preferences", preferences))

    # ---- worker ----

    def _run(self) -> None:
        while not self._stop.is_set():
            due = self.planner.next_due()
            if self._reconnect_at is not None:
                due = self._reconnect_at if due is None else min(due, self._reconnect_at)
            # Capped, so a wall-clock jump backwards delays a reminder by at most a minute.
            timeout = None if due is None else min(MAX_WAIT_S, max(0.0, due - self.clock()))
            if timeout is None and self.planner.holding:
                timeout = MAX_WAIT_S  # look again soon: quiet hours end at a time of day
            try:
                msg = self._inbox.get(timeout=timeout)
            except queue.Empty:
                msg = ("tick", None)
            if msg is None:
                return
            try:
                self._handle(msg)
            except Exception:
                log.exception("notification handling failed; carrying on")

    def _handle(self, msg: tuple[str, Any]) -> None:
        kind, arg = msg
        now = self.clock()
        actions: list[Notice | Withdraw] = []
        if self._reconnect_at is not None and now >= self._reconnect_at:
            self._reconnect(now)
        if kind == "transitions":
            actions += self.planner.feed(arg, now)
        elif kind == "turns":
            for change in arg:
                actions += self.planner.turn(change, now)
        elif kind == "preferences":
            self.planner.preferences = arg
        elif kind == "action":
            actions += self._on_action(*arg)
        elif kind == "server":
            self._on_server(arg, now)
        quiet = in_quiet_hours(self.quiet_window, now)
        if quiet:  # quiet hours: turn notices are dropped (questions wait for their reminders)
            actions = [a for a in actions if not (isinstance(a, Notice) and a.kind in ("idle", "failed"))]
        actions += self.planner.tick(now, quiet)
        self._deliver(actions)

    def _deliver(self, actions: Sequence[Notice | Withdraw]) -> None:
        backend = self._backend
        if backend is None:
            return
        for action in actions:
            if isinstance(action, Withdraw):
                server_id = self._handles.pop(action.handle, 0)
                self._keys.pop(action.handle, None)
                self._notices.pop(action.handle, None)
                if server_id and backend.online:
                    self._safe(lambda sid=server_id: backend.close(sid))
                continue
            if self.skip_focused and self._safe(lambda a=action: _looking_at(a)):
                continue  # the user is looking at that session (the tray still counts it)
            if action.kind not in ("idle", "failed"):  # what waits for an answer is shown again
                self._notices[action.handle] = action
            self._keys[action.handle] = [i.key for i in action.items]
            self._handles.setdefault(action.handle, 0)
            self._show(action)
        reminded = self.planner.drain_reminded()
        if reminded and self.store is not None:
            self.store.mark_reminded(reminded)

    def _show(self, notice: Notice) -> None:
        """Put one notice on screen (replacing what its handle shows); remembered as notified only
        once a server took it, so a question nobody saw is announced again after a restart."""
        backend = self._backend
        if backend is None or not backend.online:
            return
        message = render(notice, self.show_text, backend.markup)
        replaces = self._handles.get(notice.handle, 0)
        server_id = self._safe(lambda: backend.show(message, replaces))
        if server_id is None:
            return
        self._handles[notice.handle] = server_id
        if self.store is not None:
            self.store.mark_notified([i.key for i in notice.items])

    def _safe(self, fn: Callable[[], Any]) -> Any:
        try:
            return fn()
        except ServerGone as exc:
            self._went_away(exc.what, self.clock())
            return None
        except BackendError as exc:
            name = self._backend.name if self._backend else "?"
            if name not in self._warned:
                self._warned.add(name)
                log.warning("notifications through %s failed (%s); trying again with the next one", name, exc)
            return None

    # ---- the server coming and going ----

    def _went_away(self, what: str, now: float) -> None:
        backend = self._backend
        was_online = backend is not None and backend.online
        if backend is not None:
            backend.online = False
        self._handles = dict.fromkeys(self._handles, 0)  # those bubbles went with the server
        if what == "bus":
            if self._reconnect_at is None:
                if self._told_down:  # the server usually goes first (it was on that bus): told already
                    log.debug("the session bus closed too; looking for it every %d s", RECONNECT_S)
                else:
                    log.warning(
                        "the session bus went away — the tray icon alone will show questions until it is back"
                    )
                self._told_down = True
            self._reconnect_at = now + RECONNECT_S
        elif was_online:
            log.warning(
                "the notification server went away — the tray icon alone will show questions until one is back"
            )
            self._told_down = True

    def _on_server(self, event: str, now: float) -> None:
        backend = self._backend
        if event in ("down", "lost"):
            self._went_away("bus" if event == "lost" else "server", now)
            return
        if not isinstance(backend, DBusBackend):
            return
        was_online = backend.online
        if backend.probe():  # a new owner: another server, or the same one restarted
            self._handles = dict.fromkeys(self._handles, 0)
            if was_online:
                what = "another notification server took over"
            elif self._ever_online:
                what = "the notification server is back"
            else:
                what = "a notification server appeared"
            self._ever_online = True
            self._told_down = False
            log.warning("notifications: %s: %s", what, backend.describe())
            self._show_again()

    def _reconnect(self, now: float) -> None:
        """The bus went away: try once more (quietly; coming back is logged once)."""
        backend, why = self._choose()
        if not isinstance(backend, DBusBackend):
            backend.shutdown()
            self._reconnect_at = now + RECONNECT_S
            return
        old, self._backend, self._why = self._backend, backend, why
        if old is not None:
            old.shutdown()
        self._reconnect_at = None
        self._told_down = not backend.online
        log.warning("notifications: the session bus is back; %s", why)
        if backend.online:
            self._show_again()

    def _show_again(self) -> None:
        for notice in list(self._notices.values()):
            self._show(notice)

    # ---- server signals (D-Bus signal thread) ----

    def _server_event(self, event: str) -> None:
        self._inbox.put(("server", event))

    def _handle_for(self, server_id: int) -> int | None:
        for handle, sid in list(self._handles.items()):
            if sid == server_id:
                return handle
        return None

    def _action_from_server(self, server_id: int, action: str) -> None:
        self._inbox.put(("action", (server_id, action)))

    def _closed_by_server(self, server_id: int, reason: int) -> None:
        pass  # a dismissed bubble stays dismissed; reminders raise a new one

    def _on_action(self, server_id: int, action: str) -> list[Notice | Withdraw]:
        handle = self._handle_for(server_id)
        if handle is None:
            return []  # another application's notification
        keys = self._keys.get(handle, [])
        sessions = sorted({k[0] for k in keys})
        if action == "snooze":
            until = self.clock() + SNOOZE_S
            for session_key in sessions:
                if self.on_snooze is not None:
                    self.on_snooze(session_key, until)  # the app's preferences: set_preferences() back
            log.info("snoozed %d session(s) for 15 min", len(sessions))
            # a resident notification stays after an action: snoozing is the user saying "not now"
            self._handles[handle] = 0
            self._notices.pop(handle, None)  # not shown again if the server comes back
            backend = self._backend
            if backend is not None and backend.online:
                self._safe(lambda: backend.close(server_id))
            return []
        if self.on_show is not None:
            first = keys[0] if keys else (None, None)
            self.on_show(first[0], first[1])
        return []


def _looking_at(notice: Notice) -> bool:
    from notifier.system.focus import items_focused

    return items_focused(notice.items)
