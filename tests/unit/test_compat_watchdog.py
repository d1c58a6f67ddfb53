"""watchdog's stop race record (notifier/compat/watchdog.py): dropped, and nothing else is."""

from __future__ import annotations

import logging

import pytest

from notifier.compat.watchdog import STOP_RACE, quiet_stop_race


def test_the_stop_race_record_is_dropped_and_nothing_else(caplog: pytest.LogCaptureFixture) -> None:
    quiet_stop_race()
    log = logging.getLogger("watchdog.observers.inotify")
    with caplog.at_level(logging.WARNING):
        log.error(STOP_RACE)
        log.error("inotify watch limit reached")
    assert [r.getMessage() for r in caplog.records] == ["inotify watch limit reached"]


def test_the_message_is_the_one_watchdog_logs() -> None:
    """The workaround names watchdog's own words: if watchdog changes them, this says so."""
    import inspect

    from watchdog.observers import inotify

    assert STOP_RACE in inspect.getsource(inotify)
