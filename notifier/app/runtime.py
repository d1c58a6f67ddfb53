"""The running app: wiring and lifecycle of the engine, the sinks, the tray, the control channel
and the window process; every command, whoever sends it, is carried out in :meth:`App.execute`.

One instance per user for the tray app (``instance.py``: a lock file, then a Unix socket);
headless runs (`run --no-tray`) never take the lock and always work beside it.
"""

from __future__ import annotations

import logging
import os
import threading
import time
from collections.abc import Callable
from typing import Any

from notifier.actions.answer import carry_out
from notifier.app import requests
from notifier.app.alerts import notifier
from notifier.app.choices import PreferencesOwner, open_store
from notifier.app.decorate import WindowDecoration
from notifier.app.dialog_feed import DialogFeed
from notifier.app.instance import InstanceLock
from notifier.app.local import clear_abandoned
from notifier.app.remotes import Hub
from notifier.app.stopping import stop_side_by_side
from notifier.app.window_process import WindowProcess, has_display
from notifier.config import Config
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
from notifier.core.model import Snapshot
from notifier.core.text import clean
from notifier.engine import Engine, Sink
from notifier.outputs.desktop import AlertSink
from notifier.outputs.history import HistorySink
from notifier.outputs.jsonout import JsonSink
from notifier.outputs.tray import Redraw, Tray, UiState
from notifier.sessions import engine_options
from notifier.store import Store
from notifier.system.supervisor import FailureLog
from notifier.watch import ConfigFollower

log = logging.getLogger(__name__)
SHUTDOWN_BUDGET_S = 0.8  # a signal ends the app well inside 2 s, whatever hangs


class App:
    def __init__(
        self,
        config: Config,
        json_out: bool,
        notify: bool,
        socket: str | None = None,
        state_dir: str | None = None,
        lock: InstanceLock | None = None,
    ) -> None:
        """``state_dir``: keep the store and scan cache there instead of the user's state folder
        (the demo must not write into the real history). ``lock``: the one app's lock, held,
        released at shutdown. The tray and a headless run's notifier turns are given to
        :meth:`start` (they are built on the app: its commands, its state)."""
        self.config = config
        self.state_dir = state_dir
        self.socket = socket or socket_path()
        self.json_out = json_out
        self.want_notify = notify and config["notifications.backend"] != "none"
        self.stop_event = threading.Event()
        self.store = open_store(state_dir)
        self.preferences = PreferencesOwner(self.store, time.time())  # restored from the store
        self.engine: Engine | None = None  # built in start(), with its sinks fixed
        self.alerts: AlertSink | None = None  # the notifier (it keeps itself running)
        self.tray: Tray | None = None  # (given to start(); None once it stopped)
        self.server: Server | None = None
        self.lock = lock
        self.health = FailureLog()  # shared with the engine and the notifier: what failed and was recovered
        decorate = WindowDecoration(lambda: self.preferences.value, self._changed, self.stop_event)
        self.window = WindowProcess(self.socket, decorate=decorate)
        self.redraw = Redraw(
            lambda: self.preferences.value, self.window, lambda: self.tray, config, self.health, self.stop_event
        )
        self.hub: Hub | None = None  # remote hosts and pushes (app/remotes.py)
        self.dialogs: DialogFeed | None = None  # the companion extension's dialogs (app/dialog_feed.py)
        self.preferences.listen(lambda _: self._changed(), current=False)  # the tray shows snoozes, mutes
        self.follower = ConfigFollower(config, self._quiet_hours_changed)  # the file, while the app runs

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
            return requests.status_reply(self.config, command, self.ui_state())
        return {"ok": True}

    def _carry_out(self, command: Goto | Answer) -> tuple[int, str]:
        """goto / answer on the app's own snapshot: (the CLI's exit code, one line to show)."""
        return carry_out(self.config, self.snapshot(), command)

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

    # ---- what the sinks and the UI get ----

    def snapshot(self) -> Snapshot:
        """The engine's snapshot, as every sink got it."""
        return self.engine.snapshot if self.engine is not None else Snapshot()

    def ui_state(self) -> UiState:
        """What the tray, the window and the control replies show: the snapshot and the user's choices."""
        return UiState(self.snapshot(), self.preferences.value, self.health.lines())

    def _changed(self) -> None:
        self.redraw.changed()

    def _quiet_hours_changed(self, quiet: str) -> None:
        if self.alerts is not None:
            self.alerts.set_quiet_hours(quiet)
        self._changed()  # the tooltip says so

    # ---- lifecycle ----

    def start(self, tray: Tray | None = None, turns: Sink | None = None) -> None:
        """Everything but the main-thread loop. ``tray``: the icon :meth:`run_loop` runs (None:
        none). ``turns``: a headless run that hands notifying to the app and takes it back: its
        sink passes the engine's calls to ``alerts`` of the moment (cli/notify_turns.py)."""
        self.tray = tray
        self.store.prune(time.time() - self.config["history.retention_days"] * 86400)
        sinks: list[Sink] = []
        lines = [JsonSink(on_broken=self.stop_event.set)] if self.json_out else []
        sinks.append(HistorySink(self.store))
        if self.want_notify:
            self.alerts = self.new_notifier(self.store, self.preferences)
        if turns is not None:  # (a headless run: the notifier of the moment, or none)
            sinks.append(turns)
        elif self.alerts is not None:
            sinks.append(self.alerts)
        sinks.append(self.redraw)

        self.hub = Hub(self.config, self.store)
        sinks += self.hub.sinks()
        self.redraw.start()
        options = engine_options(self.config)
        if self.state_dir:
            options.cache_path = os.path.join(self.state_dir, "scan-cache.sqlite3")
        # (on_failure: the tray shows that the engine is being restarted)
        self.engine = Engine(options, sinks, health=self.health, on_failure=self._changed, lines=lines)
        if not self.state_dir:  # (followed from before "ready"; the demo keeps to its own settings)
            self.follower.start()
        self.engine.start()
        self.hub.start(self.engine)
        self.dialogs = DialogFeed.attach(self.engine)  # the companion extension's dialogs, if any

    def new_notifier(self, store: Store, preferences: PreferencesOwner) -> AlertSink:
        """A notifier, started, recording in ``store``, following ``preferences``."""
        return notifier(self.config, store, preferences, self.health, self.execute, self._instead())

    def _instead(self) -> str | None:
        """What shows questions while notifications cannot (for the log; None: the tray)."""
        if self.tray is not None:
            return None
        if self.json_out:
            return "with no tray icon either, only the run --json stream shows questions"
        return (
            "with no tray icon either, nothing on this desktop shows questions"
            " (pi-notifier status and pi-notifier show list them)"
        )

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
        self.redraw.changed()  # lets the UI thread finish
        if self.server is not None:
            self.server.stop()
        if self.dialogs is not None:
            self.dialogs.stop()
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
