"""The running app: wiring and lifecycle of the engine, the sinks, the tray, the control channel
and the window process; every command, whoever sends it, is carried out in :meth:`App.execute`.

One instance per user for the tray app (``instance.py``: a lock file, then a Unix socket);
headless runs (`run --no-tray`) never take the lock and always work beside it.
"""

from __future__ import annotations

import dataclasses
import logging
import os
import threading
import time
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

from notifier.app import requests
from notifier.app.alerts import AlertsKeeper
from notifier.app.choices import PreferencesOwner, open_store
from notifier.app.decorate import WindowDecoration
from notifier.app.dialog_feed import DialogFeed
from notifier.app.instance import InstanceLock
from notifier.app.local import LocalSource, clear_abandoned
from notifier.app.signals import install_signals
from notifier.app.stopping import stop_side_by_side
from notifier.app.window_process import WindowProcess, has_display
from notifier.config.load import Config
from notifier.control.connection import Connection
from notifier.control.server import Server
from notifier.control.wire import socket_path
from notifier.core.commands import (
    Answer,
    Clear,
    Command,
    Focus,
    Goto,
    Health,
    Mute,
    Ping,
    Quit,
    Show,
    Snooze,
    Status,
    Subscribe,
)
from notifier.core.model import Snapshot, Transition
from notifier.core.preferences import Preferences
from notifier.core.text import clean
from notifier.engine.loop import Engine
from notifier.engine.options import engine_options
from notifier.engine.supervise import Health as HealthLog
from notifier.engine.supervise import ReadyInfo, Sink
from notifier.sinks.history import HistorySink
from notifier.sinks.jsonout import JsonSink

if TYPE_CHECKING:
    from notifier.sinks.notify.sink import AlertSink

# Where they were before the app was split (the command line imports them from here).
__all__ = ["App", "InstanceLock", "LocalSource", "install_signals", "open_store"]

log = logging.getLogger(__name__)
SHUTDOWN_BUDGET_S = 0.8  # a signal ends the app well inside 2 s, whatever hangs


class App:
    def __init__(
        self,
        config: Config,
        json_out: bool,
        tray: bool,
        notify: bool,
        socket: str | None = None,
        state_dir: str | None = None,
    ) -> None:
        """``state_dir``: keep the store and scan cache there instead of the user's state folder
        (the demo must not write into the real history)."""
        self.config = config
        self.state_dir = state_dir
        self.socket = socket or socket_path()
        self.json_out = json_out
        self.want_tray = tray
        self.want_notify = notify and config["notifications.backend"] != "none"
        self.stop_event = threading.Event()
        self.store = open_store(state_dir)
        self.preferences = PreferencesOwner(self.store, time.time())  # restored from the store
        self.engine: Engine | None = None
        self.tray: Any = None
        self.server: Server | None = None
        self.lock: InstanceLock | None = None
        self._ui_dirty = threading.Event()
        self._ui_thread = threading.Thread(target=self._ui_loop, name="pi-notifier-ui", daemon=True)
        self.health = HealthLog()  # shared with the engine: what failed and was recovered from
        self.notifier = AlertsKeeper(
            config, self.store, self.preferences, self.health, self.execute, self.stop_event
        )
        decorate = WindowDecoration(lambda: self.preferences.value, self._changed, self.stop_event)
        self.window = WindowProcess(self.socket, decorate=decorate)
        self.hub: Any = None  # remote hosts and pushes (app/remotes.py)
        self.dialogs: DialogFeed | None = None  # the companion extension's dialogs (app/dialogs.py)
        self.preferences.listen(self._preferences_changed, current=False)
        self.follower: Any = None  # the config file, followed while the app runs
        self._file_values: dict[str, Any] = {}  # what the file said when last read well
        self._config_error = ""  # the last bad edit's reason (said once)

    # ---- commands (tray, window, notifications, control channel: any thread) ----

    def execute(self, command: Command, conn: Connection | None = None) -> dict[str, Any] | None:
        """Carry out one command, whoever sent it, on the caller's thread: each part it touches
        guards its own state (preferences: their owner's lock; the board: the engine thread; the
        window: its lock). Returns the control channel's reply (None: ``conn`` was kept)."""
        if isinstance(command, (Snooze, Mute)):
            self.preferences.apply(command, time.time())
        elif isinstance(command, Clear):
            if self.engine is not None:
                clear_abandoned(self.engine, command)
        elif isinstance(command, (Goto, Answer)):
            if conn is None:  # the tray, a notification: never on their thread; what fails is said
                threading.Thread(
                    target=self._act, args=(command,), name="pi-notifier-act", daemon=True
                ).start()
                return {"ok": True}
            code, said = self._carry_out(command)  # an ipc worker thread: the reply says what happened
            return {"ok": code == 0, "code": code, "said": said, **({"error": said} if code else {})}
        elif isinstance(command, Show):
            window = self.window.show(command.focus, command.wait)
            return {"ok": True, "window": window, "display": has_display()}
        elif isinstance(command, Subscribe):
            if conn is not None:
                self.window.subscribe(conn, self.snapshot())
            return None
        elif isinstance(command, Quit):
            self.stop_event.set()
        elif isinstance(command, Ping):
            return {"ok": True, "pid": os.getpid(), "roots": self.config["sessions_dirs"]}
        elif isinstance(command, Health):
            return requests.health_reply(self)
        elif isinstance(command, Status):
            return requests.status_reply(self.config, command, self.snapshot())
        return {"ok": True}

    def _carry_out(self, command: Goto | Answer) -> tuple[int, str]:
        """goto / answer on the app's own snapshot: (the CLI's exit code, one line to show)."""
        if isinstance(command, Goto):
            from notifier.actions.goto import go

            return go(self.config, self.snapshot(), command.session)
        from notifier.actions.answer import answer_line

        return answer_line(
            self.config, self.snapshot(), command.session, command.call, list(command.choices), command.text
        )

    def _act(self, command: Goto | Answer) -> None:
        """Carry out a goto or answer from the tray or a notification; when it cannot be done, the
        user is told what to do instead: in the window, opened at the question (its status line),
        or where there is no window, in a notification."""
        try:
            code, said = self._carry_out(command)
        except Exception as exc:  # never silently nothing
            code, said = 1, f"failed: {clean(exc, 200)}"
        log.info("%s: %s", "goto" if isinstance(command, Goto) else "answer", clean(said, 300))
        if code == 0:
            return
        what = "Cannot go to the session" if isinstance(command, Goto) else "Not answered"
        focus = Focus(command.session, command.call) if command.session and command.call else None
        shown = self.window.show(focus, said=f"{what}: {said}")
        if shown in ("no-display", "failed") and self.alerts is not None:
            self.alerts.tell(what, said)

    def handle(self, req: dict[str, Any], conn: Connection) -> dict[str, Any] | None:
        """One control request (on an ipc worker thread)."""
        return requests.handle(self.execute, req, conn)

    @property
    def alerts(self) -> AlertSink | None:
        """The notifier now running (it is started again if it dies: ``app/alerts.py``)."""
        return self.notifier.current

    def _preferences_changed(self, preferences: Preferences) -> None:
        self._changed()  # the tray and window show the snooze and the muted projects

    # ---- snapshot fan-out (engine thread) ----

    def snapshot(self) -> Snapshot:
        snap = self.engine.snapshot if self.engine is not None else Snapshot()
        prefs = self.preferences.value
        return dataclasses.replace(
            snap,
            snoozed_until=prefs.snooze_all_until or None,
            muted=prefs.muted,
            health=self.health.lines(),
        )

    def ready(self, info: ReadyInfo, snapshot: Snapshot) -> None:
        self._changed()

    def transitions(self, items: Sequence[Transition], snapshot: Snapshot) -> None:
        self.notifier.supervise(snapshot, self.engine)
        self._changed()

    # ---- the tray and the window (UI thread) ----

    def _changed(self) -> None:
        """Something the tray or window shows changed: the UI thread redraws (coalesced), so
        the engine thread is never held up by drawing."""
        self._ui_dirty.set()

    def _ui_loop(self) -> None:
        wake_in: float | None = None  # until the tray next reads differently by itself (an age)
        while True:
            changed = self._ui_dirty.wait(wake_in)  # (a delay: a wall clock set back changes no wait)
            self._ui_dirty.clear()
            if self.stop_event.is_set():
                return
            try:
                wake_in = self._refresh(window=changed)
            except BaseException as exc:  # whatever it is, the next change redraws again
                wake_in = None
                if self.health.failed("tray and window", exc, "drawn again at the next change"):
                    log.error("updating the tray and window failed", exc_info=exc)

    def _refresh(self, window: bool = True) -> float | None:
        """Draw the tray (and, ``window``: push to the window); returns how long until the tray's
        ages or quiet hours next read differently (None: not before the next change)."""
        from notifier.core.quiet import next_quiet_change, parse_quiet_hours
        from notifier.ui.menu import next_redraw

        snap = self.snapshot()
        if window:
            self.window.push(snap)
        if self.tray is None:
            return None
        quiet = self.config["quiet_hours"]
        try:
            self.tray.update(snap, quiet)
        except Exception:
            log.exception("tray update failed")
        now = time.time()
        times = [next_redraw(snap, now), next_quiet_change(parse_quiet_hours(quiet), now)]
        due = min((t for t in times if t is not None), default=None)
        return None if due is None else max(0.0, due - now)

    # ---- lifecycle ----

    def start(self) -> None:
        """Everything but the main-thread loop."""
        self.store.prune(time.time() - self.config["history.retention_days"] * 86400)
        sinks: list[Sink] = []
        if self.json_out:
            sinks.append(JsonSink(on_broken=self.stop_event.set))
        sinks.append(HistorySink(self.store))
        if self.want_notify:
            if self.tray is None:  # (what shows questions while notifications cannot, for the log)
                self.notifier.instead = (
                    "with no tray icon either, only the run --json stream shows questions"
                    if self.json_out
                    else "with no tray icon either, nothing on this desktop shows questions"
                    " (pi-notifier status and pi-notifier show list them)"
                )
            sinks.append(self.notifier.start())
        sinks.append(self)
        from notifier.app.remotes import Hub

        self.hub = Hub(self.config, self.store)
        sinks += self.hub.sinks()
        self._ui_thread.start()
        options = engine_options(self.config)
        if self.state_dir:
            options.cache_path = os.path.join(self.state_dir, "scan-cache.sqlite3")
        self.engine = Engine(options, sinks)
        self.engine.health = self.health
        self.engine.on_failure = self._changed  # the tray shows that it is being restarted
        if not self.state_dir:  # (followed from before "ready"; the demo keeps to its own settings)
            self._follow_config()
        self.engine.start()
        self.hub.start(self.engine)
        self.dialogs = DialogFeed.attach(self.engine)  # the companion extension's dialogs, if any

    # ---- the config file, followed ----

    def _follow_config(self) -> None:
        from notifier.system import paths
        from notifier.watch.config_file import FileFollower

        path = self.config.file or paths.config_file()
        self._file_values = self._read_config(path) or {}
        self.follower = FileFollower(path, lambda: self._config_file_changed(path))
        self.follower.start()

    def _read_config(self, path: str) -> dict[str, Any] | None:
        """The file's settings (a missing file: the defaults); None for a bad edit, whose reason is
        said once (the last good config stays)."""
        from notifier.config.load import ConfigError, load

        try:
            values = load(path, explicit=False).values
        except ConfigError as exc:
            if str(exc) != self._config_error:
                self._config_error = str(exc)
                log.warning("%s; keeping the last good config", exc)
            return None
        self._config_error = ""
        return values

    def _config_file_changed(self, path: str) -> None:
        """(The follower's thread.) Quiet hours follow the file at once; other keys at the next start."""
        values = self._read_config(path)
        if values is None:
            return
        before, self._file_values = self._file_values, values
        changed = sorted(k for k in values if values[k] != before.get(k))
        if "quiet_hours" in changed:
            quiet = values["quiet_hours"]
            self.config.set("quiet_hours", quiet, clean(path))
            log.info("config: quiet hours %s", quiet or "off")
            alerts = self.alerts
            if alerts is not None:
                alerts.set_quiet_hours(quiet)
            self._changed()  # the tooltip says so
        later = [k for k in changed if k != "quiet_hours"]
        if later:
            log.info("config: %s changed; applies at the next start", ", ".join(later))

    def serve(self) -> None:
        self.server = Server(self.socket, self.handle)
        try:
            self.server.start()
        except OSError as exc:
            log.warning(
                "cannot open the control channel (%s); a second pi-notifier will not find this one", exc
            )
            self.server = None

    def run_loop(self) -> int:
        """Block in the main thread until asked to stop."""
        if self.tray is not None and not self.stop_event.is_set():
            try:
                self.tray.run(self._changed, self.stop_event)
            except Exception as exc:
                if self.stop_event.is_set():
                    # pystray's GTK backends close their own notification on the way out, which
                    # fails where no notification server runs: harmless then.
                    log.debug("tray stopped with: %s", clean(exc, 200))
                else:
                    log.warning("the tray stopped (%s); carrying on without it", clean(exc, 200))
                self.tray = None
        self.stop_event.wait()  # no polling: a signal, Quit or a closed --json pipe sets it
        return 0

    def shutdown(self) -> None:
        """Stop everything within SHUTDOWN_BUDGET_S, whatever hangs: the engine (perhaps in the
        middle of a long start-up scan or a blocked write) and the notifier (perhaps waiting on
        a slow notification server) are stopped side by side, each waited for only until the
        deadline; what is still busy then is left to end with the process (daemon threads)."""
        deadline = time.monotonic() + SHUTDOWN_BUDGET_S
        self.stop_event.set()
        self._ui_dirty.set()  # lets the UI thread finish
        if self.server is not None:
            self.server.stop()
        if self.dialogs is not None:
            self.dialogs.stop()
        if self.follower is not None:
            self.follower.stop()
        self.window.close()
        if self.hub is not None:
            self.hub.stop()
        stoppers: list[tuple[str, Callable[[], object]]] = []
        engine, alerts = self.engine, self.alerts
        if engine is not None:
            stoppers.append(("the engine", lambda: engine.stop(timeout=SHUTDOWN_BUDGET_S)))
        if alerts is not None:
            stoppers.append(("the notifier", alerts.stop))
        late = stop_side_by_side(stoppers, deadline)
        if late:
            log.warning(
                "%s did not stop within %.1f s; exiting anyway", " and ".join(late), SHUTDOWN_BUDGET_S
            )
        self.store.close(timeout=max(0.05, deadline - time.monotonic()))
        if self.lock is not None:
            self.lock.release()
