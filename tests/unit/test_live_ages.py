"""Ages in the tray stay current: when a label next reads differently, and only while questions wait."""

from __future__ import annotations

import time

from hypothesis import given, settings
from hypothesis import strategies as st

from notifier.core.planner import Silences, next_quiet_change, parse_quiet_hours, quiet_hours_line, quiet_hours_note
from notifier.core.reducer import Header, Input
from notifier.outputs.tray import (
    WORKING_RECENT_S,
    Entry,
    UiState,
    age,
    asked,
    menu,
    next_redraw,
    relabelled,
    title,
)

from ..strategies import examples
from .test_view_icons import board_with


def test_a_menu_age_is_in_whole_minutes() -> None:
    assert [age(s) for s in (-3.0, 0.0, 59.9, 60.0, 125.0, 7500.0)] == [
        "<1 min", "<1 min", "<1 min", "1 min", "2 min", "2 h 05 min"
    ]
    assert age(float("nan")) == "?"


@settings(max_examples=examples(30))
@given(st.lists(st.floats(min_value=0, max_value=3600, allow_nan=False), min_size=1, max_size=8))
def test_however_many_questions_wait_the_menu_changes_only_when_the_oldest_turns_a_minute(offsets: list[float]) -> None:
    """Questions asked at any seconds: their ages all tick over together, when the oldest's age
    turns a whole minute, so the menu reads differently at most once a minute."""
    start = 100_000.0
    state = UiState(board_with(*((f"s{i}", f"/home/u/p{i}", "Q?", start - o) for i, o in enumerate(offsets))).snapshot(start))
    oldest = start - max(offsets)
    drawn, before = menu(state, start), start
    for tick in range(1, 300):
        now = start + tick / 2
        if menu(state, now) != drawn:
            assert (now - oldest) // 60 > (before - oldest) // 60, now  # the oldest turned a minute
            drawn = menu(state, now)
        before = now


def test_next_redraw_while_questions_wait_a_snooze_counts_down_or_a_session_works() -> None:
    now = 1000.0
    empty = UiState(board_with().snapshot(now))
    assert next_redraw(empty, now) is None  # nothing ticks: no timer
    snap = UiState(board_with(("s1", "/home/u/p", "Deploy?", now - 12.5)).snapshot(now))
    assert next_redraw(snap, now) == now + 47.5  # "<1 min" until the first minute is up
    (first,) = [e.label for e in menu(snap, now) if "Deploy" in e.label]
    (same,) = [e.label for e in menu(snap, now + 47) if "Deploy" in e.label]
    (later,) = [e.label for e in menu(snap, now + 47.5) if "Deploy" in e.label]
    assert first == same and first.endswith("(<1 min)") and later.endswith("(1 min)")
    snoozed = UiState(snap.snapshot, Silences(snooze_all_until=now + 90.5))
    assert next_redraw(snoozed, now) == now + 0.5  # the tooltip's "snoozed for 1 min" → "59 s"
    # Nothing waits, snoozed: its end is drawn (the icon's "z", the tooltip, "Resume now" go).
    idle = UiState(empty.snapshot, Silences(snooze_all_until=now + 30.5))
    assert next_redraw(idle, now) == now + 0.5
    assert next_redraw(idle, now + 30.0) == now + 30.5
    assert "snoozed" in title(idle, now + 30.0) and next_redraw(idle, now + 30.5) is None
    assert "snoozed" not in title(idle, now + 30.5)
    # A session that works: its blue "working" goes stale 10 minutes after its last change.
    board = board_with()
    board.local.apply("w", [Header("id-w", "/home/u/w"), Input(now)], now)
    working = UiState(board.snapshot(now))
    assert [v.state for v in working.snapshot.sessions] == ["working"]
    assert next_redraw(working, now + 5) == now + WORKING_RECENT_S
    assert next_redraw(working, now + WORKING_RECENT_S) is None


def test_over_an_hour_of_ticks_the_menu_reads_differently_once_a_minute() -> None:
    """The UI thread wakes when next_redraw says; the menu is re-sent only when it differs
    from the one drawn (outputs/tray.py). Ticked every second for an hour with a fresh question and a
    second one asked 10 min 0.5 s later, the menu differs 61 times, not 3,600: its first drawing,
    each minute of the first question (59: the second's age ticks over with it), the second
    question's arrival."""
    start = 1000.0
    one = UiState(board_with(("s1", "/home/u/p", "Deploy?", start)).snapshot(start))
    two = UiState(board_with(("s1", "/home/u/p", "Deploy?", start), ("s2", "/home/u/q", "Ship?", start + 600.5)).snapshot(start))
    drawn: tuple[Entry, ...] = ()
    sent, built, wakes, due = 0, 0, 0, next_redraw(one, start)
    for tick in range(3600):
        now = start + tick + 0.25
        state = one if now < start + 600.5 else two
        if state is two and now < start + 601.5:  # a change wakes the UI thread too
            due = next_redraw(state, now)
        elif due is not None and now >= due:
            wakes += 1
            due = next_redraw(state, now)
        if menu(state, now) != drawn:
            built += not relabelled(drawn, menu(state, now))
            drawn, sent = menu(state, now), sent + 1
    assert sent == 1 + 59 + 1
    assert built == 2  # a new menu: the first, and the second question's; each minute: new labels alone
    assert wakes == 59  # the UI thread's own wakes: each minute of the oldest question


def test_an_age_tick_is_new_labels_alone_a_question_coming_or_going_a_new_menu() -> None:
    """What Tray changes in place (compat.relabel) and what it builds again: labels alone, on
    entries that do what they did."""
    now = 1000.0
    one = UiState(board_with(("s1", "/home/u/p", "Deploy?", now)).snapshot(now))
    two = UiState(board_with(("s1", "/home/u/p", "Deploy?", now), ("s2", "/home/u/q", "Ship?", now)).snapshot(now))
    other = UiState(board_with(("s3", "/home/u/p", "Deploy?", now)).snapshot(now))  # another question, same words
    first, minute = menu(one, now), menu(one, now + 60)
    assert first != minute and relabelled(first, minute)
    assert not relabelled(first, menu(two, now)) and not relabelled(menu(two, now), first)
    assert menu(other, now + 60) != minute and not relabelled(first, menu(other, now + 60))  # (its clicks differ)
    snoozed = UiState(one.snapshot, Silences(snooze_all_until=now + 900))
    assert not relabelled(first, menu(snoozed, now))  # "Resume notifications now" comes
    muted = UiState(one.snapshot, Silences(muted=frozenset({"p"})))
    assert not relabelled(first, menu(muted, now))  # "Unmute" comes


def test_a_menu_without_ages_says_when_each_question_was_asked_and_never_ticks() -> None:
    """Where a new label is a new menu (Tray.ages false), the menu reads the same while the
    questions wait: each says when it was asked, on the clock."""
    local = time.localtime()
    noon = time.mktime((*local[:3], 12, 0, 0, 0, 0, -1))
    state = UiState(board_with(("s1", "/home/u/p", "Deploy?", noon - 125)).snapshot(noon))
    drawn = menu(state, noon, ages=False)
    assert drawn[0].label == "p — Deploy? (asked 11:57)"
    assert all(menu(state, noon + t, ages=False) == drawn for t in range(0, 3 * 3600, 7))
    assert asked(noon - 86400, noon) == "asked " + time.strftime("%a %d %b 12:00", time.localtime(noon - 86400))
    assert asked(float("nan"), noon) == "asked ?" and asked(1e300, noon) == "asked ?"


def test_quiet_hours_are_said_while_in_effect_and_their_next_change_is_known() -> None:
    local = time.localtime()
    now = time.mktime((*local[:3], 12, 0, 0, 0, 0, -1))  # noon today
    window = parse_quiet_hours("11:00-13:30")
    assert next_quiet_change(window, now) == now + 90 * 60
    assert next_quiet_change(parse_quiet_hours("22:00-07:00"), now) == now + 10 * 3600
    assert next_quiet_change(None, now) is None
    assert quiet_hours_note("11:00-13:30", now) == "quiet hours until 13:30"
    assert quiet_hours_note("13:00-14:00", now) == "" and quiet_hours_note("", now) == ""
    assert quiet_hours_line({"hours": "11:00-13:30"}).startswith("Quiet hours until 13:30 (11:00-13:30)")
    snap = UiState(board_with().snapshot(now))
    assert title(snap, now, "11:00-13:30") == "pi-notifier: no questions waiting — quiet hours until 13:30"
    assert title(snap, now, "13:00-14:00") == "pi-notifier: no questions waiting"
