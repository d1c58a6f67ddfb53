"""The start-up read: the state it settles equal to a full read for every real pi capture (and
every prefix of it, line by line) and for tails of any length, in windows of any size."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from notifier.tail import LongLine, Tailer, forward_lines, last_line_end

from ..conftest import FIXTURES
from ..scan_check import assert_same, files, jline, startup_read

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


def test_forward_lines_agree_with_split_and_give_long_lines_as_their_head(tmp_path: Path) -> None:
    data = b"a\n\nbcd\n" + b"x" * 100 + b"\nlast\n"
    p = tmp_path / "f"
    p.write_bytes(data)
    fd = os.open(p, os.O_RDONLY)
    try:
        assert list(forward_lines(fd, 0, len(data), 1 << 20)) == data.split(b"\n")[:-1]
        short = list(forward_lines(fd, 0, len(data), 50))  # the 100-byte line: its first 50 bytes
        assert short == [b"a", b"", b"bcd", b"x" * 50, b"last"] and type(short[3]) is LongLine
        assert [type(x) for x in short].count(LongLine) == 1
        assert last_line_end(fd, 0, len(data) - 1) == len(data) - 5 and last_line_end(fd, 0, 1) == 0
    finally:
        os.close(fd)


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


IO = Path("/proc/thread-self/io")


def _bytes_read(f: Path) -> int:
    """The bytes the start-up read of ``f`` read (this thread's read counter, Linux), its result
    checked against a full read."""
    counters = IO.read_bytes()  # (this read is counted too: its length taken off below)
    assert files().load(Tailer(str(f))) is not None
    after = IO.read_bytes()
    assert_same(f)
    return _rchar(after) - _rchar(counters) - len(counters)


def _rchar(counters: bytes) -> int:
    return int(counters.split(b"rchar:")[1].split()[0])


@pytest.mark.skipif(not IO.exists(), reason="needs /proc/thread-self/io (Linux)")
def test_the_start_up_read_of_a_session_costs_what_its_end_holds_not_its_size(tmp_path: Path) -> None:
    """The common end of a file (the newest message settles the state, whatever follows it
    changes nothing) is read from the end: the bytes read are a small multiple of that end,
    the same for a file of 256 KB as for one of 4 MB, and the result is a full read's."""
    header = jline({"type": "session", "id": "s", "cwd": "/p"})
    noise = b"".join(jline({"type": "label", "id": str(i), "label": "x"}) for i in range(30))
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
    filler = b"".join(jline({"type": "custom", "id": f"f{i}", "data": "f" * 4000}) for i in range(64))
    f = tmp_path / "s.jsonl"
    f.write_bytes(header + ends[0])
    files().load(Tailer(str(f)))  # (what a first load may import is not counted)
    for end in ends:
        for tail in (b"", noise, noise + b'{"type":"label","id":"cut', long_noise):
            held = _message("user", content="hi") + end + tail
            costs = []
            for times in (1, 16):  # 256 KB and 4 MB of entries before the end
                f.write_bytes(header + filler * times + held)
                costs.append(_bytes_read(f))
            assert costs[0] == costs[1], costs
            assert costs[0] <= 4 * len(held) + (48 << 10), (costs, len(held))


def test_what_the_newest_message_cannot_settle_reads_on(tmp_path: Path) -> None:
    """A line after the newest message that may matter (a compaction, a rename, an escaped type),
    a newest message that does not settle the state alone (a tool result), a newest message
    whose start lies before the first window: each read on, with a full read's result, whatever
    the windows and the cap (past it: the whole file forward)."""
    header = jline({"type": "session", "id": "s", "cwd": "/p"})
    stop = _message("assistant", stopReason="stop", content="k")
    f = tmp_path / "s.jsonl"
    cases = [
        stop + jline({"type": "compaction", "id": "c", "timestamp": "2026-01-01T00:00:01Z"}),
        stop + jline({"type": "session_info", "id": "n", "name": "later"}),
        stop + b'{"type":"comp\\u0061ction","id":"c","timestamp":"2026-01-01T00:00:01Z"}\n',
        _message("toolResult", toolCallId="b", toolName="bash", content="1"),
        _message("assistant", stopReason="stop", content="x" * 40_000),
        stop
        + b"".join(jline({"type": "custom", "id": str(i), "data": {"n": i}}) for i in range(300))
        + jline({"type": "custom", "id": "m", "data": {"k": "compaction"}})
        + b"".join(jline({"type": "custom", "id": str(i), "data": {"n": i}}) for i in range(600)),
    ]
    for end in cases:
        f.write_bytes(header + _message("user", content="hi") + end)
        for first, cap in ((None, None), (1, None), (7, 0), (100, 1), (1 << 20, None)):
            assert_same(f, first=first, cap=cap)


@pytest.mark.parametrize("shift", [-14, -7, -1, 0, 1, 6, 13, 200, 3000])
def test_a_line_that_matters_begun_before_the_last_block_is_still_read(tmp_path: Path, shift: int) -> None:
    """The last 16 KB hold no line that can matter, but the line they begin inside does (a
    compaction, its type marker before, across or after the block's start, ``shift`` bytes
    from it): the start-up read goes on before the block and finds it, as a full read does."""
    from notifier.tail import FIRST_WINDOW

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
