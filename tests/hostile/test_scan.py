"""Property: the start-up read (backwards from the end, stopping once the state is settled, with a
byte pre-filter) gives exactly the state of reading the whole file through the normal reducer,
for random pi entry sequences, including odd ones (escaped type names, garbage, duplicate ids)."""

from __future__ import annotations

import json
import tempfile
from pathlib import Path
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from notifier.core.settle import Settler
from notifier.engine.files import SessionFiles
from notifier.engine.loop import Engine
from notifier.engine.options import EngineOptions

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


@settings(max_examples=100, deadline=None)
@given(st.lists(ENTRY, min_size=1, max_size=30), st.integers(min_value=1, max_value=5))
def test_a_tiny_event_budget_falls_back_to_a_full_replay(entries: list[dict[str, Any]], budget: int) -> None:
    """Past the event budget the start-up read replays the file forward: still the same state."""
    import notifier.engine.settle_file as engine_module

    with tempfile.TemporaryDirectory() as tmp:
        f = Path(tmp) / "s.jsonl"
        f.write_bytes(render(list(entries)) + b"\n")
        original = engine_module.Settler
        engine_module.Settler = lambda: Settler(budget)  # type: ignore[assignment,misc]
        try:
            assert_same(f)
        finally:
            engine_module.Settler = original  # type: ignore[misc]


def test_engine_is_the_one_under_test() -> None:
    assert isinstance(Engine(EngineOptions([], liveness=False)).files, SessionFiles)


@settings(max_examples=300, deadline=None)
@given(
    st.lists(
        st.sampled_from(
            [
                b"",
                b"x",
                b'"message"',
                b'ab"mess',
                b'age"',
                b'"compaction"',
                b'"session_',
                b'info"',
                b'"context_edit"',
                b"\\u0041",
                b"\\",
                b"u00",
                b"y" * 40,
                b"z" * 9,
            ]
        ),
        max_size=60,
    ),
    st.integers(min_value=1, max_value=64),
    st.integers(min_value=5, max_value=200),
    st.integers(min_value=0, max_value=80),
)
def test_bulk_skipping_reader_equals_filtering_every_line(
    pieces: list[bytes], first: int, max_line: int, given_len: int
) -> None:
    """The reader that jumps over irrelevant lines with rfind yields exactly the marked lines,
    whatever the block boundaries (a marker may be cut by one), the order of common and rare
    markers, and line lengths."""
    import os

    from notifier.pi.lines import MARKERS
    from notifier.watch.readers import backward_lines, backward_matching_lines

    data = b"".join(p + (b"\n" if i % 3 else b"") for i, p in enumerate(pieces)) + b"\n"
    with tempfile.TemporaryDirectory() as tmp:
        f = Path(tmp) / "f"
        f.write_bytes(data)
        fd = os.open(f, os.O_RDONLY)
        try:
            plain = [
                x
                for x in backward_lines(fd, 0, len(data), max_line, first)
                if any(m in x[1] for m in MARKERS)
            ]
            block = data[max(0, len(data) - given_len) :]
            fast = list(
                backward_matching_lines(fd, 0, len(data), max_line, MARKERS, first, block=block)
            )
            assert fast == plain
        finally:
            os.close(fd)
