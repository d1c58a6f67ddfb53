"""Ages in the tray stay current: when a label next reads differently, and only while questions wait."""

from __future__ import annotations

import time

from hypothesis import given
from hypothesis import strategies as st

from notifier.core.planner import Preferences, next_quiet_change, parse_quiet_hours, quiet_hours_line, quiet_hours_note
from notifier.core.text import duration, duration_changes_in
from notifier.outputs.tray import UiState, age, age_changes_in, menu, next_redraw, title

from .test_view_icons import board_with


@given(st.floats(min_value=-5, max_value=3 * 86400, allow_nan=False))
def test_a_label_changes_exactly_when_said(age: float) -> None:
    d = duration_changes_in(age)
    assert d is not None and 0 < d <= 86400
    if d > 1e-5:  # (float rounding below that)
        assert duration(age + d - 1e-6) == duration(age)  # unchanged until then
    assert duration(age + d + 1e-6) != duration(age)  # and changed from then on


def test_steps_are_a_second_then_a_minute_then_a_day() -> None:
    assert duration_changes_in(12.25) == 0.75
    assert duration_changes_in(60.0) == 60.0 and duration_changes_in(125.0) == 55.0
    assert duration_changes_in(86400 + 10) == 86400 - 10
    assert duration_changes_in(float("nan")) is None


@given(st.floats(min_value=-5, max_value=3 * 86400, allow_nan=False))
def test_a_menu_age_changes_exactly_when_said_and_at_most_once_a_minute(seconds: float) -> None:
    d = age_changes_in(seconds)
    assert d is not None and 0 < d <= 86400 and (d >= 60 or seconds >= 0)
    if d > 1e-5:
        assert age(seconds + d - 1e-6) == age(seconds)
    assert age(seconds + d + 1e-6) != age(seconds)
    assert age(seconds).endswith((" min", " d"))  # never seconds in the menu
    assert age(float("nan")) == "?" and age_changes_in(float("nan")) is None


def test_next_redraw_only_while_questions_wait() -> None:
    now = 1000.0
    empty = UiState(board_with().snapshot(now))
    assert next_redraw(empty, now) is None  # nothing waits: no timer
    snap = UiState(board_with(("s1", "/home/u/p", "Deploy?", now - 12.5)).snapshot(now))
    assert next_redraw(snap, now) == now + 47.5  # "<1 min" until the first minute is up
    (first,) = [e.label for e in menu(snap, now) if "Deploy" in e.label]
    (same,) = [e.label for e in menu(snap, now + 47) if "Deploy" in e.label]
    (later,) = [e.label for e in menu(snap, now + 47.5) if "Deploy" in e.label]
    assert first == same and first.endswith("(<1 min)") and later.endswith("(1 min)")
    old = UiState(board_with(("s1", "/home/u/p", "Deploy?", now - 125)).snapshot(now))
    assert next_redraw(old, now) == now + 55  # minutes: once a minute, not every second
    snoozed = UiState(old.snapshot, Preferences(snooze_all_until=now + 90.5))
    assert next_redraw(snoozed, now) == now + 0.5  # the tooltip's "snoozed for 1 min" → "59 s"


def test_over_an_hour_of_ticks_the_menu_reads_differently_once_a_minute() -> None:
    """The UI thread wakes when next_redraw says; the menu is re-sent only when it differs
    from the one drawn (its entries are plain values) (outputs/tray.py). Ticked every second for an hour with a fresh question and a
    second one asked 10 min 0.5 s later, the menu differs 110 times, not 3,600: its first drawing,
    each minute of the first question (59), the second question, each minute of it (49)."""
    start = 1000.0
    one = UiState(board_with(("s1", "/home/u/p", "Deploy?", start)).snapshot(start))
    two = UiState(board_with(("s1", "/home/u/p", "Deploy?", start), ("s2", "/home/u/q", "Ship?", start + 600.5)).snapshot(start))
    drawn, sent, wakes, due = None, 0, 0, next_redraw(one, start)
    for tick in range(3600):
        now = start + tick + 0.25
        state = one if now < start + 600.5 else two
        if state is two and now < start + 601.5:  # a change wakes the UI thread too
            due = next_redraw(state, now)
        elif due is not None and now >= due:
            wakes += 1
            due = next_redraw(state, now)
        if menu(state, now) != drawn:
            drawn, sent = menu(state, now), sent + 1
    assert sent == 1 + 59 + 1 + 49
    assert wakes == 59 + 49  # the UI thread's own wakes: each when the menu will differ


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
