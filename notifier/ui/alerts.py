"""Desktop notifications: a sink fed by the engine's transitions.

Linux talks to ``org.freedesktop.Notifications`` directly through jeepney (ids, replace, close,
actions, urgency). Without a session bus or server it falls back to plyer, then to nothing (the
tray alone); macOS and Windows use plyer; WSL shows a Windows toast through powershell.exe. Which
notifications to raise, when, and when to withdraw them is decided by the pure
:class:`notifier.core.noise.Planner`; this module only renders and delivers.
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
from notifier.config import Config, parse_quiet_hours
from notifier.core.model import Snapshot, Transition, TurnChange
from notifier.core.noise import Key, Notice, Planner, Withdraw
from notifier.core.text import clean, duration, markup

log = logging.getLogger(__name__)

SNOOZE_S = 15 * 60
MAX_WAIT_S = 60.0
OPTIONS_SHOWN = 6
TEXT_LIMIT = 300


def app_icon() -> str:
    """The application icon as a file path (notification servers load it by path)."""
    from notifier import resources

    return str(resources.path("pi-notifier.png"))


def is_wsl() -> bool:
    return sys.platform.startswith("linux") and "microsoft" in platform.release().lower()


# ---- rendering ----


@dataclass(frozen=True)
class Message:
    title: str
    body: str
    critical: bool = False


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
        return Message(_neutral(clean(title, 120)), "\n".join(lines))
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
    if notice.kind == "reminder":
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
    return Message(title, "\n".join(lines), notice.critical)


# ---- backends ----


class Backend(Protocol):
    name: str
    markup: bool

    def show(self, message: Message, replaces: int) -> int: ...

    def close(self, server_id: int) -> None: ...

    def shutdown(self) -> None: ...


class NullBackend:
    name = "none"
    markup = False

    def show(self, message: Message, replaces: int) -> int:
        return 0

    def close(self, server_id: int) -> None:
        pass

    def shutdown(self) -> None:
        pass


class BackendError(Exception):
    pass


class DBusBackend:
    """org.freedesktop.Notifications over jeepney (pure Python)."""

    name = "dbus"

    def __init__(
        self,
        on_action: Callable[[int, str], None] | None = None,
        on_closed: Callable[[int, int], None] | None = None,
    ) -> None:
        self.on_action = on_action
        self.on_closed = on_closed
        self.server: tuple[str, ...] = ()
        self.capabilities: tuple[str, ...] = ()
        self.markup = False
        self._conn: Any = None
        self._router: Any = None
        self._signals: queue.Queue[Any] = queue.Queue()
        self._thread: threading.Thread | None = None
        self._closed = threading.Event()

    def connect(self, timeout: float = 3.0) -> None:
        try:
            from jeepney import DBusAddress, MatchRule, message_bus, new_method_call
            from jeepney.io.threading import DBusRouter, open_dbus_connection
        except ImportError as exc:
            raise BackendError("jeepney is not installed") from exc
        if not os.environ.get("DBUS_SESSION_BUS_ADDRESS") and not os.path.exists(
            f"/run/user/{os.getuid()}/bus"
        ):
            raise BackendError("no session bus (DBUS_SESSION_BUS_ADDRESS is not set)")
        try:
            self._conn = open_dbus_connection(bus="SESSION")
        except Exception as exc:  # no socket, refused
            raise BackendError(f"no session bus ({clean(exc, 120)})") from exc
        self._router = DBusRouter(self._conn)
        self._addr = DBusAddress(
            "/org/freedesktop/Notifications",
            bus_name="org.freedesktop.Notifications",
            interface="org.freedesktop.Notifications",
        )
        self._call = new_method_call
        try:
            info = self._send("GetServerInformation", "", (), timeout)
            # what the server says about itself is shown in logs and doctor: sanitize it here
            self.server = tuple(clean(x, 60) for x in info)
            self.capabilities = tuple(clean(c, 60) for c in self._send("GetCapabilities", "", (), timeout)[0])
        except Exception as exc:
            self.shutdown()
            raise BackendError(f"no notification server on the session bus ({clean(exc, 120)})") from exc
        self.markup = "body-markup" in self.capabilities
        rule = MatchRule(
            type="signal", interface="org.freedesktop.Notifications", path="/org/freedesktop/Notifications"
        )
        from jeepney.low_level import HeaderFields

        self._member_field = HeaderFields.member
        self._filter = self._router.filter(rule, queue=self._signals)
        self._router.send_and_get_reply(message_bus.AddMatch(rule), timeout=timeout)
        self._thread = threading.Thread(target=self._listen, name="pi-notifier-dbus-signals", daemon=True)
        self._thread.start()

    def _send(
        self, method: str, signature: str, body: tuple[Any, ...], timeout: float = 3.0
    ) -> tuple[Any, ...]:
        from jeepney.wrappers import unwrap_msg

        msg = self._call(self._addr, method, signature, body)
        reply = self._router.send_and_get_reply(msg, timeout=timeout)
        return tuple(unwrap_msg(reply))

    def _listen(self) -> None:
        while not self._closed.is_set():
            try:
                msg = self._signals.get(timeout=0.5)
            except queue.Empty:
                continue
            member = msg.header.fields.get(self._member_field)
            try:
                if member == "ActionInvoked" and self.on_action:
                    self.on_action(int(msg.body[0]), str(msg.body[1]))
                elif member == "NotificationClosed" and self.on_closed:
                    self.on_closed(int(msg.body[0]), int(msg.body[1]))
            except Exception:
                log.exception("a notification action failed")

    def show(self, message: Message, replaces: int) -> int:
        actions = ["default", "Show", "snooze", "Snooze 15 min"] if "actions" in self.capabilities else []
        hints = {
            "urgency": ("y", 2 if message.critical else 1),
            "category": ("s", "im.received"),
            "desktop-entry": ("s", APP_NAME),
        }
        try:
            (server_id,) = self._send(
                "Notify",
                "susssasa{sv}i",
                (APP_NAME, replaces, app_icon(), message.title, message.body, actions, hints, -1),
            )
        except Exception as exc:
            raise BackendError(clean(exc, 160)) from exc
        return int(server_id)

    def close(self, server_id: int) -> None:
        try:
            self._send("CloseNotification", "u", (server_id,))
        except Exception as exc:
            raise BackendError(clean(exc, 160)) from exc

    def shutdown(self) -> None:
        self._closed.set()
        for obj in (self._router, self._conn):
            if obj is not None:
                try:
                    obj.close()
                except Exception:
                    pass
        self._router = self._conn = None


class PlyerBackend:
    name = "plyer"
    markup = False

    def __init__(self) -> None:
        from plyer import notification

        self._notify = notification.notify

    def show(self, message: Message, replaces: int) -> int:
        try:
            self._notify(
                title=message.title, message=message.body, app_name=APP_NAME, app_icon=app_icon(), timeout=10
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
    quiet: bool = False,
) -> tuple[Backend, str]:
    """The backend to use and one line saying why."""
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
    for name in order:
        try:
            if name == "none":
                return NullBackend(), "notifications are off"
            if name == "dbus":
                backend = DBusBackend(on_action, on_closed)
                backend.connect()
                server = " ".join(backend.server[:3]) or "unknown server"
                return (
                    backend,
                    f"D-Bus notification server {server} (capabilities: {', '.join(backend.capabilities)})",
                )
            if name == "plyer":
                if sys.platform.startswith("linux") and not shutil.which("notify-send"):
                    try:
                        import dbus  # noqa: F401  (plyer's D-Bus path)
                    except ImportError as exc:
                        raise BackendError("plyer has neither dbus-python nor notify-send here") from exc
                return PlyerBackend(), "plyer (no ids: notifications cannot be withdrawn)"
            if name == "powershell":
                return PowerShellBackend(), "Windows toasts through powershell.exe (WSL)"
        except (BackendError, ImportError) as exc:
            reasons.append(f"{name}: {clean(exc, 160)}")
    reason = "; ".join(reasons)
    return NullBackend(), (
        f"no way to show notifications ({reason}); the tray, the window and 'pi-notifier status' still show questions"
    )


def doctor_line(config: Config) -> str:
    backend, why = choose_backend(config["notifications.backend"])
    backend.shutdown()
    mark = "ok  " if backend.name != "none" or config["notifications.backend"] == "none" else "FAIL"
    return f"[{mark}] notifications: {backend.name} — {why}"


# ---- the sink ----


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
    """Fed by the engine thread; does its own timing (settle, reminders) on a worker thread."""

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
        )
        self.planner.notify_on = frozenset(s for s in config["notify_on"] if s in ("idle", "failed"))
        if store is not None:
            for session, project, until in store.snoozes(clock()):
                self.planner.snooze(session, until, project)
            self.planner.muted = set(store.mutes())
        self._inbox: queue.Queue[Any] = queue.Queue()
        self._handles: dict[int, int] = {}  # planner handle → server id
        self._keys: dict[int, list[Key]] = {}  # planner handle → question keys
        self._backend = backend
        self._why = ""
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="pi-notifier-alerts", daemon=True)
        self._warned: set[str] = set()
        self._last_retry = 0.0

    def start(self) -> None:
        if self._backend is None:
            self._backend, self._why = choose_backend(
                self.config["notifications.backend"], self._action_from_server, self._closed_by_server
            )
            log.info("notifications: %s", self._why)
        self._thread.start()

    def stop(self) -> None:
        self._stop.set()
        self._inbox.put(None)
        self._thread.join(2)
        backend = self._backend
        if backend is not None:
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

    # Controls (any thread). Persisting them is the caller's job.
    def snooze(self, session_key: str | None, until: float, project: str | None = None) -> None:
        self._inbox.put(("snooze", (session_key, until, project)))

    def mute(self, project: str, on: bool) -> None:
        self._inbox.put(("mute", (project, on)))

    # ---- worker ----

    def _run(self) -> None:
        while not self._stop.is_set():
            due = self.planner.next_due()
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
        if kind == "transitions":
            actions += self.planner.feed(arg, now)
        elif kind == "turns":
            for change in arg:
                actions += self.planner.turn(change, now)
        elif kind == "snooze":
            session_key, until, project = arg
            self.planner.snooze(session_key, until, project)
        elif kind == "mute":
            project, on = arg
            (self.planner.muted.add if on else self.planner.muted.discard)(project)
        elif kind == "action":
            actions += self._on_action(*arg)
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
                if server_id:
                    self._safe(lambda sid=server_id: backend.close(sid))
                continue
            if self.skip_focused and self._safe(lambda a=action: _looking_at(a)):
                continue  # the user is looking at that session (the tray still counts it)
            message = render(action, self.show_text, backend.markup)
            replaces = self._handles.get(action.handle, 0)
            server_id = self._safe(lambda m=message, r=replaces: backend.show(m, r))
            if server_id is None:
                continue
            self._handles[action.handle] = server_id
            keys = [i.key for i in action.items]
            self._keys[action.handle] = keys
            if self.store is not None:
                self.store.mark_notified(keys)

    def _safe(self, fn: Callable[[], Any]) -> Any:
        try:
            return fn()
        except BackendError as exc:
            name = self._backend.name if self._backend else "?"
            if name not in self._warned:
                self._warned.add(name)
                log.warning("notifications through %s failed (%s); trying again later", name, exc)
            now = self.clock()
            if isinstance(self._backend, DBusBackend) and now - self._last_retry > 30:
                self._last_retry = now
                self._backend.shutdown()
                self._backend, self._why = choose_backend(
                    self.config["notifications.backend"], self._action_from_server, self._closed_by_server
                )
                log.info("notifications: %s", self._why)
            return None

    # ---- server signals (D-Bus signal thread) ----

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
                self.planner.snooze(session_key, until)
                if self.on_snooze is not None:
                    self.on_snooze(session_key, until)  # the app persists it and shows it
            log.info("snoozed %d session(s) for 15 min", len(sessions))
            return []
        if self.on_show is not None:
            first = keys[0] if keys else (None, None)
            self.on_show(first[0], first[1])
        return []


def _looking_at(notice: Notice) -> bool:
    from notifier.goto import items_focused

    return items_focused(notice.items)
