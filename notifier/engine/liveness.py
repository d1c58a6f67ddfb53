"""Is the pi that asked still running? When to look at the process table, and the thread that does.

Reading the process table takes tens of ms on a busy desktop, so it never happens on the engine
thread: the engine says when (``due``), the probe thread reads and puts a ``ProcessList`` on the
engine's queue, stamped with the board's update count taken before the read (only questions
seen by then can be judged on it). The engine also says which folders have a question pending:
the tmux panes of the pis there are captured with the list, as the evidence that tells two pis
in one folder apart (:mod:`notifier.core.owners`). Abandoned questions are looked at again, less
and less often."""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable, Collection, Sequence
from dataclasses import dataclass
from functools import partial

from notifier.core.board import Board
from notifier.core.model import Transition
from notifier.core.owners import Proc
from notifier.core.text import clean
from notifier.system.processes import running_pi
from notifier.system.supervisor import FailureLog, Supervisor

log = logging.getLogger(__name__)

LIVENESS_SOON_S = 0.1
RECHECK_MAX_S = 30.0  # abandoned questions are looked at again, backing off up to this

Probe = Callable[[], Sequence[Proc] | None]


@dataclass(frozen=True)
class ProcessList:
    """A process list from the probe; ``mark``: the board's update count before the read."""

    mark: int
    procs: Sequence[Proc] | None


def read_processes(
    processes: Probe | None, health: FailureLog, folders: Collection[str] = ()
) -> Sequence[Proc] | None:
    """The process list (``processes``: how to read it, by default the running pi processes, with
    the panes of those in ``folders`` captured), or ``None`` (liveness unknown: nothing changes)
    if reading it fails."""
    try:
        if processes is None:
            return running_pi(folders)
        return processes()
    except Exception as exc:
        if health.failed("process check", exc, "liveness unknown until it works again"):
            log.warning("reading the process list failed (%s)", clean(exc, 200), exc_info=exc)
        return None


class Liveness:
    def __init__(
        self,
        enabled: bool,
        interval: float,
        stop: threading.Event,
        health: FailureLog,
        processes: Probe | None = None,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.enabled = enabled
        self.interval = interval
        self.next_due: float | None = None  # clock() of the next look, if any
        self._clock = clock
        self._stop = stop
        self._health = health
        self._processes = processes
        self._wanted = threading.Event()
        self._mark = 0
        self._folders: frozenset[str] = frozenset()  # where a question is pending (see due)
        self._recheck_s = interval

    # ---- the probe thread ----

    def start(self, put: Callable[[ProcessList], None]) -> None:
        """The probe thread, kept running by a supervisor (a failed read is only "unknown")."""
        if self.enabled:
            run = Supervisor("liveness probe", self._stop, self._health).run
            probe = partial(self._probe_loop, put)
            threading.Thread(target=run, args=(probe,), name="pi-notifier-liveness", daemon=True).start()

    def wake(self) -> None:
        """Let the probe thread see that ``stop`` was set."""
        self._wanted.set()

    def _probe_loop(self, put: Callable[[ProcessList], None]) -> None:
        while not self._stop.is_set():
            self._wanted.wait()
            self._wanted.clear()
            if self._stop.is_set():
                return
            mark, folders = self._mark, self._folders  # read before the table is: see due()
            put(ProcessList(mark, self.read(folders)))

    def read(self, folders: Collection[str] = ()) -> Sequence[Proc] | None:
        """The process list, the panes of the pis in ``folders`` captured."""
        return read_processes(self._processes, self._health, folders)

    # ---- scheduling (engine thread) ----

    def first_look(self, board: Board, found: list[Transition], now: float) -> list[Transition]:
        """At start-up, on the engine thread: the questions ``found`` whose pi is gone are
        abandoned before any sink hears of them; the rest, as found."""
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

    def asked(self, items: Sequence[Transition]) -> None:
        """New questions: look soon whether their pi is still there; at once for one whose pi is
        not known yet (its terminal's mode tells whether it waits for a human: notified at once)."""
        asked = [t for t in items if t.kind == "needs_input"]
        if self.enabled and asked:
            unknown = any(t.asker is None and not t.initial for t in asked)
            self.schedule(0.0 if unknown else LIVENESS_SOON_S)
            self._recheck_s = self.interval

    def resumed(self, board: Board) -> None:
        """After a restart: look soon if anything depends on it."""
        if self.enabled and (board.local.needs_liveness() or board.local.has_abandoned()):
            self.schedule(LIVENESS_SOON_S)

    def due(self, board: Board, mono: float) -> None:
        """Called by the engine's timers: ask the probe thread to read, if it is time."""
        if self.next_due is not None and mono >= self.next_due:
            self.next_due = None
            if board.local.needs_liveness() or board.local.has_abandoned():
                # The mark is taken now, before the probe reads: only questions seen by now can
                # be judged on what it reads.
                self._mark = board.local.mark()
                self._folders = board.local.asking_folders()
                self._wanted.set()

    def apply(self, board: Board, found: ProcessList, now: float) -> list[Transition]:
        """A list the probe read: questions whose pi is gone are abandoned (or come back)."""
        out = board.local.set_processes(found.procs, now, as_of=found.mark)
        if out:
            self._recheck_s = self.interval
        if board.local.needs_liveness():
            self.schedule(self.interval)
        elif board.local.has_abandoned():
            # its pi may be seen again: look now and then, less and less often
            self.schedule(self._recheck_s)
            self._recheck_s = min(self._recheck_s * 2, RECHECK_MAX_S)
        return out
