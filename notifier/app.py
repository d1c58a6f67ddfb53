"""The running app: wiring and lifecycle of the engine, its outputs, the tray, the control channel
and the window process; every command, whoever sends it, is carried out in :meth:`App.execute`.

- the user's choices (snoozes and mutes) have one keeper, :class:`SilencesKeeper`; a snooze,
  mute or clear is carried out one way (:func:`apply_silence_or_clear`), and without an app
  saved in the store, which a headless run (no control channel) follows: what is saved there
  reaches its notifier as a command reaches the app's;
- control requests are parsed once into commands (:func:`handle`) and answered;
- every long-lived part is kept running by the one supervisor and back-off
  (:mod:`notifier.system.supervisor`): the engine, the outputs thread, push; each remote link
  reconnects on that back-off;
- SIGINT, SIGTERM and SIGHUP end the app cleanly (:func:`install_signals`), and stopping is
  bounded (:func:`stop_side_by_side`);
- without an app, ``pi-notifier show`` has a source of its own (:class:`LocalSource`);
- the window process (``pi-notifier show --attach``): opened one at a time, raised and focused
  over the control channel, fed snapshots as it subscribes (:class:`WindowProcess`), with what
  it shows beyond the snapshot (:class:`WindowDecoration`: where each pi runs, looked up on a
  thread of its own, and what is snoozed, as the outputs thread hands it the silences).

One instance per user for the tray app, and who notifies: :mod:`notifier.instance`.
"""

from __future__ import annotations

import contextlib
import logging
import os
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Sequence
from types import FrameType
from typing import Any

from notifier.actions.goto import configured, window_locations
from notifier.channel import encode
from notifier.companion import DialogFeed
from notifier.config import Config
from notifier.control import SOCKET_ENV, Connection, Server, drain, socket_path
from notifier.core import commands
from notifier.core.codec import bar_summary, status_obj
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
from notifier.core.planner import Silences, quiet_hours_note, quiet_hours_obj
from notifier.core.text import clean
from notifier.engine import Batch, Engine, Output, ReadyInfo
from notifier.instance import InstanceLock
from notifier.outputs.desktop import Notifier
from notifier.outputs.jsonout import JsonOutput
from notifier.outputs.push import PushOutput
from notifier.outputs.tray import Redraw, Tray, UiState
from notifier.remote import Remotes
from notifier.sessions import engine_options
from notifier.store import FILE_NAME, Store
from notifier.system import paths
from notifier.system import window_manager as wm
from notifier.system.supervisor import FailureLog, Stop, Worker
from notifier.watch import ConfigFollower, FileFollower
from notifier.window.view import mark_snoozes, window_obj

log = logging.getLogger(__name__)
SHUTDOWN_BUDGET_S = 0.8  # a signal ends the app well inside 2 s, whatever hangs
Reply = dict[str, Any]
Listener = Callable[[Silences], None]


# ---- the window process ----

def window_display() -> tuple[dict[str, str] | None, str]:
    """Where the window (Tk: X only) can open: (environment variables to add for it, what that
    display is), or (``None``, why none can, in one line). On Wayland without ``DISPLAY``, the
    compositor's XWayland display (:func:`notifier.system.window_manager.window_display`)."""
    if not sys.platform.startswith("linux"):
        return {}, "the desktop"
    return wm.window_display()


def has_display() -> bool:
    return window_display()[0] is not None


class WindowProcess:
    """Every open window is a subscribed connection; at most one is started by this app (waited
    for as it ends, on ``worker``'s loop: no process left a zombie)."""

    def __init__(
        self,
        socket: str,
        decorate: Callable[[dict[str, Any], Silences], dict[str, Any]] | None = None,
        worker: Worker | None = None,
    ):
        self.socket = socket  # the channel the window connects back to
        self.decorate = decorate  # adds to each window object what the snapshot does not hold
        self.worker = worker
        self.subscribers: tuple[Connection, ...] = ()  # the open windows (replaced whole, under _sub_lock)
        self._sub_lock = threading.Lock()
        self._show_lock = threading.Lock()
        self._process: subprocess.Popen[bytes] | None = None
        self._pending: dict[str, Any] | None = None  # where the window being started is to look, when it subscribes
        self._subscribed = threading.Event()  # a window subscribed since the last one was started
        self._closed = False  # the app quits: no window is opened any more

    def show(self, focus: Focus | None = None, wait: float = 0.0, said: str | None = None) -> str:
        """Open the window (one at a time), or raise the open one at ``focus``; ``said``: a line
        for its status line. Says what really happened: "raised", "opened" (a new window
        subscribed within ``wait`` s), "starting" (not confirmed yet), "no-display" or "failed"."""
        # what tells an open window where to look (and, ``said``, a line for its status line)
        message = {"focus": [focus.file, focus.call] if focus is not None else None, **({"said": said} if said else {})}
        with self._show_lock:
            result = self._show(message)
            process = self._process
        deadline = time.monotonic() + wait
        while result == "starting" and process is not None and time.monotonic() < deadline:
            if self._subscribed.wait(0.05):
                return "opened"
            if process.poll() is not None:
                return "failed"
        return result

    def _show(self, message: dict[str, Any]) -> str:
        if self._closed:
            return "failed"
        if any([conn.send(message) for conn in self._keep()]):
            return "raised"
        if self._process is not None and self._process.poll() is None:
            self._pending = message  # starting: it gets the focus when it subscribes
            return "starting"
        extra, said = window_display()
        if extra is None:
            log.warning("cannot open the window: %s", said)
            return "no-display"
        cmd = [sys.executable, "-m", "notifier", "show", "--attach"]
        if message["focus"]:
            cmd += ["--focus", *message["focus"]]
        self._pending = message
        env = dict(os.environ, **extra, **{SOCKET_ENV: self.socket})
        self._subscribed.clear()
        try:
            self._process = subprocess.Popen(cmd, stdin=subprocess.DEVNULL, env=env)
        except OSError as exc:
            log.warning("cannot open the window: %s", exc)
            return "failed"
        self._wait_for(self._process)
        return "starting"

    def _wait_for(self, process: subprocess.Popen[bytes]) -> None:
        """Wait for the window process as it ends (its pidfd, on the worker's loop), rather than
        at the next click. Without a pidfd (not Linux ≥ 5.3) it is, as before, at the next one."""
        worker = self.worker
        if worker is None or not hasattr(os, "pidfd_open"):
            return
        try:
            fd = os.pidfd_open(process.pid)
        except OSError:
            return

        def ended() -> None:
            try:
                process.poll()
            finally:  # (a descriptor left watched would be ready for ever)
                worker.unwatch(fd)
                os.close(fd)

        worker.watch(fd, ended)

    def subscribe(self, conn: Connection, current: Callable[[], tuple[Snapshot, Silences]]) -> None:
        """A window connected: it gets every snapshot from now on, and the focus it was opened for.
        The board as it is now (``current()``) is read once the window is among those pushed to,
        so no snapshot falls between (one read before could be overtaken: the window then showed
        an older board until the next change)."""
        self._keep(conn)
        self._subscribed.set()
        snapshot, silences = current()
        conn.send({"window": self._obj(snapshot, silences)}, kind="window")
        pending, self._pending = self._pending, None
        if pending is not None and (pending["focus"] or "said" in pending):
            conn.send(pending)

    def _keep(self, *new: Connection) -> tuple[Connection, ...]:
        """The open windows, the closed ones forgotten and ``new`` ones added."""
        with self._sub_lock:
            self.subscribers = (*(c for c in self.subscribers if not c.closed), *new)
            return self.subscribers

    def _obj(self, snapshot: Snapshot, silences: Silences) -> dict[str, Any]:
        obj = window_obj(snapshot)
        if self.decorate is not None:
            try:
                obj = self.decorate(obj, silences)
            except Exception as exc:  # what it adds is a nicety: the list is shown regardless
                log.debug("window object not decorated: %s", exc)
        return obj

    def push(self, snapshot: Snapshot, silences: Silences) -> None:
        """A new snapshot to every open window, with the user's snoozes and mutes (from the
        outputs thread, as handed to the tray's drawing)."""
        subs = self.subscribers
        if not subs:
            return
        # Encoded once; send() only queues (a newer snapshot replaces an unsent one), so a
        # window that stops reading never holds up this thread; the channel drops it.
        message = encode({"window": self._obj(snapshot, silences)})
        if not all([conn.send(message, kind="window") for conn in subs]):
            self._keep()

    def close(self) -> None:
        """The app quits: the open windows are closed, and none opens after (a Show still being
        handled finishes first: the window it started is closed too)."""
        with self._show_lock:
            self._closed = True
            process = self._process
        with self._sub_lock:
            for conn in self.subscribers:
                conn.close()
            self.subscribers = ()
        if process is not None and process.poll() is None:
            process.terminate()


LOCATE_AGAIN_S = 5.0  # the window's "Where" of unchanged questions is looked up again this often


class WindowDecoration:
    def __init__(self, on_found: Callable[[], None], stop: threading.Event):
        self.on_found = on_found
        self.stop_event = stop
        self._locations: tuple[tuple[Any, ...], float, dict[Any, Any]] | None = None  # the window's "Where"
        self._lock = threading.Lock()
        self._wanted: tuple[tuple[Any, ...], list[dict[str, Any]]] | None = None
        self._locating = False

    def __call__(self, obj: dict[str, Any], silences: Silences) -> dict[str, Any]:
        """The window's object with each question's last known location and the snooze marks."""
        now = time.time()
        questions = obj.get("questions", [])
        keys = tuple(tuple(q["key"]) for q in questions)
        with self._lock:
            cached = self._locations
            if cached is None or cached[0] != keys or now - cached[1] >= LOCATE_AGAIN_S:
                self._wanted = (keys, [dict(q) for q in questions])
                if not self._locating:
                    self._locating = True
                    threading.Thread(target=self._locate, name="pi-notifier-locate", daemon=True).start()
        found = cached[2] if cached is not None else {}
        for q in questions:
            q["location"] = found.get(tuple(q["key"]))
        return mark_snoozes(obj, silences, now)

    def _locate(self) -> None:
        while True:
            with self._lock:
                wanted, self._wanted = self._wanted, None
                if wanted is None or self.stop_event.is_set():
                    self._locating = False
                    return
            keys, questions = wanted
            try:
                window_locations({"questions": questions})
            except Exception as exc:  # the window shows no "Where" then, nothing worse
                log.debug("cannot locate the sessions: %s", clean(exc, 200))
            with self._lock:
                self._locations = (keys, time.time(), {tuple(q["key"]): q.get("location") for q in questions})
            self.on_found()  # pushed again, now with where each pi runs


# ---- the user's choices ----



def open_store(state_dir: str | None = None) -> Store:
    """The state store: in ``state_dir`` if given, else in the user's state folder."""
    return Store(os.path.join(state_dir or paths.state_dir(), FILE_NAME))


class SilencesKeeper:
    """The user's snoozes and mutes: one value, kept in the store (its copy is the value), handed
    to every listener (the notifier's planner, the tray and the window, push) as it changes: by a
    command carried out here (:meth:`apply`), or by another process that saved one in the store
    (:meth:`reload`: a headless run, which serves no control channel, follows the store)."""

    def __init__(self, store: Store, now: float) -> None:
        self._store = store
        self._lock = threading.Lock()
        self.value = store.silences(now)  # the current choices (immutable: read it as often as you like)
        self._listeners: list[Listener] = []

    def listen(self, listener: Listener) -> None:
        """Call ``listener`` with the current value now and with every new one; under the lock,
        so none is missed or comes out of order: keep it short."""
        with self._lock:
            self._listeners.append(listener)
            listener(self.value)

    def apply(self, command: Snooze | Mute, now: float) -> Silences:
        """Carry out a snooze or mute: persisted, the new value handed to every listener."""
        with self._lock:
            if isinstance(command, Mute):
                self._store.mute(command.project, command.on)
            elif command.session is None and command.project is None and command.until <= now:
                self._store.clear_snoozes()  # resume: every snooze is lifted
            else:
                self._store.snooze(command.until, command.session, command.project)
            return self._set(self._store.silences(now))

    def reload(self, now: float) -> Silences:
        """The value as the store's file holds it now (another process saved a change there),
        handed to every listener if it reads differently from the current one."""
        with self._lock:
            value = self._store.silences(now, reread=True)
            return self._set(value) if value != self.value.running(now) else self.value

    def _set(self, value: Silences) -> Silences:
        """(Lock held.)"""
        self.value = value
        for listener in self._listeners:
            listener(value)
        return value


# ---- control requests ----



def status_reply(config: Config, command: Status, state: UiState) -> Reply:
    """The status, if the app watches the folders, with the settings, the client asks about
    (``{"ok": false}`` otherwise: the client reads the sessions itself)."""
    asked = (sorted(command.roots), command.liveness or config["liveness"], sorted(command.question_tools))
    if asked != (sorted(config["sessions_dirs"]), config["liveness"], sorted(config["question_tools"])):
        return {"ok": False}
    now = time.time()
    if command.brief:  # a status bar, every second: the summary only, not every session
        quiet_now = quiet_hours_note(config["quiet_hours"], now)
        return {"ok": True, "summary": bar_summary(state.snapshot, now, state.snoozed_until(now), quiet_now)}
    quiet = quiet_hours_obj(config["quiet_hours"], now)  # (the app follows its config file)
    return {"ok": True, "status": {**status_obj(state.snapshot), **quiet}}


# ---- signals and stopping ----

_signals: list[tuple[int, threading.Event]] = []  # installed, not yet watched by a thread


def install_signals(stop: threading.Event) -> None:
    """SIGINT, SIGTERM and SIGHUP set ``stop``.

    A signal may be delivered to any thread, while Python runs handlers only in the main thread,
    which sleeps in an untimed wait or the tray's loop (no polling). So the interpreter's own
    wakeup fd carries the signal: its C-level handler writes to a pipe whichever thread was hit,
    and the control channel's thread (:meth:`App.serve`), or where there is none a relay thread
    (:meth:`App.run_loop`), sets ``stop``. (Setting the event inside a Python handler could also
    deadlock on its lock.)"""
    r, w = os.pipe()
    os.set_blocking(w, False)
    _signals.append((r, stop))
    try:
        signal.set_wakeup_fd(w, warn_on_full_buffer=False)
    except (ValueError, OSError):  # not the main thread: Python handlers still work there
        pass

    def handler(signum: int, frame: FrameType | None) -> None:
        with contextlib.suppress(OSError):
            os.write(w, b"s")

    for sig in (signal.SIGINT, signal.SIGTERM, getattr(signal, "SIGHUP", None)):
        if sig is not None:
            with contextlib.suppress(ValueError, OSError):
                signal.signal(sig, handler)


def _take_signals() -> list[tuple[int, threading.Event]]:
    """The signals installed and not yet watched by any thread (each pipe, its stop event)."""
    taken = list(_signals)
    _signals.clear()
    return taken


def stop_side_by_side(stoppers: Sequence[tuple[str, Callable[[], object]]], deadline: float) -> list[str]:
    """Run each ``(name, stop)`` on a thread of its own; wait for them until ``deadline`` (monotonic).
    Returns the names still busy then."""

    def quietly(name: str, fn: Callable[[], object]) -> None:
        try:
            fn()
        except BaseException as exc:  # on the way out: say it, never hang or trace back
            log.warning("stopping %s failed: %s", name, clean(exc, 200))

    threads = [threading.Thread(target=quietly, args=job, name=f"pi-notifier-stop {job[0]}", daemon=True)
               for job in stoppers]
    for t in threads:
        t.start()
    for t in threads:
        t.join(max(0.0, deadline - time.monotonic()))
    return [name for (name, _), t in zip(stoppers, threads, strict=True) if t.is_alive()]


# ---- what the app and the window's own source both do with a command ----

def clear_abandoned(engine: Engine, command: Clear) -> None:
    """Forget abandoned questions (one, a session's, or all), on the engine thread."""

    def do() -> list[Transition]:  # (the engine's last snapshot: a new one here would be a change of its own)
        keys = [command.session] if command.session else [v.ref.key for v in engine.snapshot.sessions if v.abandoned]
        for key in keys:
            engine.board.clear_abandoned(key, command.call)
        return []  # (no transition: the next snapshot no longer lists them)

    engine.call(do)


def apply_silence_or_clear(
    command: Snooze | Mute | Clear, engine: Engine | None, silences: SilencesKeeper | None
) -> None:
    """A snooze, mute or clear, whoever sends it (the app's :meth:`App.execute`, the window
    without an app): the user's choice carried out by its keeper (``silences``; None: no app
    runs, saved in the store: :func:`save_silence`); abandoned questions forgotten on the
    ``engine``'s thread."""
    if isinstance(command, Clear):
        if engine is not None:
            clear_abandoned(engine, command)
    elif silences is not None:
        silences.apply(command, time.time())
    else:
        save_silence(command)


def save_silence(command: Snooze | Mute) -> None:
    """Without an app: a snooze or mute saved in the user's store, as the app carries it out (the
    one way one is kept), where a headless run that notifies applies it at once and the app finds
    it when it starts. Raises OSError when it could not be saved (the state folder cannot be
    made, or the store was not written: another process held it past the close's wait)."""
    state = paths.state_dir()
    os.makedirs(state, mode=0o700, exist_ok=True)
    store = open_store(state)
    try:
        SilencesKeeper(store, time.time()).apply(command, time.time())
    finally:
        written = store.close()
    if not written:
        raise OSError(f"the state store {store.path} could not be written")


def carried(config: Config, snapshot: Snapshot, command: Goto | Answer) -> Reply:
    """Carry out a goto or answer as the CLI does: the reply says what came of it."""
    from notifier.actions.answer import carry_out

    code, said = carry_out(config, snapshot, command)
    return {"ok": code == 0, "code": code, "said": said, **({"error": said} if code else {})}


# ---- without an app: the window's own source ----


class LocalSource:
    def __init__(self, config: Config) -> None:
        self.config = config
        self.engine: Engine | None = None
        self.dialogs: DialogFeed | None = None  # the companion extension's dialogs, if any
        self._push: Callable[[dict[str, Any]], None] | None = None

    def start(self, push: Callable[[dict[str, Any]], None]) -> None:
        self._push = push
        self.engine = Engine(engine_options(self.config), [self])
        self.engine.start()
        self.dialogs = DialogFeed.attach(self.engine)

    def ready(self, info: ReadyInfo | None, snapshot: Snapshot) -> None:
        if self._push is not None:
            self._push({"window": window_obj(snapshot)})

    def publish(self, batch: Batch) -> None:
        self.ready(None, batch.snapshot)

    def command(self, command: Command) -> None:
        """A snooze, mute or clear from the window (no app runs: nothing else is carried out here)."""
        if self.engine is not None and isinstance(command, (Snooze, Mute, Clear)):
            try:
                apply_silence_or_clear(command, self.engine, None)
            except OSError as exc:  # (the state store cannot be written: said, as the CLI says it)
                log.warning("the %s was not saved: %s", type(command).__name__.lower(), exc)

    def ask(self, command: Command) -> dict[str, Any] | None:
        """A Goto or Answer from the window, carried out here as the CLI would (no app runs)."""
        if self.engine is None or not isinstance(command, (Goto, Answer)):
            return None
        return carried(self.config, self.engine.snapshot, command)

    def close(self) -> None:
        if self.dialogs is not None:
            self.dialogs.stop()
            self.dialogs = None
        if self.engine is not None:
            self.engine.stop()


# ---- the app ----



class App:
    def __init__(self, config: Config, json_out: bool, notify: bool, socket: str | None = None,
                 state_dir: str | None = None, lock: InstanceLock | None = None, follow_config: bool = True) -> None:
        """``state_dir``: keep the store and scan cache there instead of the user's state folder
        (the demo must not write into the real history). ``follow_config``: the config file's
        changes are followed while the app runs (the demo keeps to its own settings). ``lock``:
        the one app's lock, held, released at shutdown. The tray and a headless run's notifier turns are given to
        :meth:`start` (they are built on the app: its commands, its state)."""
        self.config = config
        self.state_dir = state_dir
        self.socket = socket or socket_path()
        self.json_out = json_out
        self.want_notify = notify and config["notifications.backend"] != "none"
        self.stop_event = Stop()  # (ends the tray's loop too: Tray.run)
        self.store = open_store(state_dir)
        self.silences = SilencesKeeper(self.store, time.time())  # restored from the store
        self.engine: Engine | None = None  # built in start(), with its outputs fixed
        self.alerts: Notifier | None = None  # the notifier (it keeps itself running)
        self.tray: Tray | None = None  # (given to start(); None once it stopped)
        self.server: Server | None = None
        self.lock = lock
        # whether a run stands by to notify once this one ends (its bubbles are then left to it)
        self.successor: Callable[[], bool] = lambda: False
        # whether another process notifies these folders now (cli/run.py: the locks say it)
        self.others_notify: Callable[[], bool] = lambda: False
        self.health = FailureLog()  # shared with the engine and the notifier: what failed and was recovered
        decorate = WindowDecoration(lambda: self.redraw.changed(), self.stop_event)
        # the one outputs thread: the notifier, the tray and the window, the tray hosts (started by start())
        self.outputs_thread = Worker("outputs", self.stop_event, self.health)
        self.window = WindowProcess(self.socket, decorate=decorate, worker=self.outputs_thread)
        self.redraw = Redraw(self.window, config, self.health, self.stop_event, self.outputs_thread)
        self.remotes: Remotes | None = None  # remote hosts (their links: notifier/remote.py)
        self.push: PushOutput | None = None
        self.dialogs: DialogFeed | None = None  # the companion extension's dialogs (notifier.companion)
        self.silences.listen(self.redraw.set_silences)  # the tray shows snoozes, mutes
        self.follow_config = follow_config
        self.follower = ConfigFollower(config, self._quiet_hours_changed)  # the file, while the app runs
        self.saved: FileFollower | None = None  # a headless run: the store, for choices saved elsewhere

    # ---- commands (tray, window, notifications, control channel: any thread) ----

    def execute(self, command: Command, conn: Connection | None = None) -> dict[str, Any] | None:
        """Carry out one command, whoever sent it, on the caller's thread: each part it touches
        guards its own state (silences: their keeper's lock; the board: the engine thread; the
        window: its lock). Returns the control channel's reply (None: ``conn`` was kept)."""
        if isinstance(command, (Snooze, Mute, Clear)):
            apply_silence_or_clear(command, self.engine, self.silences)
        elif isinstance(command, (Goto, Answer)):
            if conn is None:  # the tray, a notification: never on their thread; what fails is said
                threading.Thread(target=self._act, args=(command,), name="pi-notifier-act", daemon=True).start()
                return {"ok": True}
            return carried(self.config, self.snapshot(), command)  # (an ipc worker thread: it says what happened)
        elif isinstance(command, Show):
            window = self.window.show(command.focus, command.wait)
            return {"ok": True, "window": window, "display": has_display()}
        elif isinstance(command, Subscribe):
            if conn is not None:
                self.window.subscribe(conn, lambda: (self.snapshot(), self.silences.value))
            return None
        elif isinstance(command, Quit):
            self.stop_event.set()
        elif isinstance(command, Ping):
            return {"ok": True, "pid": os.getpid(), "roots": self.config["sessions_dirs"]}
        elif isinstance(command, Health):
            engine = self.engine
            return {
                "ok": True,
                "pid": os.getpid(),
                "ready": engine is not None and engine.ready_event.is_set(),
                "engine_restarts": engine.restarts if engine is not None else 0,
                "problems": self.health.report(),
                "display": has_display(),
                "tray": self.tray is not None,
                "store": "persistent" if self.store.persistent else "in memory",
                "roots": self.config["sessions_dirs"],
            }
        elif isinstance(command, Status):
            return status_reply(self.config, command, self.ui_state())
        return {"ok": True}

    def _act(self, command: Goto | Answer) -> None:
        """Carry out a goto or answer from the tray or a notification; when it cannot be done, the
        user is told what to do instead: in the window, opened at the question (its status line),
        or where there is no window, in a notification."""
        from notifier.actions.answer import carry_out

        try:
            code, said = carry_out(self.config, self.snapshot(), command)
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

    def handle(self, request: dict[str, Any], conn: Connection) -> Reply | None:
        """One control request (on an ipc worker thread) → the reply (None: ``conn`` is kept, a
        subscription)."""
        try:
            command = commands.parse(request, time.time())
        except commands.CommandError as exc:
            name = request.get("cmd")
            detail = f" {clean(name, 40)}" if str(exc) == "unknown command" and isinstance(name, str) else ""
            return {"ok": False, "error": clean(exc, 200) + detail}
        return self.execute(command, conn)

    # ---- what the outputs and the UI get ----

    def snapshot(self) -> Snapshot:
        """The engine's snapshot, as every output got it."""
        return self.engine.snapshot if self.engine is not None else Snapshot()

    def ui_state(self) -> UiState:
        """What the tray, the window and the control replies show: the snapshot and the user's choices."""
        return UiState(self.snapshot(), self.silences.value, self.health.lines())

    def _quiet_hours_changed(self, quiet: str) -> None:
        for part in (self.alerts, self.push, self.redraw):  # (the tray's tooltip says so)
            if part is not None:
                part.set_quiet_hours(quiet)

    # ---- lifecycle ----

    def start(self, tray: Tray | None = None, windows: bool = True) -> None:
        """Everything but the main-thread loop. ``tray``: the icon :meth:`run_loop` runs (None:
        none); ``windows``: windows may attach (:meth:`serve` follows). With neither, nothing is
        drawn (no outputs thread). The engine's outputs are wired here, once: each is handed every
        batch directly (a headless run that hands notifying to the app and takes it back adds
        and removes its notifier on the engine thread: cli/run.py)."""
        self.tray = tray
        self.redraw.tray = tray
        if tray is not None and tray.hosts is not None:  # (followed on the outputs thread)
            tray.hosts.follow(self.outputs_thread)
        self.store.prune(time.time() - self.config["history.retention_days"] * 86400)
        outputs: list[Output] = [JsonOutput(on_broken=self.stop_event.set)] if self.json_out else []
        outputs.append(self.store)  # (the question history)
        if self.want_notify:
            self.alerts = self.new_notifier(self.store, self.silences)
            outputs.append(self.alerts)
        if tray is not None or windows:
            outputs.append(self.redraw)
            self.outputs_thread.start()
        if self.config["push.urls"]:
            # (pushed by the process that notifies; one that does not notify pushes only where none does)
            turn = lambda: self.alerts is not None or not self.others_notify()  # noqa: E731
            self.push = PushOutput(self.config, self.store, health=self.health, turn=turn)
            self.silences.listen(self.push.set_silences)  # (muted, snoozed: not pushed either)
            outputs.append(self.push)
        options = engine_options(self.config, self.state_dir)
        # (on_failure: the tray shows that the engine is being restarted)
        self.engine = Engine(options, outputs, health=self.health, on_failure=self.redraw.changed)
        self.remotes = Remotes(configured(self.config), self.engine)
        if self.follow_config:  # (followed from before "ready")
            self.follower.start()
        written = self.store.written_path
        if tray is None and not windows and written is not None:  # (no control channel: the CLI saves in the store)
            self.saved = FileFollower(written, self._choices_saved, debounce_s=0.05)
            self.saved.start()
        self.engine.start()
        self.remotes.start()  # (its links start once the engine is ready)
        if self.push is not None:
            self.push.start()
        self.dialogs = DialogFeed.attach(self.engine)  # the companion extension's dialogs, if any

    def _choices_saved(self) -> None:
        """(A timer's thread.) The store was written, perhaps a snooze or mute from the command line."""
        self.silences.reload(time.time())  # (the keeper of the moment: a headless run's turn makes one)

    def new_notifier(self, store: Store, silences: SilencesKeeper) -> Notifier:
        """The notifier, started, recording in ``store``, following the user's snoozes and mutes
        (``silences``); what the user asks of a notification is a command for the app."""
        alerts = Notifier(self.config, store, execute=self.execute, instead=self._instead(), worker=self.outputs_thread)
        silences.listen(alerts.set_silences)  # handed the current value before start
        alerts.start()
        self.outputs_thread.start()  # (the first of the notifier and the drawing starts it; a headless run: here)
        return alerts

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
        signals = _take_signals()  # (woken by the channel's thread, not one more)
        for r, stop in signals:
            self.server.watch_pipe(r, stop.set)
        try:
            self.server.start()
        except OSError as exc:
            log.warning("cannot open the control channel (%s); a second pi-notifier will not find this one", exc)
            _signals.extend(signals)  # (run_loop relays them)
            self.server = None

    def run_loop(self) -> int:
        """Block in the main thread until asked to stop."""
        for r, stop in _take_signals():  # (the signals no control channel carries: a relay thread each)
            threading.Thread(target=drain, args=(r, stop.set), name="pi-notifier-signals", daemon=True).start()
        if self.tray is not None and not self.stop_event.is_set():
            try:
                self.tray.run(self.redraw.changed, self.stop_event)
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
        self.redraw.changed()  # lets the outputs thread finish
        if self.server is not None:
            self.server.stop()  # (first: no new Show; one still being handled is the window's to refuse)
        self.window.close()
        for part in (self.dialogs, self.follower, self.saved, self.remotes, self.push):
            if part is not None:
                part.stop()
        stoppers: list[tuple[str, Callable[[], object]]] = []
        engine, alerts = self.engine, self.alerts
        if engine is not None:
            stoppers.append(("the engine", lambda: engine.stop(timeout=SHUTDOWN_BUDGET_S)))
        if alerts is not None:
            stoppers.append(("the notifier", lambda: alerts.stop(close=not self.successor())))
        late = stop_side_by_side(stoppers, deadline)
        if late:
            log.warning("%s did not stop within %.1f s; exiting anyway", " and ".join(late), SHUTDOWN_BUDGET_S)
        self.store.close(timeout=max(0.05, deadline - time.monotonic()))
        if self.lock is not None:
            self.lock.release()
