"""The engine thread: owns the session files and the board; turns file changes into transitions.

Data flow: watchdog → queue (typed messages, coalesced per file) → session files (tailer → lines
→ pi's events → board) → transitions + an immutable snapshot → sinks. Nothing else mutates engine
state; the UI and other threads talk to it only by putting messages on its queue.

The parts: ``files`` (tailers → board; reading a file is :mod:`notifier.sessions`, the start-up
cache :mod:`notifier.sessions.cache`), ``liveness`` (the process-table probe), ``sinks``
(contained sink calls); watching is :mod:`notifier.watch` (watchdog, and the folders inotify cannot
watch); ``scan`` is the one-shot read (``status``). The sinks are fixed when the engine is built;
the thread is kept running by :class:`notifier.system.supervisor.Supervisor`."""

from __future__ import annotations

import logging
import queue
import threading
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from functools import partial

from notifier.core.board import Board
from notifier.core.model import Snapshot, Transition
from notifier.core.text import clean
from notifier.engine.files import SessionFiles
from notifier.engine.liveness import Liveness, Probe, ProcessList
from notifier.engine.options import EngineOptions
from notifier.engine.scan import open_cache
from notifier.engine.sinks import Lines, ReadyInfo, Sink, deliver
from notifier.system.supervisor import FailureLog, Supervisor
from notifier.watch.events import (
    EventsLost,
    FileChanged,
    FolderAppeared,
    PathGone,
    RootBack,
    RootGone,
    RootRelinked,
    WatchEvent,
)
from notifier.watch.observer import Watcher
from notifier.watch.watchlimit import WatchLimit

log = logging.getLogger(__name__)


# Messages of the engine's own (the watcher's are in notifier.watch.events, the probe's in
# notifier.engine.liveness).
@dataclass(frozen=True)
class _Stop:
    pass


@dataclass(frozen=True)
class _Call:
    """Run ``fn`` on the engine thread (how the tray, the window, the companion extension's
    dialogs and the remotes change the board); it returns the transitions it made."""

    fn: Callable[[], list[Transition]]


Message = WatchEvent | _Stop | _Call | ProcessList


class Engine:
    def __init__(
        self,
        options: EngineOptions,
        sinks: Iterable[Sink] = (),
        processes: Probe | None = None,
        wall: Callable[[], float] = time.time,
        health: FailureLog | None = None,
        on_failure: Callable[[], None] | None = None,
        lines: Iterable[Lines] = (),
    ) -> None:
        """``sinks``: who gets the transitions, fixed from now on (``lines`` first: outputs that
        only print them); ``health``: where failures are recorded (shared with the app);
        ``on_failure``: called after the thread failed, before it runs again (the tray shows it)."""
        self.options = options
        self.sinks: tuple[Sink, ...] = tuple(sinks)
        self.lines: tuple[Lines, ...] = tuple(lines)
        # A SimpleQueue (C): putting and taking a message is one lock each, no Python-level
        # condition, so the watcher's wake-up reaches this thread sooner.
        self.queue: queue.SimpleQueue[Message] = queue.SimpleQueue()
        self.files = SessionFiles(options, Board(liveness=options.liveness), wall, self._more)
        self.snapshot = Snapshot()
        self.ready_info: ReadyInfo | None = None
        self.ready_event = threading.Event()
        self._wall = wall
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self.watcher = Watcher(self.queue)
        self._supervisor = Supervisor("engine", self._stop, health)
        self.health = self._supervisor.health
        self._on_failure = on_failure
        interval = options.liveness_interval
        self._liveness = Liveness(options.liveness, interval, self._stop, self.health, processes)
        self._limit = WatchLimit(options.roots)
        self._cache = open_cache(options)
        self._started = False  # the start-up scan finished and ``ready`` was handed out

    @property
    def board(self) -> Board:
        return self.files.board

    @property
    def failed(self) -> BaseException | None:
        """The last failure, while the engine is being restarted after it."""
        return self._supervisor.failed

    @property
    def restarts(self) -> int:
        return self._supervisor.restarts

    # ---- lifecycle ----

    def start(self) -> None:
        run, work = self._supervisor.run, (self._run, self._recover)
        self._thread = threading.Thread(target=run, args=work, name="pi-notifier-engine", daemon=True)
        self._thread.start()
        self._liveness.start(self.queue.put)

    def stop(self, timeout: float = 2.0) -> None:
        self._stop.set()
        self._liveness.wake()
        self.queue.put(_Stop())
        if self._thread is not None:
            self._thread.join(timeout)
        self.watcher.stop()

    def call(self, fn: Callable[[], list[Transition]]) -> None:
        """Run ``fn`` on the engine thread, where it alone may change the board; the transitions
        it returns go to every sink with the next snapshot (one per batch of messages, which
        is made after a call even when it returns none: the board may have changed)."""
        self.queue.put(_Call(fn))

    def _more(self, path: str) -> None:
        self.queue.put(FileChanged(path))  # a huge append: the rest after what is queued already

    # ---- kept running by the supervisor ----

    def _run(self) -> None:
        """Start up (or resume after a failure), then work until stopped."""
        if not self._started:
            self._startup()
        else:
            out = self.files.resync()
            self._liveness.resumed(self.board)
            self._emit(out)
        self._loop()

    def _recover(self) -> None:
        """``_run`` just failed: the file it was reading is blamed (one that keeps failing is
        dropped); during the start-up scan, it starts again from nothing (no sink saw anything)."""
        self.files.blame()
        if not self._started:
            try:
                self.watcher.stop()
            except Exception:
                log.debug("stopping the half-started watcher failed", exc_info=True)
            self.watcher = Watcher(self.queue)
            self.files = SessionFiles(self.options, Board(liveness=self.options.liveness), self._wall, self._more)
            self._cache = open_cache(self.options)
        if self._on_failure is not None:
            self._on_failure()

    # ---- start-up ----

    def _startup(self) -> None:
        began = time.perf_counter()
        self.watcher.start()
        roots = [root for root in self.options.roots if self.watcher.watch(root)]
        collected: list[Transition] = []
        for root in roots:
            collected += self.files.scan(root, initial=True, cache=self._cache)
        collected = self._liveness.first_look(self.board, collected, self._wall())
        if self.files.fill_names():
            collected = self.files.renamed(collected)
        if self._cache is not None:
            self._cache.save(self.files.tailers, self.board)
            log.debug("start-up scan: %d session files, %d unchanged", len(self.board.local), self._cache.hits)
        now = self._wall()
        self.snapshot = self.board.snapshot(now)
        info = ReadyInfo(len(self.board.local), self.snapshot.pending_count, time.perf_counter() - began)
        self.ready_info = info
        if collected:
            self._emit(collected)
        outputs: list[Lines | Sink] = [*self.lines, *self.sinks]
        for out in outputs:
            deliver(self.health, out, "ready", partial(out.ready, info, self.snapshot))
        self._started = True
        self.ready_event.set()
        for root in roots:
            self._limit.check(root, self.watcher)

    # ---- the loop ----

    def _loop(self) -> None:
        while not self._stop.is_set():
            timeout = self._timeout()
            batch: list[Message] = []
            try:
                batch.append(self.queue.get(timeout=timeout))
            except queue.Empty:
                pass
            while True:
                try:
                    batch.append(self.queue.get_nowait())
                except queue.Empty:
                    break
            out: list[Transition] = []
            files: dict[str, None] = {}  # changed files, read once each, in order
            called = False  # a call may change the board without a transition (a dismissal)
            for item in batch:
                if isinstance(item, _Stop):
                    return
                if isinstance(item, FileChanged):
                    files[item.path] = None
                    continue
                for path in files:
                    out += self.files.read(path)
                files.clear()
                called |= isinstance(item, _Call)
                out += self._handle(item)
            for path in files:
                out += self.files.read(path)
            unnamed = {t.session.key for t in out if t.kind == "needs_input" and t.session.name is None}
            if unnamed and self.files.fill_names(unnamed):
                out = self.files.renamed(out)
            out += self._timers()
            relived = self.board.local.take_relived()  # (who is alive changed: a new snapshot)
            if out or called or relived or self.board.local.has_turns():
                self._emit(out)

    def _handle(self, item: Message) -> list[Transition]:
        """Any message but a file change (those are coalesced) or the stop."""
        if isinstance(item, _Call):
            try:
                return item.fn()
            except Exception:
                log.exception("a call on the engine thread failed (tray, window, dialogs, remotes); carrying on")
        elif isinstance(item, PathGone):
            return self.files.gone(item.path)
        elif isinstance(item, FolderAppeared):
            out = self.files.scan(item.path, initial=False)
            self._limit.check_folder(item.path, self.watcher)
            return out
        elif isinstance(item, RootGone):
            log.warning("sessions folder %s was removed; waiting for it to come back", clean(item.path))
            self.watcher.root_gone(item.path)
            return self.files.gone(item.path)
        elif isinstance(item, ProcessList):
            return self._liveness.apply(self.board, item, self._wall())
        elif isinstance(item, RootBack) and self.watcher.watch(item.path):
            log.info("watching %s", clean(item.path))
            return self.files.scan(item.path, initial=False)
        elif isinstance(item, RootRelinked) and self.watcher.retarget(item.path):
            log.warning("sessions folder %s points elsewhere now; reading it anew", clean(item.path))
            out = self.files.gone(item.path, everything=True)
            return out + (self.files.scan(item.path, initial=False) if self.watcher.watch(item.path) else [])
        elif isinstance(item, EventsLost):
            # A waiting pi writes nothing more: what was written while events were dropped is read now.
            log.warning("inotify queue overflowed: events were lost; reading %s again", clean(item.path))
            return self.files.gone(item.path) + self.files.scan(item.path, initial=False)
        return []

    def _timeout(self) -> float | None:
        due = [t for t in (self._liveness.next_due, self._limit.next_poll) if t is not None]
        if not due:
            return None  # nothing to do until a file changes: no polling
        return max(0.0, min(due) - time.monotonic())

    def _timers(self) -> list[Transition]:
        out: list[Transition] = []
        mono = time.monotonic()
        for path in self._limit.due(mono):
            out += self.files.read(path)
        self._liveness.due(self.board, mono)
        return out

    def _emit(self, items: list[Transition]) -> None:
        """Hand transitions to every sink with a new snapshot: those of the engine's own reading
        and those its calls returned (remote hosts, the companion extension's dialogs)."""
        self._liveness.asked(items)
        if log.isEnabledFor(logging.DEBUG):
            _log_each(items)
        # The snapshot replaced is let go after the sinks had theirs (freeing costs as much as building).
        for lines in self.lines:
            deliver(self.health, lines, "transitions", partial(lines.changed, items))
        previous, self.snapshot = self.snapshot, self.board.snapshot(self._wall())
        turns = self.board.local.drain_turns()
        for sink in self.sinks:
            deliver(self.health, sink, "transitions", partial(sink.transitions, items, self.snapshot))
            if turns:
                deliver(self.health, sink, "turns", partial(sink.turns, turns))
        del previous


def _log_each(items: list[Transition]) -> None:
    for t in items:
        initial, outcome = " (initial)" if t.initial else "", f" → {t.outcome}" if t.outcome else ""
        key, call, tool = clean(t.session.key), clean(t.question.tool_call_id, 80), clean(t.question.tool, 60)
        log.debug("%s%s: %s call %s (%s)%s", t.kind, initial, key, call, tool, outcome)
