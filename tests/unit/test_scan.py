"""The start-up scan: reading lines backwards in bounded memory, and the settled start-up state
equal to a full read for every real pi capture (and every prefix of it, line by line)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from notifier.watch.readers import backward_lines, find_end, forward_lines

from ..conftest import FIXTURES
from ..scan_check import assert_same, jline, startup_read

CAPTURES = sorted(p for p in FIXTURES.rglob("*.jsonl") if "timeline" not in p.name) if FIXTURES else []


@pytest.mark.parametrize("capture", CAPTURES, ids=lambda p: str(p.relative_to(FIXTURES)))
def test_startup_state_equals_a_full_read_for_every_capture_prefix(capture: Path, tmp_path: Path) -> None:
    lines = capture.read_bytes().split(b"\n")
    f = tmp_path / "s.jsonl"
    for n in range(1, len(lines) + 1):
        f.write_bytes(b"\n".join(lines[:n]))  # every prefix, the last line unfinished
        assert_same(f)
        f.write_bytes(b"\n".join(lines[:n]) + b"\n")
        assert_same(f)


def _split(data: bytes, max_line: int, first: int) -> tuple[list[tuple[int, bytes]], list[tuple[int, bytes]]]:
    fd = os.open(_split.path, os.O_RDONLY)  # type: ignore[attr-defined]
    try:
        end = data.rfind(b"\n") + 1
        back = list(backward_lines(fd, 0, end, max_line, first=first))
        fwd = list(forward_lines(fd, 0, end, max_line))
        tail = find_end(fd, 0, len(data), max_line, first=first)
        assert tail.end == end and data[tail.end - len(tail.block) : tail.end] == tail.block
        back2 = list(backward_lines(fd, 0, end, max_line, first=first, block=tail.block))
        assert back2 == back
    finally:
        os.close(fd)
    return back, fwd


@pytest.mark.parametrize("first", [1, 3, 7, 64, 1 << 14])
def test_backward_and_forward_lines_agree_with_split(tmp_path: Path, first: int) -> None:
    data = b"a\n\nbcd\n" + b"x" * 100 + b"\nlast\nunfinished"
    p = tmp_path / "f"
    p.write_bytes(data)
    _split.path = str(p)  # type: ignore[attr-defined]
    back, fwd = _split(data, 1 << 20, first)
    expected = []
    pos = 0
    for piece in data.split(b"\n")[:-1]:
        expected.append((pos, piece))
        pos += len(piece) + 1
    assert fwd == expected and back == expected[::-1]
    back, fwd = _split(data, 50, first)  # the 100-byte line is skipped, never assembled
    short = [e for e in expected if len(e[1]) <= 50]
    assert fwd == short and back == short[::-1]


def test_a_huge_tail_of_entries_without_events_is_skipped_without_decoding(tmp_path: Path) -> None:
    header = jline({"type": "session", "id": "s", "cwd": "/p"})
    ask = jline(
        {
            "type": "message",
            "timestamp": "2026-01-01T00:00:00Z",
            "message": {
                "role": "assistant",
                "stopReason": "toolUse",
                "content": [
                    {"type": "toolCall", "id": "q", "name": "question", "arguments": {"question": "Go?"}}
                ],
            },
        }
    )
    noise = b"".join(
        jline({"type": t, "id": str(i), "data": {"k": "v"}})
        for i, t in enumerate(["label", "custom", "model_change"] * 3000)
    )
    f = tmp_path / "s.jsonl"
    f.write_bytes(header + ask + noise)
    tailer = assert_same(f)
    reducer, _ = startup_read(f)
    assert list(reducer.pending) == ["q"] and tailer.window_start == len(header)


def _message(role: str, **fields: object) -> bytes:
    return jline({"type": "message", "timestamp": "2026-01-01T00:00:00Z", "message": {"role": role, **fields}})


def _general_path_used(f: Path, monkeypatch: pytest.MonkeyPatch) -> bool:
    """Whether settling ``f`` needed the general path (reading lines backwards one by one)."""
    import notifier.engine.settle_file as settle_file

    used = []
    real = settle_file.backward_matching_lines

    def spy(*args: object, **kwargs: object) -> object:
        used.append(True)
        return real(*args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(settle_file, "backward_matching_lines", spy)
    assert_same(f)
    return bool(used)


def test_a_session_ending_in_a_settling_message_is_read_without_the_general_path(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The common end of a file (the newest message settles the state alone, nothing after it
    that can matter) costs one look at the last block; the result is that of a full read."""
    header = jline({"type": "session", "id": "s", "cwd": "/p"})
    noise = b"".join(jline({"type": "label", "id": str(i), "label": "x"}) for i in range(30))
    f = tmp_path / "s.jsonl"
    ends = [
        _message("assistant", stopReason="stop", content=[{"type": "text", "text": "done"}]),
        _message("user", content="go on"),
        _message(
            "assistant",
            stopReason="toolUse",
            content=[{"type": "toolCall", "id": "q", "name": "question", "arguments": {"question": "Go?"}}],
        ),
    ]
    long_noise = b"".join(jline({"type": "custom", "id": str(i), "data": {"n": i}}) for i in range(900))
    for end in ends:  # (a long tail that changes nothing, ~40 KB: searched block by block)
        for tail in (b"", noise, noise + b'{"type":"label","id":"cut', long_noise):
            f.write_bytes(header + _message("user", content="hi") + end + tail)
            assert not _general_path_used(f, monkeypatch)


def test_what_the_newest_message_cannot_settle_goes_the_general_way(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A line after the newest message that may matter (a compaction, a rename, an escaped type),
    a newest message that does not settle the state alone (a tool result), a newest message
    whose start lies before the last block: each is read the general way, with the same result."""
    header = jline({"type": "session", "id": "s", "cwd": "/p"})
    stop = _message("assistant", stopReason="stop", content="k")
    f = tmp_path / "s.jsonl"
    cases = [
        stop + jline({"type": "compaction", "id": "c", "timestamp": "2026-01-01T00:00:01Z"}),
        stop + jline({"type": "session_info", "id": "n", "name": "later"}),
        stop + b'{"type":"comp\\u0061ction","id":"c","timestamp":"2026-01-01T00:00:01Z"}\n',
        _message("toolResult", toolCallId="b", toolName="bash", content="1"),
        _message("assistant", stopReason="stop", content="x" * 40_000),
        # a long tail that changes nothing, but one of its entries holds a marker (as a value):
        # the direct way cannot tell, so the general way decodes it
        stop
        + b"".join(jline({"type": "custom", "id": str(i), "data": {"n": i}}) for i in range(300))
        + jline({"type": "custom", "id": "m", "data": {"k": "compaction"}})
        + b"".join(jline({"type": "custom", "id": str(i), "data": {"n": i}}) for i in range(600)),
    ]
    for end in cases:
        f.write_bytes(header + _message("user", content="hi") + end)
        assert _general_path_used(f, monkeypatch)


@pytest.mark.parametrize("shift", [-14, -7, -1, 0, 1, 6, 13, 200, 3000])
def test_a_line_that_matters_begun_before_the_last_block_is_still_read(tmp_path: Path, shift: int) -> None:
    """The last 16 KB hold no line that can matter, but the line they begin inside does (a
    compaction, its type marker before, across or after the block's start, ``shift`` bytes
    from it): the start-up read goes on before the block and finds it, as a full read does."""
    from notifier.watch.readers import FIRST_WINDOW

    header = jline({"type": "session", "id": "s", "cwd": "/p"})
    ask = _message(
        "assistant",
        stopReason="toolUse",
        content=[{"type": "toolCall", "id": "q", "name": "question", "arguments": {"question": "Go?"}}],
    )
    labels = b"".join(jline({"type": "label", "id": str(i), "label": "x"}) for i in range(400))
    tail = labels[-(FIRST_WINDOW - 2000) :]
    tail = tail[tail.index(b"\n") + 1 :]
    for pad_first in (True, False):
        body = {"type": "compaction", "id": "c", "timestamp": "2026-01-01T00:00:01Z", "summary": ""}
        if not pad_first:
            body = {"summary": "", "id": "c", "timestamp": "2026-01-01T00:00:01Z", "type": "compaction"}
        probe = jline(body)
        marker_at = probe.index(b'"compaction"')
        # the block starts FIRST_WINDOW bytes before the end: put the marker ``shift`` from there
        before_block = FIRST_WINDOW - len(tail)
        pad = before_block - (len(probe) - marker_at) - shift
        if pad < 0:
            continue
        body["summary"] = "y" * pad
        line = jline(body)
        f = tmp_path / "s.jsonl"
        f.write_bytes(header + ask + line + tail)
        reducer, _ = startup_read(f)
        assert not reducer.pending  # the compaction after the question supersedes it
        assert_same(f)


def test_long_tails_that_change_nothing_with_a_line_that_matters_anywhere(tmp_path: Path) -> None:
    """Tails of entries that change nothing, up to ~150 KB (searched block by block, the blocks
    growing), with a line that matters (a compaction, a rename, an escaped type, a new message)
    at any place in them or none: the start-up state is always a full read's."""
    import random

    rng = random.Random(8)
    header = jline({"type": "session", "id": "s", "cwd": "/p"})
    ask = _message(
        "assistant",
        stopReason="toolUse",
        content=[{"type": "toolCall", "id": "q", "name": "question", "arguments": {"question": "Go?"}}],
    )
    matters = [
        jline({"type": "compaction", "id": "c", "timestamp": "2026-01-01T00:00:01Z"}),
        jline({"type": "session_info", "id": "n", "name": "renamed"}),
        b'{"type":"branch_\\u0073ummary","id":"b","timestamp":"2026-01-01T00:00:01Z"}\n',
        _message("user", content="go on"),
        jline({"type": "custom", "id": "v", "data": {"k": "context_edit"}}),  # (a marker, no event)
    ]
    f = tmp_path / "s.jsonl"
    for case in range(60):
        noise = [
            jline({"type": rng.choice(["label", "custom", "model_change"]), "id": str(i), "x": "y" * rng.randrange(60)})
            for i in range(rng.randrange(0, 2500))
        ]
        if case % 6:  # (one case in six: nothing that matters in the tail)
            noise.insert(rng.randrange(len(noise) + 1), rng.choice(matters))
        f.write_bytes(header + _message("user", content="hi") + ask + b"".join(noise))
        assert_same(f)
