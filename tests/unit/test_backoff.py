"""The one back-off (system/supervisor.Backoff): doubling, started over by a healthy run or a
success, never by time alone where no run is timed (the store's retries)."""

from __future__ import annotations

import math

import pytest

from notifier.system.supervisor import Backoff


def test_it_doubles_to_its_most_and_a_healthy_run_starts_it_over(monkeypatch: pytest.MonkeyPatch) -> None:
    clock = [1000.0]
    monkeypatch.setattr("notifier.system.supervisor.time.monotonic", lambda: clock[0])
    b = Backoff(0.25, 5.0, healthy_s=60.0)
    assert [b.next() for _ in range(7)] == [0.25, 0.5, 1.0, 2.0, 4.0, 5.0, 5.0]
    b.began()
    clock[0] += 61.0  # the try ran a minute: healthy
    assert b.next() == 0.25


def test_retries_no_run_times_keep_doubling_however_long_ago_it_was_made(monkeypatch: pytest.MonkeyPatch) -> None:
    """The store's retries: nothing calls began(); the first failure an hour after the store was
    made still waits longer each time, and only a success (reset) starts it over."""
    clock = [1000.0]
    monkeypatch.setattr("notifier.system.supervisor.time.monotonic", lambda: clock[0])
    b = Backoff(0.25, 5.0, healthy_s=math.inf)
    clock[0] += 3600.0
    assert [b.next() for _ in range(6)] == [0.25, 0.5, 1.0, 2.0, 4.0, 5.0]
    b.reset()
    assert b.next() == 0.25
