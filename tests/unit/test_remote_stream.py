"""The remote stream parser (pure), the board's remote sessions, and the push output's timing."""

from __future__ import annotations

import io
import json
import threading
from dataclasses import replace
from typing import Any

import pytest

from notifier.channel import BadLine, read_lines
from notifier.config import Config, ConfigError
from notifier.core.board import Board
from notifier.core.codec import event_obj
from notifier.core.model import Question, QuestionItem, SessionRef, Snapshot, Transition, remote_key
from notifier.engine import Batch
from notifier.remote import Ready, RemoteAsked, RemoteEnded, parse_line

from ..conftest import wait_for

NOW = 1_800_000_000.0


def needs(cid: str = "c1", file: str = "/h/s.jsonl", **q: Any) -> bytes:
    question = {"tool_call_id": cid, "tool": "question", "text": "Deploy?", "header": None,
                "options": ["Yes", "No"], "count": 1, **q}
    return json.dumps({"event": "needs_input", "at": "2027-01-15T08:00:00.000Z", "initial": True,
                       "session": {"id": "abc", "file": file, "cwd": "/home/dev/webshop", "name": None},
                       "question": question}).encode()


def test_round_trip_of_our_own_event_lines() -> None:
    ev = parse_line(needs(), "devbox", NOW)
    assert isinstance(ev, RemoteAsked) and ev.initial
    assert ev.session.host == "devbox" and ev.session.file == "/h/s.jsonl"
    assert ev.session.key == remote_key("devbox", "/h/s.jsonl")
    assert ev.question.options == ("Yes", "No") and ev.question.text == "Deploy?"
    # what we print again for it: the remote's file, our host name
    out = event_obj(Transition("needs_input", ev.session, ev.question, NOW))
    assert out["session"]["file"] == "/h/s.jsonl" and out["session"]["host"] == "devbox"
    assert isinstance(parse_line(b'{"event":"ready","at":"x","sessions":1,"pending":0,"scan_s":0}', "d", NOW), Ready)
    resolved = json.loads(needs())
    resolved.update(event="resolved", outcome="answered", answer="Yes", waited_s=3.5)
    ended = parse_line(json.dumps(resolved).encode(), "devbox", NOW)
    assert isinstance(ended, RemoteEnded) and ended.outcome == "answered" and ended.waited_s == 3.5


def test_a_remote_question_has_here_the_token_it_has_there() -> None:
    """An answer from the desktop to a remote question carries the token of what was shown here,
    and the remote refuses any other: the question read from the stream is the remote's own, asked
    when it was asked there (not when the remote saw it), so their tokens are the same."""
    from notifier.core.codec import dumps, question_token

    ref = SessionRef("/h/s.jsonl", "abc", "/home/dev/webshop", None)
    q = Question("c1", "question", (QuestionItem("Deploy?"),), 0.0)
    for asked, seen in ((1_799_999_990.123, NOW - 5), (NOW - 5.0004567, NOW - 5)):  # (at its start-up; live)
        there = event_obj(Transition("needs_input", ref, replace(q, asked_at=asked), seen))
        ev = parse_line(dumps(there).encode(), "devbox", NOW)
        assert isinstance(ev, RemoteAsked) and question_token(ev.question) == there["question"]["token"]


@pytest.mark.parametrize(
    "line",
    [b"Welcome!", b"[1,2]", b'{"event": 5}', b'{"event":"needs_input"}', b"\xff\xfe",
     b'{"event":"resolved","session":{"file":"/x"},"question":{"tool_call_id":"c","tool":"q"},"outcome":"??"}',
     b"[" * 100_000, b'{"event":"needs_input","session":{"file":"/x"},"question":{"tool_call_id":1,"tool":"q"}}'],
)
def test_garbage_is_a_stream_error(line: bytes) -> None:
    with pytest.raises(BadLine):
        parse_line(line, "devbox", NOW)


def test_infinite_numbers_are_refused_quietly() -> None:
    line = needs().replace(b'"count": 1', b'"count": Infinity')
    ev = parse_line(line, "d", NOW)
    assert isinstance(ev, RemoteAsked) and ev.question.count == 1


def test_unknown_events_and_blank_lines_are_ignored() -> None:
    assert parse_line(b'{"event":"something_new"}', "d", NOW) is None
    assert parse_line(b"  \n", "d", NOW) is None


def test_hostile_text_is_cleaned_and_times_bounded() -> None:
    ev = parse_line(needs(text="\x1b[31mred\u202e", count=10**9), "d", NOW)
    assert isinstance(ev, RemoteAsked)
    assert ev.question.text == "red" and ev.question.count == 100
    future = json.loads(needs())
    future["at"] = "2199-01-01T00:00:00Z"
    ev = parse_line(json.dumps(future).encode(), "d", NOW)
    assert isinstance(ev, RemoteAsked) and ev.at == NOW


def test_long_lines_are_skipped_to_their_end() -> None:
    data = b"a" * 50 + b"\nshort\n" + b"b" * 25 + b"\nlast"
    assert list(read_lines(io.BytesIO(data), limit=20)) == [None, b"short\n", None, b"last"]


def q(cid: str) -> Question:
    return Question(cid, "question", (QuestionItem("Q?"),), NOW)


def test_board_remote_lifecycle() -> None:
    board = Board()
    ref = SessionRef(remote_key("devbox", "/s"), "i", "/w", None, "devbox")
    assert [t.kind for t in board.remote.asked(ref, q("a"), NOW, True)] == ["needs_input"]
    assert [t.kind for t in board.remote.asked(ref, q("b"), NOW, False)] == ["needs_input"]
    assert board.remote.asked(ref, q("a"), NOW, False) == []  # known: no second notice
    board.remote.offline("devbox", NOW + 1)
    assert board.snapshot(NOW).pending_count == 0
    view = board.view(ref.key)
    assert view is not None and view.offline_since == NOW + 1 and [q.tool_call_id for q in view.offline] == ["a", "b"]
    out = board.remote.synced("devbox", {(ref.key, "a")}, NOW + 2)  # b ended while away
    assert [(t.kind, t.question.tool_call_id, t.outcome) for t in out] == [("resolved", "b", "superseded")]
    assert board.snapshot(NOW).pending_count == 1
    assert [t.kind for t in board.remote.ended(ref, q("a"), NOW + 3)] == ["abandoned"]
    assert board.snapshot(NOW).pending_count == 0 and len(board.snapshot(NOW).abandoned) == 1
    assert board.clear_abandoned(ref.key)
    assert board.snapshot(NOW).sessions == ()
    # remote sessions are never judged by this machine's process list
    board.remote.asked(ref, q("c"), NOW, False)
    assert board.local.set_processes([], NOW + 4) == [] and not board.local.needs_liveness()


def test_config_remotes_and_push_checks(tmp_path: Any) -> None:
    from notifier.config import (  # (in parentheses: the codemod leaves it whole)
        load,
    )

    good = tmp_path / "good.toml"
    good.write_text('[[remotes]]\nname="devbox"\nssh="me@devbox"\n[push]\nurls=["ntfy://t"]\nafter=0.5\nwhen="away"\n')
    config = load(str(good), True)
    assert config["remotes"][0]["ssh"] == "me@devbox" and config["push.after"] == 0.5
    for bad, key in [
        ('[[remotes]]\nname="a b"\nssh="x"\n', "remotes"),
        ('[[remotes]]\nname="a"\nssh="x"\ncommand=["y"]\n', "remotes"),
        ('[[remotes]]\nname="a"\nssh="-oProxyCommand=x"\n', "remotes"),
        ('[[remotes]]\nname="a"\nssh="x"\n[[remotes]]\nname="a"\nssh="y"\n', "remotes"),
        ('[push]\nurls=["nope"]\n', "push.urls"),
        ("[push]\nafter=nan\n", "push.after"),
        ('[push]\nwhen="sometimes"\n', "push.when"),
    ]:
        path = tmp_path / "bad.toml"
        path.write_text(bad)
        with pytest.raises(ConfigError, match=f"'{key}'") as err:
            load(str(path), True)
        assert str(path) in str(err.value) and "\n" not in str(err.value)


class Clock:
    def __init__(self) -> None:
        self.t = 0.0

    def __call__(self) -> float:
        return self.t


def test_push_output_timing_and_away() -> None:
    """With ``push.when = "away"``, a due question is pushed only when the desktop says it is
    away; unknown presence counts as present, and the question is looked at again
    AWAY_RECHECK_S later (on the push output's clock), not sooner."""
    from notifier.outputs.push import AWAY_RECHECK_S, GROUP_S, PushOutput

    config = Config()
    config.values.update({"push.urls": ["json://x"], "push.after": 0.0, "push.when": "away"})
    clock = Clock()
    away: list[bool | None] = [None]
    looks: list[tuple[float, bool | None]] = []  # (the push output's time, what the look said)
    sent: list[tuple[str, list[tuple[float, bool | None]]]] = []  # (title, the looks so far)
    pushed = threading.Semaphore(0)

    def look() -> bool | None:
        looks.append((clock.t, away[0]))
        return away[0]

    def send(urls: Any, title: str, body: str) -> bool:
        sent.append((title, list(looks)))
        pushed.release()
        return True

    a = SessionRef(remote_key("devbox", "/s/a"), "i", "/w/webshop", None, "devbox")
    b = SessionRef(remote_key("devbox", "/s/b"), "i", "/w/shop", None, "devbox")
    output = PushOutput(config, send=send, away=look, clock=clock)
    output.start()
    try:
        output.publish(Batch((Transition("needs_input", a, q("a"), NOW),), Snapshot()))
        wait_for(lambda: looks, 5, "a look at the desktop")
        assert looks == [(0.0, None)]
        # Away now, earlier than a's next look: a new question b is due at once (push.after 0)
        # and goes out alone; a, looked at again only in AWAY_RECHECK_S, is not in its group.
        away[0] = True
        clock.t = AWAY_RECHECK_S - GROUP_S - 1.0
        output.publish(Batch((Transition("needs_input", b, q("b"), NOW),), Snapshot()))
        assert pushed.acquire(timeout=10), "b was not pushed"
        assert sent == [("devbox · shop needs an answer", [(0.0, None), (clock.t, True)])]
        # a's time comes: any handover wakes the timer (here b resolved), which looks and pushes a.
        clock.t = AWAY_RECHECK_S
        output.publish(Batch((Transition("resolved", b, q("b"), NOW),), Snapshot()))
        assert pushed.acquire(timeout=10), "a was not pushed at its next look"
        assert sent[1] == ("devbox · webshop needs an answer", [*sent[0][1], (AWAY_RECHECK_S, True)])
        wait_for(lambda: output.sent == 2, 5, "both pushes counted as sent")
    finally:
        output.stop()


def test_push_output_never_pushes_a_question_twice(tmp_path: Any) -> None:
    """What was pushed is in the store: a new push output (the app restarted) skips it when it is seen
    pending again, and records what it pushes itself."""
    from notifier.outputs.push import PushOutput
    from notifier.store import Store

    config = Config()
    config.values.update({"push.urls": ["json://x"], "push.after": 0.0, "push.when": "always"})
    store = Store(str(tmp_path / "state.sqlite3"))
    ref = SessionRef("/s/a.jsonl", "i", "/w/webshop", None)
    store.mark_pushed(ref.key, "old")
    sent: list[str] = []

    def send(urls: Any, title: str, body: str) -> bool:
        sent.append(body)
        return True

    output = PushOutput(config, store, send=send)
    output.start()
    try:
        old = Question("old", "question", (QuestionItem("Pushed before?"),), NOW)
        new = Question("new", "question", (QuestionItem("New?"),), NOW)
        # in this order: were "old" pushed again, it would be sent before "new"
        output.publish(Batch((Transition("needs_input", ref, old, NOW, initial=True),), Snapshot()))
        output.publish(Batch((Transition("needs_input", ref, new, NOW),), Snapshot()))
        wait_for(lambda: sent, 10, "the push of the new question")
        assert sent == ["New?"]
        assert store.pushed() == {(ref.key, "old"), (ref.key, "new")}
        # resolved, then seen pending again (its pi came back): still not pushed a second time
        output.publish(Batch((Transition("abandoned", ref, new, NOW),), Snapshot()))
        output.publish(Batch((Transition("needs_input", ref, new, NOW),), Snapshot()))
        third = Question("third", "question", (QuestionItem("Third?"),), NOW)
        output.publish(Batch((Transition("needs_input", ref, third, NOW),), Snapshot()))
        wait_for(lambda: len(sent) >= 2, 10, "the push of the third question")
        assert sent == ["New?", "Third?"]
    finally:
        output.stop()
        store.close()


def test_a_push_waits_out_mutes_snoozes_and_quiet_hours_and_leaves_out_what_was_answered() -> None:
    """As on the desktop: a question of a muted project (by its folder, though its session has a
    name) is not pushed while its neighbour is; unmuted, it is pushed when looked at again. One
    answered while its push waited for its turn (the destination's pace) is left out of it. In
    quiet hours nothing is pushed; once they end, the question is."""
    import time

    from notifier.core.planner import Silences
    from notifier.outputs.push import AWAY_RECHECK_S, PushOutput

    config = Config()
    config.values.update({"push.urls": ["json://x"], "push.after": 0.0, "push.when": "always"})
    clock, sent, pushed = Clock(), [], threading.Semaphore(0)

    def send(urls: Any, title: str, body: str) -> bool:
        sent.append(title)
        pushed.release()
        return True

    def asked(key: str, folder: str, name: str | None = None) -> Transition:
        return Transition("needs_input", SessionRef(key, "i", f"/w/{folder}", name), q(key), NOW)

    muted, shop, other = asked("m", "webshop", "billing"), asked("x", "shop"), asked("y", "other")
    output = PushOutput(config, send=send, clock=clock, rate_burst=1, rate_every_s=100.0)
    output.set_silences(Silences(muted=frozenset({"webshop"})))
    output.start()
    try:
        output.publish(Batch((muted, shop), Snapshot()))
        assert pushed.acquire(timeout=10) and sent == ["shop needs an answer"]
        output.publish(Batch((other,), Snapshot()))  # due at once, held: the pace allows one per 100 s
        wait_for(lambda: "y" in {k for _, k in output._pushed}, 5, "the question taken, held for its turn")
        output.publish(Batch((replace(other, kind="resolved"),), Snapshot()))  # answered meanwhile
        output.set_silences(Silences())  # unmuted
        clock.t = 100.0  # past the muted one's next look (AWAY_RECHECK_S) and the pace
        output.publish(Batch((replace(shop, kind="resolved"),), Snapshot()))  # (a batch: the thread wakes)
        assert pushed.acquire(timeout=10) and sent[-1] == "billing needs an answer"  # alone: not "2 questions"
    finally:
        output.stop()
    # Quiet hours from an hour ago to an hour from now: nothing pushed until they end.
    minute = time.localtime().tm_hour * 60 + time.localtime().tm_min
    hours = f"{(minute - 60) % 1440 // 60:02d}:{(minute - 60) % 60:02d}-{(minute + 60) % 1440 // 60:02d}:{(minute + 60) % 60:02d}"
    config.values["quiet_hours"] = hours
    clock, sent = Clock(), []
    output = PushOutput(config, send=send, clock=clock)
    output.start()
    try:
        output.publish(Batch((shop,), Snapshot()))
        wait_for(lambda: output._due and output._due[0][0] >= AWAY_RECHECK_S, 5, "the question looked at again later")
        assert sent == []
        output.set_quiet_hours("")
        clock.t = AWAY_RECHECK_S
        output.publish(Batch((replace(other, kind="resolved"),), Snapshot()))
        assert pushed.acquire(timeout=10) and sent == ["shop needs an answer"]
    finally:
        output.stop()


def test_the_push_thread_runs_again_after_a_failure_and_says_so() -> None:
    """A bug that escapes the push thread's work (here a BaseException from the sender) is recorded
    in the app's failure log and the thread runs again: the next question is pushed."""
    from notifier.outputs.push import PushOutput
    from notifier.system.supervisor import FailureLog

    class Bug(BaseException):
        pass

    config = Config()
    config.values.update({"push.urls": ["json://x"], "push.after": 0.0, "push.when": "always"})
    sent: list[str] = []

    def send(urls: Any, title: str, body: str) -> bool:
        if not sent:
            sent.append("failed")
            raise Bug("a bug in a push")
        sent.append(body)
        return True

    health = FailureLog()
    output = PushOutput(config, send=send, health=health)
    output.start()
    try:
        ref = SessionRef("/s/a.jsonl", "i", "/w/webshop", None)
        output.publish(Batch((Transition("needs_input", ref, q("a"), NOW),), Snapshot()))
        wait_for(lambda: "push" in health.report(), 5, "the failure recorded")
        output.publish(Batch((Transition("needs_input", ref, q("b"), NOW),), Snapshot()))
        wait_for(lambda: len(sent) == 2, 10, "the next question pushed")
        assert health.report()["push"]["recovered"] and "Bug: a bug in a push" in health.lines()[0]
    finally:
        output.stop()


# ---- a remote that floods: per-host bounds, the inbox (folded, bounded), the pace ----


def remote_ref(host: str, n: int) -> SessionRef:
    return SessionRef(remote_key(host, f"/s/{n}.jsonl"), None, "/w", None, host)


def test_each_host_is_bounded_in_sessions_and_questions_and_says_what_it_refused() -> None:
    from notifier.core.board import RemoteSessions

    remote = RemoteSessions(max_sessions=3, max_questions=2)
    for n in range(5):
        remote.asked(remote_ref("flood", n), q("a"), NOW, False)
    assert len(remote) == 3 and remote.take_refused() == {("flood", "sessions"): 2}
    assert remote.take_refused() == {}  # taken
    ref = remote_ref("flood", 0)
    assert [t.kind for t in remote.asked(ref, q("b"), NOW, False)] == ["needs_input"]
    assert remote.asked(ref, q("c"), NOW, False) == []  # a third question in one session
    assert remote.asked(ref, q("a"), NOW, False) == []  # (one it has: known, not refused)
    assert remote.take_refused() == {("flood", "questions"): 1}
    # another host has bounds of its own
    assert remote.asked(remote_ref("calm", 0), q("a"), NOW, False) != []
    # a session that ended makes room again
    for cid in ("a", "b"):
        remote.ended(ref, q(cid), NOW, "answered")
    assert remote.asked(remote_ref("flood", 9), q("a"), NOW, False) != [] and remote.take_refused() == {}


def asked_event(n: int, cid: str = "c", initial: bool = False) -> RemoteAsked:
    return RemoteAsked(remote_ref("h", n), q(cid), initial, NOW)


def ended_event(n: int, cid: str = "c") -> RemoteEnded:
    return RemoteEnded(remote_ref("h", n), q(cid), NOW, "answered")


def test_the_inbox_folds_a_question_asked_and_ended_before_the_engine_looked() -> None:
    from notifier.remote import Down, Inbox

    box = Inbox()
    assert box.put(asked_event(1)) is True  # the first asks the engine to take
    assert box.put(ended_event(1)) is False  # (already asked)
    assert box.put(asked_event(2, initial=True)) is False
    assert box.put(ended_event(2)) is False  # a re-sent question is not folded: its end is applied
    assert box.put(Ready()) is False and box.put(Down()) is False
    items, more = box.take()
    assert not more and box.folded == 1
    assert [type(i).__name__ for i in items] == ["RemoteEnded", "RemoteAsked", "RemoteEnded", "Ready", "Down"]
    assert box.put(asked_event(3)) is True  # emptied: the next one asks again
    board = Board()  # an end the board never saw changes nothing
    assert board.remote.ended(remote_ref("h", 1), q("c"), NOW, "answered") == []


def test_nothing_said_after_the_link_went_down_or_came_back_takes_a_place_before_it() -> None:
    """A question asked, then the link down, then (the engine still busy) the link back and the
    question re-sent: the copy comes after Down and Ready, where the engine applies it after the
    re-sync (tests/processes/test_engine_calls.py shows what the old place did)."""
    from notifier.remote import Down, Inbox

    box = Inbox()
    for item in (asked_event(1), Down(), asked_event(1, initial=True), Ready(), ended_event(1)):
        box.put(item)
    items, _ = box.take()
    assert [(type(i).__name__, getattr(i, "initial", None)) for i in items] == [
        ("RemoteAsked", False), ("Down", None), ("RemoteAsked", True), ("Ready", None), ("RemoteEnded", None),
    ]  # fmt: skip


def test_the_inbox_is_bounded_and_taken_in_batches(tmp_path: Any) -> None:
    from notifier.remote import Inbox

    box = Inbox(size=10)
    put: list[int] = []

    def flood() -> None:
        for n in range(25):
            box.put(asked_event(n))
            put.append(n)

    t = threading.Thread(target=flood, daemon=True)
    t.start()
    wait_for(lambda: len(box) == 10, 5, "the inbox to fill")
    assert len(put) == 10  # the link waits: nothing more is read
    taken: list[Any] = []
    while len(taken) < 25:
        items, _ = box.take(4)
        taken += items
        assert len(items) <= 4 and len(box) <= 10
        if not items:
            wait_for(lambda: len(box) > 0 or len(put) == 25, 5, "more")
    t.join(5)
    assert [i.session.file for i in taken] == [f"/s/{n}.jsonl" for n in range(25)]  # in order
    box.close()


def test_the_pace_lets_a_burst_through_then_holds_to_its_rate() -> None:
    from notifier.channel import Pace

    now = [100.0]
    slept: list[float] = []

    class Stop(threading.Event):
        def wait(self, timeout: float | None = None) -> bool:
            slept.append(timeout or 0.0)
            now[0] += timeout or 0.0
            return False

    pace = Pace(rate=100.0, burst=50.0, clock=lambda: now[0])
    stop = Stop()
    for _ in range(45):
        pace.spend(10, stop)
    assert slept == [] and pace.waited == 0  # the burst
    for _ in range(100):
        pace.spend(10, stop)
    assert pace.waited > 0 and 0.9 < now[0] - 100.0 < 1.2  # 100 more events: about a second
    before = now[0]
    pace.spend(30 * 1024, stop)  # a 30 KB line costs like 31 events
    assert 0.3 < now[0] - before < 0.35
    before = now[0]
    pace.spend(1 << 20, stop)  # a 1 MB line: at most a whole burst
    assert 0.45 < now[0] - before < 0.55


def test_a_push_storm_collapses_per_destination_and_says_how_many_it_folds() -> None:
    """10 messages of 100 question calls each (1,000 pushes before): each destination gets its
    burst allowance, then one push folding the rest; every question is in some push."""
    import re

    from notifier.outputs.push import PushOutput

    config = Config()
    config.values.update({"push.urls": ["json://a", "json://b"], "push.after": 0.0, "push.when": "always"})
    sent: list[tuple[str, str, str]] = []
    lock = threading.Lock()

    def send(urls: Any, title: str, body: str) -> bool:
        assert len(urls) == 1  # one destination at a time
        with lock:
            sent.append((urls[0], title, body))
        return True

    def covered(url: str) -> int:
        with lock:
            titles = [t for u, t, _ in sent if u == url]
        return sum(int(m.group(1)) if (m := re.match(r"(\d+) questions need answers", t)) else 1 for t in titles)

    output = PushOutput(config, send=send, rate_burst=2, rate_every_s=1.0)
    output.start()
    try:
        for m in range(10):
            ref = SessionRef(f"/s/{m}.jsonl", None, f"/w/p{m}", None)
            output.publish(
                Batch(tuple(Transition("needs_input", ref, q(f"m{m}-c{c}"), NOW) for c in range(100)), Snapshot())
            )
            # one message after the other (as pi writes them): each its own group, due at once
            wait_for(lambda: output._open.keys() <= output._pushed, 5, "the message's questions taken")
        for url in ("json://a", "json://b"):

            def all_pushed(url: str = url) -> bool:
                return covered(url) == 1000

            wait_for(all_pushed, 20, f"every question pushed to {url}")
        for url in ("json://a", "json://b"):
            mine = [(t, b) for u, t, b in sent if u == url]
            assert 2 <= len(mine) <= 3, [t for t, _ in mine]  # (at least the one that folds)
            assert mine[-1][0].endswith("questions need answers")
            said = re.search(r"\((\d+) questions folded into this push\)", mine[-1][1])
            assert said is not None, mine[-1][1]
            folded = int(said.group(1))
            assert folded == int(mine[-1][0].split()[0]) > 1
    finally:
        output.stop()


def test_follow_yields_the_events_and_says_each_kind_of_bad_line_once(caplog: pytest.LogCaptureFixture) -> None:
    import logging

    from notifier.channel import MAX_LINE, follow
    from notifier.system.log import LogOnce

    say = LogOnce(logging.getLogger("test.follow"))
    host = "devbox"
    ready = json.dumps({"event": "ready"}).encode()
    stream = io.BytesIO(b"not json\n" + b"x" * (MAX_LINE + 10) + b"\n" + ready + b"\n[1]\n\n" + ready + b"\n")
    with caplog.at_level(logging.INFO, logger="test.follow"):
        events = list(follow(read_lines(stream), lambda line: parse_line(line, host), threading.Event(), say,
                             f"remote {host}"))
    assert events == [Ready(), Ready()]  # (the blank line is no event; the bad ones are skipped)
    said = [r.getMessage() for r in caplog.records]
    assert sum("skipped a line that is not an event" in m for m in said) == 1  # two bad lines, said once
    assert sum("skipped a line longer than" in m for m in said) == 1
    assert all(m.startswith("remote devbox: skipped a line") for m in said), said  # (the remote named once)
    stop = threading.Event()
    stop.set()  # stopped: nothing more is read
    assert list(follow(read_lines(io.BytesIO(ready + b"\n")), lambda line: parse_line(line, host), stop, say,
                       host)) == []


def test_a_question_held_for_its_push_is_pushed_after_a_restart(tmp_path: Any) -> None:
    """A question held for its destination's next turn (the pace) is recorded as pushed only as
    its push is sent: after a restart meanwhile it is pushed, once."""
    from notifier.outputs.push import PushOutput
    from notifier.store import Store

    config = Config()
    config.values.update({"push.urls": ["json://x"], "push.after": 0.0, "push.when": "always"})
    path = str(tmp_path / "state.sqlite3")
    sent: list[str] = []

    def send(urls: Any, title: str, body: str) -> bool:
        sent.append(title)
        return True

    first, held = (Transition("needs_input", SessionRef(f"/s/{k}.jsonl", "i", f"/w/{k}", None), q(k), NOW) for k in "ab")
    store = Store(path)
    output = PushOutput(config, store, send=send, rate_burst=1, rate_every_s=3600.0)
    output.start()
    try:
        output.publish(Batch((first,), Snapshot()))
        wait_for(lambda: sent == ["a needs an answer"], 10, "the first push")
        output.publish(Batch((held,), Snapshot()))  # due at once, held: one push an hour
        wait_for(lambda: ("/s/b.jsonl", "b") in output._pushed, 10, "the question taken, held for its turn")
    finally:
        output.stop()
        store.close()
    store = Store(path)  # (restarted)
    assert store.pushed() == {("/s/a.jsonl", "a")}
    output = PushOutput(config, store, send=send, rate_burst=1, rate_every_s=3600.0)
    output.start()
    try:
        output.publish(Batch((replace(first, initial=True), replace(held, initial=True)), Snapshot()))
        wait_for(lambda: len(sent) == 2, 10, "the held question's push")
        assert sent == ["a needs an answer", "b needs an answer"]
    finally:
        output.stop()
        store.close()


def test_a_failing_push_service_beside_a_working_one_is_said_once(caplog: pytest.LogCaptureFixture) -> None:
    """One log line per kind of failure: a service that fails at every push is said once, even
    while another one, beside it, takes every push."""
    import logging
    from collections.abc import Sequence

    from notifier.outputs.push import PushOutput

    config = Config()
    config.values.update({"push.urls": ["json://bad", "json://good"], "push.after": 0.0, "push.when": "always"})
    tried: list[str] = []

    def send(urls: Sequence[str], title: str, body: str) -> bool:
        tried.append(urls[0])
        return urls[0] == "json://good"

    output = PushOutput(config, send=send)
    output.start()
    try:
        with caplog.at_level(logging.WARNING, logger="notifier.outputs.push"):
            for n, k in enumerate("ab", 1):
                ref = SessionRef(f"/s/{k}.jsonl", "i", f"/w/{k}", None)
                output.publish(Batch((Transition("needs_input", ref, q(k), NOW),), Snapshot()))

                def good(n: int = n) -> bool:
                    return tried.count("json://good") == n

                wait_for(good, 10, "the push")
        said = [r.getMessage() for r in caplog.records if "did not accept" in r.getMessage()]
        assert len(said) == 1 and tried.count("json://bad") == 2, (said, tried)
    finally:
        output.stop()


def test_a_held_push_is_left_to_the_process_that_notifies_once_it_does() -> None:
    """A question held for its destination's next turn, when another process takes over
    notifying meanwhile: not pushed here (that one pushes it), and due here again later."""
    from notifier.outputs.push import PushOutput

    config = Config()
    config.values.update({"push.urls": ["json://x"], "push.after": 0.0, "push.when": "always"})
    clock, sent, turn = Clock(), [], [True]

    def send(urls: Any, title: str, body: str) -> bool:
        sent.append(title)
        return True

    first, held = (Transition("needs_input", SessionRef(f"/s/{k}.jsonl", "i", f"/w/{k}", None), q(k), NOW) for k in "ab")
    output = PushOutput(config, send=send, clock=clock, rate_burst=1, rate_every_s=100.0, turn=lambda: turn[0])
    output.start()
    try:
        output.publish(Batch((first,), Snapshot()))
        wait_for(lambda: sent == ["a needs an answer"], 10, "the first push")
        output.publish(Batch((held,), Snapshot()))  # due at once, held: one push per 100 s
        wait_for(lambda: ("/s/b.jsonl", "b") in output._pushed, 10, "the question taken, held for its turn")
        turn[0] = False  # another process notifies now
        clock.t = 100.0  # the destination's turn
        later = Transition("needs_input", SessionRef("/s/c.jsonl", "i", "/w/c", None), q("c"), NOW)
        output.publish(Batch((later,), Snapshot()))  # (due at once: the thread wakes to its turn)
        wait_for(lambda: ("/s/b.jsonl", "b") not in output._pushed, 10, "the held question put back")
        assert sent == ["a needs an answer"] and any(k == ("/s/b.jsonl", "b") for _, _, k in output._due)
    finally:
        output.stop()
