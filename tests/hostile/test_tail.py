"""Reading session lines safely: any chunking, any hostile line, FIFOs, a rotten scan cache and
rewrites in place must never stop the notifier seeing the next good question."""

from __future__ import annotations

import functools
import json
import logging
import os
import sqlite3
import stat
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from notifier.core import codec
from notifier.core.board import Board
from notifier.core.model import Question
from notifier.core.reducer import SessionReducer, ToolEnd
from notifier.pi.parse import TOO_ODD, QuestionCatalog, to_events
from notifier.sessions import KEEP_ROWS, BoardReader, EngineOptions, StartupCache, scan_once
from notifier.tail import Tailer

from ..conftest import FIXTURES, wait_for
from ..harness import Harness
from ..strategies import MAYBE, TEXT, questions
from ..writer import answer, append, ask, header, line, user

CATALOG = QuestionCatalog()
ASKED = Question("c1", "question", (), 0.0)  # (what a result ends: here no options)


def _captures() -> list[Path]:
    assert FIXTURES is not None, "the real pi captures (tests/data/pi-sessions) are missing"
    found = sorted(FIXTURES.glob("*/[A-F]-*.jsonl")) + sorted(FIXTURES.glob("*/*/[A-F]-*.jsonl"))
    found += sorted(FIXTURES.glob("*/final.jsonl"))
    return found


CAPTURES = _captures()
HOSTILE_SETTINGS = settings(
    max_examples=40,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)


def _events(lines: list[bytes]) -> list[Any]:
    """The events of ``lines`` as values (a result's judge replaced by what it says)."""
    out: list[Any] = []
    for raw in lines:
        try:
            entry = codec.loads(raw)
        except ValueError:
            continue
        if isinstance(entry, dict):
            events = to_events(entry, CATALOG, 0.0)
            out += [e._replace(judge=None) + e.judge(ASKED) if isinstance(e, ToolEnd) and e.judge else e for e in events]
    return out


def _whole(path: Path) -> list[bytes]:
    return Tailer(str(path)).read().lines


# ---- property: any chunking gives the same lines and events as one read ----


@st.composite
def _chunked(draw: st.DrawFn) -> tuple[bytes, list[tuple[int, bool]]]:
    data = CAPTURES[draw(st.integers(0, len(CAPTURES) - 1))].read_bytes()
    if draw(st.booleans()):
        data = data.replace(b"\n", b"\r\n")  # so that cuts fall inside \r\n too
    if draw(st.booleans()):  # multi-byte UTF-8 in every line, so that cuts fall inside them
        data = data.replace(b'"timestamp"', '"z\u00e9\u2028\U0001f600":1,"timestamp"'.encode())
    cuts = sorted(set(draw(st.lists(st.integers(0, len(data)), max_size=40))))
    # also cut right inside a multi-byte character and between \r and \n when there is one
    for needle, offset in ((b"\xf0", 2), (b"\r\n", 1)):
        hit = data.find(needle)
        if hit >= 0 and draw(st.booleans()):
            cuts = sorted(set(cuts) | {hit + offset})
    reads = [draw(st.booleans()) for _ in cuts]
    return data, list(zip(cuts, reads, strict=True))


@HOSTILE_SETTINGS
@given(_chunked())
def test_any_chunking_reads_like_one_read(case: tuple[bytes, list[tuple[int, bool]]]) -> None:
    data, plan = case
    with tempfile.TemporaryDirectory() as d:
        whole_path = Path(d, "whole.jsonl")
        whole_path.write_bytes(data)
        expected = _whole(whole_path)
        path = Path(d, "s.jsonl")
        path.write_bytes(b"")
        tailer = Tailer(str(path))
        got: list[bytes] = []
        written = 0
        for cut, read in [*plan, (len(data), True)]:
            with path.open("ab") as fh:
                fh.write(data[written:cut])
            written = max(written, cut)
            if read:
                result = tailer.read()
                assert not result.rewritten and result.error is None
                got += result.lines
        got += tailer.read().lines
        assert got == expected
        assert _events(got) == _events(expected)
        assert any(e.__class__.__name__ == "ToolStart" for e in _events(got))


# ---- property: a hostile line, then a good question, through the real engine ----


def _deep(depth: int, inside: bool) -> bytes:
    nest = "[" * depth + "]" * depth if depth % 2 else '{"a":' * depth + "1" + "}" * depth
    if not inside:
        return nest.encode() + b"\n"
    return (
        '{"type":"message","id":"d","message":{"role":"assistant","stopReason":"toolUse","content":'
        '[{"type":"toolCall","id":"evil","name":"question","arguments":{"question":"x","options":'
        + nest
        + "}}]}}\n"
    ).encode()


@functools.cache
def _many_questions() -> bytes:
    """5,000 questions of 3,000 options each in one line (built once: it takes seconds)."""
    return ask("many-n", args={"questions": [{"question": f"q{i}", "options": ["a"] * 3000} for i in range(5000)]})


HOSTILE_LINES: list[Callable[[int], bytes]] = [
    lambda n: _deep(1000 + n, inside=True),  # the model writes these: prompt injection is enough
    lambda n: _deep(100_000 + n, inside=False),
    lambda n: _deep(65 + n % 10, inside=True),
    lambda n: b"\xff\xfe" + bytes(range(256)) * (1 + n % 4) + b"\n",  # not UTF-8
    lambda n: b'{"type":"message","message":{"role":"assis\x00tant"}}\n',  # NUL bytes
    lambda n: (
        b'{"type":"message","message":{"role":"assistant","content":[{"type":"toolC' + b"\n"
    ),  # half-written
    lambda n: b"[" * (n + 1) + b"\n",  # unbalanced
    lambda n: b"1" * (5000 + n) + b"\n",  # an integer too long to convert
    lambda n: ask(f"big{n}", "Q" * (10 << 20)),  # a 10 MB single value
    lambda n: _many_questions().replace(b"many-n", f"many{n}".encode(), 1),  # 58 MB: over max_line
    lambda n: line(
        {
            "type": "message",
            "message": {
                "role": "assistant",
                "stopReason": "toolUse",
                "content": [
                    {
                        "type": "toolCall",
                        "id": f"c{n}-{i}",
                        "name": "question",
                        "arguments": {"question": "?"},
                    }
                    for i in range(20_000)
                ],
            },
        }
    ),
    lambda n: ask(f"s{n}", args={"questions": json.dumps([{"question": "[" * 50_000}]) + "[" * 200_000}),
    lambda n: b'{"type":"session_info","name":"' + b"n" * (4 << 20) + b'"}\n',
    lambda n: b'{"type":"session","id":"' + b"i" * (2 << 20) + b'","cwd":"' + b"c" * (2 << 20) + b'"}\n',
    lambda n: b"\n\n   \r\n\x00\n",
]


class _Engine:
    """One real engine on a real temporary sessions folder, reused across examples."""

    def __init__(self, root: Path) -> None:
        self.harness = Harness([root])
        self.root = root

    def __enter__(self) -> _Engine:
        self.harness.__enter__()
        return self

    def __exit__(self, *exc: object) -> None:
        self.harness.__exit__(*exc)


@pytest.fixture(scope="module")
def engine() -> Any:
    with tempfile.TemporaryDirectory() as d, _Engine(Path(d)) as e:
        yield e


_counter = iter(range(1_000_000))


@HOSTILE_SETTINGS
@given(
    kinds=st.lists(st.integers(0, len(HOSTILE_LINES) - 1), min_size=1, max_size=3), split=st.integers(0, 5000)
)
def test_hostile_lines_then_a_good_question_is_still_seen(
    engine: _Engine, kinds: list[int], split: int
) -> None:
    n = next(_counter)
    f = engine.root / f"--p{n}--" / "s.jsonl"
    append(f, header(f"/p/{n}"), user())
    for kind in kinds:
        bad = HOSTILE_LINES[kind](n)
        cut = min(split, len(bad))
        append(f, bad[:cut])
        append(f, bad[cut:])
    append(f, ask(f"good{n}", f"Still there {n}?"))
    h = engine.harness
    wait_for(
        lambda: any(t.question.tool_call_id == f"good{n}" for t in h.collected.of("needs_input")),
        20,
        "the good question",
    )
    assert h.engine.failed is None and h.engine._thread is not None and h.engine._thread.is_alive()
    view = h.engine.board.view(str(f))
    assert view is not None
    for q in view.pending:  # everything that reached the board is bounded
        assert len(q.text) <= codec.MAX_STR and len(q.items) <= 50
        assert all(len(o.label) <= codec.MAX_STR for o in q.first.options)
    assert len(view.pending) <= 256 + 1


def _nesting_depth(data: bytes) -> int:
    """The deepest ``[``/``{`` nesting of ``data`` outside strings, byte by byte: the oracle for
    the depth check of jsonbound.loads, which works on whole-bytes operations instead."""
    depth = deepest = 0
    in_string = escaped = False
    for byte in data:
        if in_string:
            if escaped:
                escaped = False
            elif byte == 0x5C:  # backslash
                escaped = True
            elif byte == 0x22:  # quote
                in_string = False
        elif byte == 0x22:
            in_string = True
        elif byte in (0x5B, 0x7B):
            depth += 1
            deepest = max(deepest, depth)
        elif byte in (0x5D, 0x7D):
            depth -= 1
    return deepest


def test_bounded_parse_agrees_with_the_reference_depth() -> None:
    @given(
        st.recursive(
            st.none() | st.integers() | st.text(), lambda c: st.lists(c) | st.dictionaries(st.text(), c)
        )
    )
    def check(value: Any) -> None:
        raw = json.dumps(value).encode()
        depth = _nesting_depth(raw)
        for limit in (max(depth - 1, 0), depth, depth + 1):
            if depth <= limit:
                assert codec.loads(raw, max_depth=limit) == value
            else:
                with pytest.raises(codec.BoundedJSONError):
                    codec.loads(raw, max_depth=limit)

    check()


# Strings dense with what the depth check must see through: brackets, quotes and backslashes as
# text, the escape letters (``\\n``, ``\\u00e9``, ``\\/``…), and other letters between them.
_ESCAPY = st.text(st.sampled_from('[]{}"\\/bfnrtuxé\n\t'), max_size=30)


def test_bounded_parse_sees_through_escapes_as_the_reference_does() -> None:
    @given(st.recursive(_ESCAPY | st.none(), lambda c: st.lists(c, max_size=4) | st.dictionaries(_ESCAPY, c, max_size=4)))
    @settings(max_examples=300)
    def check(value: Any) -> None:
        for ascii_only in (True, False):
            raw = json.dumps(value, ensure_ascii=ascii_only).encode()
            depth = _nesting_depth(raw)
            assert codec.loads(raw, max_depth=depth) == value
            if depth:
                with pytest.raises(codec.BoundedJSONError, match="deeper"):
                    codec.loads(raw, max_depth=depth - 1)

    check()


# ---- fault tests, one per class ----


def _warnings(caplog: pytest.LogCaptureFixture, needle: str) -> list[str]:
    return [
        r.getMessage() for r in caplog.records if r.levelno >= logging.WARNING and needle in r.getMessage()
    ]


def test_nested_line_then_a_question_is_notified_and_logged_once(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    f = tmp_path / "--p--" / "s.jsonl"
    append(f, header("/p"), user())
    with Harness([tmp_path]) as h:
        for i in range(3):
            append(f, _deep(1000 * (i + 1), inside=True))
        append(f, ask("q1", "After the bomb?"))
        # each nested line holds a question tool's call: a question too odd to show (issue 29)
        *odd, t = h.wait("needs_input", 4)
        assert [q.question.text for q in odd] == [TOO_ODD] * 3 and t.question.text == "After the bomb?"
        assert h.engine.failed is None and h.engine._thread is not None and h.engine._thread.is_alive()
        append(f, answer("q1"))
        h.wait("resolved")
    assert len(_warnings(caplog, "usable JSON")) == 1


def test_a_fifo_in_the_folder_blocks_nothing(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    folder = tmp_path / "--p--"
    folder.mkdir()
    with Harness([tmp_path]) as h:
        fifo = folder / "trap.jsonl"
        os.mkfifo(fifo)
        f = folder / "s.jsonl"
        append(f, header("/p"), user(), ask("q1", "Seen past the FIFO?"))
        (t,) = h.wait("needs_input")
        assert t.question.text == "Seen past the FIFO?"
        wait_for(lambda: _warnings(caplog, "not a regular file"), 5, "the FIFO noticed")
        # a writer on the FIFO makes events; they must cost nothing and log nothing more
        fd = os.open(fifo, os.O_RDWR | os.O_NONBLOCK)
        try:
            os.write(fd, ask("q2", "Through the FIFO?"))
            append(f, ask("q3", "Still?"))
            wait_for(lambda: any(x.question.tool_call_id == "q3" for x in h.collected.of("needs_input")), 10, "q3")
        finally:
            os.close(fd)
        assert all(x.question.tool_call_id != "q2" for x in h.collected.of("needs_input"))
        assert h.engine._thread is not None and h.engine._thread.is_alive()
    assert len(_warnings(caplog, "not a regular file")) == 1


# -- the scan cache --


def _status(root: Path, cache: Path) -> Any:
    opts = EngineOptions([str(root)], QuestionCatalog(), liveness=False, cache_path=str(cache))
    snap = scan_once(opts)
    views = sorted(
        (v.ref.key, v.state, tuple(q.tool_call_id for q in v.pending), tuple(q.text for q in v.pending))
        for v in snap.sessions
    )
    return views


def _scan(root: Path, cache: Path, keep_rows: int = KEEP_ROWS) -> StartupCache:
    opts = EngineOptions([str(root)], QuestionCatalog(), liveness=False)
    found = StartupCache(str(cache), opts.catalog.key, opts.roots, opts.max_line, keep_rows)
    files = BoardReader(opts, Board(liveness=False), time.time)
    files.scan(str(root), initial=True, cache=found)
    found.save(files.tailers, files.board)
    return found


def _corrupt_all(cache: Path, sql: str, *args: Any) -> None:
    db = sqlite3.connect(cache)
    with db:
        db.execute(sql, args)
    db.close()


def _edit(change: Callable[[dict[str, Any]], Any]) -> Callable[[Path], None]:
    """A corruption of every row's summary, as parsed JSON (``change`` edits it in place, by the
    names of its values, :data:`notifier.sessions.FIELDS`; a value it adds comes last)."""
    from notifier.sessions import FIELDS

    def corrupt(cache: Path) -> None:
        db = sqlite3.connect(cache)
        with db:
            for path, summary in db.execute("SELECT path, summary FROM scan").fetchall():
                data = dict(zip(FIELDS, json.loads(summary), strict=True))
                change(data)
                values = [data.pop(name) for name in FIELDS] + list(data.values())  # (and any added)
                again = json.dumps(values).encode()
                db.execute("UPDATE scan SET summary = ? WHERE path = ?", (again, path))
        db.close()

    return corrupt


def _sql(sql: str, *args: Any) -> Callable[[Path], None]:
    return lambda cache: _corrupt_all(cache, sql, *args)


def _text(old: str, new: str) -> Callable[[Path], None]:
    return _sql(f"UPDATE scan SET summary = CAST(replace(CAST(summary AS TEXT), '{old}', '{new}') AS BLOB)")


CORRUPTIONS: dict[str, Callable[[Path], None]] = {
    "garbage bytes": _sql("UPDATE scan SET summary = ?", os.urandom(200)),
    "marshal-era bytes": _sql("UPDATE scan SET summary = ?", b"\xfb\xe3\x00\x00\x00\x00"),
    "a flipped character": _text('"tool_call_id"', '"Tool_call_id"'),
    "wrong types in a question": _text('"multi":false', '"multi":"no"'),
    "a word for a number": _edit(lambda d: d.update(offset="twelve")),
    "an unknown state": _edit(lambda d: d.update(base="asleep")),
    "a missing value": _edit(lambda d: d.update(base=None)),
    "huge blob": _sql("UPDATE scan SET summary = zeroblob(5000000)"),
    "text instead of blob": _sql("UPDATE scan SET summary = CAST(summary AS TEXT)"),
    "an oversized string": _edit(lambda d: d.update(cwd="x" * 300_000)),
    "huge list": _edit(lambda d: d.update(pending=[{}] * 50_000)),
    "deep nesting": _sql("UPDATE scan SET summary = ?", b"[" * 100_000 + b"]" * 100_000),
    "a huge number": _edit(lambda d: d.update(offset=1 << 62)),
    "a negative number": _edit(lambda d: d.update(ws=-1)),
    "an inconsistent position": _edit(lambda d: d.update(tail_start=d["offset"] + 1)),
    "an infinite time": _edit(lambda d: d.update(at=float("inf"))),
    "a digest of the wrong length": _sql("UPDATE scan SET head = x'00'"),
    "text instead of bytes": _sql("UPDATE scan SET partial = 'abc'"),
    "a field of another version": _edit(lambda d: d.update(head="00" * 16)),
    "a number for a folder": _edit(lambda d: d.update(cwd=5)),
    "a word for a flag": _edit(lambda d: d.update(header="yes")),
    "a list for the tools running": _edit(lambda d: d.update(running=["bash"])),
    "a number for a tool running": _edit(lambda d: d.update(running={"c1": 5})),
    "an oversized tool name": _edit(lambda d: d.update(running={"c1": "x" * 300_000})),
    "an object for the questions": _edit(lambda d: d.update(pending={})),
    "a word for a time": _edit(lambda d: d.update(at="now")),
    "a list for a state": _edit(lambda d: d.update(base=["idle"])),
}


@pytest.mark.parametrize("kind", sorted(CORRUPTIONS))
def test_a_rotten_scan_cache_is_rebuilt_with_one_log_line(
    kind: str, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    root = tmp_path / "sessions"
    append(root / "--a--" / "a.jsonl", header("/p/a"), user(), ask("q1", "First?"))
    append(root / "--b--" / "b.jsonl", header("/p/b"), user(), ask("q2", "Second?"), answer("q2"))
    cache = tmp_path / "state" / "scan-cache.sqlite3"
    truth = _status(root, cache)
    assert [v[2] for v in truth] == [("q1",), ()]
    CORRUPTIONS[kind](cache)
    caplog.clear()
    with caplog.at_level(logging.DEBUG):
        again = _status(root, cache)
    assert again == truth
    assert len(_warnings(caplog, "scan cache")) == 1, caplog.text
    caplog.clear()
    assert _scan(root, cache).hits == 2  # rebuilt: the next run reads nothing again
    assert _warnings(caplog, "scan cache") == []




@st.composite
def _summaries(draw: st.DrawFn) -> tuple[Tailer, SessionReducer]:
    tailer = Tailer("/s/a.jsonl", 1 << 20)
    offset = draw(st.integers(0, 1 << 40))
    partial = draw(st.binary(max_size=min(offset, 40)))
    tailer.seek(offset, (1, 2), partial, draw(st.binary(max_size=64)), draw(st.binary(max_size=64)))
    tailer.window_start = draw(st.integers(0, offset))
    tailer.name_checked = draw(st.booleans())
    asked = draw(st.lists(questions, max_size=2, unique_by=lambda q: q.tool_call_id))
    pending = {q.tool_call_id: q for q in asked}  # (every field of a question, drawn)
    reducer = SessionReducer(
        session_id=draw(MAYBE), cwd=draw(MAYBE), name=draw(MAYBE), base=draw(st.sampled_from(["idle", "working"])),
        calls=pending, running=draw(st.dictionaries(TEXT, TEXT, max_size=2)), current_tool=draw(MAYBE),
        updated_at=draw(st.floats(allow_nan=False, allow_infinity=False)), has_header=draw(st.booleans()),
    )  # fmt: skip
    return tailer, reducer


@settings(max_examples=100, deadline=None)
@given(_summaries())
def test_every_value_a_summary_holds_comes_back_as_written(summary: tuple[Tailer, SessionReducer]) -> None:
    """None, empty and binary bytes, strings that are not UTF-8, pending questions: what is
    saved is what is loaded, through the bounded parse and every check."""
    from notifier.sessions import _pack, _unpack

    tailer, reducer = summary
    raw = _pack(tailer, reducer)
    assert raw is not None
    again, restored = _unpack(raw, tailer.path, tailer.offset, tailer.max_line, (1, 2))
    assert again.state() == tailer.state() and again.ident == (1, 2)
    assert (again.window_start, again.name_checked) == (tailer.window_start, tailer.name_checked)
    assert restored == reducer


def test_a_cache_with_the_wrong_columns_or_not_a_database_is_rebuilt(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    root = tmp_path / "sessions"
    append(root / "--a--" / "a.jsonl", header("/p/a"), user(), ask("q1", "First?"))
    cache = tmp_path / "state" / "scan-cache.sqlite3"
    truth = _status(root, cache)
    db = sqlite3.connect(cache)
    with db:
        db.execute("ALTER TABLE scan ADD COLUMN extra TEXT")
    db.close()
    assert _status(root, cache) == truth
    for name in os.listdir(cache.parent):
        os.unlink(cache.parent / name)
    cache.write_bytes(b"SQLite format 3\x00" + os.urandom(4000))
    assert _status(root, cache) == truth
    assert len(_warnings(caplog, "scan cache")) == 2
    assert _scan(root, cache).hits == 1


# Holds a database in exclusive locking mode (no other process may even read it) until a line
# arrives on stdin.
_HOLD = """
import sqlite3, sys
db = sqlite3.connect(sys.argv[1], isolation_level=None)
db.execute("PRAGMA locking_mode=EXCLUSIVE")
db.execute("BEGIN EXCLUSIVE")
db.execute("SELECT count(*) FROM scan").fetchone()
print("held", flush=True)
sys.stdin.readline()
db.execute("COMMIT")
"""


def test_a_cache_busy_in_another_process_is_left_whole_not_discarded(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """Busy is no damage: a run that cannot get at the cache (another process holds it longer
    than the busy timeout) reads every file and leaves the cache as it is for the next run."""
    import subprocess
    import sys

    root = tmp_path / "sessions"
    append(root / "--a--" / "a.jsonl", header("/p/a"), user(), ask("q1", "First?"))
    cache = tmp_path / "state" / "scan-cache.sqlite3"
    truth = _status(root, cache)
    holder = subprocess.Popen([sys.executable, "-c", _HOLD, str(cache)], stdin=subprocess.PIPE, stdout=subprocess.PIPE)
    try:
        assert holder.stdout is not None and holder.stdout.readline() == b"held\n"
        caplog.clear()
        with caplog.at_level(logging.DEBUG):
            assert _status(root, cache) == truth
        assert _warnings(caplog, "scan cache") == [] and "locked" in caplog.text, caplog.text
    finally:
        holder.communicate(b"go\n", timeout=30)
    assert _scan(root, cache).hits == 1  # (the rows written before are still there)


def test_rows_of_folders_not_scanned_are_not_loaded_and_stay_bounded(tmp_path: Path) -> None:
    """Only the rows below the folders being scanned are read (names that are not UTF-8 too).
    Rows of other folders are kept up to a bound (a folder scanned now and then keeps its
    summaries), past which they go; junk rows no scan writes are never read."""
    a, ab, other = tmp_path / "a", tmp_path / "ab", tmp_path / os.fsdecode(b"\xffother")
    x = a / "--p--" / "x.jsonl"
    y = ab / "--p--" / "y.jsonl"  # (a's name is a prefix of ab's)
    z = other / "--p--" / os.fsdecode(b"z\xfe.jsonl")
    append(x, header("/p/x"), user(), ask("q1", "First?"))
    append(y, header("/p/y"), user())
    append(z, header("/p/z"), user())
    cache = tmp_path / "state" / "scan-cache.sqlite3"
    assert [_scan(root, cache).hits for root in (a, ab, other)] == [0, 0, 0]
    for junk in ("CAST(x'2f6aff' AS TEXT)", "zeroblob(3000000)", "7"):
        _corrupt_all(cache, f"INSERT INTO scan SELECT {junk}, stamp, head, tail, partial, summary FROM scan LIMIT 1")
    assert [_scan(root, cache).hits for root in (a, ab, other)] == [1, 1, 1]  # (each its own rows)
    append(x, answer("q1"))  # (a change: the next scan writes the cache)
    assert _scan(a, cache, keep_rows=6).hits == 0
    db = sqlite3.connect(cache)
    assert db.execute("SELECT count(*) FROM scan").fetchone() == (6,)  # (within the bound: kept)
    db.close()
    append(x, user())
    assert _scan(a, cache, keep_rows=5).hits == 0
    db = sqlite3.connect(cache)
    assert db.execute("SELECT path FROM scan").fetchall() == [(os.fsencode(x),)]  # (past it: they go)
    db.close()
    assert _scan(ab, cache).hits == 0 and _scan(ab, cache).hits == 1  # (read again, kept again)


def test_the_cache_is_private(tmp_path: Path) -> None:
    root = tmp_path / "sessions"
    append(root / "--a--" / "a.jsonl", header("/p/a"), user(), ask("q1", "First?"))
    old = os.umask(0o022)
    try:
        cache = tmp_path / "state" / "sub" / "scan-cache.sqlite3"
        _status(root, cache)
    finally:
        os.umask(old)
    assert stat.S_IMODE(cache.stat().st_mode) == 0o600
    assert stat.S_IMODE(cache.parent.stat().st_mode) == 0o700
    for extra in cache.parent.iterdir():
        assert stat.S_IMODE(extra.stat().st_mode) & 0o077 == 0, extra


# -- rewrites in place --


def _rewrite_in_place(path: Path, data: bytes) -> None:
    fd = os.open(path, os.O_WRONLY)
    try:
        os.write(fd, data)
    finally:
        os.close(fd)


def _filler(size: int) -> bytes:
    return line({"type": "custom", "customType": "x", "data": "f" * size})


@pytest.mark.parametrize("keep", [32, 100, 3000])
@pytest.mark.parametrize("when", ["after the start-up scan", "after a live read"])
def test_a_rewrite_in_place_drops_the_stale_question(tmp_path: Path, keep: int, when: str) -> None:
    f = tmp_path / "--p--" / "s.jsonl"
    head = header("/p")
    stale = ask("q1", "Stale?")
    tail = _filler(keep)  # the bytes before the offset that the rewrite keeps
    if when == "after the start-up scan":
        append(f, head, user(), stale, tail)
    with Harness([tmp_path]) as h:
        if when == "after a live read":
            append(f, head, user(), stale, tail)
        (t,) = h.wait("needs_input")
        assert t.question.tool_call_id == "q1"
        # The same header and the same last bytes; in between a user message replaces the
        # question (same length: the file neither shrinks nor changes inode).
        replacement = user("r" * 10)
        pad = len(stale) - len(replacement)
        replacement = user("r" * (10 + pad))
        assert len(replacement) == len(stale)
        _rewrite_in_place(f, head + user() + replacement + tail)
        (gone,) = h.wait("resolved")
        assert gone.question.tool_call_id == "q1"
        wait_for(lambda: h.engine.snapshot.pending_count == 0, 5, "nothing pending")
        append(f, ask("q2", "Next?"))  # and reading goes on from the rewritten file
        asked = h.wait("needs_input", 2)
        assert asked[1].question.tool_call_id == "q2"


def test_a_migration_rewrite_that_grows_is_read_from_the_start(tmp_path: Path) -> None:
    f = tmp_path / "--p--" / "s.jsonl"
    filler = _filler(6000)
    v2 = line({"type": "session", "version": 2, "id": "s1", "cwd": "/p"})
    append(f, v2, user(), ask("q1", "Old?"), filler)
    with Harness([tmp_path]) as h:
        h.wait("needs_input")
        v3 = line({"type": "session", "version": 3, "id": "s1", "cwd": "/p"})
        # rewritten with a new header and an answer: larger than before, the end unchanged
        data = v3 + user() + ask("q1", "Old?") + answer("q1") + filler
        _rewrite_in_place(f, data)
        (done,) = h.wait("resolved")
        assert done.question.tool_call_id == "q1" and done.outcome == "answered"


# -- a question too large to read --


@pytest.mark.parametrize("when", ["at start-up", "while running"])
def test_a_question_too_large_to_read_is_still_shown_waiting(
    tmp_path: Path, when: str, caplog: pytest.LogCaptureFixture
) -> None:
    """A question tool's call over the 32 MB bound (a 40 MB option label) is skipped unread, with
    one log line, but its first bytes name the call: the session is shown waiting, notified,
    and resolved by its answer, at start-up (status, the scan cache, the app) and live."""
    from notifier.pi.parse import TOO_LARGE

    f = tmp_path / "sessions" / "--p--" / "s.jsonl"
    f.parent.mkdir(parents=True)
    huge = ask("q1", "Pick?", options=["x" * (40 << 20)])
    assert len(huge) > EngineOptions([]).max_line
    if when == "at start-up":
        append(f, header("/p"), user(), huge)
        cache = tmp_path / "state" / "scan-cache.sqlite3"
        for _ in ("cold", "warm"):
            assert _status(f.parent.parent, cache) == [(str(f), "needs_input", ("q1",), (TOO_LARGE,))]
    caplog.clear()
    with caplog.at_level(logging.INFO), Harness([tmp_path / "sessions"]) as h:
        if when == "while running":
            append(f, header("/p"), user())
            wait_for(lambda: str(f) in h.engine.reader.tailers, 10, "the file followed")
            append(f, huge)
        (asked,) = h.wait("needs_input")
        assert asked.question.tool_call_id == "q1" and asked.question.text == TOO_LARGE
        append(f, answer("q1"))
        (done,) = h.wait("resolved")
        assert done.question.tool_call_id == "q1" and done.outcome == "answered"
    said = [r.getMessage() for r in caplog.records if "longer than 32 MB" in r.getMessage()]
    assert len(said) == 1, said
