"""Property: the start-up read (windows from the end, until the state is settled, with a byte
pre-filter) gives exactly the state of reading the whole file through the normal reducer,
for random pi entry sequences, including odd ones (escaped type names, garbage, duplicate ids)."""

from __future__ import annotations

import json
import tempfile
from pathlib import Path
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from notifier.core.reducer import Suffix
from notifier.engine import Engine
from notifier.sessions import BoardReader, EngineOptions

from ..scan_check import assert_same

IDS = st.sampled_from(["c1", "c2", "c3", "q1", "q2"])
TOOLS = st.sampled_from(["question", "ask_user_question", "questionnaire", "bash", "read", "my_prompt"])
STOPS = st.sampled_from(["toolUse", "stop", "error", "aborted", "length", "deferred", None])


def _call() -> st.SearchStrategy[dict[str, Any]]:
    return st.builds(
        lambda i, t, q: {
            "type": "toolCall",
            "id": i,
            "name": t,
            "arguments": {"question": q, "options": ["A", "B"]},
        },
        IDS,
        TOOLS,
        st.sampled_from(["Which?", "Go on?", ""]),
    )


def _message(role: str, **extra: Any) -> dict[str, Any]:
    return {"type": "message", "message": {"role": role, **extra}}


ENTRY = st.one_of(
    st.just(_message("user", content="hi")),
    st.builds(
        lambda c, s: _message("assistant", content=c, stopReason=s), st.lists(_call(), max_size=3), STOPS
    ),
    st.builds(
        lambda i, t, txt, err: _message(
            "toolResult", toolCallId=i, toolName=t, content=[{"type": "text", "text": txt}], isError=err
        ),
        IDS,
        TOOLS,
        st.sampled_from(["User selected: 1. A", "User cancelled the selection", "ok"]),
        st.booleans(),
    ),
    st.just(_message("system", content="")),
    st.just(_message("bashExecution", command="ls")),
    st.sampled_from(
        [
            {"type": "custom_message", "content": "x"},
            {"type": "context_edit", "targetId": "a", "replacement": None},
            {"type": "compaction", "summary": "s"},
            {"type": "branch_summary", "summary": "s"},
            {"type": "label", "label": "message"},
            {"type": "custom", "customType": "x", "data": {"n": 1}},
            {"type": "model_change", "provider": "p", "modelId": "m"},
            {"type": "thinking_level_change", "thinkingLevel": "high"},
            {"type": "usage"},
            {"type": "something_new", "message": {"role": "user"}},
            {"type": "session", "id": "other", "cwd": "/elsewhere"},
        ]
    ),
    st.builds(
        lambda n: {"type": "session_info", "name": n}, st.sampled_from(["Checkout", "", None, "Deploy"])
    ),
)
RAW = st.sampled_from(
    [
        b"",
        b"not json",
        b"[1,2]",
        b'{"no":"type"}',
        b'{"type":"message","message":"not an object"}',
        b'{"type":"\\u006dessage","timestamp":"{TS}","\\u006dessage":{"role":"user","content":"e"}}',
        b'{"type":"label","type":"message","timestamp":"{TS}","message":{"role":"user"}}',
        b'{"type":"c\\u006Fmpaction","timestamp":"{TS}"}',
        b'{"type":"\\u0063ustom_message","timestamp":"{TS}","content":"x"}',
        b'{"type":"branch\\u005fsummary","timestamp":"{TS}","summary":"s"}',
        b'{"type":"session_inf\\u006F","timestamp":"{TS}","name":"Escaped"}',
        b'{"type": "session_info", "timestamp": "{TS}", "name": "Spaced"}',
        b'{"type":"message","timestamp":"{TS}","message":{"role":"assistant","content":"str"}}',
        b"\xff\xfe",
    ]
)


def render(entries: list[dict[str, Any] | bytes]) -> bytes:
    out = [b'{"type":"session","version":3,"id":"s1","cwd":"/p","timestamp":"2026-01-01T00:00:00Z"}']
    for n, e in enumerate(entries):
        at = f"2026-01-01T{n // 3600:02d}:{n // 60 % 60:02d}:{n % 60:02d}Z"  # in order: updated_at agrees
        if isinstance(e, bytes):
            out.append(e.replace(b"{TS}", at.encode()))
            continue
        e = {**e, "id": f"e{n}", "timestamp": at}
        out.append(json.dumps(e, separators=(",", ":")).encode())
    return b"\n".join(out)


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    st.lists(st.one_of(ENTRY, ENTRY, ENTRY, RAW), max_size=40),
    st.sampled_from([b"\n", b"", b'\n{"type":"mess']),
    st.booleans(),
)
def test_startup_read_equals_full_read(
    entries: list[dict[str, Any] | bytes], end: bytes, custom: bool
) -> None:
    tools = ("my_prompt",) if custom else ()
    with tempfile.TemporaryDirectory() as tmp:
        f = Path(tmp) / "s.jsonl"
        f.write_bytes(render(entries) + end)
        assert_same(f, tools)


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    st.lists(st.one_of(ENTRY, ENTRY, RAW), min_size=1, max_size=30),
    st.integers(min_value=1, max_value=400),
    st.one_of(st.none(), st.integers(min_value=0, max_value=20)),
    st.sampled_from([b"\n", b"", b'\n{"type":"mess']),
)
def test_any_windows_and_cap_give_the_full_read(
    entries: list[dict[str, Any] | bytes], first: int, cap: int | None, end: bytes
) -> None:
    """Windows from one byte on, any cap on the entries taken (past it: the file replayed forward)."""
    with tempfile.TemporaryDirectory() as tmp:
        f = Path(tmp) / "s.jsonl"
        f.write_bytes(render(list(entries)) + end)
        assert_same(f, first=first, cap=cap)


@settings(max_examples=300, deadline=None)
@given(st.lists(st.lists(st.sampled_from(["assistant", "user", "result", "call", "stop"]), max_size=4), max_size=40))
def test_settled_suffix_replays_to_the_whole(lines: list[list[str]]) -> None:
    """core/reducer's rule against the reducer: the events of any suffix that it calls settled,
    replayed alone, give the state the whole sequence gives."""
    from notifier.core.reducer import Input, SessionReducer, Supersede, ToolEnd, ToolStart, TurnEnd

    make: dict[str, Any] = {
        "assistant": lambda n: Supersede(float(n), "idle" if n % 2 else None),
        "user": lambda n: Input(float(n)),
        "result": lambda n: ToolEnd(float(n), f"c{n % 3}", "bash"),
        "call": lambda n: ToolStart(float(n), f"c{n % 3}", "bash"),
        "stop": lambda n: TurnEnd(float(n), "failed" if n % 2 else "idle"),
    }
    entries = [[make[k](n) for k in kinds] for n, kinds in enumerate(lines)]
    whole = SessionReducer()
    for entry in entries:
        for event in entry:
            whole.apply(event)
    suffix = Suffix()
    for entry in reversed(entries):
        suffix.add(entry)
        if suffix.settled:
            part = suffix.replay([])
            assert (part.base, part.pending, part.running, part.current_tool) == (
                whole.base, whole.pending, whole.running, whole.current_tool
            )
            break


def test_engine_is_the_one_under_test() -> None:
    assert isinstance(Engine(EngineOptions([], liveness=False)).reader, BoardReader)


@settings(max_examples=300, deadline=None)
@given(
    st.lists(
        st.sampled_from(
            [b"", b"x", b'"message"', b'ab"mess', b'age"', b'"compaction"', b'"session_', b'info"',
             b'"context_edit"', b"\\u0041", b"\\", b"u00", b"y" * 40, b"z" * 9]
        ),
        max_size=60,
    ),
)
def test_the_marked_lines_are_those_holding_a_marker(pieces: list[bytes]) -> None:
    """The search for the lines that hold a marker (each marker searched once per byte) takes
    exactly those, newest first, whatever the order of common and rare markers."""
    from notifier.pi.parse import MARKERS
    from notifier.tail import _take

    data = b"".join(p + (b"\n" if i % 3 else b"") for i, p in enumerate(pieces)) + b"\n"
    taken: list[bytes] = []

    def events(line: bytes) -> list[Any]:
        taken.append(line)
        return []

    _take(data, 0, 0, len(data), 1 << 20, events, Suffix())
    assert taken == [x for x in data.split(b"\n")[:-1] if any(m in x for m in MARKERS)][::-1]


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.one_of(ENTRY, ENTRY, RAW), max_size=30), st.sampled_from([0, 1, 50_000]))
def test_what_a_rewrite_is_compared_with_replays_to_the_full_read(
    entries: list[dict[str, Any] | bytes], cap: int
) -> None:
    """The events a rewrite is compared with (``keep``), replayed alone, give the full read's
    questions, tools and state: from the end, or (past the cap) from a forward read."""
    import os

    from notifier.core.reducer import Event, SessionReducer
    from notifier.tail import Tailer, startup_read

    from ..scan_check import NOW, files, full_read

    with tempfile.TemporaryDirectory() as tmp:
        f = Path(tmp) / "s.jsonl"
        f.write_bytes(render(list(entries)) + b"\n")
        e = files()
        keep: list[Event] = []
        fd = os.open(f, os.O_RDONLY)
        try:
            got = startup_read(fd, os.fstat(fd), Tailer(str(f)), 1 << 20, lambda x: e.line_events(str(f), x, NOW), keep, cap=cap)
        finally:
            os.close(fd)
        again = SessionReducer()
        for event in keep:
            again.apply(event)
        whole = full_read(f)
        for r in (got, again):
            assert (r.state, r.pending, r.running, r.current_tool) == (
                whole.state, whole.pending, whole.running, whole.current_tool
            )
