"""Summaries (a burst's, start-up's) stay true (pure, time passed in): a question of one that ends
changes that bubble in place, silently, to what still waits (one left: its own bubble, in the same
place; none: withdrawn); a reminder of one comes through the summary, never as a second bubble of
a question already on screen. Then the same planner's notices through the desktop's screen: an
update replaces the bubble on screen, and never pops one up."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from notifier.core.model import (
    Action,
    Notice,
    Option,
    Outcome,
    Question,
    QuestionItem,
    QuestionKey,
    SessionRef,
    Transition,
    TransitionKind,
    Withdraw,
    key_of,
)
from notifier.core.planner import Planner
from notifier.outputs.dbus import Backend
from notifier.outputs.desktop import Screen
from notifier.outputs.render import Message, notify_args
from notifier.outputs.render import Server as Description
from notifier.store import Store

from ..strategies import examples

W = 10_000.0  # the planner's clock at the start (the wall clock is the same)
MIN = 60.0


def ref(name: str) -> SessionRef:
    return SessionRef(f"/s/{name}.jsonl", name, f"/home/me/{name}", None)


def question(call: str, at: float) -> Question:
    return Question(call, "question", (QuestionItem(f"{call}?", options=(Option("A"), Option("B"))),), at)


def key(name: str) -> QuestionKey:
    return (f"/s/{name}.jsonl", f"c-{name}")


def asked(name: str, at: float, initial: bool = False) -> Transition:
    """The question of session ``name`` (one each)."""
    return Transition("needs_input", ref(name), question(f"c-{name}", at), at, initial=initial)


def fed(p: Planner, items: list[Transition], now: float, wall: float) -> list[Action]:
    """``items`` fed as the notifier feeds a batch whose questions' pis the board found to wait
    for a human (their TUI): due at once, no settle window."""
    out = p.feed(items, now, wall)
    p.known_askers([key_of(t.session, t.question) for t in items if t.kind == "needs_input"], now)
    return out


def ended(name: str, at: float, kind: TransitionKind = "resolved") -> Transition:
    outcome: Outcome | None = "answered" if kind == "resolved" else None
    return Transition(kind, ref(name), question(f"c-{name}", at), at, outcome=outcome)


def names(notice: Action) -> list[str]:
    assert isinstance(notice, Notice)
    return [i.ref.id or "" for i in notice.items]


def burst(p: Planner, sessions: str, at: float = W) -> int:
    """Questions of ``sessions`` asked 0.1 s apart, each raised as it comes; the summary's handle.
    The first two pop up on their own; with the third, the first one's bubble becomes the summary
    (in place) and the second's goes; later ones join it."""
    handles: list[int] = []
    for n, name in enumerate(sessions):
        now = at + 0.1 * n
        out = fed(p, [asked(name, now)], now, now) + p.tick(now)
        if n < 2:
            (single,) = out
            assert isinstance(single, Notice) and single.kind == "question" and names(single) == [name]
            handles.append(single.handle)
            continue
        *gone, summary = out
        assert isinstance(summary, Notice) and summary.kind == "burst" and not summary.update
        assert summary.handle == handles[0] and names(summary) == list(sessions[: n + 1])
        assert gone == ([Withdraw(handles[1])] if n == 2 else [])  # (the second single, once)
    return handles[0]


# ---- a burst's summary ----


def test_a_burst_of_three_answered_one_by_one_shrinks_in_place_then_goes() -> None:
    p = Planner(settle_s=0.25, remind_after_s=(600.0, 1800.0))
    h = burst(p, "abc")
    (n,) = p.feed([ended("a", W + 5)], W + 5, W + 5)
    assert isinstance(n, Notice) and n == Notice(h, "burst", n.items, update=True) and names(n) == ["b", "c"]
    assert p.tick(W + 5) == []
    # one left: its own bubble, in the same place (its text and its answers, how long it waited)
    (n,) = p.feed([ended("c", W + 90)], W + 90, W + 90)
    assert isinstance(n, Notice) and (n.handle, n.kind, n.update) == (h, "question", True) and names(n) == ["b"]
    assert n.waited_s == pytest.approx(90 - 0.1)
    assert p.feed([ended("b", W + 95)], W + 95, W + 95) == [Withdraw(h)]
    assert p.tick(W + 3600) == [] and p.next_due() is None


def test_a_burst_of_five_loses_two_in_one_batch_then_the_rest() -> None:
    p = Planner(settle_s=0.25)
    h = burst(p, "abcde")
    (n,) = p.feed([ended("b", W + 3), ended("d", W + 3, "abandoned")], W + 3, W + 3)  # one update for both
    assert isinstance(n, Notice) and n.handle == h and n.kind == "burst" and n.update and names(n) == ["a", "c", "e"]
    (n,) = p.feed([ended("a", W + 4)], W + 4, W + 4)
    assert isinstance(n, Notice) and n.update and names(n) == ["c", "e"]
    (n,) = p.feed([ended("e", W + 5)], W + 5, W + 5)
    assert isinstance(n, Notice) and (n.handle, n.kind, n.update) == (h, "question", True) and names(n) == ["c"]
    assert p.feed([ended("c", W + 6)], W + 6, W + 6) == [Withdraw(h)]


def test_the_last_of_a_burst_left_is_reminded_on_its_own_bubble_the_summary_was() -> None:
    p = Planner(settle_s=0.25, remind_after_s=(600.0, 1800.0))
    h = burst(p, "abc")
    p.feed([ended("a", W + 1), ended("b", W + 1)], W + 1, W + 1)
    assert p.next_due() == W + 0.2 + 600  # (c was asked last)
    (r,) = p.tick(W + 601)
    assert isinstance(r, Notice) and (r.handle, r.kind, r.update) == (h, "reminder", False) and names(r) == ["c"]


def test_a_new_burst_after_a_summary_shrank_to_one_makes_a_new_summary() -> None:
    p = Planner(settle_s=0.25)
    h = burst(p, "abc")
    p.feed([ended("a", W + 1), ended("b", W + 1)], W + 1, W + 1)  # c alone, on h
    now = W + 1.5
    out = fed(p, [asked("d", now), asked("e", now)], now, now) + p.tick(now)
    (summary,) = out  # c, d, e within 2 s: one summary, on c's bubble (nothing else on screen)
    assert isinstance(summary, Notice) and summary.handle == h and summary.kind == "burst"
    assert names(summary) == ["c", "d", "e"]


def test_a_member_abandoned_leaves_the_summary_and_is_announced_again_when_it_waits_again() -> None:
    """Its pi missed by one look and seen again: a question on no screen, announced again (its
    own bubble); the summary, changed to what else waits, stays."""
    p = Planner(settle_s=0.25)
    h = burst(p, "abcd")
    (n,) = p.feed([ended("b", W + 3, "abandoned")], W + 3, W + 3)
    assert isinstance(n, Notice) and n.handle == h and n.update and names(n) == ["a", "c", "d"]
    out = fed(p, [asked("b", W)], W + 6, W + 6) + p.tick(W + 6)
    (again,) = out
    assert isinstance(again, Notice) and again.kind == "question" and again.handle != h and names(again) == ["b"]
    (n,) = p.feed([ended("a", W + 7)], W + 7, W + 7)  # (b is not the summary's any more)
    assert isinstance(n, Notice) and n.handle == h and names(n) == ["c", "d"]


# ---- the summary of start-up ----


def test_a_reminder_of_a_start_up_summary_question_comes_through_the_summary() -> None:
    p = Planner(settle_s=0.25, remind_after_s=(600.0, 1800.0))
    p.feed([asked("s1", W - 9 * MIN, initial=True), asked("s2", W - 2 * MIN, initial=True)], W, W)
    (n,) = p.tick(W)
    assert isinstance(n, Notice) and n.kind == "startup" and names(n) == ["s1", "s2"]
    h = n.handle
    # s1's 10-minute reminder: the summary comes again, heard (not an update), and nothing else
    assert p.next_due() == W + MIN
    (r,) = p.tick(W + MIN)
    assert r == Notice(h, "startup", n.items)
    assert p.tick(W + 2 * MIN) == []
    (r,) = p.tick(W + 8 * MIN)  # s2's first
    assert r == Notice(h, "startup", n.items)
    (r,) = p.tick(W + 21 * MIN)  # s1's last: critical
    assert r == Notice(h, "startup", n.items, critical=True)
    # s1 answered: s2's own bubble, in place; its last reminder on it
    (u,) = p.feed([ended("s1", W + 22 * MIN)], W + 22 * MIN, W + 22 * MIN)
    assert isinstance(u, Notice) and (u.handle, u.kind, u.update) == (h, "question", True) and names(u) == ["s2"]
    (r,) = p.tick(W + 28 * MIN)
    assert isinstance(r, Notice) and (r.handle, r.kind, r.critical) == (h, "reminder", True)
    assert p.next_due() is None


def test_two_reminders_of_one_summary_due_together_bring_it_once() -> None:
    p = Planner(remind_after_s=(600.0,))
    p.feed([asked("s1", W - 9 * MIN, initial=True), asked("s2", W - 8 * MIN, initial=True)], W, W)
    (n,) = p.tick(W)
    (r,) = p.tick(W + 5 * MIN)  # both due by now (the app was asleep)
    assert isinstance(n, Notice) and r == Notice(n.handle, "startup", n.items, critical=True)


def test_a_bursts_reminders_bring_its_summary_once_not_once_each() -> None:
    """Questions of one summary asked moments apart have their reminders due moments apart: the
    summary comes again once for them all, then not again until the next reminder's time."""
    p = Planner(settle_s=0.25, remind_after_s=(600.0, 1800.0))
    for n, name in enumerate("abcd"):  # (asked 0.5 s apart: a burst, one summary)
        fed(p, [asked(name, W + n / 2)], W + n / 2, W + n / 2)
        p.tick(W + n / 2)
    summary = [a for a in p.tick(W + 20) + p.tick(W + 40) if isinstance(a, Notice)]
    assert not summary  # (all four on one summary by now, nothing more to show)
    due = p.next_due()
    assert due == W + 600
    (again,) = p.tick(due)
    assert isinstance(again, Notice) and again.kind == "burst" and names(again) == ["a", "b", "c", "d"]
    assert [p.tick(due + t) for t in (5, 10, 15, 30)] == [[], [], [], []]
    assert p.next_due() == W + 1800  # (a's last: the next time the summary is heard)


def test_a_summarys_grouped_reminders_never_take_a_questions_own_next_one() -> None:
    """Reminders less than a minute apart (remind_after 30 s, 60 s): a burst's summary comes
    again at the first, and urgent at the last, each once; grouping never counts a question's
    own next reminder as given."""
    p = Planner(settle_s=0.25, remind_after_s=(30.0, 60.0))
    for n, name in enumerate("abc"):
        fed(p, [asked(name, W + n / 2)], W + n / 2, W + n / 2)
        p.tick(W + n / 2)
    heard = [(t, a) for t in (W + 30, W + 31, W + 45, W + 60, W + 61, W + 90) for a in p.tick(t)]
    assert [(t - W, a.kind, a.critical) for t, a in heard if isinstance(a, Notice)] == [
        (30, "burst", False), (60, "burst", True),
    ]


def test_a_restored_summary_changed_is_an_update_not_a_put_back() -> None:
    """Put back after a restart (``restored``), then one of it answered: the change is drawn (an
    update), not taken for the bubble the run before left."""
    p = Planner(notified={key("a"), key("b"), key("c")})
    p.feed([asked(x, W - MIN, initial=True) for x in "abc"], W, W)
    (n,) = p.tick(W)
    assert isinstance(n, Notice) and n.restored and n.kind == "startup"
    (u,) = p.feed([ended("b", W + 1)], W + 1, W + 1)
    assert isinstance(u, Notice) and u.update and not u.restored and names(u) == ["a", "c"]


def test_a_start_up_member_abandoned_then_the_others_answered() -> None:
    p = Planner()
    p.feed([asked(x, W - MIN, initial=True) for x in "abc"], W, W)
    (n,) = p.tick(W)
    assert isinstance(n, Notice)
    (u,) = p.feed([ended("a", W + 1, "abandoned")], W + 1, W + 1)
    assert isinstance(u, Notice) and (u.handle, u.kind, u.update) == (n.handle, "startup", True)
    assert names(u) == ["b", "c"]
    (u,) = p.feed([ended("b", W + 2)], W + 2, W + 2)
    assert isinstance(u, Notice) and (u.kind, u.update) == ("question", True) and names(u) == ["c"]
    assert p.feed([ended("c", W + 3)], W + 3, W + 3) == [Withdraw(n.handle)]


def test_a_question_said_twice_before_the_start_up_summary_is_listed_once() -> None:
    p = Planner()
    p.feed([asked("a", W - MIN, initial=True), asked("b", W - MIN, initial=True)], W, W)
    p.feed([asked("a", W - MIN, initial=True)], W, W)
    (n,) = p.tick(W)
    assert isinstance(n, Notice) and n.kind == "startup" and names(n) == ["a", "b"]


# ---- the rule, for any order of questions, answers and time ----

Step = tuple[str, int, float]  # ("ask" | "answer" | "abandon", session number, seconds later)
STEPS = st.tuples(
    st.sampled_from(["ask", "answer", "abandon"]), st.integers(0, 5), st.sampled_from([0.0, 0.1, 1.0, 3.0, 700.0])
)


@settings(max_examples=examples(300), deadline=None)
@given(st.lists(STEPS), st.integers(0, 3))
def test_every_waiting_question_is_on_one_bubble_and_what_ended_on_none(steps: list[Step], at_start: int) -> None:
    """What the screen shows, after each step: every question announced and still waiting on one
    bubble, never two; what ended on none; a summary of two or more; an update only of a bubble
    on screen (nothing pops up)."""
    p = Planner(settle_s=0.25, remind_after_s=(600.0, 1800.0))
    screen: dict[int, set[QuestionKey]] = {}
    waiting: set[str] = set()

    def apply(actions: list[Action]) -> None:
        for a in actions:
            if isinstance(a, Withdraw):
                screen.pop(a.handle, None)
                continue
            assert not a.update or a.handle in screen, "an update popped a bubble up"
            assert a.kind not in ("burst", "startup") or len(a.items) >= 2
            screen[a.handle] = set(a.question_keys)
        shown = [k for keys in screen.values() for k in keys]
        assert sorted(shown) == sorted(key(n) for n in waiting)  # (each once; asked ones due at once)

    now = W
    first = [f"s{n}" for n in range(at_start)]
    waiting.update(first)
    apply(p.feed([asked(n, W - 5 * MIN, initial=True) for n in first], now, now) + p.tick(now))
    for kind, n, later in steps:
        now += later
        name = f"s{n}"
        if kind == "ask" and name not in waiting:
            waiting.add(name)
            apply(fed(p, [asked(name, now)], now, now) + p.tick(now))
        elif kind != "ask" and name in waiting:
            waiting.discard(name)
            apply(p.feed([ended(name, now, "resolved" if kind == "answer" else "abandoned")], now, now) + p.tick(now))
        else:
            apply(p.tick(now))


# ---- through the desktop's screen ----


DUNST = Description.of(("dunst", "knopwob", "1.9.0"), ("actions", "body"))


class Server(Backend):
    """A notification server as the screen sees it: ids from 1; each Notify's replaces_id (0: a
    new bubble pops up), title and whether its hints ask for the sound (``notifications.sound``
    "default")."""

    name = "dbus"
    markup = False
    owner = "bus-1/:1.7"
    online = True

    def __init__(self) -> None:
        self.calls: list[tuple[int, str, bool]] = []  # (replaces_id, title, heard)
        self.closed: list[int] = []

    def show(self, message: Message, replaces: int) -> int:
        _, hints, _ = notify_args(message, DUNST, "never", "default")
        heard = "sound-name" in hints and "suppress-sound" not in hints
        self.calls.append((replaces, message.title, heard))
        return replaces or len(self.calls)

    def close(self, server_id: int) -> None:
        self.closed.append(server_id)

    def shutdown(self) -> None:
        pass


def screen_of(server: Server) -> Screen:
    screen = Screen(lambda: (server, "stand-in"), lambda: 0.0, True, server, Store(None))
    screen.start()
    return screen


def put(screen: Screen, actions: list[Action]) -> None:
    for a in actions:
        if isinstance(a, Withdraw):
            screen.withdraw(a.handle)
        else:
            screen.put(a)


def test_through_the_screen_a_summary_shrinks_in_place_and_never_pops_up_again() -> None:
    server = Server()
    screen = screen_of(server)
    p = Planner(settle_s=0.25)
    for n, name in enumerate("abc"):
        put(screen, fed(p, [asked(name, W + n)], W + n / 10, W + n / 10) + p.tick(W + n / 10))
    assert server.calls == [
        (0, "a needs an answer", True),
        (0, "b needs an answer", True),
        (1, "3 pi sessions need answers", True),  # (a new question: heard)
    ]
    assert server.closed == [2]
    put(screen, p.feed([ended("a", W + 5)], W + 5, W + 5))
    put(screen, p.feed([ended("b", W + 6)], W + 6, W + 6))
    assert server.calls[3:] == [(1, "2 pi sessions need answers", False), (1, "c needs an answer", False)]
    put(screen, p.tick(W + 600.2))  # c's reminder: heard again, on the same bubble
    assert server.calls[5:] == [(1, "c needs an answer", True)]
    put(screen, p.feed([ended("c", W + 700)], W + 700, W + 700))
    assert server.closed == [2, 1] and screen.shown == {}


def test_through_the_screen_a_start_up_members_reminder_is_the_summary_heard_again() -> None:
    server = Server()
    screen = screen_of(server)
    p = Planner(remind_after_s=(600.0, 1800.0))
    p.feed([asked("s1", W - 9 * MIN, initial=True), asked("s2", W - 2 * MIN, initial=True)], W, W)
    put(screen, p.tick(W))
    put(screen, p.tick(W + MIN))
    assert server.calls == [(0, "2 pi sessions need answers", True), (1, "2 pi sessions need answers", True)]


def test_an_update_of_a_bubble_not_on_screen_pops_nothing_up() -> None:
    """The summary snoozed from its bubble (withdrawn by the screen), or the server gone: a change
    to it is kept for when it shows again, never a bubble popping up now."""
    server = Server()
    screen = screen_of(server)
    p = Planner(settle_s=0.25)
    p.feed([asked(x, W - MIN, initial=True) for x in "abcd"], W, W)
    (summary,) = p.tick(W)
    put(screen, [summary])
    assert isinstance(summary, Notice)
    screen.went_away("server", 1.0)  # (its bubbles went with it)
    put(screen, p.feed([ended("a", W + 1)], W + 1, W + 1))
    assert server.calls == [(0, "4 pi sessions need answers", True)]
    server.online = True
    screen.show_again()  # the server is back: the summary as it is now (put back, heard as before)
    assert server.calls[1:] == [(0, "3 pi sessions need answers", True)]
    screen.withdraw(summary.handle)  # snoozed from the bubble
    put(screen, p.feed([ended("b", W + 2)], W + 2, W + 2))
    assert server.calls[2:] == [] and screen.shown == {}


def test_a_question_first_seen_late_in_a_burst_counts_its_passed_reminders_as_a_single_does() -> None:
    """Asked 12 minutes before it was seen (not at start-up): its 10-minute reminder passed unsent,
    so the summary it joins does not come again at once; the next to come is a's first, then c's
    last (critical)."""
    p = Planner(settle_s=0.25, remind_after_s=(600.0, 1800.0))
    late = Transition("needs_input", ref("c"), question("c-c", W - 12 * MIN), W)
    burst(p, "ab")
    (summary,) = [a for a in fed(p, [late], W + 0.2, W + 0.2) + p.tick(W + 0.2) if isinstance(a, Notice)]
    assert summary.kind == "burst" and names(summary) == ["c", "a", "b"]
    assert p.tick(W + 1) == [] and p.next_due() == W + 600
    assert p.tick(W + 601) == [Notice(summary.handle, "burst", summary.items)]  # (a's and b's)
    assert p.next_due() == W - 12 * MIN + 1800  # (c: from when it was asked)
    assert p.tick(W + 18 * MIN) == [Notice(summary.handle, "burst", summary.items, critical=True)]


def test_a_summary_at_a_last_reminder_is_urgent_as_a_single_is() -> None:
    """A summary's last reminder says so to the server (urgency critical), as one question's does:
    with a numeric expire, only that keeps it on GNOME's screen."""
    from notifier.outputs.render import render

    p = Planner(remind_after_s=(600.0,))
    p.feed([asked("s1", W - 9 * MIN, initial=True), asked("s2", W - 8 * MIN, initial=True)], W, W)
    (n,) = p.tick(W)
    (r,) = p.tick(W + MIN)
    assert isinstance(n, Notice) and isinstance(r, Notice) and r.critical and not n.critical
    assert render(r, True, False).critical and not render(n, True, False).critical


def test_a_summary_the_user_dismissed_stays_dismissed_until_its_reminder() -> None:
    """Closed by the user (NotificationClosed, reason 2) or expired (1): a question of it that
    ends changes nothing on screen (dunst and GNOME would draw a replaced id anew); its reminder
    raises it again, as it raises a dismissed single."""
    for dismissed in ("a", "b"):
        server = Server()
        screen = screen_of(server)
        p = Planner(settle_s=0.25, remind_after_s=(600.0,))
        for n, name in enumerate("abc"):
            put(screen, fed(p, [asked(name, W + n)], W + n / 10, W + n / 10) + p.tick(W + n / 10))
        heard = len(server.calls)
        screen.closed(1)  # (the summary's id)
        put(screen, p.feed([ended(dismissed, W + 5)], W + 5, W + 5))
        assert server.calls[heard:] == []
        put(screen, p.tick(W + 600.2))  # the first left's reminder
        assert [heard for _, _, heard in server.calls[heard:]] == [True]
        put(screen, p.feed([ended("c", W + 601)], W + 601, W + 601))  # shown again: changes show
        assert server.calls[-1][2] is False


def test_a_bubble_closed_and_put_back_by_a_new_server_changes_again() -> None:
    """Closed by the user, then the server restarted: the summary is put back on screen; it is
    on screen again, so its changes are drawn again (it never lists what was answered)."""
    server = Server()
    screen = screen_of(server)
    p = Planner(settle_s=0.25)
    p.feed([asked(x, W - MIN, initial=True) for x in "abc"], W, W)
    (summary,) = p.tick(W)
    put(screen, [summary])
    screen.closed(1)
    screen.went_away("server", 1.0)
    server.online = True
    screen.show_again()
    put(screen, p.feed([ended("a", W + 1)], W + 1, W + 1))
    assert server.calls[-1][1] == "2 pi sessions need answers"
