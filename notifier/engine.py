"""The engine: one thread that owns the session files and the board, and turns file changes into
transitions.

One line: watchdog → the engine's queue (typed messages: :mod:`notifier.watch`'s, a
:class:`_Call` from the tray, window, companion or remotes) →
:class:`~notifier.sessions.BoardReader` (tail → pi's events → board) → the transitions and one
immutable snapshot, handed to each output once as one :class:`Batch` (:meth:`Output.publish`),
every hand-over contained (:func:`deliver`). Nothing else mutates engine state.

Liveness: is the pi that asked still running? The engine thread reads the process table itself
when it is due (:class:`Liveness`: a due time in the loop's wait, like the watch-limit poll), after
the batch that made it due was handed out, so a read (a few ms: /proc, and tmux's panes where a
question is pending) never holds up what is already read. The list is stamped with the board's
update count taken before the read (only questions seen by then can be judged on it); the panes of
the pis where a question is pending are the evidence that tells two pis in one folder apart
(:mod:`notifier.core.owners`). The board alone judges what the list means, and a change of who is
alive is a change of the snapshot. Between lists the engine checks one pid itself: that the pi last
seen waiting for a human in a session still runs, before its new question skips the settle window
(:meth:`Liveness.drop_gone_askers`). Abandoned questions are looked at again, less and less often.
The thread is kept running by :class:`notifier.system.supervisor.Supervisor`."""

from __future__ import annotations

import contextlib
import logging
import queue
import threading
import time
from collections import deque
from collections.abc import Callable, Collection, Iterable, Sequence
from dataclasses import dataclass
from functools import partial
from typing import Protocol

from notifier.core.board import Board
from notifier.core.model import Snapshot, Transition, TurnChange
from notifier.core.owners import Proc
from notifier.core.text import clean
from notifier.sessions import BLAME_LIMIT, BoardReader, EngineOptions, Probe, open_cache, read_processes
from notifier.system.processes import still_running
from notifier.system.supervisor import FailureLog, Supervisor
from notifier.watch import (
    EventsLost,
    FileChanged,
    FolderAppeared,
    PathGone,
    RootBack,
    RootGone,
    RootRelinked,
    Watcher,
    WatchEvent,
    WatchLimit,
)

log = logging.getLogger(__name__)

LIVENESS_SOON_S = 0.1
RECHECK_MAX_S = 30.0  # abandoned questions are looked at again, backing off up to this


# ---- what the engine reads and is handed ----


@dataclass(frozen=True)
class _Stop:
    pass


@dataclass(frozen=True)
class _Call:
    """Run ``fn`` on the engine thread (how the tray, the window, the companion extension's
    dialogs and the remotes change the board); it returns the transitions it made."""

    fn: Callable[[], list[Transition]]


Message = WatchEvent | _Stop | _Call


# ---- what the engine hands its outputs ----


@dataclass(frozen=True, slots=True)
class ReadyInfo:
    sessions: int
    pending: int
    scan_s: float


@dataclass(frozen=True, slots=True)
class Batch:
    """What one batch of the engine's work hands every output, once: the transitions it made
    (possibly none: the board may have changed without one, e.g. who is alive), the board as it
    is now, and the live sessions that finished their turn or failed."""

    transitions: tuple[Transition, ...]
    snapshot: Snapshot
    turns: tuple[TurnChange, ...] = ()


class Output(Protocol):
    """An output of the engine: called on the engine thread, it hands over and never blocks."""

    def ready(self, info: ReadyInfo, snapshot: Snapshot) -> None:
        """Once, after the start-up scan (its questions came as ``initial`` transitions before)."""

    def publish(self, batch: Batch) -> None:
        """Each batch, in order: what changed and the board as it is now."""


def deliver(health: FailureLog, output: object, what: str, call: Callable[[], None]) -> None:
    """Hand something to one output; whatever Exception it raises stays there (recorded in
    ``health``, logged once per kind), the other outputs still get theirs. A BaseException that is
    not an Exception (KeyboardInterrupt, SystemExit) is no output's bug but a request to stop:
    it goes on to the engine's supervisor, which records it as the engine's failure."""
    try:
        call()
    except Exception as exc:
        name = type(output).__name__
        # ("sink NAME": the name the health record has always had, a key of the control reply's problems)
        if health.failed(f"sink {name}", exc, "the other outputs carry on"):
            log.error("the %s output failed (in %s); carrying on without it this time", name, what, exc_info=exc)


# ---- liveness ----


class Liveness:
    """When the engine thread reads the process table (:meth:`due`), and what it makes of it: a
    question's pi is looked for soon after it asks, at once when that pi is not known yet (its
    terminal's mode tells whether it waits for a human), then at ``interval`` while a question
    depends on it; an abandoned question is looked at again less and less often."""

    def __init__(
        self,
        enabled: bool,
        interval: float,
        health: FailureLog,
        processes: Probe | None = None,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.enabled = enabled
        self.interval = interval
        self.next_due: float | None = None  # clock() of the next look, if any
        self._clock = clock
        self._health = health
        self._processes = processes
        self._recheck_s = interval

    def read(self, folders: Collection[str] = ()) -> Sequence[Proc] | None:
        """The process list, the panes of the pis in ``folders`` captured."""
        return read_processes(self._processes, self._health, folders)

    def first_look(self, board: Board, found: list[Transition], now: float) -> list[Transition]:
        """At start-up: the questions ``found`` whose pi is gone are abandoned before any output
        hears of them; the rest, as found."""
        if not board.local.needs_liveness():
            return found
        abandoned = board.local.set_processes(self.read(board.local.asking_folders()), now)
        gone = {(t.session.key, t.question.tool_call_id) for t in abandoned}
        self.schedule(self.interval)
        return [t for t in found if (t.session.key, t.question.tool_call_id) not in gone]

    def schedule(self, delay: float) -> None:
        when = self._clock() + delay
        if self.next_due is None or when < self.next_due:
            self.next_due = when

    def drop_gone_askers(self, items: list[Transition], board: Board) -> None:
        """Called as a batch is published, with its transitions; changes the board. A new
        question's asker as last seen that no longer runs (it quit since the last process list;
        another pi, maybe ``pi -p``, asks in its file now) is dropped: its view names none
        (:meth:`notifier.core.board.LocalSessions.asker_gone`). New questions: a process look is
        scheduled soon, to see whether their pi is still there; at once for one whose pi is not
        known yet (its terminal's mode tells whether it waits for a human: notified at once)."""
        asked = [t for t in items if t.kind == "needs_input"]
        askers = {t.session.key: board.local.asker(t.session.key) for t in asked}
        for key, asker in askers.items():
            if asker is not None and not still_running(*asker):
                board.local.asker_gone(key)
                askers[key] = None
        if self.enabled and asked:
            unknown = any(askers[t.session.key] is None and not t.initial for t in asked)
            self.schedule(0.0 if unknown else LIVENESS_SOON_S)
            self._recheck_s = self.interval

    def resumed(self, board: Board) -> None:
        """After a restart: look soon if anything depends on it."""
        if self.enabled and (board.local.needs_liveness() or board.local.has_abandoned()):
            self.schedule(LIVENESS_SOON_S)

    def due(self, board: Board, mono: float, now: float) -> list[Transition]:
        """The engine's timer: if it is time, read the process table (the panes of the pis where a
        question is pending captured: the evidence that tells two pis in one folder apart): the
        questions whose pi is gone are abandoned (or come back). The mark is taken before the
        read: only questions seen by then are judged on it."""
        if self.next_due is None or mono < self.next_due:
            return []
        self.next_due = None
        if not (board.local.needs_liveness() or board.local.has_abandoned()):
            return []
        mark = board.local.mark()
        out = board.local.set_processes(self.read(board.local.asking_folders()), now, as_of=mark)
        if out:
            self._recheck_s = self.interval
        if board.local.needs_liveness():
            self.schedule(self.interval)
        elif board.local.has_abandoned():
            # its pi may be seen again: look now and then, less and less often
            self.schedule(self._recheck_s)
            self._recheck_s = min(self._recheck_s * 2, RECHECK_MAX_S)
        return out


# ---- the engine ----


class Engine:
    def __init__(
        self,
        options: EngineOptions,
        outputs: Iterable[Output] = (),
        processes: Probe | None = None,
        wall: Callable[[], float] = time.time,
        health: FailureLog | None = None,
        on_failure: Callable[[], None] | None = None,
    ) -> None:
        """``outputs``: who gets each batch, in this order (changed only on the engine thread:
        :meth:`add_output`, :meth:`remove_output`); ``health``: where failures are recorded
        (shared with the app); ``on_failure``: called after the thread failed, before it runs
        again (the tray shows it)."""
        self.options = options
        self.outputs: tuple[Output, ...] = tuple(outputs)
        # A SimpleQueue (C): putting and taking a message is one lock each, no Python-level
        # condition, so the watcher's wake-up reaches this thread sooner.
        self.queue: queue.SimpleQueue[Message] = queue.SimpleQueue()
        self.snapshot = Snapshot()
        self.ready_info: ReadyInfo | None = None
        self.ready_event = threading.Event()
        self._wall = wall
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        # The engine's work in hand, kept when it fails (the loop run again goes on with it): the
        # messages taken off the queue and not handled yet, the one being handled, and the files
        # changed and not read yet; what was made and not handed out is held in ``_made``.
        self._inbox: deque[Message] = deque()
        self._in_hand: Message | None = None
        self._in_hand_failures = 0  # how often the engine failed with the message first in line in hand
        self._changed: dict[str, None] = {}  # (in order, each read once)
        self._fresh()
        self._supervisor = Supervisor("engine", self._stop, health)
        self.health = self._supervisor.health
        self._on_failure = on_failure
        interval = options.liveness_interval
        self._liveness = Liveness(options.liveness, interval, self.health, processes)
        self._limit = WatchLimit(options.roots)
        self._started = False  # the start-up scan finished and ``ready`` was handed out

    @property
    def board(self) -> Board:
        return self.reader.board

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

    def stop(self, timeout: float = 2.0) -> None:
        self._stop.set()
        self.queue.put(_Stop())
        if self._thread is not None:
            self._thread.join(timeout)
        self.watcher.stop()

    def call(self, fn: Callable[[], list[Transition]]) -> None:
        """Run ``fn`` on the engine thread, where it alone may change the board; the transitions
        it returns go to every output with the next snapshot (one per batch of messages, which
        is made after a call even when it returns none: the board may have changed)."""
        self.queue.put(_Call(fn))

    def add_output(self, output: Output) -> None:
        """On the engine thread (in a :meth:`call`): ``output`` gets every batch from the next on."""
        self.outputs = (*self.outputs, output)

    def remove_output(self, output: Output) -> None:
        """On the engine thread (in a :meth:`call`): ``output`` gets no batch any more."""
        self.outputs = tuple(o for o in self.outputs if o is not output)

    def _more(self, path: str) -> None:
        self.queue.put(FileChanged(path))  # a huge append: the rest after what is queued already

    # ---- kept running by the supervisor ----

    def _run(self) -> None:
        """Start up (or resume after a failure: the files read on, what was made before the failure
        handed out, then the messages still in line first), then work until stopped."""
        if not self._started:
            self._startup()
        else:
            self.reader.resync(self._made)
            self._liveness.resumed(self.board)
            self._publish()
        self._loop()

    def _recover(self) -> None:
        """``_run`` just failed: the file it was reading is blamed (one that keeps failing is
        dropped), the message in hand goes back in line (:meth:`_put_back`); during the start-up
        scan, it starts again from nothing (no output saw anything)."""
        self.reader.blame()
        item, self._in_hand = self._in_hand, None
        if item is not None:
            self._put_back(item)
        if not self._started:
            try:
                self.watcher.stop()
            except Exception:
                log.debug("stopping the half-started watcher failed", exc_info=True)
            self._fresh()
        if self._on_failure is not None:
            self._on_failure()

    def _put_back(self, item: Message) -> None:
        """The message in hand when the engine failed: a watch event goes back first in line (what
        it names is read again: harmless), until it was in hand for BLAME_LIMIT failures (then it
        is dropped, said). A call is not run again: it may have done part of its work, which a
        second run could do twice; it is said. (A call that raises an Exception never gets here:
        :meth:`_handle` contains it.)"""
        self._in_hand_failures += 1
        if isinstance(item, _Call):
            log.error("a call on the engine thread made it fail; it is not run again")
        elif self._in_hand_failures >= BLAME_LIMIT:
            said = type(item).__name__, getattr(item, "path", ""), self._in_hand_failures
            log.error("dropped %s %s: handling it made the engine fail %d times", *said)
        else:
            self._inbox.appendleft(item)
            return
        self._in_hand_failures = 0

    def _fresh(self) -> None:
        """The watcher, the files and the scan cache, from nothing."""
        self.watcher = Watcher(self.queue)
        self.reader = BoardReader(
            self.options, Board(liveness=self.options.liveness), self._wall, self._more, self.watcher.cover
        )
        self._cache = open_cache(self.options)
        self._made: list[Transition] = []  # transitions made and not handed out yet
        self._called = False  # a call ran since the last batch (it may change the board without a transition)

    # ---- start-up ----

    def _startup(self) -> None:
        began = time.perf_counter()
        self.watcher.start()
        roots = [root for root in self.options.roots if self.watcher.watch(root)]
        collected: list[Transition] = []
        for root in roots:
            collected += self.reader.scan(root, initial=True, cache=self._cache)
        collected = self._liveness.first_look(self.board, collected, self._wall())
        if self._cache is not None:
            self._cache.save(self.reader.tailers, self.board)
            log.debug("start-up scan: %d session files, %d unchanged", len(self.board.local), self._cache.hits)
        now = self._wall()
        self.snapshot = self.board.snapshot(now)
        info = ReadyInfo(len(self.board.local), self.snapshot.pending_count, time.perf_counter() - began)
        self.ready_info = info
        if collected:
            self._made += collected
            self._publish()
        for out in self.outputs:
            deliver(self.health, out, "ready", partial(out.ready, info, self.snapshot))
        self._started = True
        self.ready_event.set()
        for root in roots:
            self._limit.check(root, self.watcher)

    # ---- the loop ----

    def _loop(self) -> None:
        """Each round: what came (the changed files coalesced, each read once before the next other
        message), the files due to be read again, then one batch out; the process table last.
        Everything in hand is kept on the engine (not in this frame): a failure loses none of it."""
        inbox = self._inbox
        while not self._stop.is_set():
            self._take(self._timeout())
            while inbox:
                item = inbox[0]
                if isinstance(item, _Stop):
                    return
                if isinstance(item, FileChanged):
                    self._changed[item.path] = None
                    inbox.popleft()
                    continue
                self._read_changed()  # (the files changed before it first; failing, it stays first in line)
                self._in_hand = inbox.popleft()
                self._called |= isinstance(item, _Call)
                self._handle(item)
                self._in_hand, self._in_hand_failures = None, 0
            self._read_changed()
            self._limit.check_appeared(self.watcher)
            mono = time.monotonic()
            for path in self._limit.due(mono):  # (folders past the watch limit)
                self._made += self.reader.read(path)
            self._made += self.reader.retry(mono)  # (files whose read failed, read again when due)
            self._publish_if_changed()
            # The process table last: what was read above is out already, never held up by it.
            self._made += self._liveness.due(self.board, time.monotonic(), self._wall())
            self._publish_if_changed()

    def _take(self, timeout: float | None) -> None:
        """Put in line what came (waiting up to ``timeout`` if nothing is in line) and what else is
        queued already."""
        with contextlib.suppress(queue.Empty):
            if not self._inbox:
                self._inbox.append(self.queue.get(timeout=timeout))
            while True:
                self._inbox.append(self.queue.get_nowait())

    def _read_changed(self) -> None:
        """Read the files changed, in order; each leaves the list before it is read (one that makes
        the engine fail is the files' to blame and read again: :meth:`BoardReader.resync`)."""
        changed = self._changed
        while changed:
            path = next(iter(changed))
            del changed[path]
            self._made += self.reader.read(path)

    def _publish_if_changed(self) -> None:
        """Hand out what changed, if anything did (a call may change the board without a
        transition, and so may who is alive)."""
        alive_changed = self.board.local.take_alive_changed()  # (who is alive changed: a new snapshot)
        if self._made or self._called or alive_changed or self.board.local.has_turns():
            self._publish()

    def _handle(self, item: Message) -> None:
        """Any message but a file change (those are coalesced) or the stop; what it makes goes
        straight to what is handed out next (a scan that fails halfway loses none of it)."""
        made = self._made
        if isinstance(item, _Call):
            try:
                made += item.fn()
            except Exception:
                log.exception("a call on the engine thread failed (tray, window, dialogs, remotes); carrying on")
        elif isinstance(item, PathGone):
            made += self.reader.gone(item.path)
        elif isinstance(item, FolderAppeared):
            self.reader.scan(item.path, initial=False, out=made)
            self._limit.appeared(item.path)  # (checked once this round's messages are read)
        elif isinstance(item, RootGone):
            if self.watcher.root_gone(item.path, item.of):  # (else said as the link's folder saw it go)
                log.warning("sessions folder %s was removed; waiting for it to come back", item.path)
            made += self.reader.gone(item.path)
        elif isinstance(item, RootBack) and self.watcher.watch(item.path):
            log.info("watching %s", item.path)
            self.reader.scan(item.path, initial=False, out=made)
        elif isinstance(item, RootRelinked) and self.watcher.retarget(item.path):
            made += self.reader.gone(item.path, everything=True)
            if self.watcher.watch(item.path):
                log.warning("sessions folder %s points elsewhere now; reading it anew", item.path)
                self.reader.scan(item.path, initial=False, out=made)
            else:
                log.warning("sessions folder %s points nowhere now; waiting for it to come back", item.path)
        elif isinstance(item, EventsLost):
            # A waiting pi writes nothing more: what was written while events were dropped is read now.
            log.warning("inotify queue overflowed: events were lost; reading %s again", item.path)
            made += self.reader.gone(item.path)
            self.reader.scan(item.path, initial=False, out=made)

    def _timeout(self) -> float | None:
        timers = (self._liveness.next_due, self._limit.next_poll, self._limit.next_check, self.reader.next_retry)
        due = [t for t in timers if t is not None]
        if not due:
            return None  # nothing to do until a file changes: no polling
        return max(0.0, min(due) - time.monotonic())

    def _publish(self) -> None:
        """Hand every output one batch: the transitions made (those of the engine's own reading and
        those its calls returned: remote hosts, the companion extension's dialogs), a new
        snapshot, and the turns finished since the last batch. They are the batch's once it is
        made: a failure before keeps them for the next. Publishing changes the board first: the
        askers that no longer run are dropped and a process look is scheduled
        (:meth:`Liveness.drop_gone_askers`)."""
        items = self._made
        self._liveness.drop_gone_askers(items, self.board)
        if log.isEnabledFor(logging.DEBUG):
            _log_each(items)
        # The snapshot replaced is let go after the outputs had theirs (freeing costs as much as building).
        previous, self.snapshot = self.snapshot, self.board.snapshot(self._wall())
        batch = Batch(tuple(items), self.snapshot, tuple(self.board.local.drain_turns()))
        self._made, self._called = [], False
        for output in self.outputs:
            deliver(self.health, output, "publish", partial(output.publish, batch))
        del previous


def _log_each(items: list[Transition]) -> None:
    for t in items:
        initial, outcome = " (initial)" if t.initial else "", f" → {t.outcome}" if t.outcome else ""
        key, call, tool = clean(t.session.key), clean(t.question.tool_call_id, 80), clean(t.question.tool, 60)
        log.debug("%s%s: %s call %s (%s)%s", t.kind, initial, key, call, tool, outcome)
