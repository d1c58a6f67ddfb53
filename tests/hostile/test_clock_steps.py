"""The wall clock stepped (set back a day, then corrected; NTP; a suspended VM): reminders,
snoozes and the settle window run on the monotonic clock, the wall clock only labels.

The pure planner with an injected pair of clocks (monotonic, wall), a hypothesis property over
arbitrary steps, and one real app under libfaketime against a real notification server."""

from __future__ import annotations

import os
import shutil
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from notifier.core.model import Action, Notice, Question, QuestionItem, SessionRef, Transition
from notifier.core.planner import Planner, Silences

from ..app_process import AppProcess
from ..conftest import wait_for
from ..desktop.conftest import desktop, desktop_session, dunst, monitor  # noqa: F401  (a real notification server)
from ..desktop.services import Dunst, Monitor
from ..writer import append, ask, header

DAY = 86_400.0
T0 = 1_800_000_000.0  # the wall clock when the question is asked
M0 = 5_000.0  # the monotonic clock then


def asked(cid: str = "a", at: float = T0) -> Transition:
    ref = SessionRef("/s/a.jsonl", "id", "/home/u/shop", None)
    return Transition("needs_input", ref, Question(cid, "question", (QuestionItem("Q?"),), at), at)


def reminders(actions: list[Action]) -> list[Notice]:
    return [a for a in actions if isinstance(a, Notice) and a.kind == "reminder"]


def test_a_day_back_for_a_minute_neither_delays_nor_hastens_the_reminder() -> None:
    p = Planner(settle_s=0.0, remind_after_s=(60.0,))
    p.feed([asked()], M0, T0)
    assert [a.kind for a in p.tick(M0) if isinstance(a, Notice)] == ["question"]
    # the wall clock goes a day back at +5 s; the monotonic clock goes on
    assert p.next_due() == M0 + 60.0
    assert reminders(p.tick(M0 + 59.0)) == []
    (r,) = reminders(p.tick(M0 + 60.0))
    assert r.waited_s == 60.0  # (the wall clock, a day behind, plays no part)


def test_a_question_seen_while_the_clock_is_behind_is_not_reminded_at_once_when_corrected() -> None:
    p = Planner(settle_s=0.0, remind_after_s=(60.0, 600.0))
    # pi's entry says T0 (its clock was right); ours says a day earlier: the age is 0, not -1 day
    p.feed([asked(at=T0)], M0, T0 - DAY)
    p.tick(M0)
    # corrected a second later: the wall clock jumps a day ahead; nothing is due before +60 s
    assert reminders(p.tick(M0 + 1.0)) == [] and p.next_due() == M0 + 60.0


def test_a_snooze_lasts_its_15_minutes_whatever_the_wall_clock_does() -> None:
    p = Planner(settle_s=0.0, remind_after_s=())
    wall_now = T0
    snoozed = Silences().snoozed(wall_now + 900.0)  # kept in wall time
    p.silences = snoozed.shifted(M0 - wall_now)  # handed over once, on the monotonic clock
    p.feed([asked()], M0, wall_now)
    assert p.tick(M0 + 1.0) == []
    assert p.next_due() == M0 + 900.0  # (a day back or ahead since changes nothing)
    assert [a.kind for a in p.tick(M0 + 900.0) if isinstance(a, Notice)] == ["question"]


@given(
    # (whole seconds: the property is about clocks, not float rounding)
    steps=st.lists(st.tuples(st.integers(0, 50), st.integers(-2 * int(DAY), 2 * int(DAY))), max_size=20),
    remind=st.integers(1, 600),
)
def test_reminders_follow_the_monotonic_clock_under_any_wall_steps(
    steps: list[tuple[int, int]], remind: int
) -> None:
    """Whatever the wall clock does after a question was seen, its reminder is due exactly
    ``remind`` seconds (monotonic) after it was asked."""
    p = Planner(settle_s=0.0, remind_after_s=(remind,))
    p.feed([asked()], M0, T0)
    p.tick(M0)
    mono, wall = M0, T0
    for advance, step in steps:
        mono += advance
        wall += advance + step
        p.feed([], mono, wall)
        got = reminders(p.tick(mono))
        assert bool(got) == (mono >= M0 + remind)
        if got:
            return
    assert p.next_due() == M0 + remind


# ---- one real app under libfaketime ----

LIBFAKETIME = next(
    (
        p
        for p in (
            "/usr/lib/x86_64-linux-gnu/faketime/libfaketime.so.1",
            "/usr/lib/aarch64-linux-gnu/faketime/libfaketime.so.1",
            "/usr/lib/faketime/libfaketime.so.1",
        )
        if os.path.exists(p)
    ),
    None,
)


def require_faketime() -> str:
    if LIBFAKETIME is None or not shutil.which("faketime"):
        if os.environ.get("NOTIFIER_REQUIRE_DESKTOP") == "1":
            pytest.fail("libfaketime is missing (apt-get install faketime)")
        pytest.skip("libfaketime is missing (apt-get install faketime)")
    return LIBFAKETIME


@pytest.fixture
def faked(tmp_path: Path) -> tuple[dict[str, str], Path]:
    """An environment whose wall clock (only: CLOCK_MONOTONIC is left alone) is this machine's
    plus the offset in the returned file, read again at every call."""
    lib = require_faketime()
    offset = tmp_path / "clock-offset"
    offset.write_text("+0\n")
    env = dict(
        os.environ,
        LD_PRELOAD=lib,
        FAKETIME_TIMESTAMP_FILE=str(offset),
        FAKETIME_NO_CACHE="1",
        FAKETIME_DONT_FAKE_MONOTONIC="1",
    )
    return env, offset


def test_a_real_app_whose_clock_is_set_back_a_day_reminds_on_time(
    tmp_path: Path,
    faked: tuple[dict[str, str], Path],
    dunst: Dunst,  # noqa: F811  (the desktop layer's fixtures, imported above)
    monitor: Monitor,  # noqa: F811
) -> None:
    import time

    env, offset = faked
    config = tmp_path / "config.toml"
    config.write_text("settle_ms = 0\nremind_after = [0.03]\n")  # a reminder 1.8 s after asking
    sessions = tmp_path / "sessions"
    first, second = (sessions / f"--home-dev-{p}--" / "s.jsonl" for p in ("early", "during"))
    append(first, header("/home/dev/early"))
    append(second, header("/home/dev/during"))

    def of(project: str, reminder: bool) -> list[dict[str, Any]]:
        return [
            n
            for n in monitor.notifies()
            if n["summary"] == f"{project} needs an answer" and ("Waiting for" in n["body"]) == reminder
        ]

    app = AppProcess(
        "run",
        "--json",
        "--no-tray",
        "--liveness",
        "off",
        "--sessions-dir",
        str(sessions),
        "--config",
        str(config),
        env=env,
    )
    with app:
        app.wait("ready")
        # asked with the clock right; set back a day just after it was notified
        append(first, ask("q1", "Asked before the step?"))
        wait_for(lambda: of("early", False), 10, "the first notification")
        shown = time.monotonic()
        offset.write_text("-1d\n")
        wait_for(lambda: of("early", True), 20, "its reminder while the clock is a day behind")
        assert time.monotonic() - shown >= 0.8  # at its time, not before (less what seeing it took)
        # asked while the clock is behind (by pi's clock too), corrected just after it was shown
        append(second, ask("q2", "Asked during the step?", at=time.time() - DAY))
        wait_for(lambda: of("during", False), 10, "the second notification")
        shown = time.monotonic()
        offset.write_text("+0\n")  # the wall clock jumps a day ahead
        wait_for(lambda: of("during", True), 20, "its reminder")
        assert time.monotonic() - shown >= 0.8, "the jump ahead made it come at once"
        labelled = [e for e in app.of("needs_input") if e["question"]["tool_call_id"] == "q1"]
        assert labelled[0]["at"].startswith(time.strftime("%Y-", time.gmtime()))  # labels: wall time
        assert app.proc.poll() is None
