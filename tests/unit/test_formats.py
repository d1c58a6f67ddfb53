"""The one serialisation of a session and a question (notifier/core/formats.py): every output
(run --json, status --json, history --json through the real state store, the window) carries
the same session and question objects, with the fields docs/contract.md §2–§4 lists."""

from __future__ import annotations

import json
import os
from typing import Any

from notifier.core import formats
from notifier.core.model import Option, Question, QuestionItem, SessionRef, SessionView, Snapshot, Transition
from notifier.system.store import Store
from notifier.ui.view import window_obj

SESSION_KEYS = ["id", "file", "cwd", "name", "host"]
QUESTION_KEYS = ["tool_call_id", "tool", "text", "header", "options", "count"]
LIVE_QUESTION_KEYS = [*QUESTION_KEYS, "kind"]  # run --json / status --json add the question's kind

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
    s, q = formats.session_obj(REF), formats.question_obj(Q)
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
    }
    assert formats.session_obj(SessionRef("/f", None, None, "\x1b[0m"))["name"] is None


def test_run_json_events_carry_them() -> None:
    asked, done = formats.event_obj(ASKED), formats.event_obj(RESOLVED)
    assert list(asked) == ["event", "at", "initial", "session", "question"]
    assert list(done) == ["event", "at", "session", "question", "outcome", "answer", "waited_s"]
    assert asked["at"] == "2023-11-14T22:13:20.500Z" and asked["initial"] is True
    assert done["session"] == asked["session"] == formats.session_obj(REF)
    assert done["question"] == asked["question"] == formats.question_obj(Q)
    assert (done["outcome"], done["answer"], done["waited_s"]) == ("answered", "A", 41.5)
    gone = formats.event_obj(Transition("abandoned", REF, Q, 1_700_000_100.0))
    assert list(gone) == ["event", "at", "session", "question"]


def test_status_json_sessions_are_session_objects_with_state() -> None:
    view = SessionView(REF, "needs_input", (Q,), (), True, 1_700_000_000.0)
    status = formats.status_obj(Snapshot((view,)))
    (s,) = status["sessions"]
    assert status["pending"] == 1
    assert list(s) == [*SESSION_KEYS, "state", "alive", "pending", "abandoned", "updated_at"]
    assert {k: s[k] for k in SESSION_KEYS} == formats.session_obj(REF)
    assert s["pending"] == [formats.question_obj(Q)] and s["abandoned"] == []


def test_history_through_the_real_store_gives_back_the_same_objects() -> None:
    store = Store(None)  # a real SQLite database, in memory
    try:
        store.record([ASKED, RESOLVED])
        history = formats.history_obj(store.history())
    finally:
        store.close()
    (entry,) = history["questions"]
    assert list(entry) == ["session", "question", "asked_at", "resolved_at", "outcome", "waited_s", "answer"]
    assert entry["session"] == formats.event_obj(RESOLVED)["session"]
    live = formats.event_obj(RESOLVED)["question"]
    assert entry["question"] == {k: live[k] for k in QUESTION_KEYS}  # history has no "kind"
    assert entry["asked_at"] == "2023-11-14T22:13:20.000Z"
    assert entry["resolved_at"] == "2023-11-14T22:14:01.500Z"
    assert (entry["outcome"], entry["waited_s"], entry["answer"]) == ("answered", 41.5, "A")
    assert history["summary"] == {"count": 1, "median_wait_s": 41.5, "longest_wait_s": 41.5}
    # a name that is not UTF-8 is written as \udcXX escapes and comes back as the same bytes
    line = formats.dumps(history)
    line.encode("utf-8")
    assert "\\udcff" in line
    assert os.fsencode(json.loads(line)["questions"][0]["session"]["cwd"]) == b"/home/u/pr\xffoj"


def test_history_rows_of_any_shape_render() -> None:
    rows: list[dict[str, Any]] = [
        {"asked_at": float("nan"), "waited_s": float("inf"), "count": "2", "options": 7, "name": 3},
        {"file": "/f", "call_id": "c", "asked_at": 1e300, "resolved_at": -5, "waited_s": 3, "count": True},
        {"asked_at": "yesterday", "waited_s": 1.0, "options": "x\x1f\x1fy"},
    ]
    history = formats.history_obj(rows)
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
    json.loads(formats.dumps(history), parse_constant=no_constant)  # strict JSON


def test_the_window_builds_on_the_same_objects() -> None:
    view = SessionView(REF, "needs_input", (Q,), (), True, 1_700_000_000.0)
    (q,) = window_obj(Snapshot((view,)))["questions"]
    assert {k: q[k] for k in LIVE_QUESTION_KEYS} == formats.question_obj(Q)
    assert q["session"] == formats.session_obj(REF)
    assert q["key"] == [REF.key, "call-1"] and q["abandoned"] is False and q["title"] == "Two questions"
    assert [i["text"] for i in q["items"]] == ["Pick one?", "And this?"]
    assert q["items"][0]["options"][0] == {"label": "A", "description": "aye", "recommended": True}


def test_dumps_says_nan_as_null() -> None:
    assert formats.dumps({"a": [float("nan"), 1.5, float("-inf")]}) == '{"a":[null,1.5,null]}'


def test_status_builds_each_session_as_the_one_session_object() -> None:
    """status --json builds its thousands of session objects in one go (for speed): each must
    still start with exactly :func:`formats.session_obj`, and equal times format alike."""
    other = SessionRef("@box:/s/b.jsonl", None, None, "", host="box")
    views = [
        SessionView(REF, "needs_input", (Q,), (), True, 1_700_000_001.25),
        SessionView(other, "idle", (), (Q,), None, 1_700_000_001.25),
        SessionView(SessionRef("/s/c.jsonl", "c", "/c", None), "starting", (), (), False, 0.0),
    ]
    out = formats.status_obj(Snapshot(sessions=tuple(views)))
    assert [s["file"] for s in out["sessions"]] == ["/s/a\udcff.jsonl", "/s/b.jsonl", "/s/c.jsonl"]
    for view, obj in zip(views, out["sessions"], strict=True):
        assert list(obj)[:5] == SESSION_KEYS
        assert {k: obj[k] for k in SESSION_KEYS} == formats.session_obj(view.ref)
        assert obj["pending"] == [formats.question_obj(q) for q in view.pending]
        assert obj["abandoned"] == [formats.question_obj(q) for q in view.abandoned]
        assert obj["updated_at"] == (formats.iso(view.updated_at) if view.updated_at else None)
    assert out["sessions"][0]["name"] == "my name here"
    assert out["pending"] == 1


def _status_the_long_way(views: list[SessionView], pending: int, locations: dict[int, Any]) -> str:
    """``dumps`` of ``status_obj`` with each session's location: what status_text writes at once."""
    stamp = formats.iso
    sessions = []
    for i, v in enumerate(views):
        obj = formats.session_status_obj(v, stamp)
        obj["location"] = locations.get(i)
        sessions.append(obj)
    return formats.dumps({"sessions": sessions, "pending": pending})


def test_status_text_is_the_status_object_encoded() -> None:
    """status --json writes the sessions that ask nothing straight to text (thousands of them):
    the very text of the objects encoded, for any name, path, host, time and liveness."""
    other = SessionRef("@box:/s/b.jsonl", None, None, "", host="box")
    odd = SessionRef("/s/\"q\"\\\x00\u2028\udcff.jsonl", "i\u202ed", "/c/\ud800", " \x1b \u200d ", host=None)
    views = [
        SessionView(REF, "needs_input", (Q,), (), True, 1_700_000_001.25),
        SessionView(other, "idle", (), (Q,), None, 1_700_000_001.25),
        SessionView(SessionRef("/s/c.jsonl", "c", "/c", None), "starting", (), (), False, 0.0),
        SessionView(REF, "working", (), (), True, float("nan")),
        SessionView(other, "idle", (), (), None, 1e300),
        SessionView(odd, "stopped", (), (), False, -5.0),
        SessionView(SessionRef("/s/d.jsonl", "d", "/d", "named"), "idle", (), (), None, 1_700_000_002.0),
        SessionView(SessionRef("/s/e.jsonl", "e", "/e", None), "idle", (), (), 1, 3.0),  # type: ignore[arg-type]
        SessionView(SessionRef("/s/f.jsonl", 7, "/f", None), "idle", (), (), None, 3.0),  # type: ignore[arg-type]
    ]
    located = {2: {"pid": 12, "tty": "/dev/pts/\udcff"}}
    for pending in (0, 1, 3):
        whole = {i: {**formats.session_status_obj(views[i]), "location": loc} for i, loc in located.items()}
        text = formats.status_text([formats.row_of_view(v) for v in views], pending, whole)
        assert text == _status_the_long_way(views, pending, located)
        text.encode("utf-8")  # valid UTF-8, whatever the names held
        json.loads(text)
    assert formats.status_text([], 0, {}) == '{"sessions":[],"pending":0}'
