"""The one serialisation of a session and a question (notifier/core/codec.py): every output
(run --json, status --json, history --json through the real state store, the window) carries
the same session and question objects, with the fields docs/contract.md §2–§4 lists."""

from __future__ import annotations

import json
import os
from dataclasses import replace
from typing import Any

from notifier.core import codec
from notifier.core.codec import question_token
from notifier.core.model import (
    Option,
    Question,
    QuestionItem,
    SessionRef,
    SessionView,
    Snapshot,
    Transition,
)
from notifier.store import Store
from notifier.window.view import window_obj

SESSION_KEYS = ["id", "file", "cwd", "name", "host"]
QUESTION_KEYS = ["tool_call_id", "tool", "text", "header", "options", "count"]
LIVE_QUESTION_KEYS = [*QUESTION_KEYS, "kind", "token"]  # run --json / status --json add the question's kind and token

CWD = "/home/u/pr\udcffoj"  # a folder name that is not UTF-8 (PEP 383)
REF = SessionRef("/s/a\udcff.jsonl", "sid-1", CWD, "my \x1b[31mname\x07  here")
Q = Question(
    "call-1",
    "ask_user_question",
    (
        QuestionItem("Pick one?", "Hdr", "more", (Option("A", "aye", True), Option("B")), True),
        QuestionItem("And this?"),
    ),
    1_700_000_000.0,
    title="Two questions",
)
ASKED = Transition("needs_input", REF, Q, 1_700_000_000.5, initial=True)
RESOLVED = Transition("resolved", REF, Q, 1_700_000_042.0, outcome="answered", answer="A", waited_s=41.5)


def no_constant(name: str) -> None:
    raise AssertionError(f"{name} is not JSON")


def test_session_and_question_objects_have_the_contract_fields() -> None:
    s, q = codec.session_obj(REF), codec.question_obj(Q)
    assert list(s) == SESSION_KEYS and list(q) == LIVE_QUESTION_KEYS
    assert s == {"id": "sid-1", "file": REF.key, "cwd": CWD, "name": "my name here", "host": None}  # the label cleaned
    assert q == {
        "tool_call_id": "call-1",
        "tool": "ask_user_question",
        "text": "Pick one?",
        "header": "Hdr",
        "options": ["A", "B"],
        "count": 2,
        "kind": "question",
        "token": question_token(Q),
    }
    assert codec.session_obj(SessionRef("/f", None, None, "\x1b[0m"))["name"] is None


def test_a_token_is_what_was_shown_of_a_question() -> None:
    """The token changes with the call, when it was asked (to the millisecond: as the contract's
    times say it, so a question read back from JSON keeps its token), the text or any option of
    any item, and only with them."""
    token = question_token(Q)
    assert len(token) == 16 and int(token, 16) >= 0 and question_token(replace(Q)) == token
    at = 1_796_000_762.4239998  # ("…02.424Z", as a float)
    for asked in (at, 1_796_000_762.4243567):
        read_back = codec.parse_iso(codec.iso(asked))
        assert read_back is not None and question_token(replace(Q, asked_at=read_back)) == question_token(replace(Q, asked_at=asked))
    item = Q.items[0]
    others = [
        replace(Q, tool_call_id="call-2"),
        replace(Q, asked_at=Q.asked_at + 0.001),  # (the same call id and question, asked again)
        replace(Q, items=(replace(item, text="Pick two?"), *Q.items[1:])),
        replace(Q, items=(replace(item, options=item.options[::-1]), *Q.items[1:])),
        replace(Q, items=(*Q.items[:-1], replace(Q.items[-1], text=Q.items[-1].text + "!"))),
    ]
    assert len({token, *map(question_token, others)}) == 1 + len(others)


def test_run_json_events_carry_them() -> None:
    asked, done = codec.event_obj(ASKED), codec.event_obj(RESOLVED)
    assert list(asked) == ["event", "at", "initial", "session", "question"]
    assert list(done) == ["event", "at", "session", "question", "outcome", "answer", "waited_s"]
    assert asked["at"] == "2023-11-14T22:13:20.500Z" and asked["initial"] is True
    assert done["session"] == asked["session"] == codec.session_obj(REF)
    assert done["question"] == asked["question"] == {**codec.question_obj(Q), "asked_at": codec.iso(Q.asked_at)}
    assert (done["outcome"], done["answer"], done["waited_s"]) == ("answered", "A", 41.5)
    gone = codec.event_obj(Transition("abandoned", REF, Q, 1_700_000_100.0))
    assert list(gone) == ["event", "at", "session", "question"]


def test_status_json_sessions_are_session_objects_with_state() -> None:
    view = SessionView(REF, "needs_input", (Q,), (), True, 1_700_000_000.0)
    status = codec.status_obj(Snapshot((view,)))
    (s,) = status["sessions"]
    assert status["pending"] == 1
    # (the contract's fields in their order, then the additive ones: docs/contract.md §3)
    assert list(s) == [*SESSION_KEYS, "state", "alive", "pending", "abandoned", "updated_at", "current_tool", "location"]
    assert {k: s[k] for k in SESSION_KEYS} == codec.session_obj(REF)
    assert s["pending"] == [{**codec.question_obj(Q), "asked_at": codec.iso(Q.asked_at)}] and s["abandoned"] == []


def test_history_through_the_real_store_gives_back_the_same_objects() -> None:
    store = Store(None)  # a real SQLite database, in memory
    try:
        store.record([ASKED, RESOLVED])
        history = codec.history_obj(store.history())
    finally:
        store.close()
    (entry,) = history["questions"]
    assert list(entry) == ["session", "question", "asked_at", "resolved_at", "outcome", "waited_s", "answer"]
    assert entry["session"] == codec.event_obj(RESOLVED)["session"]
    live = codec.event_obj(RESOLVED)["question"]
    assert entry["question"] == {k: live[k] for k in QUESTION_KEYS}  # history has no "kind"
    assert entry["asked_at"] == "2023-11-14T22:13:20.000Z"
    assert entry["resolved_at"] == "2023-11-14T22:14:01.500Z"
    assert (entry["outcome"], entry["waited_s"], entry["answer"]) == ("answered", 41.5, "A")
    assert history["summary"] == {"count": 1, "median_wait_s": 41.5, "longest_wait_s": 41.5}
    # a name that is not UTF-8 is written as \udcXX escapes and comes back as the same bytes
    line = codec.dumps(history)
    line.encode("utf-8")
    assert "\\udcff" in line
    assert os.fsencode(json.loads(line)["questions"][0]["session"]["cwd"]) == b"/home/u/pr\xffoj"


def test_history_rows_of_any_shape_render() -> None:
    rows: list[dict[str, Any]] = [
        {"asked_at": float("nan"), "waited_s": float("inf"), "count": "2", "options": 7, "name": 3},
        {"file": "/f", "call_id": "c", "asked_at": 1e300, "resolved_at": -5, "waited_s": 3, "count": True},
        {"asked_at": "yesterday", "waited_s": 1.0, "options": "x\x1f\x1fy"},
    ]
    history = codec.history_obj(rows)
    first, second, third = history["questions"]
    assert first["session"] == {"id": None, "file": None, "cwd": None, "name": None, "host": None}
    assert first["question"]["options"] == [] and first["question"]["count"] is None
    assert first["asked_at"] == "2000-01-01T00:00:00.000Z" and first["waited_s"] is None
    assert (
        second["asked_at"] == "2200-01-01T00:00:00.000Z"
        and second["resolved_at"] == "2000-01-01T00:00:00.000Z"
    )
    assert second["question"]["count"] is None
    assert third["question"]["options"] == ["x", "y"]
    assert history["summary"] == {"count": 3, "median_wait_s": 2.0, "longest_wait_s": 3.0}
    json.loads(codec.dumps(history), parse_constant=no_constant)  # strict JSON


def test_the_window_builds_on_the_same_objects() -> None:
    """The window is sent the session and the question in full, as the one codec writes every
    model value (and reads it back exactly)."""
    view = SessionView(REF, "needs_input", (Q,), (), True, 1_700_000_000.0)
    (q,) = window_obj(Snapshot((view,)))["questions"]
    assert q["question"] == codec.encode(Q) and codec.decode(Question, q["question"]) == Q
    assert q["session"] == codec.encode(REF) and codec.decode(SessionRef, q["session"]) == REF
    assert q["key"] == [REF.key, "call-1"] and q["abandoned"] is False and q["question"]["title"] == "Two questions"
    items = q["question"]["items"]
    assert [i["text"] for i in items] == ["Pick one?", "And this?"]
    assert items[0]["options"][0] == {"label": "A", "description": "aye", "recommended": True, "value": None}
    assert items[0]["other"] is True and items[0]["show_when"] is None  # (every field)


def test_dumps_says_nan_as_null() -> None:
    assert codec.dumps({"a": [float("nan"), 1.5, float("-inf")]}) == '{"a":[null,1.5,null]}'


def test_status_builds_each_session_as_the_one_session_object() -> None:
    """status --json builds its thousands of session objects in one go (for speed): each must
    still start with exactly :func:`formats.session_obj`, and equal times format alike."""
    other = SessionRef("@box:/s/b.jsonl", None, None, "", host="box")
    views = [
        SessionView(REF, "needs_input", (Q,), (), True, 1_700_000_001.25),
        SessionView(other, "idle", (), (Q,), None, 1_700_000_001.25),
        SessionView(SessionRef("/s/c.jsonl", "c", "/c", None), "starting", (), (), False, 0.0),
    ]
    out = codec.status_obj(Snapshot(sessions=tuple(views)))
    assert [s["file"] for s in out["sessions"]] == ["/s/a\udcff.jsonl", "/s/b.jsonl", "/s/c.jsonl"]
    for view, obj in zip(views, out["sessions"], strict=True):
        assert list(obj)[:5] == SESSION_KEYS
        assert {k: obj[k] for k in SESSION_KEYS} == codec.session_obj(view.ref)
        assert obj["pending"] == [{**codec.question_obj(q), "asked_at": codec.iso(q.asked_at)} for q in view.pending]
        assert obj["abandoned"] == [{**codec.question_obj(q), "asked_at": codec.iso(q.asked_at)} for q in view.abandoned]
        assert obj["updated_at"] == (codec.iso(view.updated_at) if view.updated_at else None)
    assert out["sessions"][0]["name"] == "my name here"
    assert out["pending"] == 1


def test_status_object_of_odd_views_is_valid_json_with_what_the_text_needs() -> None:
    """The one serialisation of ``status`` (the app's reply and a scan alike), for any name, path,
    host, time and liveness: valid UTF-8 JSON that gives back the names, with each question's
    ``asked_at``, the session's ``current_tool`` and a null location (filled in by the command)."""
    other = SessionRef("@box:/s/b.jsonl", None, None, "", host="box")
    odd = SessionRef("/s/\"q\"\\\x00\u2028\udcff.jsonl", "i\u202ed", "/c/\ud800", " \x1b \u200d ", host=None)
    views = [
        SessionView(REF, "needs_input", (Q,), (), True, 1_700_000_001.25),
        SessionView(other, "idle", (), (Q,), None, 1_700_000_001.25),
        SessionView(SessionRef("/s/c.jsonl", "c", "/c", None), "starting", (), (), False, 0.0),
        SessionView(REF, "working", (), (), True, float("nan"), current_tool="ba\x1b[31msh"),
        SessionView(other, "idle", (), (), None, 1e300),
        SessionView(odd, "stopped", (), (), False, -5.0),
    ]
    text = codec.dumps(codec.status_obj(Snapshot(tuple(views))))
    text.encode("utf-8")  # valid UTF-8, whatever the names held
    out = json.loads(text)
    assert out["pending"] == 1
    by_file = {s["file"]: s for s in out["sessions"]}
    assert set(by_file) == {"/s/\"q\"\\\x00\u2028\udcff.jsonl", "/s/b.jsonl", "/s/c.jsonl", REF.file}
    assert all(s["location"] is None for s in out["sessions"])
    asking = [s for s in out["sessions"] if s["pending"]]
    assert [q["asked_at"] for q in asking[0]["pending"]] == [codec.iso(Q.asked_at)]
    assert [s["current_tool"] for s in out["sessions"] if s["current_tool"]] == ["bash"]
    assert by_file["/s/b.jsonl"]["abandoned"][0]["asked_at"] == codec.iso(Q.asked_at)
