"""What the engine hands its sinks, and how: each call contained, so one failing sink never stops
the others (the engine itself is kept running by :class:`notifier.system.supervisor.Supervisor`)."""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Protocol

from notifier.core.model import Snapshot, Transition
from notifier.system.supervisor import FailureLog

log = logging.getLogger(__name__)


@dataclass(frozen=True, slots=True)
class ReadyInfo:
    sessions: int
    pending: int
    scan_s: float


class Sink(Protocol):
    def ready(self, info: ReadyInfo, snapshot: Snapshot) -> None: ...

    def transitions(self, items: Sequence[Transition], snapshot: Snapshot) -> None: ...


def deliver(health: FailureLog, sink: object, what: str, call: Callable[[], None]) -> None:
    """Hand something to one sink; whatever it raises stays there (logged once per kind),
    the other sinks still get theirs."""
    try:
        call()
    except BaseException as exc:
        name = type(sink).__name__
        if health.failed(f"sink {name}", exc, "the other outputs carry on"):
            log.error("the %s output failed (in %s); carrying on without it this time", name, what, exc_info=exc)
