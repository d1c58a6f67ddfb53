"""Keeping the engine running: restart with back-off, the health record, contained sink calls.

Nothing here knows what the engine does: it runs a ``Supervised`` step, and when that step fails
(any exception, even a BaseException raised by a bug or a sink) it records it, logs it, lets the
step blame and reset what it was doing, and runs it again after a bounded back-off."""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from notifier.core.model import Snapshot, Transition
from notifier.core.text import clean

log = logging.getLogger(__name__)

RESTART_MIN_S = 0.2  # a failed engine thread is restarted after this, doubling …
RESTART_MAX_S = 30.0  # … up to this
HEALTHY_S = 60.0  # a run this long resets the restart back-off


@dataclass(frozen=True)
class ReadyInfo:
    sessions: int
    pending: int
    scan_s: float


class Sink(Protocol):
    def ready(self, info: ReadyInfo, snapshot: Snapshot) -> None: ...

    def transitions(self, items: Sequence[Transition], snapshot: Snapshot) -> None: ...


class Health:
    """What went wrong and was recovered from (any thread): the engine restarted, a sink failed.
    The tray shows it, ``doctor`` asks for it; each kind of failure is logged with its traceback
    once, later ones of the same kind only counted."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._problems: dict[str, dict[str, Any]] = {}
        self._logged: set[tuple[str, str]] = set()

    def failed(self, part: str, exc: BaseException, doing: str) -> bool:
        """Record a failure of ``part``; True the first time this kind is seen (log it fully)."""
        kind = type(exc).__name__
        with self._lock:
            p = self._problems.setdefault(part, {"count": 0})
            p["count"] += 1
            p["error"] = f"{kind}: {clean(exc, 200)}" if str(exc) else kind
            p["doing"] = doing
            p["at"] = time.time()
            p.pop("recovered", None)
            first = (part, kind) not in self._logged
            self._logged.add((part, kind))
        return first

    def recovered(self, part: str) -> None:
        with self._lock:
            if part in self._problems:
                self._problems[part]["recovered"] = True

    def report(self) -> dict[str, dict[str, Any]]:
        with self._lock:
            return {k: dict(v) for k, v in self._problems.items()}

    def lines(self) -> tuple[str, ...]:
        """One short line per part that failed (for the tray's tooltip)."""
        out = []
        for part, p in sorted(self.report().items()):
            times = f"{p['count']}×" if p["count"] > 1 else "once"
            out.append(f"{part} failed {times} ({p['error']}); {p['doing']}")
        return tuple(out)


def deliver(health: Health, sink: object, what: str, call: Callable[[], None]) -> None:
    """Hand something to one sink; whatever it raises stays there (logged once per kind),
    the other sinks still get theirs."""
    try:
        call()
    except BaseException as exc:
        name = type(sink).__name__
        if health.failed(f"sink {name}", exc, "the other outputs carry on"):
            log.error("the %s output failed (in %s); carrying on without it this time", name, what, exc_info=exc)


class Supervised(Protocol):
    @property
    def started(self) -> bool:
        """The start-up finished (sinks were told): a restart resumes instead of starting over."""

    def run(self) -> None:
        """Start up (or resume after a failure), then work until stopped."""

    def blame(self) -> None:
        """``run`` just failed: remember what it was doing (a file that keeps failing is dropped)."""

    def reset(self) -> None:
        """``run`` failed during the start-up: start it again from nothing."""


class Supervisor:
    """Runs one ``Supervised`` on the calling thread until ``stop`` is set, restarting it."""

    def __init__(self, stop: threading.Event) -> None:
        self.health = Health()
        self.failed: BaseException | None = None  # the last failure while it is being restarted
        self.restarts = 0
        self.on_failure: Callable[[], None] | None = None
        self._stop = stop

    def run(self, target: Supervised) -> None:
        delay = RESTART_MIN_S
        while not self._stop.is_set():
            began = time.monotonic()
            try:
                target.run()
                return
            except BaseException as exc:
                if self._stop.is_set():
                    return
                self.failed = exc
                target.blame()
                if time.monotonic() - began > HEALTHY_S:
                    delay = RESTART_MIN_S
                started = target.started
                doing = f"restarted {self.restarts + 1}×" if started else "starting again"
                if self.health.failed("engine", exc, doing):
                    log.error("the engine failed; restarting it in %.1f s", delay, exc_info=exc)
                else:
                    log.error("the engine failed again (%s); restarting it in %.1f s", clean(exc, 200), delay)
                if not started:
                    target.reset()
                if self.on_failure is not None:
                    try:
                        self.on_failure()
                    except Exception:
                        log.exception("reporting the engine failure failed")
                if self._stop.wait(delay):
                    return
                delay = min(delay * 2, RESTART_MAX_S)
                self.restarts += 1
                self.failed = None
                self.health.recovered("engine")
