"""The reminder schedule on its own (pure): counts, skipped reminders, the last one, persistence."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from notifier.core.planner import Reminders

MIN = 60.0
KEY = ("/s/a.jsonl", "c1")


def test_one_reminder_at_a_time_and_the_last_is_critical() -> None:
    r = Reminders((10 * MIN, 30 * MIN), {})
    assert r.due(KEY, 0, 9 * MIN) is None and r.drain() == {}
    assert r.due(KEY, 0, 10 * MIN) == 1 and not r.last(1)
    assert r.due(KEY, 1, 20 * MIN) is None  # the second is at 30 min after the question was asked
    assert r.due(KEY, 1, 30 * MIN) == 2 and r.last(2)
    assert r.due(KEY, 2, 99 * MIN) is None  # no more after the last
    assert r.drain() == {KEY: 2} and r.drain() == {}


def test_reminders_missed_while_away_come_once() -> None:
    r = Reminders((10 * MIN, 30 * MIN), {})
    assert r.due(KEY, 0, 45 * MIN) == 2  # asleep through both: one reminder, the last
    assert r.next_at(100.0, 2) is None and r.next_at(100.0, 0) == 100.0 + 10 * MIN


def test_counts_from_before_a_restart_and_shown_late() -> None:
    r = Reminders((10 * MIN, 30 * MIN), {KEY: 1})
    assert r.before(KEY) == 1 and r.before(("/s/b.jsonl", "c2")) == 0
    assert r.passed(("/s/b.jsonl", "c2"), 5 * MIN) == 0 and r.drain() == {}  # nothing past: nothing to save
    assert r.passed(("/s/b.jsonl", "c2"), 12 * MIN) == 1 and r.drain() == {("/s/b.jsonl", "c2"): 1}


@given(
    st.lists(st.floats(1.0, 1e5), max_size=4, unique=True).map(sorted),
    st.lists(st.floats(0.0, 2e5), min_size=1, max_size=8).map(sorted),
)
def test_the_count_is_the_reminders_whose_time_has_come(after: list[float], looks: list[float]) -> None:
    """Looked at any number of times, a question ends with as many reminders counted as there are
    times behind it, never more than the schedule has, each look raising at most one."""
    r = Reminders(after, {})
    sent = 0
    for waited in looks:
        got = r.due(KEY, sent, waited)
        if got is not None:
            assert got > sent
            sent = got
        assert sent == sum(1 for a in after if waited >= a)
    assert sent <= len(after) and r.last(sent) == (sent == len(after))
