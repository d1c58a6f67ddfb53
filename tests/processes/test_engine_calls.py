"""What changes the board from outside the engine's own reading (the companion extension's
dialogs, a remote's batch, the tray's dismissals) runs on the engine thread as one call, and its
transitions reach every output once, with one new snapshot (the real engine, its real thread)."""

from __future__ import annotations

import threading
import time
from collections.abc import Sequence
from functools import partial
from pathlib import Path

from notifier.actions.goto import configured
from notifier.companion import DialogFeed, dialog_from
from notifier.config import Config
from notifier.core.model import (
    Question,
    QuestionItem,
    SessionRef,
    Snapshot,
    Transition,
    TurnChange,
    remote_key,
)
from notifier.engine import Batch, ReadyInfo
from notifier.remote import Down, Ready, RemoteAsked, Remotes

from ..conftest import wait_for
from ..harness import Harness
from ..writer import answer, append, ask, header, line, ts, user


class Counting:
    """An output that counts what it is handed after ``ready``."""

    def __init__(self) -> None:
        self.calls: list[tuple[list[Transition], Snapshot]] = []
        self.batches: list[Batch] = []
        self.lock = threading.Lock()

    def ready(self, info: ReadyInfo, snapshot: Snapshot) -> None:
        pass

    def publish(self, batch: Batch) -> None:
        with self.lock:
            self.calls.append((list(batch.transitions), batch.snapshot))
            self.batches.append(batch)

    def count(self) -> int:
        with self.lock:
            return len(self.calls)


def _calls_when_done(h: Harness, outputs: Sequence[Counting]) -> list[int]:
    """How many calls each output had once everything queued before was handled: a call behind
    them (on the engine thread, after their batch's snapshot went out) counts them (and then
    brings a snapshot of its own)."""
    seen: list[list[int]] = []

    def count() -> list[Transition]:
        seen.append([s.count() for s in outputs])
        return []

    h.engine.call(count)
    wait_for(lambda: seen, 10, "the engine to reach the counting call")
    return seen[0]


def test_one_dialog_opened_reaches_each_output_once(tmp_path: Path) -> None:
    sessions = tmp_path / "sessions"
    sessions.mkdir()
    first, second = Counting(), Counting()
    with Harness([sessions], outputs=[first, second]) as h:
        feed = DialogFeed(h.engine, str(tmp_path / "sockets"))  # (its watcher not started: fed by hand)
        gate = dialog_from({
            "id": "d1", "kind": "confirm", "title": "Allow rm -rf build?", "tool": "bash",
            "tool_call_id": "call_b1", "session_file": str(sessions / "a.jsonl"), "cwd": "/p", "at": time.time() * 1000,
        })  # fmt: skip
        feed._event("/run/x.sock", gate)  # (what the watcher's thread does with an announced dialog)
        wait_for(lambda: first.count() and second.count(), 10, "the dialog at the outputs")
        assert _calls_when_done(h, [first, second]) == [1, 1]
        for output in (first, second):
            items, snapshot = output.calls[0]
            assert [(t.kind, t.question.kind, t.question.tool_call_id) for t in items] == [
                ("needs_input", "dialog", "call_b1")
            ]
            assert [q.tool_call_id for _, q in snapshot.pending] == ["call_b1"]
        assert h.collected.of("needs_input") == items  # (the harness's own output too)


def test_one_remote_batch_reaches_each_output_once(tmp_path: Path) -> None:
    sessions = tmp_path / "sessions"
    sessions.mkdir()
    config = Config()
    config.values["remotes"] = [{"name": "devbox", "ssh": "me@devbox"}]
    out = Counting()
    with Harness([sessions], outputs=[out]) as h:
        hub = Remotes(configured(config), h.engine)  # (its links not started: start() is not called)
        ref = SessionRef(remote_key("devbox", "/r/a.jsonl"), "sid", "/r", None, "devbox")
        asked = [Question(f"c{n}", "question", (QuestionItem(f"Q{n}?"),), time.time()) for n in range(3)]
        # what the link's thread does for each event, all three in before the engine takes any
        # (one call is asked for; the rest wait for it): one batch
        said = [hub.boxes["devbox"].put(RemoteAsked(ref, q, False, time.time())) for q in asked]
        assert said == [True, False, False]
        h.engine.call(partial(hub._take, "devbox"))
        wait_for(lambda: len(h.collected.of("needs_input")) == 3, 10, "the remote's questions")
        assert _calls_when_done(h, [out]) == [1]
        items, snapshot = out.calls[0]
        assert [t.question.tool_call_id for t in items] == ["c0", "c1", "c2"]
        assert snapshot.pending_count == 3


def test_a_remote_question_re_sent_after_a_reconnect_stays_pending_while_the_engine_was_busy(tmp_path: Path) -> None:
    """A remote pi asks, the link drops and comes back (re-sending what is pending there) while
    the engine is busy with something else: once the engine takes it all, the question waits, as
    it does there. (The re-sent copy took the first one's place, before Down and Ready: the
    re-sync then ended it as superseded, 5 of 5.)"""
    sessions = tmp_path / "sessions"
    sessions.mkdir()
    config = Config()
    config.values["remotes"] = [{"name": "devbox", "ssh": "me@devbox"}]
    with Harness([sessions]) as h:
        hub = Remotes(configured(config), h.engine)  # (its links not started: this test is the link's thread)
        ref = SessionRef(remote_key("devbox", "/r/a.jsonl"), "sid", "/r", None, "devbox")
        q = Question("call_1", "question", (QuestionItem("Deploy now?"),), time.time())
        hub._put("devbox", Ready())
        wait_for(lambda: not len(hub.boxes["devbox"]), 10, "the first Ready taken")
        busy, holding = threading.Event(), threading.Event()

        def hold() -> list[Transition]:  # (the engine busy meanwhile)
            holding.set()
            busy.wait(10)
            return []

        h.engine.call(hold)
        assert holding.wait(10)
        for item in (RemoteAsked(ref, q, False, time.time()), Down(), RemoteAsked(ref, q, True, time.time()), Ready()):
            hub._put("devbox", item)
        busy.set()
        wait_for(lambda: not len(hub.boxes["devbox"]), 10, "the inbox taken")
        _calls_when_done(h, [])  # (the batch of the remote's events is out before this)
        assert [(t.kind, t.outcome) for t in h.collected.items] == [("needs_input", None)]
        assert [p.tool_call_id for _, p in h.collected.snapshot.pending] == ["call_1"]


def test_a_call_that_changes_the_board_without_a_transition_still_brings_a_snapshot(tmp_path: Path) -> None:
    """A dismissal (clear an abandoned question) makes no transition; the window and tray
    must still get the snapshot that no longer lists it: one."""
    out = Counting()
    with Harness([tmp_path], outputs=[out]) as h:
        h.engine.call(lambda: [])
        wait_for(lambda: out.count(), 10, "a snapshot after the call")
        assert _calls_when_done(h, [out]) == [1] and out.calls[0][0] == []


class Turns(Counting):
    def __init__(self) -> None:
        super().__init__()
        self.turned: list[TurnChange] = []

    def publish(self, batch: Batch) -> None:
        super().publish(batch)
        with self.lock:
            self.turned.extend(batch.turns)


def test_a_finished_turn_goes_to_every_output_in_its_batch(tmp_path: Path) -> None:
    """The turns finished are part of the one batch every output is handed (no output is asked
    whether it wants them)."""
    first, second = Turns(), Turns()
    f = tmp_path / "a.jsonl"
    with Harness([tmp_path], outputs=[first, second]) as h:
        append(f, header("/p"), user(), ask("q1"))
        h.wait("needs_input")  # (the session is read and live: its turn is not over)
        done = {"role": "assistant", "stopReason": "stop", "content": [{"type": "text", "text": "Done."}]}
        append(f, answer("q1"), line({"type": "message", "id": "e1", "parentId": None, "timestamp": ts(), "message": done}))
        wait_for(lambda: first.turned and second.turned, 10, "the finished turn at both outputs")
        assert [(t.state, t.session.key) for t in first.turned] == [("idle", str(f))] == [
            (t.state, t.session.key) for t in second.turned
        ]
        assert h.engine.health.report() == {}  # (no output failed on it)



def test_every_output_is_handed_the_same_one_batch_in_order(tmp_path: Path) -> None:
    """One typed publish per batch: each output gets the same immutable :class:`Batch` (the
    transitions and the snapshot that shows them), once, in the order the outputs were given."""
    sessions = tmp_path / "sessions"
    sessions.mkdir()
    f = sessions / "a.jsonl"
    append(f, header())
    order: list[str] = []

    class Named(Counting):
        def __init__(self, name: str) -> None:
            super().__init__()
            self.name = name

        def publish(self, batch: Batch) -> None:
            order.append(self.name)
            super().publish(batch)

    first, second = Named("first"), Named("second")
    with Harness([sessions], outputs=[first, second]) as h:
        append(f, ask("call_1", "Ship it?"))
        h.wait("needs_input")
        assert _calls_when_done(h, [first, second]) == [1, 1]
        assert order[:2] == ["first", "second"]  # (then the counting call's own batch, in the same order)
        batch = first.batches[0]
        assert second.batches[0] is batch
        assert [t.kind for t in batch.transitions] == ["needs_input"]
        assert batch.snapshot.pending_count == 1  # the snapshot that shows it
