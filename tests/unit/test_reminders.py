"""The reminder schedule through the planner (pure): counts, skipped reminders, the last one,
persistence."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from notifier.core.model import Notice, Question, QuestionItem, SessionRef, Transition
from notifier.core.planner import Planner

MIN = 60.0
KEY = ("/s/a.jsonl", "c1")


def asked(p: Planner, at: float = 0.0, seen: float = 0.0, call: str = "c1", session: str = "/s/a.jsonl") -> None:
    """A question asked at ``at``, seen at ``seen`` and raised then (settle 0)."""
    ref = SessionRef(session, "id", "/home/u/a", None)
    p.feed([Transition("needs_input", ref, Question(call, "question", (QuestionItem("Q?"),), at), at)], seen, seen)
    p.tick(seen)


def reminders(p: Planner, now: float) -> list[Notice]:
    return [a for a in p.tick(now) if isinstance(a, Notice) and a.kind == "reminder"]


def test_one_reminder_at_a_time_and_the_last_is_critical() -> None:
    p = Planner(settle_s=0.0, remind_after_s=(30 * MIN, 10 * MIN))  # (any order)
    asked(p)
    assert reminders(p, 9 * MIN) == [] and p.drain_reminded() == {} and p.next_due() == 10 * MIN
    (first,) = reminders(p, 10 * MIN)
    assert not first.critical and p.next_due() == 30 * MIN
    assert reminders(p, 20 * MIN) == []  # the second is at 30 min after the question was asked
    (last,) = reminders(p, 30 * MIN)
    assert last.critical and last.handle == first.handle  # (the same bubble, replaced)
    assert reminders(p, 99 * MIN) == [] and p.next_due() is None  # no more after the last
    assert p.drain_reminded() == {KEY: 2} and p.drain_reminded() == {}


def test_reminders_missed_while_away_come_once() -> None:
    p = Planner(settle_s=0.0, remind_after_s=(10 * MIN, 30 * MIN))
    asked(p)
    (r,) = reminders(p, 45 * MIN)  # asleep through both: one reminder, the last
    assert r.critical and p.next_due() is None and p.drain_reminded() == {KEY: 2}


def test_counts_from_before_a_restart_and_shown_late() -> None:
    p = Planner(settle_s=0.0, remind_after_s=(10 * MIN, 30 * MIN), notified={KEY}, reminded={KEY: 1})
    asked(p, 0.0, 5 * MIN)
    assert p.drain_reminded() == {} and p.next_due() == 30 * MIN  # it had its 10-min one
    asked(p, 0.0, 5 * MIN, "c2", "/s/b.jsonl")
    assert p.drain_reminded() == {} and p.next_due() == 10 * MIN  # nothing past: nothing to save
    asked(p, 0.0, 12 * MIN, "c3", "/s/c.jsonl")  # first seen 12 min after it was asked
    # c2's 10-min reminder came; c3's, past when it was first shown, counts as sent
    assert p.drain_reminded() == {("/s/b.jsonl", "c2"): 1, ("/s/c.jsonl", "c3"): 1}


@given(
    st.lists(st.floats(1.0, 1e5), max_size=4, unique=True).map(sorted),
    st.lists(st.floats(0.0, 2e5), min_size=1, max_size=8).map(sorted),
)
def test_the_count_is_the_reminders_whose_time_has_come(after: list[float], looks: list[float]) -> None:
    """Looked at any number of times, a question ends with as many reminders counted as there are
    times behind it, never more than the schedule has, each look raising at most one."""
    p = Planner(settle_s=0.0, remind_after_s=after)
    asked(p)
    sent = 0
    for waited in looks:
        raised = reminders(p, waited)
        counted = sum(1 for a in after if waited >= a)
        assert len(raised) == (1 if counted > sent else 0)
        if raised:
            assert raised[0].critical == (counted == len(after))
            assert p.drain_reminded() == {KEY: counted}
        sent = max(sent, counted)
    assert sent <= len(after)
