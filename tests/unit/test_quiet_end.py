"""A question held by quiet hours is announced when they end by the clock, on time: the
notifier's worker wakes at their end, not up to a minute later."""

from __future__ import annotations

import threading
import time
from datetime import datetime, timedelta
from typing import Any

import pytest

from notifier.config import Config
from notifier.core.model import Option, Question, QuestionItem, SessionRef, Snapshot, Transition
from notifier.engine import Batch
from notifier.outputs.desktop import Notifier
from notifier.system.supervisor import Worker

from ..conftest import wait_for
from .test_desktop_actions import Server, outputs_thread


def test_a_question_held_by_quiet_hours_is_announced_as_they_end() -> None:
    end = (datetime.now() + timedelta(minutes=3)).replace(second=0, microsecond=0)
    offset = end.timestamp() - 0.5 - time.time()  # the notifier's wall clock: half a second before their end
    config = Config()
    config.set("quiet_hours", f"{end - timedelta(minutes=30):%H:%M}-{end:%H:%M}", "test")
    config.set("settle_ms", 0, "test")
    config.set("notifications.skip_when_focused", False, "test")
    server = Server()
    with outputs_thread() as worker:
        alerts = Notifier(config, backend=server, wall=lambda: time.time() + offset, worker=worker)
        alerts.start()
        try:
            ref = SessionRef("/s/a.jsonl", "id", "/home/me/webshop", None)
            q = Question("c1", "question", (QuestionItem("Ship it?", options=(Option("Yes"),)),), time.time() + offset)
            alerts.publish(Batch((Transition("needs_input", ref, q, time.time() + offset),), Snapshot()))
            wait_for(lambda: alerts.planner.quiet_held, 5, "held by the quiet hours")
            assert server.shown == []
            wait_for(lambda: server.shown, 5, "announced as the quiet hours end")
            assert time.time() + offset >= end.timestamp()
        finally:
            alerts.stop()


def test_the_notifiers_clock_counts_time_asleep() -> None:
    """Snoozes and reminders run on the notifier's own clock: one that nobody sets and that runs
    on while the machine sleeps (Linux's CLOCK_BOOTTIME; the monotonic clock stops then, so a
    snooze "until 08:00" would end as many hours late as the machine slept)."""
    import pytest

    from notifier.outputs.desktop import boot_clock

    boottime = getattr(time, "CLOCK_BOOTTIME", None)
    if boottime is None:
        pytest.skip("no CLOCK_BOOTTIME here: the monotonic clock is all there is")
    before = time.clock_gettime(boottime)
    now = boot_clock()
    assert before <= now <= time.clock_gettime(boottime)
    with outputs_thread() as worker:
        assert Notifier(Config(), worker=worker).clock is boot_clock


def test_the_notification_server_is_looked_for_on_the_outputs_thread(monkeypatch: pytest.MonkeyPatch) -> None:
    """Starting the notifier never waits on the server (connecting and asking what it is are
    round trips: seconds with a server that stalls): it is looked for on the outputs thread, so
    a headless run whose turn comes (started on the engine thread) reads on meanwhile (it read
    nothing for 3 s with a server answering each call after 1.5 s)."""
    import notifier.outputs.desktop as desktop

    looked: list[str] = []

    def choose(*args: Any, **kwargs: Any) -> tuple[Server, str]:
        looked.append(threading.current_thread().name)
        return Server(), "a server"

    monkeypatch.setattr(desktop, "choose_backend", choose)
    config = Config()
    config.set("notifications.skip_when_focused", False, "test")  # (no look at what is focused: no socket)
    with outputs_thread() as worker:
        alerts = Notifier(config, worker=worker)
        alerts.start()
        try:
            wait_for(lambda: looked, 5, "the server looked for")
            assert looked == ["pi-notifier-outputs"] and alerts.online
        finally:
            alerts.stop()


def test_a_notifier_stopped_before_it_looked_for_the_server_never_does(monkeypatch: pytest.MonkeyPatch) -> None:
    """Stopped before its outputs thread came to the look (the app quitting at once): the server
    is never looked for, so no connection is left behind."""
    import notifier.outputs.desktop as desktop

    looked: list[str] = []

    def choose(*args: Any, **kwargs: Any) -> tuple[Server, str]:
        looked.append("looked")
        return Server(), ""

    monkeypatch.setattr(desktop, "choose_backend", choose)
    config = Config()
    config.set("notifications.skip_when_focused", False, "test")
    stopping = threading.Event()
    worker = Worker("outputs", stopping)
    alerts = Notifier(config, worker=worker)
    alerts.start()  # (the look is queued: the thread does not run yet)
    alerts.stop()
    worker.start()
    try:
        assert worker.sync(5) and looked == []
    finally:
        stopping.set()
        worker.sync(5)
