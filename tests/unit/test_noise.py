"""Noise rules with an injected clock."""

from __future__ import annotations

from notifier.core.model import (
    Action,
    Notice,
    Question,
    QuestionItem,
    SessionRef,
    Transition,
    TransitionKind,
    Withdraw,
    key_of,
)
from notifier.core.planner import Planner, Silences, in_quiet_hours
from notifier.outputs.render import render


def q(cid: str, at: float = 0.0, text: str = "Q?") -> Question:
    return Question(cid, "question", (QuestionItem(text),), at)


def t(kind: TransitionKind, cid: str, session: str = "s1", at: float = 0.0, initial: bool = False) -> Transition:
    ref = SessionRef(session, "id", f"/home/u/{session}", None)
    return Transition(
        kind, ref, q(cid, at), at, initial=initial, outcome="answered" if kind == "resolved" else None
    )


def notices(actions: list[Action]) -> list[Notice]:
    return [a for a in actions if isinstance(a, Notice)]


def test_settle_window_hides_quick_answers() -> None:
    p = Planner(settle_s=0.25)
    p.feed([t("needs_input", "a")], 0.0)
    assert p.tick(0.1) == [] and p.next_due() == 0.25
    assert p.feed([t("resolved", "a")], 0.2) == []
    assert p.tick(0.3) == [] and p.next_due() is None


def test_one_notification_then_withdrawn() -> None:
    p = Planner(settle_s=0.25)
    p.feed([t("needs_input", "a")], 0.0)
    (n,) = notices(p.tick(0.25))
    assert n.kind == "question" and n.items[0].question.tool_call_id == "a"
    p.feed([t("needs_input", "a")], 1.0)  # the same question again: nothing new
    assert notices(p.tick(2.0)) == []
    assert p.feed([t("resolved", "a")], 3.0) == [Withdraw(n.handle)]


def test_after_a_restart_the_bubble_is_restored_not_notified_again() -> None:
    """Notified before a restart and still waiting: its bubble goes back on screen once (marked
    ``restored``: not a new notification), and it is withdrawn when the question ends."""
    p = Planner(notified={("s1", "a")})
    p.feed([t("needs_input", "a", initial=True)], 0.0)
    (n,) = notices(p.tick(1.0))
    assert n.restored and n.kind == "question" and n.items[0].key == ("s1", "a")
    assert p.drain_reminded() == {}  # no reminder counted for it
    p.feed([t("needs_input", "a")], 2.0)
    assert p.tick(3.0) == [] and p.next_due() == 600.0  # never again (only its reminder)
    assert p.feed([t("resolved", "a")], 4.0) == [Withdraw(n.handle)]


def test_a_restored_question_held_by_a_silence_is_put_back_not_announced_again() -> None:
    """Notified before a restart, then snoozed (or inside quiet hours) when the app starts again:
    when that ends its bubble is put back (``restored``: silent), not announced as a new question
    with its sound (a snooze lifted after a restart once did that)."""
    p = Planner(notified={("s1", "a")}, remind_after_s=())
    p.silences = Silences().snoozed(500.0, session="s1")
    p.feed([t("needs_input", "a", initial=True)], 0.0)
    assert notices(p.tick(0.0)) == [] and p.next_due() == 500.0
    (n,) = notices(p.tick(500.0))
    assert n.restored and n.items[0].key == ("s1", "a")
    assert notices(p.tick(501.0)) == [] and p.next_due() is None
    # the same in quiet hours: held while they last, put back when they end
    p = Planner(notified={("s1", "a")}, remind_after_s=())
    p.feed([t("needs_input", "a", initial=True)], 0.0)
    assert notices(p.tick(0.0, quiet=True)) == [] and p.quiet_held
    (n,) = notices(p.tick(100.0))
    assert n.restored and n.items[0].key == ("s1", "a")
    # muted, then unmuted: likewise
    p = Planner(notified={("s1", "a")}, remind_after_s=())
    p.silences = Silences(muted=frozenset({"s1"}))
    p.feed([t("needs_input", "a", initial=True)], 0.0)
    assert notices(p.tick(0.0)) == [] and p.next_due() is None
    p.silences = Silences()
    (n,) = notices(p.tick(10.0))
    assert n.restored


def test_several_restored_share_one_summary_and_muted_ones_stay_off_screen() -> None:
    p = Planner(notified={("s1", "a"), ("s2", "b"), ("s3", "c")})
    p.silences = Silences(muted=frozenset({"s3"}))
    p.feed([t("needs_input", c, s, initial=True) for c, s in (("a", "s1"), ("b", "s2"), ("c", "s3"))], 0.0)
    (n,) = notices(p.tick(0.0))
    assert n.restored and n.kind == "startup" and [i.key for i in n.items] == [("s1", "a"), ("s2", "b")]
    assert notices(p.tick(1.0)) == []


def test_burst_of_three_becomes_a_summary() -> None:
    p = Planner(settle_s=0.25)
    p.feed([t("needs_input", "a", "s1")], 0.0)
    first = notices(p.tick(0.25))
    assert len(first) == 1
    p.feed([t("needs_input", "b", "s2"), t("needs_input", "c", "s3")], 0.5)
    out = p.tick(0.75)
    (summary,) = notices(out)  # the first one's bubble becomes the summary, in place
    assert summary.kind == "burst" and len(summary.items) == 3 and summary.handle == first[0].handle
    (left,) = p.feed([t("resolved", "a", "s1"), t("resolved", "b", "s2")], 1.0)  # c's own, in place
    assert left == Notice(summary.handle, "question", summary.items[2:], waited_s=1.0, update=True)
    assert p.feed([t("resolved", "c", "s3")], 1.0) == [Withdraw(summary.handle)]


def test_slow_questions_are_not_a_burst() -> None:
    p = Planner(settle_s=0.25)
    for i, at in enumerate((0.0, 3.0, 6.0)):
        p.feed([t("needs_input", f"q{i}", f"s{i}", at)], at)
        assert [n.kind for n in notices(p.tick(at + 0.25))] == ["question"]


def test_startup_pending_is_one_summary() -> None:
    p = Planner()
    p.feed([t("needs_input", "a", "s1", initial=True), t("needs_input", "b", "s2", initial=True)], 0.0)
    (n,) = notices(p.tick(0.0))
    assert n.kind == "startup" and len(n.items) == 2


def test_reminders_replace_and_the_last_is_critical() -> None:
    p = Planner(settle_s=0.25, remind_after_s=(600.0, 1800.0))
    p.feed([t("needs_input", "a", at=0.0)], 0.0)
    (n,) = notices(p.tick(0.25))
    assert p.next_due() == 600.0
    (r1,) = notices(p.tick(600.0))
    assert r1.handle == n.handle and r1.kind == "reminder" and not r1.critical and r1.waited_s == 600.0
    (r2,) = notices(p.tick(1800.0))
    assert r2.handle == n.handle and r2.critical
    assert p.next_due() is None


def test_snoozed_session_raises_nothing_until_the_end() -> None:
    p = Planner(settle_s=0.25, remind_after_s=())
    p.silences = Silences().snoozed(900.0, session="s1")
    p.feed([t("needs_input", "a", "s1"), t("needs_input", "b", "s2")], 0.0)
    (n,) = notices(p.tick(0.25))
    assert n.items[0].ref.key == "s2"
    assert p.next_due() == 900.0
    (later,) = notices(p.tick(900.0))
    assert later.items[0].ref.key == "s1"


def test_a_snooze_lifted_early_lets_the_parked_question_through_at_once() -> None:
    p = Planner(settle_s=0.25, remind_after_s=())
    p.silences = Silences().snoozed(900.0, session="s1")
    p.feed([t("needs_input", "a", "s1")], 0.0)
    assert notices(p.tick(0.25)) == [] and p.next_due() == 900.0
    p.silences = p.silences.snoozed(0.0, session="s1")  # snoozed for 0 s: lifted
    assert p.next_due() == 0.25
    (n,) = notices(p.tick(10.0))
    assert n.items[0].ref.key == "s1"


def test_quiet_hours_and_mute_raise_nothing() -> None:
    p = Planner(settle_s=0.0, remind_after_s=(600.0, 1800.0))
    p.silences = Silences(muted=frozenset({"s1"}))  # project names: the cwd's last folder here
    p.feed([t("needs_input", "a", "s1"), t("needs_input", "b", "s2")], 0.0)
    assert [n.items[0].ref.key for n in notices(p.tick(0.0))] == ["s2"]
    p.feed([t("needs_input", "c", "s3", at=1.0)], 1.0)
    assert notices(p.tick(1.0, quiet=True)) == [] and p.quiet_held
    assert notices(p.tick(700.0, quiet=True)) == []  # still quiet: no reminder either
    # quiet hours over: the held question is announced once (its passed reminder is not sent),
    # and s2 gets its next reminder; the muted one waits for the unmute
    out = notices(p.tick(1900.0))
    assert sorted((n.kind, n.items[0].ref.key) for n in out) == [("question", "s3"), ("reminder", "s2")]
    assert not p.quiet_held and p.next_due() is None  # (the muted one: when the silences change)
    # unmuted: the question asked while muted is announced once, its passed reminders not sent
    p.silences = Silences()  # unmuted
    (n,) = notices(p.tick(2000.0))
    assert (n.kind, n.items[0].ref.key) == ("question", "s1")
    assert notices(p.tick(2001.0)) == [] and p.next_due() is None


def test_a_question_asked_while_muted_waits_across_a_restart_for_the_unmute() -> None:
    p = Planner(settle_s=0.0, remind_after_s=())
    p.silences = Silences(muted=frozenset({"s1"}))
    p.feed([t("needs_input", "a", "s1", initial=True)], 5.0)
    assert notices(p.tick(5.0)) == [] and p.next_due() is None and not p.notified
    p.silences = Silences()
    (n,) = notices(p.tick(6.0))
    assert n.items[0].ref.key == "s1" and n.handle


def test_held_in_quiet_hours_then_snoozed_is_announced_when_the_snooze_ends() -> None:
    p = Planner(settle_s=0.0, remind_after_s=())
    p.feed([t("needs_input", "a", "s1")], 0.0)
    assert notices(p.tick(0.0, quiet=True)) == [] and p.quiet_held
    p.silences = Silences().snoozed(500.0, project="s1")
    assert notices(p.tick(200.0)) == [] and not p.quiet_held  # quiet hours over, but snoozed now
    assert p.next_due() == 500.0
    (n,) = notices(p.tick(500.0))
    assert n.items[0].ref.key == "s1"
    assert notices(p.tick(501.0)) == []


def test_question_shown_late_skips_reminders_already_past() -> None:
    p = Planner(remind_after_s=(600.0, 1800.0))
    p.feed(
        [Transition("needs_input", SessionRef("s", "i", "/p", None), q("a", 0.0), 0.0, initial=True)], 900.0
    )
    (n,) = notices(p.tick(900.0))
    assert n.kind == "question" and p.next_due() == 1800.0


def test_project_snooze_and_resume_all() -> None:
    p = Planner(settle_s=0.0, remind_after_s=())
    p.silences = Silences().snoozed(1000.0, project="s1").snoozed(1000.0, session="s2")
    p.feed([t("needs_input", "a", "s1"), t("needs_input", "b", "s2"), t("needs_input", "c", "s3")], 0.0)
    assert [n.items[0].ref.key for n in notices(p.tick(0.0))] == ["s3"]
    assert p.next_due() == 1000.0  # asked again when the snoozes end
    p.silences = Silences()  # "Resume notifications now": every snooze lifted (past a burst's window)
    assert p.next_due() == 0.0
    assert sorted(i.ref.key for n in notices(p.tick(10.0)) for i in n.items) == ["s1", "s2"]


def test_turn_notices_only_when_asked_for() -> None:
    from notifier.core.model import TurnChange

    ref = SessionRef("s1", "id", "/home/u/proj", None)
    assert Planner().turn(TurnChange(ref, "idle", 1.0), 1.0) == []
    p = Planner(notify_on=frozenset({"idle", "failed"}))
    (n,) = p.turn(TurnChange(ref, "failed", 1.0), 1.0)
    assert isinstance(n, Notice)
    assert n.kind == "failed" and render(n, True, False).title == "proj stopped with an error"
    (i,) = p.turn(TurnChange(ref, "idle", 2.0), 2.0)
    assert isinstance(i, Notice)
    assert render(i, True, False).title == "proj finished its turn"
    p.silences = Silences(muted=frozenset({"proj"}))
    assert p.turn(TurnChange(ref, "idle", 3.0), 3.0) == []


def test_quiet_hours_window() -> None:
    import time

    base = time.mktime((2026, 11, 30, 23, 30, 0, 0, 0, -1))
    assert in_quiet_hours((22 * 60, 7 * 60), base)
    assert not in_quiet_hours((22 * 60, 7 * 60), base - 3 * 3600)
    assert in_quiet_hours((12 * 60, 14 * 60), base - 10 * 3600)
    assert not in_quiet_hours(None, base)


def test_render_question_markup_and_privacy() -> None:
    item_t = t("needs_input", "a", "s1")
    from notifier.core.model import Item

    question = Question(
        "a", "ask", (QuestionItem('<b>x</b> & "y"', "Hdr", None, (), False), QuestionItem("2")), 0.0
    )
    item = Item(("s1", "a"), item_t.session, question)
    plain = render(Notice(1, "question", (item,)), True, False)
    assert plain.title == "s1 needs an answer"
    assert (
        "<" not in plain.body and "&" not in plain.body.replace("＆", "") and "+1 more question" in plain.body
    )
    marked = render(Notice(1, "question", (item,)), True, True)
    assert "&lt;b&gt;x&lt;/b&gt; &amp; &quot;y&quot;" in marked.body
    private = render(Notice(1, "reminder", (item,), waited_s=720), False, True)
    assert "x" not in private.body and "Waiting for 12 min" in private.body


MIN = 60.0


def test_reminders_carry_on_from_when_asked_across_a_restart() -> None:
    """Asked at 0, notified, 10-min reminder sent; the app restarts at minute 12."""
    p = Planner(remind_after_s=(10 * MIN, 30 * MIN), notified={("s1", "a")}, reminded={("s1", "a"): 1})
    p.feed([t("needs_input", "a", at=0.0, initial=True)], 12 * MIN)
    (back,) = notices(p.tick(12 * MIN))  # its bubble back on screen, not announced again
    assert back.restored and back.waited_s == 12 * MIN and p.drain_reminded() == {}
    assert p.next_due() == 30 * MIN  # from when it was asked, not 10 min after the restart
    assert notices(p.tick(29 * MIN)) == []
    (r,) = notices(p.tick(30 * MIN))
    assert r.kind == "reminder" and r.waited_s == 30 * MIN and r.critical
    assert p.drain_reminded() == {("s1", "a"): 2} and p.drain_reminded() == {}
    assert notices(p.tick(45 * MIN)) == [] and p.next_due() is None  # nothing is repeated


def test_a_reminder_missed_while_not_running_comes_once_at_start_up() -> None:
    p = Planner(remind_after_s=(10 * MIN, 30 * MIN), notified={("s1", "a")})
    p.feed([t("needs_input", "a", at=0.0, initial=True)], 12 * MIN)
    (r,) = notices(p.tick(12 * MIN))  # (the reminder is the bubble put back: one, not two)
    assert r.kind == "reminder" and r.waited_s == 12 * MIN and not r.critical and not r.restored
    assert notices(p.tick(13 * MIN)) == [] and p.next_due() == 30 * MIN
    # answered: the reminder's notification is withdrawn
    assert p.feed([t("resolved", "a")], 14 * MIN) == [Withdraw(r.handle)]


def test_restored_question_answered_before_any_reminder_raises_nothing() -> None:
    p = Planner(remind_after_s=(10 * MIN,), notified={("s1", "a")})
    p.feed([t("needs_input", "a", at=0.0, initial=True)], 1 * MIN)
    (back,) = notices(p.tick(1 * MIN))
    assert back.restored and p.next_due() == 10 * MIN
    assert p.feed([t("resolved", "a")], 2 * MIN) == [Withdraw(back.handle)]
    assert p.next_due() is None


def test_first_seen_at_start_up_15_min_late_is_announced_saying_so() -> None:
    p = Planner(remind_after_s=(10 * MIN, 30 * MIN))
    p.feed([t("needs_input", "a", at=0.0, initial=True)], 15 * MIN)
    (n,) = notices(p.tick(15 * MIN))
    assert n.kind == "question" and n.waited_s == 15 * MIN
    assert "Waiting for 15 min" in render(n, True, False).body
    assert p.drain_reminded() == {("s1", "a"): 1}  # the 10-min one counts as sent
    assert p.next_due() == 30 * MIN


def test_needs_answer_messages_are_sticky_turn_notices_are_not() -> None:
    from notifier.core.model import TurnChange

    p = Planner(settle_s=0.0, notify_on=frozenset({"idle"}))
    p.feed([t("needs_input", "a")], 0.0)
    (n,) = notices(p.tick(0.0))
    assert render(n, True, True).sticky and "Waiting" not in render(n, True, True).body
    (idle,) = p.turn(TurnChange(SessionRef("s2", "id", "/home/u/s2", None), "idle", 1.0), 1.0)
    assert isinstance(idle, Notice) and not render(idle, True, True).sticky


def test_a_pi_known_to_wait_for_a_human_is_notified_at_once() -> None:
    """The settle window is for pis that cannot wait (`pi -p`); a TUI pi's question goes out now."""
    p = Planner(settle_s=0.25)
    interactive = t("needs_input", "a")
    out = p.feed([interactive], 0.0)
    p.known_askers([key_of(interactive.session, interactive.question)], 0.0)  # (the board found its TUI)
    (n,) = notices(out + p.tick(0.0))
    assert n.items[0].question.tool_call_id == "a"
    # not known to wait: the settle window holds, and an answer within it raises nothing
    p.feed([t("needs_input", "b")], 1.0)
    assert notices(p.tick(1.0)) == []
    assert p.feed([t("resolved", "b")], 1.1) == [] and notices(p.tick(1.5)) == []


def test_a_start_up_summary_stays_until_its_last_question_is_answered() -> None:
    """One bubble for the questions waiting at start-up (new, or put back after a restart): the
    first of them answered leaves it on screen for the others (the last one left: its own, in the
    same place), as a burst's summary does."""
    for notified in (set(), {("s1", "a"), ("s2", "b")}):
        p = Planner(notified=set(notified))
        p.feed([t("needs_input", "a", "s1", initial=True), t("needs_input", "b", "s2", initial=True)], 0.0)
        (n,) = notices(p.tick(0.0))
        assert n.kind == "startup" and len(n.items) == 2 and n.restored == bool(notified)
        (left,) = p.feed([t("resolved", "a", "s1")], 1.0)  # b still waits: the bubble stays, b's own
        assert left == Notice(n.handle, "question", n.items[1:], waited_s=1.0, update=True)
        assert p.feed([t("resolved", "b", "s2")], 2.0) == [Withdraw(n.handle)]


def test_a_reminder_of_one_question_of_a_start_up_summary_comes_through_the_summary() -> None:
    p = Planner(remind_after_s=(600.0,))
    p.feed([t("needs_input", "a", "s1", at=0.0, initial=True)], 0.0)
    p.feed([t("needs_input", "b", "s2", at=300.0, initial=True)], 300.0)
    (n,) = notices(p.tick(300.0))
    assert n.kind == "startup" and len(n.items) == 2
    # a's reminder: the summary again, heard (never a second bubble for a question on screen)
    assert p.tick(600.0) == [Notice(n.handle, "startup", n.items, critical=True)]
    (left,) = notices(p.feed([t("resolved", "a", "s1")], 700.0))
    assert (left.handle, left.kind, left.update) == (n.handle, "question", True)
    assert p.feed([t("resolved", "b", "s2")], 800.0) == [Withdraw(n.handle)]


def test_a_question_whose_pi_is_found_to_wait_for_a_human_skips_the_rest_of_the_settle_window() -> None:
    p = Planner(settle_s=0.25, remind_after_s=())
    p.feed([t("needs_input", "a", "s1"), t("needs_input", "b", "s2")], 0.0)
    assert notices(p.tick(0.0)) == [] and p.next_due() == 0.25
    a = ("s1", "a")
    p.known_askers([a, ("s3", "x")], 0.05)  # (a key the planner does not hold: nothing)
    assert p.next_due() == 0.05
    (n,) = notices(p.tick(0.05))
    assert n.items[0].key == a
    assert p.next_due() == 0.25  # the other one still waits its window
    p.known_askers([a], 0.1)  # already raised: nothing again
    assert notices(p.tick(0.1)) == []


def test_a_question_abandoned_then_waiting_again_is_notified_again_with_its_reminders() -> None:
    """Its pi missed by one look at the process table and seen again by the next: the bubble
    withdrawn with the abandonment comes back, and so do the reminders."""
    p = Planner(settle_s=0.25)
    p.feed([t("needs_input", "a")], 0.0)
    (first,) = notices(p.tick(0.25))
    assert p.feed([t("abandoned", "a")], 5.0) == [Withdraw(first.handle)]
    p.feed([t("needs_input", "a")], 6.0)
    (again,) = notices(p.tick(6.25))
    assert again.kind == "question" and again.handle != first.handle
    assert p.next_due() is not None  # its reminders are due again


def test_a_bubble_snoozed_from_itself_comes_back_when_the_snooze_ends() -> None:
    """"Snooze 15 min" on a bubble: withdrawn now, the question announced again (once) at the end
    of the 15 minutes, not at its next reminder; one answered meanwhile never comes back."""
    p = Planner(settle_s=0.0, remind_after_s=(600.0, 1800.0))
    p.feed([t("needs_input", "a", "s1"), t("needs_input", "b", "s2")], 0.0)
    shown = {n.items[0].ref.key: n for n in notices(p.tick(0.0))}
    p.silences = Silences().snoozed(960.0, session="s1")
    assert p.put_off(shown["s1"].handle, 960.0) == [Withdraw(shown["s1"].handle)]
    assert p.next_due() == 600.0  # (s2's reminder; s1's question waits for the end of its snooze)
    (r,) = notices(p.tick(600.0))
    assert r.kind == "reminder" and r.items[0].ref.key == "s2"
    assert p.next_due() == 960.0
    (back,) = notices(p.tick(960.0))
    assert back.kind == "question" and back.items[0].ref.key == "s1" and not back.restored
    assert notices(p.tick(961.0)) == [] and p.next_due() == 1800.0  # (its next reminder, not another)
    p.put_off(back.handle, 1500.0)
    p.feed([t("resolved", "a", "s1")], 1000.0)
    assert notices(p.tick(1500.0)) == []


def test_a_reminder_due_while_snoozed_comes_when_the_snooze_ends() -> None:
    p = Planner(settle_s=0.0, remind_after_s=(600.0, 1800.0))
    p.feed([t("needs_input", "a", "s1")], 0.0)
    (n,) = notices(p.tick(0.0))
    p.silences = Silences().snoozed(900.0, session="s1")  # the bubble stays on screen
    assert p.next_due() == 900.0
    assert p.tick(600.0) == []
    (r,) = notices(p.tick(900.0))
    assert r.kind == "reminder" and r.handle == n.handle
    assert p.drain_reminded() == {("s1", "a"): 1} and p.next_due() == 1800.0
    p.silences = Silences(muted=frozenset({"s1"}))  # muted: no reminder until unmuted
    assert p.next_due() is None and p.tick(1800.0) == []
    p.silences = Silences()
    (last,) = notices(p.tick(1900.0))
    assert last.kind == "reminder" and last.critical


def test_notified_before_a_restart_and_snoozed_is_announced_when_the_snooze_ends() -> None:
    p = Planner(notified={("s1", "a")}, remind_after_s=())
    p.silences = Silences().snoozed(900.0, session="s1")
    p.feed([t("needs_input", "a", "s1", initial=True)], 0.0)
    assert p.tick(1.0) == [] and p.next_due() == 900.0
    (n,) = notices(p.tick(900.0))
    assert n.kind == "question" and n.items[0].key == ("s1", "a")


def test_notified_before_a_restart_inside_quiet_hours_is_announced_when_they_end() -> None:
    """Off screen while they last (its bubble left by the run before is not drawn again), then
    announced once, as what arrived meanwhile."""
    p = Planner(notified={("s1", "a")}, remind_after_s=())
    p.feed([t("needs_input", "a", "s1", initial=True)], 0.0)
    assert p.tick(1.0, quiet=True) == [] and p.quiet_held == 1
    (n,) = notices(p.tick(2.0))
    assert n.items[0].key == ("s1", "a") and p.quiet_held == 0
    assert p.tick(3.0) == []


def test_a_question_held_by_quiet_hours_abandoned_and_back_is_held_once() -> None:
    """Judged abandoned and found waiting again while quiet hours run: held once (the count says
    one), and when they end while it is snoozed it waits for the snooze, the others announced."""
    p = Planner(settle_s=0.0, remind_after_s=())
    p.feed([t("needs_input", "a", "s1")], 1.0)
    p.tick(1.0, quiet=True)
    p.feed([t("abandoned", "a", "s1")], 2.0)
    p.feed([t("needs_input", "a", "s1"), t("needs_input", "b", "s2")], 3.0)
    assert p.tick(3.0, quiet=True) == [] and p.quiet_held == 2
    p.silences = Silences().snoozed(1000.0, session="s1")
    p.feed([t("needs_input", "c", "s3")], 4.0)
    assert {i.ref.key for n in notices(p.tick(4.0)) for i in n.items} == {"s2", "s3"}
    (later,) = notices(p.tick(1000.0))
    assert later.items[0].ref.key == "s1"


def test_a_bubble_snoozed_from_itself_comes_back_at_once_when_the_snooze_is_lifted() -> None:
    p = Planner(settle_s=0.0, remind_after_s=())
    p.feed([t("needs_input", "a", "s1")], 0.0)
    (n,) = notices(p.tick(0.0))
    p.put_off(n.handle, 960.0)
    assert p.tick(1.0) == []  # (the snooze not in the silences yet: still put off)
    p.silences = Silences().snoozed(960.0, session="s1")
    assert p.tick(2.0) == []
    p.silences = Silences()  # `snooze off`
    (back,) = notices(p.tick(100.0))
    assert back.items[0].ref.key == "s1" and p.tick(960.0) == []
