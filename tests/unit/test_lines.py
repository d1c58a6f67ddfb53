"""Lines judged on their bytes (notifier.pi.parse): a line the start-up read's pre-filter passes
over must never yield a reducer event, however the entry's type is spelled (escapes, hex case,
key order), nor change a real session's state wherever it stands; a line too long to read still
asks its question, from its first bytes."""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from notifier.core.reducer import SessionReducer, Supersede, ToolEnd, ToolStart, summarize
from notifier.pi.parse import (
    EVENT_TYPES,
    MARKERS,
    TOO_LARGE,
    EntryError,
    QuestionCatalog,
    may_have_events,
    to_events,
    too_large_events,
)

from ..conftest import ROOT
from ..strategies import examples

CATALOG = QuestionCatalog([])
NAMES = sorted(EVENT_TYPES - {"session"})


def _spell(text: str, escaped: list[bool], upper: bool) -> str:
    """``text`` as the inside of a JSON string, the chosen characters as ``\\u00XX`` escapes."""
    out = []
    for ch, esc in zip(text, escaped, strict=False):
        code = f"{ord(ch):04x}"
        out.append("\\u" + (code.upper() if upper else code) if esc else ch)
    out.extend(text[len(escaped) :])
    return "".join(out)


def _events(line: bytes) -> list[Any]:
    try:
        entry = json.loads(line)
    except ValueError:
        return []
    if not isinstance(entry, dict):
        return []
    try:
        return to_events(entry, CATALOG, 0.0)
    except EntryError:
        return []


@settings(max_examples=examples(500), deadline=None)
@given(
    st.sampled_from(NAMES),
    st.lists(st.booleans(), max_size=16),
    st.booleans(),
    st.booleans(),
    st.sampled_from(["", " ", "\t"]),
)
def test_every_spelling_of_an_event_type_is_caught(
    name: str, escaped: list[bool], upper: bool, key_escaped: bool, space: str
) -> None:
    key = _spell("type", [True], upper) if key_escaped else "type"
    body = '"name":"n","summary":"s"'
    if name == "message":  # its "message" key spelled the same way (it holds the marker too)
        body = f'"{_spell("message", escaped, upper)}":{{"role":"user","content":"hi"}}'
    line = f'{{"{key}"{space}:{space}"{_spell(name, escaped, upper)}",{body}}}'.encode()
    assert _events(line), line  # the line does yield events …
    assert may_have_events(line)  # … so the filter must pass it
    assert any(m in line for m in MARKERS)


NEUTRAL = st.fixed_dictionaries(
    {
        "type": st.sampled_from(["label", "custom", "model_change", "thinking_level_change", "usage", "x"]),
        "data": st.recursive(
            st.none() | st.booleans() | st.integers() | st.text(max_size=12),
            lambda inner: (
                st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=6), inner, max_size=3)
            ),
            max_leaves=8,
        ),
    }
)


@settings(max_examples=examples(300), deadline=None)
@given(
    st.one_of(NEUTRAL, st.builds(lambda n: {"type": n, "message": {"role": "user"}}, st.sampled_from(NAMES)))
)
def test_a_line_the_filter_passes_over_yields_no_event(entry: dict[str, Any]) -> None:
    for ensure_ascii in (True, False):
        line = json.dumps(entry, ensure_ascii=ensure_ascii).encode()
        if not may_have_events(line):
            assert _events(line) == []


def _session_lines() -> list[list[bytes]]:
    """The lines of every real pi session file captured in tests/data/pi-sessions."""
    files = []
    for path in sorted((ROOT / "tests" / "data" / "pi-sessions").rglob("*.jsonl")):
        lines = path.read_bytes().splitlines()
        if lines and json.loads(lines[0]).get("type") == "session":
            files.append(lines)
    return files


SESSIONS = _session_lines()
REAL_ENTRIES = [json.loads(line) for lines in SESSIONS for line in lines]
# Every entry type pi writes that the captures hold, the event types, and some that are not.
TYPES = sorted({str(e.get("type")) for e in REAL_ENTRIES} | EVENT_TYPES | {"label", "custom", "usage", "x"})
TIMES = sorted({e["timestamp"] for e in REAL_ENTRIES if isinstance(e.get("timestamp"), str)})
# Lines that may or may not hold a marker: real entries under another type (any of pi's, or
# random text), other JSON, any text, any bytes; the property keeps those without a marker.
RETYPED = st.builds(
    lambda entry, kind, extra, ascii: json.dumps({**entry, "type": kind, **extra}, ensure_ascii=ascii).encode(),
    st.sampled_from(REAL_ENTRIES),
    st.sampled_from(NAMES) | st.sampled_from(TYPES) | st.text(max_size=20),
    st.fixed_dictionaries({}, optional={"name": st.text(max_size=12), "timestamp": st.sampled_from(TIMES)}),
    st.booleans(),
)
ANY_LINE = st.one_of(
    RETYPED,
    RETYPED,  # (twice: the lines most like pi's, most often)
    st.builds(lambda entry, ascii: json.dumps(entry, ensure_ascii=ascii).encode(), NEUTRAL, st.booleans()),
    st.text(max_size=200).map(str.encode),
    st.binary(max_size=200),
)


@settings(max_examples=examples(400), deadline=None)
@given(st.data(), st.lists(ANY_LINE.filter(lambda line: not may_have_events(line)), min_size=1, max_size=4))
def test_a_line_without_a_marker_never_changes_the_state(data: st.DataObject, skipped: list[bytes]) -> None:
    """The start-up read passes over lines without a marker, unread: so such a line, wherever in
    a real session it stands, leaves the reducer's state exactly as it was."""
    lines = data.draw(st.sampled_from(SESSIONS), "session")
    at = data.draw(st.integers(1, len(lines)), "after line")
    reducer = SessionReducer()
    for line in lines[:at]:
        for event in _events(line):
            reducer.apply(event)
    before = summarize(reducer)
    for line in skipped:
        for event in _events(line):
            assert reducer.apply(event) == [], line
        assert summarize(reducer) == before, line


def _huge_call(*calls: tuple[str, str]) -> bytes:
    """The first 64 KB of an assistant message whose last call's arguments are megabytes."""
    content = [{"type": "toolCall", "id": i, "name": n, "arguments": {"question": "q"}} for i, n in calls[:-1]]
    content.append({"type": "toolCall", "id": calls[-1][0], "name": calls[-1][1], "arguments": {"options": []}})
    line = json.dumps(
        {"type": "message", "id": "m", "parentId": "p", "timestamp": "2026-01-01T00:00:05.000Z",
         "message": {"role": "assistant", "content": content}},
        separators=(",", ":"),
    ).encode()  # fmt: skip
    return (line[:-6] + b'"' + b"x" * (64 << 10))[: 64 << 10]


def test_a_question_too_large_to_read_is_still_asked_from_its_head() -> None:
    catalog = QuestionCatalog([])
    events = too_large_events(_huge_call(("r1", "read"), ("c\u00e9", "questionnaire")), catalog, 7.0)
    assert [type(e) for e in events] == [Supersede, ToolStart, ToolStart]
    asked = events[2]
    assert isinstance(asked, ToolStart) and asked.tool_call_id == "c\u00e9" and asked.tool == "questionnaire"
    assert asked.question is not None and asked.question.text == TOO_LARGE
    assert asked.at == asked.question.asked_at == 1767225605.0
    assert isinstance(events[1], ToolStart) and events[1].question is None  # (not a question tool)
    result = b'{"type":"message","id":"r","timestamp":"2026-01-01T00:00:06Z","message":{"role":"toolResult",'
    result += b'"toolCallId":"c1","toolName":"question","content":[{"type":"text","text":"' + b"y" * 70000
    (ended,) = too_large_events(result[: 64 << 10], catalog, 7.0)
    assert isinstance(ended, ToolEnd) and (ended.tool_call_id, ended.tool) == ("c1", "question")


@pytest.mark.parametrize(
    "head",
    [
        b'{"type":"message","timestamp":"2026-01-01T00:00:06Z","message":{"role":"user","content":"' + b"z" * 99,
        b'{"type":"custom","data":{"type":"toolCall","id":"c","name":"question"' + b"z" * 99,
        b'{"type":"message","message":{"role":"toolResult","content":"' + b"z" * 99,
        b"\xff\xfe" + b"z" * 99,
        b"",
    ],
    ids=["a user message", "another entry", "a result without its call", "garbage", "nothing"],
)
def test_other_lines_too_large_to_read_say_nothing(head: bytes) -> None:
    assert too_large_events(head, QuestionCatalog([]), 7.0) == []
