"""The running app: engine + sinks + tray + the control channel + the window process.

One instance per user for the tray app (a lock file, then a Unix socket); headless runs
(`run --no-tray`) never take the lock and always work beside it.
"""

from __future__ import annotations

import contextlib
import dataclasses
import datetime as dt
import logging
import os
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Sequence
from typing import Any

from notifier.core.model import Snapshot, Transition
from notifier.core.text import clean
from notifier.engine.loop import Engine
from notifier.engine.options import engine_options
from notifier.engine.supervise import Health, ReadyInfo, Sink
from notifier.sinks.jsonout import JsonSink, status_obj
from notifier.system import ipc
from notifier.system.config import Config
from notifier.system.store import Store
from notifier.ui.view import window_obj

log = logging.getLogger(__name__)
SHUTDOWN_BUDGET_S = 0.8  # a signal ends the app well inside 2 s, whatever hangs


def open_store() -> Store:
    from notifier.system import paths

    return Store(os.path.join(paths.state_dir(), "state.sqlite3"))


def tomorrow_morning(now: float) -> float:
    local = dt.datetime.fromtimestamp(now)
    return (local + dt.timedelta(days=1)).replace(hour=8, minute=0, second=0, microsecond=0).timestamp()


class HistorySink:
    """Records every question (asked, resolved, how long it waited) in the store."""

    def __init__(self, store: Store) -> None:
        self.store = store

    def ready(self, info: ReadyInfo, snapshot: Snapshot) -> None:
        pass

    def transitions(self, items: Sequence[Transition], snapshot: Snapshot) -> None:
        if items:
            self.store.record(items)


class InstanceLock:
    """Held for the life of the tray app: a second one knows the first is there."""

    def __init__(self, path: str) -> None:
        self.path = path
        self.fh: Any = None

    def acquire(self) -> bool:
        os.makedirs(os.path.dirname(self.path), mode=0o700, exist_ok=True)
        self.fh = open(self.path, "a+")  # noqa: SIM115
        try:
            import fcntl

            fcntl.flock(self.fh.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
            return True
        except ImportError:  # no flock (Windows): the socket alone decides
            return True
        except OSError:
            self.fh.close()
            self.fh = None
            return False

    def release(self) -> None:
        if self.fh is not None:
            self.fh.close()
            self.fh = None


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
        self.socket = socket or ipc.socket_path()
        self.json_out = json_out
        self.want_tray = tray
        self.want_notify = notify and config["notifications.backend"] != "none"
        self.stop_event = threading.Event()
        self.store = Store(os.path.join(state_dir, "state.sqlite3")) if state_dir else open_store()
        self.snoozed_until = 0.0
        self.muted: set[str] = set()
        self.engine: Engine | None = None
        self.alerts: Any = None
        self.tray: Any = None
        self.server: ipc.Server | None = None
        self.lock: InstanceLock | None = None
        self._subscribers: list[ipc.Connection] = []
        self._sub_lock = threading.Lock()
        self._show_lock = threading.Lock()
        self._window: subprocess.Popen[bytes] | None = None
        self._pending_focus: list[str] | None = None
        self._subscribed = threading.Event()  # a window subscribed since the last one was started
        self._ui_dirty = threading.Event()
        self._ui_thread = threading.Thread(target=self._ui_loop, name="pi-notifier-ui", daemon=True)
        self.health = Health()  # shared with the engine: what failed and was recovered from
        self._alerts_restarts = 0
        self._alerts_next = 0.0  # monotonic: the earliest the notifier may be restarted again

    # ---- snapshot fan-out (engine thread) ----

    def snapshot(self) -> Snapshot:
        snap = self.engine.snapshot if self.engine is not None else Snapshot()
        return dataclasses.replace(
            snap,
            snoozed_until=self.snoozed_until or None,
            muted=frozenset(self.muted),
            health=self.health.lines(),
        )

    def ready(self, info: ReadyInfo, snapshot: Snapshot) -> None:
        self._changed()

    def transitions(self, items: Sequence[Transition], snapshot: Snapshot) -> None:
        self._supervise_alerts(snapshot)
        self._changed()

    def _supervise_alerts(self, snapshot: Snapshot) -> None:
        """The notifier works on a thread of its own; if that thread died, start a new notifier
        (bounded back-off) and hand it what is pending now (already notified ones stay quiet)."""
        alerts = self.alerts
        thread = getattr(alerts, "_thread", None)
        if alerts is None or thread is None or thread.is_alive() or self.stop_event.is_set():
            return
        if not thread.ident:
            return  # not started yet
        mono = time.monotonic()
        if mono < self._alerts_next:
            return
        self._alerts_restarts += 1
        delay = min(1.0 * 2 ** (self._alerts_restarts - 1), 60.0)
        self._alerts_next = mono + delay
        first = self.health.failed(
            "notifications", RuntimeError("the notifier stopped"), f"restarted {self._alerts_restarts}×"
        )
        (log.error if first else log.warning)("the notifier stopped; starting it again")
        try:
            fresh = self._make_alerts()
        except Exception as exc:
            log.warning("cannot start the notifier again (%s)", clean(exc, 200))
            return
        engine = self.engine
        if engine is not None:
            engine.sinks[:] = [fresh if s is alerts else s for s in engine.sinks]
        self.alerts = fresh
        pending = [
            Transition("needs_input", view.ref, q, snapshot.taken_at, initial=True) for view, q in snapshot.pending
        ]
        if pending:
            fresh.transitions(pending, snapshot)
        self.health.recovered("notifications")

    def _make_alerts(self) -> Any:
        from notifier.sinks.notify import AlertSink

        alerts = AlertSink(
            self.config,
            self.store,
            on_show=lambda f, c: self.show([f, c] if f and c else None),
            on_snooze=self._on_alert_snooze,
        )
        alerts.start()
        return alerts

    def _changed(self) -> None:
        """Something the tray or window shows changed: the UI thread redraws (coalesced), so
        the engine thread is never held up by drawing."""
        self._ui_dirty.set()

    def _ui_loop(self) -> None:
        while True:
            self._ui_dirty.wait()
            self._ui_dirty.clear()
            if self.stop_event.is_set():
                return
            try:
                self._refresh()
            except BaseException as exc:  # whatever it is, the next change redraws again
                if self.health.failed("tray and window", exc, "drawn again at the next change"):
                    log.error("updating the tray and window failed", exc_info=exc)

    def _refresh(self) -> None:
        snap = self.snapshot()
        if self.tray is not None:
            try:
                self.tray.update(snap)
            except Exception:
                log.exception("tray update failed")
        with self._sub_lock:
            subs = list(self._subscribers)
        if subs:
            # Encoded once; send() only queues (a newer snapshot replaces an unsent one), so a
            # window that stops reading never holds up this thread; the channel drops it.
            message = ipc.encode({"window": window_obj(snap)})
            gone = [conn for conn in subs if not conn.send(message, kind="window")]
            if gone:
                with self._sub_lock:
                    self._subscribers = [c for c in self._subscribers if c not in gone]

    # ---- actions (tray, window, notifications, control channel) ----

    def act(self, verb: str, arg: Any) -> None:
        if verb == "show":
            self.show(arg)
        elif verb == "clear":
            self.clear(None if arg is None else arg[0], None if arg is None else arg[1])
        elif verb == "snooze":  # all sessions: seconds, "tomorrow", or 0 to resume
            now = time.time()
            if arg == "tomorrow":
                self.snooze(None, tomorrow_morning(now))
            else:
                seconds = float(arg)
                self.snooze(None, now + seconds if seconds > 0 else 0.0)
        elif verb == "unmute":
            self.mute(str(arg), False)
        elif verb == "quit":
            self.stop_event.set()

    def show(self, focus: list[str] | None = None, wait: float = 0.0) -> str:
        """Open the window (one at a time), or raise the open one at ``focus``. Says what really
        happened: "raised", "opened" (a new window subscribed within ``wait`` s), "starting"
        (not confirmed yet), "no-display" or "failed"."""
        with self._show_lock:
            result = self._show(focus)
            window = self._window
        deadline = time.monotonic() + wait
        while result == "starting" and window is not None and time.monotonic() < deadline:
            if self._subscribed.wait(0.05):
                return "opened"
            if window.poll() is not None:
                return "failed"
        return result

    def _show(self, focus: list[str] | None) -> str:
        with self._sub_lock:
            self._subscribers = [c for c in self._subscribers if not c.closed]
            subs = list(self._subscribers)
        delivered = [conn.send({"focus": focus}) for conn in subs]
        if any(delivered):
            return "raised"
        if self._window is not None and self._window.poll() is None:
            self._pending_focus = focus  # starting: it gets the focus when it subscribes
            return "starting"
        if not _has_display():
            log.warning("cannot open the window: no display to show the window on (DISPLAY is not set)")
            return "no-display"
        cmd = [sys.executable, "-m", "notifier", "show", "--attach"]
        if focus:
            cmd += ["--focus", focus[0], focus[1]]
        self._pending_focus = focus
        env = dict(os.environ, **{ipc.SOCKET_ENV: self.socket})
        self._subscribed.clear()
        try:
            self._window = subprocess.Popen(cmd, stdin=subprocess.DEVNULL, env=env)
        except OSError as exc:
            log.warning("cannot open the window: %s", exc)
            return "failed"
        return "starting"

    def clear(self, session: str | None, call: str | None) -> None:
        engine = self.engine
        if engine is None:
            return

        def do() -> None:
            keys = (
                [session]
                if session
                else [v.ref.key for v in engine.board.snapshot(0).sessions if v.abandoned]
            )
            for key in keys:
                engine.board.clear_abandoned(key, call)

        engine.call(do)

    def snooze(self, session: str | None, until: float, project: str | None = None) -> None:
        """Snooze a session, a project or (both None) everything; until ≤ now resumes all."""
        now = time.time()
        if session is None and project is None:
            self.snoozed_until = until if until > now else 0.0
            if self.snoozed_until:
                self.store.snooze(until)
            else:
                self.store.clear_snoozes()
        else:
            self.store.snooze(until, session, project)
        if self.alerts is not None:
            self.alerts.snooze(session, until if until > now else 0.0, project)
        self._changed()

    def mute(self, project: str, on: bool) -> None:
        (self.muted.add if on else self.muted.discard)(project)
        self.store.mute(project, on)
        if self.alerts is not None:
            self.alerts.mute(project, on)
        self._changed()

    def _on_alert_snooze(self, session: str | None, until: float) -> None:
        """'Snooze 15 min' on a notification: persist it like any other snooze."""
        self.store.snooze(until, session)
        if session is None:
            self.snoozed_until = until
        self._changed()

    # ---- control channel ----

    def handle(self, req: dict[str, Any], conn: ipc.Connection) -> dict[str, Any] | None:
        """One control request (on an ipc worker thread). Fields are type-checked: a wrong one
        raises ipc.BadRequest, which the client gets as ``{"ok": false, "error": …}``."""
        cmd = req.get("cmd")
        if cmd == "ping":
            return {"ok": True, "pid": os.getpid(), "roots": self.config["sessions_dirs"]}
        if cmd == "health":
            engine = self.engine
            return {
                "ok": True,
                "pid": os.getpid(),
                "ready": engine is not None and engine.ready_event.is_set(),
                "engine_restarts": engine.restarts if engine is not None else 0,
                "problems": self.health.report(),
                "display": _has_display(),
                "tray": self.tray is not None,
                "store": "persistent" if self.store.persistent else "in memory",
            }
        if cmd == "show":
            wait = min(2.0, max(0.0, ipc.opt_number(req, "wait")))
            window = self.show(ipc.focus_arg(req.get("focus")), wait)
            return {"ok": True, "window": window, "display": _has_display()}
        if cmd == "status":
            roots = ipc.opt_str_list(req, "roots") or []
            tools = ipc.opt_str_list(req, "question_tools") or []
            liveness = ipc.opt_str(req, "liveness", 40) or self.config["liveness"]
            same = sorted(roots) == sorted(self.config["sessions_dirs"])
            same = same and liveness == self.config["liveness"]
            same = same and sorted(tools) == sorted(self.config["question_tools"])
            return {"ok": True, "status": status_obj(self.snapshot())} if same else {"ok": False}
        if cmd == "subscribe":
            with self._sub_lock:
                self._subscribers = [c for c in self._subscribers if not c.closed]
                self._subscribers.append(conn)
            self._subscribed.set()
            conn.send({"window": window_obj(self.snapshot())}, kind="window")
            if self._pending_focus:
                conn.send({"focus": self._pending_focus})
                self._pending_focus = None
            return None
        if cmd == "snooze":
            seconds = ipc.opt_number(req, "seconds")
            session, project = ipc.opt_str(req, "session"), ipc.opt_str(req, "project")
            self.snooze(session, time.time() + seconds if seconds > 0 else 0.0, project or None)
            return {"ok": True}
        if cmd == "mute":
            project, on = ipc.opt_str(req, "project"), ipc.opt_bool(req, "on", True)
            if project:
                self.mute(project, on)
            return {"ok": True}
        if cmd == "clear":
            self.clear(ipc.opt_str(req, "session"), ipc.opt_str(req, "call"))
            return {"ok": True}
        if cmd == "act":
            verb, arg = req.get("verb"), req.get("arg")
            if verb == "show":
                arg = ipc.focus_arg(arg, "arg")
            elif verb == "clear":
                if arg is not None and not (
                    isinstance(arg, list)
                    and len(arg) == 2
                    and all(a is None or isinstance(a, str) for a in arg)
                ):
                    raise ipc.BadRequest("arg must be [session, call] or null")
            elif verb == "snooze":
                if arg != "tomorrow":
                    arg = ipc.opt_number(req, "arg")
            elif verb == "unmute":
                if not isinstance(arg, str):
                    raise ipc.BadRequest("arg must be a project name")
            elif verb != "quit":
                raise ipc.BadRequest(f"unknown verb {clean(verb, 40)}")
            self.act(verb, arg)
            return {"ok": True}
        if cmd == "quit":
            self.stop_event.set()
            return {"ok": True}
        return {"ok": False, "error": f"unknown command {clean(cmd, 40)}"}

    # ---- lifecycle ----

    def _restore(self) -> None:
        now = time.time()
        for session, project, until in self.store.snoozes(now):
            if session is None and project is None:
                self.snoozed_until = until
        self.muted = set(self.store.mutes())

    def start(self) -> None:
        """Everything but the main-thread loop."""
        self._restore()
        self.store.prune(time.time() - self.config["history.retention_days"] * 86400)
        sinks: list[Sink] = []
        if self.json_out:
            sinks.append(JsonSink(on_broken=self.stop_event.set))
        sinks.append(HistorySink(self.store))
        if self.want_notify:
            self.alerts = self._make_alerts()
            sinks.append(self.alerts)
        sinks.append(self)
        self._ui_thread.start()
        options = engine_options(self.config)
        if self.state_dir:
            options.cache_path = os.path.join(self.state_dir, "scan-cache.sqlite3")
        self.engine = Engine(options, sinks)
        self.engine.health = self.health
        self.engine.on_failure = self._changed  # the tray shows that it is being restarted
        self.engine.start()

    def serve(self) -> None:
        self.server = ipc.Server(self.socket, self.handle)
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
                    log.warning("the tray stopped (%s); carrying on with notifications only", clean(exc, 200))
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
        with self._sub_lock:
            for conn in self._subscribers:
                conn.close()
            self._subscribers.clear()
        if self._window is not None and self._window.poll() is None:
            self._window.terminate()
        stoppers: list[tuple[str, Any]] = []
        engine, alerts = self.engine, self.alerts
        if engine is not None:
            stoppers.append(("the engine", lambda: engine.stop(timeout=SHUTDOWN_BUDGET_S)))
        if alerts is not None:
            stoppers.append(("the notifier", alerts.stop))
        threads = []
        for name, fn in stoppers:
            t = threading.Thread(target=_quietly(name, fn), name=f"pi-notifier-stop {name}", daemon=True)
            t.start()
            threads.append((name, t))
        for _, t in threads:
            t.join(max(0.0, deadline - time.monotonic()))
        late = [name for name, t in threads if t.is_alive()]
        if late:
            log.warning("%s did not stop within %.1f s; exiting anyway", " and ".join(late), SHUTDOWN_BUDGET_S)
        self.store.close(timeout=max(0.05, deadline - time.monotonic()))
        if self.lock is not None:
            self.lock.release()


def _quietly(name: str, fn: Any) -> Any:
    def run() -> None:
        try:
            fn()
        except BaseException as exc:  # on the way out: say it, never hang or trace back
            log.warning("stopping %s failed: %s", name, clean(exc, 200))

    return run


def _has_display() -> bool:
    if not sys.platform.startswith("linux"):
        return True
    return bool(os.environ.get("DISPLAY") or os.environ.get("WAYLAND_DISPLAY"))


def install_signals(stop: threading.Event) -> None:
    """SIGINT, SIGTERM and SIGHUP end the app cleanly.

    A signal may be delivered to any thread, while Python runs handlers only in the main thread,
    which sleeps in an untimed wait (no polling). So the interpreter's own wakeup fd carries the
    signal: its C-level handler writes to a pipe whichever thread was hit, and a relay thread sets
    ``stop``. (Setting the event inside a Python handler could also deadlock on its lock.)"""
    r, w = os.pipe()
    os.set_blocking(w, False)

    def relay() -> None:
        try:
            os.read(r, 1)
        except OSError:
            return
        stop.set()

    threading.Thread(target=relay, name="pi-notifier-signals", daemon=True).start()
    try:
        signal.set_wakeup_fd(w, warn_on_full_buffer=False)
    except (ValueError, OSError):  # not the main thread: Python handlers still work there
        pass

    def handler(signum: int, frame: Any) -> None:
        with contextlib.suppress(OSError):
            os.write(w, b"s")

    for sig in (signal.SIGINT, signal.SIGTERM, getattr(signal, "SIGHUP", None)):
        if sig is not None:
            with contextlib.suppress(ValueError, OSError):
                signal.signal(sig, handler)


class LocalSource:
    """For `pi-notifier show` when no app runs: the window gets an engine of its own."""

    def __init__(self, config: Config) -> None:
        self.config = config
        self.engine: Engine | None = None
        self._push: Any = None

    def start(self, push: Any) -> None:
        self._push = push
        self.engine = Engine(engine_options(self.config), [self])
        self.engine.start()

    def ready(self, info: ReadyInfo, snapshot: Snapshot) -> None:
        self._push({"window": window_obj(snapshot)})

    def transitions(self, items: Sequence[Transition], snapshot: Snapshot) -> None:
        self._push({"window": window_obj(snapshot)})

    def command(self, obj: dict[str, Any]) -> None:
        engine = self.engine
        if engine is None:
            return
        if obj.get("cmd") == "clear":
            session, call = obj.get("session"), obj.get("call")
            if isinstance(session, str):
                engine.call(
                    lambda: engine.board.clear_abandoned(session, call if isinstance(call, str) else None)
                )
        elif obj.get("cmd") in ("snooze", "mute"):
            store = open_store()
            try:
                if obj["cmd"] == "snooze":
                    session, project = obj.get("session"), obj.get("project")
                    store.snooze(
                        time.time() + float(obj.get("seconds") or 0),
                        session if isinstance(session, str) else None,
                        project if isinstance(project, str) else None,
                    )
                elif obj["cmd"] == "mute" and isinstance(obj.get("project"), str):
                    store.mute(obj["project"], bool(obj.get("on", True)))
            finally:
                store.close()

    def close(self) -> None:
        if self.engine is not None:
            self.engine.stop()
