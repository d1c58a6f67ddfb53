"""watchdog's records the app drops (notifier/compat.py): those, and nothing else."""

from __future__ import annotations

import inspect
import logging

import pytest
from watchdog.observers import inotify

from notifier.compat import STOP_RACE, UNABLE_TO_WATCH, events_lost, quiet_stop_race


def test_the_records_said_elsewhere_are_dropped_and_nothing_else(caplog: pytest.LogCaptureFixture) -> None:
    quiet_stop_race()
    log = logging.getLogger("watchdog.observers.inotify")
    with caplog.at_level(logging.DEBUG):
        log.error(STOP_RACE)
        log.warning(UNABLE_TO_WATCH, b"/s/--p1--", OSError(28, "No space left on device"))
        log.warning("Inotify queue overflowed; filesystem events were lost")
        log.error("inotify watch limit reached")
    assert [r.getMessage() for r in caplog.records] == [
        "Inotify queue overflowed; filesystem events were lost",
        "inotify watch limit reached",
    ]


def test_the_messages_are_the_ones_this_watchdog_logs() -> None:
    """The workaround names watchdog's own words: if watchdog changes them, this says so."""
    source = inspect.getsource(inotify)
    if events_lost() is not None:  # 7.1.1 and newer
        assert UNABLE_TO_WATCH in source
    assert STOP_RACE in source or "queue_events" not in source
