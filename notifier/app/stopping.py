"""Stopping parts side by side within a deadline, whatever hangs: each is waited for only until the
deadline; what is still busy then is left to end with the process (daemon threads)."""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable, Sequence

from notifier.core.text import clean

log = logging.getLogger(__name__)


def stop_side_by_side(stoppers: Sequence[tuple[str, Callable[[], object]]], deadline: float) -> list[str]:
    """Run each ``(name, stop)`` on a thread of its own; wait for them until ``deadline`` (monotonic).
    Returns the names still busy then."""
    threads = []
    for name, fn in stoppers:
        t = threading.Thread(target=_quietly(name, fn), name=f"pi-notifier-stop {name}", daemon=True)
        t.start()
        threads.append((name, t))
    for _, t in threads:
        t.join(max(0.0, deadline - time.monotonic()))
    return [name for name, t in threads if t.is_alive()]


def _quietly(name: str, fn: Callable[[], object]) -> Callable[[], None]:
    def run() -> None:
        try:
            fn()
        except BaseException as exc:  # on the way out: say it, never hang or trace back
            log.warning("stopping %s failed: %s", name, clean(exc, 200))

    return run
