"""The scan cache of a one-shot command: unchanged files come from it, changed ones are read
again, gone ones forgotten; another version of the program or catalog starts it afresh.
(Written by ``status`` before it exits: tests/processes/test_startup_cache.py.)"""

from __future__ import annotations

import json
import logging
import sqlite3
import time
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from notifier.core.board import Board
from notifier.core.model import Question
from notifier.core.reducer import SessionReducer
from notifier.pi.parse import QuestionCatalog
from notifier.sessions import (
    FIELDS,
    MAX_LIST,
    MAX_TEXT,
    BoardReader,
    Damaged,
    EngineOptions,
    Restored,
    StartupCache,
    _pack,
    _unpack,
    cache_version,
)
from notifier.tail import Tailer

from ..conftest import json_paths, wrong_type
from ..strategies import examples, questions
from ..writer import answer, append, ask, header, user


def _rows(db: Path) -> int:
    with sqlite3.connect(f"file:{db}?mode=ro", uri=True) as c:
        return int(c.execute("SELECT count(*) FROM scan").fetchone()[0])


def _scan(root: Path, cache_path: Path, tools: tuple[str, ...] = ()) -> tuple[StartupCache, BoardReader]:
    options = EngineOptions(roots=[str(root)], catalog=QuestionCatalog(list(tools)), liveness=False)
    cache = StartupCache(str(cache_path), options.catalog.key, [str(root)], options.max_line)
    files = BoardReader(options, Board(liveness=False), time.time)
    files.scan(str(root), initial=True, cache=cache)
    cache.save(files.tailers, files.board)
    return cache, files


def test_changed_files_are_read_again_and_gone_ones_forgotten(tmp_path: Path) -> None:
    a, b = tmp_path / "s" / "--a--" / "a.jsonl", tmp_path / "s" / "--b--" / "b.jsonl"
    append(a, header("/p/a"), user(), ask("q1", "First?"))
    append(b, header("/p/b"), user(), ask("q2", "Second?"))
    db = tmp_path / "cache.sqlite3"
    cache, files = _scan(tmp_path / "s", db)
    assert cache.hits == 0 and files.board.snapshot(time.time()).pending_count == 2
    append(a, answer("q1"))
    cache, files = _scan(tmp_path / "s", db)
    assert cache.hits == 1 and files.board.snapshot(time.time()).pending_count == 1
    b.unlink()
    cache, files = _scan(tmp_path / "s", db)
    assert cache.hits == 1 and _rows(db) == 1 and files.board.snapshot(time.time()).pending_count == 0


def test_another_version_starts_afresh_quietly(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    f = tmp_path / "s" / "--p--" / "s.jsonl"
    append(f, header("/p"), user(), ask("q1", tool="my_prompt", args={"prompt": "Mine?"}))
    db = tmp_path / "cache.sqlite3"
    cache, files = _scan(tmp_path / "s", db)
    assert files.board.snapshot(time.time()).pending_count == 0
    with caplog.at_level(logging.DEBUG):
        cache, files = _scan(tmp_path / "s", db, ("my_prompt",))
    assert cache.hits == 0 and files.board.snapshot(time.time()).pending_count == 1
    assert "scan cache" not in caplog.text  # (another version is no damage)
    with sqlite3.connect(db) as c:
        assert c.execute("PRAGMA user_version").fetchone()[0] == cache_version(files.options.catalog.key)


def test_a_warm_scan_gives_every_field_of_a_question_as_the_cold_one(tmp_path: Path) -> None:
    """What a question's dialog needs comes back from the cache as it was read: a questionnaire
    without a free-text row gets no reply field in its notification after a warm restart either,
    and a pi-ask form keeps its ids, optional questions, conditions and option values."""
    from notifier.core.codec import encode
    from notifier.outputs.render import option_actions, takes_text
    from notifier.pi.keys import Unsupported, plan

    root, db = tmp_path / "sessions", tmp_path / "state" / "scan-cache.sqlite3"
    closed = {"questions": [{"id": "db", "prompt": "Which?", "options": [{"value": "pg", "label": "PostgreSQL"},
              {"value": "lite", "label": "SQLite"}], "allowOther": False}]}  # fmt: skip
    form = {"questions": [
        {"id": "db", "header": "DB", "question": "Which?", "options": [{"value": "pg", "label": "PG"}]},
        {"id": "why", "question": "Why?", "required": False, "showWhen": {"questionId": "db", "equals": "pg"}},
    ]}  # fmt: skip
    append(root / "--a--" / "a.jsonl", header("/p/a"), user(), ask("q1", tool="questionnaire", args=closed))
    append(root / "--b--" / "b.jsonl", header("/p/b"), user(), ask("q2", tool="ask_user_question", args=form))

    def questions(files: BoardReader) -> dict[str, Question]:
        return {q.tool_call_id: q for v in files.board.snapshot(1.0).sessions for q in v.pending}

    cold_cache, cold = _scan(root, db)
    warm_cache, warm = _scan(root, db)
    assert (cold_cache.hits, warm_cache.hits) == (0, 2)
    assert questions(warm) == questions(cold)  # every field, compared as values
    read = questions(cold)
    assert [encode(q) for q in questions(warm).values()] == [encode(q) for q in read.values()]
    assert read["q1"].items[0].other is False and not takes_text(questions(warm)["q1"], True)
    assert option_actions(questions(warm)["q1"], True)  # (its options are still buttons)
    with pytest.raises(Unsupported, match="no free-text row"):  # (answer --text: refused up front)
        plan("questionnaire", questions(warm)["q1"], None, "my own words")
    why = questions(warm)["q2"].items[1]
    assert (why.key, why.required, why.show_when) == ("why", False, ("db", "pg"))
    assert [o.value for o in questions(warm)["q2"].items[0].options] == ["pg"]


# ---- one summary: what the cache reads back is checked, field by field ----


def _packed(reducer: SessionReducer) -> tuple[Tailer, tuple[bytes, bytes, bytes, bytes]]:
    tailer = Tailer("/s/a.jsonl", 1 << 20)
    tailer.seek(100, (1, 2), b"", b"x" * 100, b"h" * 50)
    packed = _pack(tailer, reducer)
    assert packed is not None
    return tailer, packed


def _unpacked(tailer: Tailer, packed: tuple[bytes, ...], summary: object) -> Restored:
    raw = json.dumps(summary).encode()
    return _unpack((*packed[:3], raw), tailer.path, tailer.offset, tailer.max_line, (1, 2))


@settings(max_examples=examples(200))
@given(st.lists(questions, min_size=1, max_size=2, unique_by=lambda q: q.tool_call_id), st.data())
def test_anything_the_cache_never_writes_in_a_summary_is_damage(pending: list[Question], data: st.DataObject) -> None:
    """Our own rows get a structural check, not the generic decoder, yet a value of another type
    anywhere in a summary (its position, its state, a pending question, a tool running), a value
    dropped or added, is :class:`Damaged` (the cache is rebuilt on it), never another exception
    and never a reducer."""
    r = SessionReducer("s", "/p", None, base="idle", calls={q.tool_call_id: q for q in pending}, running={"t1": "bash"})
    tailer, packed = _packed(r)
    summary = json.loads(packed[3])
    assert _unpacked(tailer, packed, summary).reducer == r
    path = data.draw(st.sampled_from(json_paths(summary)))
    parent: Any = summary
    for k in path[:-1]:
        parent = parent[k]
    # (fields are dropped or added: an object's, the summary's own; not the entries of a list of
    # options or of the tools running, where one less is what the cache may well write)
    fixed = parent is summary or (isinstance(parent, dict) and parent is not summary[FIELDS.index("running")])
    change = data.draw(st.sampled_from(["drop", "add", "wrong type"] if fixed else ["wrong type"]))
    if change == "drop":
        del parent[path[-1]]
    elif change == "add":
        parent.append(None) if parent is summary else parent.update(extra=None)
    else:
        parent[path[-1]] = wrong_type(parent[path[-1]])
    with pytest.raises(Damaged):
        _unpacked(tailer, packed, summary)


@pytest.mark.parametrize(
    ("name", "value"),
    [
        ("base", "asleep"), ("base", None), ("at", float("nan")), ("at", float("inf")), ("at", 10**400),
        ("cwd", "x" * (MAX_TEXT + 1)), ("running", {f"t{i}": "bash" for i in range(MAX_LIST + 1)}),
        ("running", {"t1": "x" * (MAX_TEXT + 1)}), ("pending", [{}] * (MAX_LIST + 1)), ("header", 1),
    ],
)  # fmt: skip
def test_a_summary_past_the_limits_or_of_an_unknown_state_is_damage(name: str, value: Any) -> None:
    tailer, packed = _packed(SessionReducer("s", "/p", None, base="idle", running={"t1": "bash"}, updated_at=5.0))
    summary = json.loads(packed[3])
    summary[FIELDS.index(name)] = value
    with pytest.raises(Damaged):
        _unpacked(tailer, packed, summary)


def test_a_time_past_floats_in_a_pending_question_is_damage() -> None:
    tailer, packed = _packed(SessionReducer("s", "/p", None, calls={"c1": Question("c1", "question", (), 1.0)}))
    raw = packed[3].replace(b'"asked_at":1.0', b'"asked_at":1' + b"0" * 400)
    assert raw != packed[3]
    with pytest.raises(Damaged):
        _unpack((*packed[:3], raw), tailer.path, tailer.offset, tailer.max_line, (1, 2))


def test_a_form_and_a_tool_running_come_back_from_a_summary_equal() -> None:
    from notifier.core.reducer import Event, Header, ToolStart
    from notifier.pi.parse import extract

    args = {
        "questions": [
            {
                "question": "Q?",
                "header": "H",
                "multiSelect": True,
                "options": [{"label": "A", "description": "d", "recommended": True}, "B"],
            },
            {"prompt": "Two"},
        ],
        "title": "Form",
    }
    b = Board(liveness=False)
    events: list[Event] = [Header("s", "/p"), ToolStart(5.0, "c1", "ask_user", extract("ask_user", args, "c1", 5.0)), ToolStart(5.0, "b1", "bash")]
    b.local.apply("f", events, 6.0)
    original = b.local.reducer("f")
    assert original is not None and original.pending and original.running
    tailer, packed = _packed(original)
    assert _unpacked(tailer, packed, json.loads(packed[3])).reducer == original
