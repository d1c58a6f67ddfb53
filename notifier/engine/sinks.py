"""What the engine hands its sinks, and how: each call contained, so one failing sink never stops
the others (the engine itself is kept running by :class:`notifier.system.supervisor.Supervisor`)."""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Protocol

from notifier.core.model import Snapshot, Transition, TurnChange
from notifier.system.supervisor import FailureLog

log = logging.getLogger(__name__)


@dataclass(frozen=True, slots=True)
class ReadyInfo:
    sessions: int
    pending: int
    scan_s: float


class Sink(Protocol):
    """An output of the engine: called on the engine thread, it hands over and never blocks."""

    def ready(self, info: ReadyInfo, snapshot: Snapshot) -> None:
        """Once, after the start-up scan (its questions came as ``initial`` transitions before)."""

    def transitions(self, items: Sequence[Transition], snapshot: Snapshot) -> None:
        """What changed (possibly nothing) and the board as it is now."""

    def turns(self, items: Sequence[TurnChange]) -> None:
        """Live sessions that finished their turn or failed (a no-op for outputs that only
        follow questions)."""


class Lines(Protocol):
    """An output that prints what changed and never reads the board (run --json's). The engine
    hands it each batch's transitions before it builds the snapshot, so the line other tools wait
    for waits for nothing else (the snapshot was about 0.04 ms of the way from an appended line to
    its run --json line: bench/latency.py)."""

    def ready(self, info: ReadyInfo, snapshot: Snapshot) -> None:
        """Once, after the start-up scan, before the sinks get theirs."""

    def changed(self, items: Sequence[Transition]) -> None:
        """What changed (possibly nothing), before the sinks get it."""


def deliver(health: FailureLog, sink: object, what: str, call: Callable[[], None]) -> None:
    """Hand something to one sink; whatever Exception it raises stays there (recorded in
    ``health``, logged once per kind), the other sinks still get theirs. A BaseException that is
    not an Exception (KeyboardInterrupt, SystemExit) is no output's bug but a request to stop:
    it goes on to the engine's supervisor, which records it as the engine's failure."""
    try:
        call()
    except Exception as exc:
        name = type(sink).__name__
        if health.failed(f"sink {name}", exc, "the other outputs carry on"):
            log.error("the %s output failed (in %s); carrying on without it this time", name, what, exc_info=exc)
