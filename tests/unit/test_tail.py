from __future__ import annotations

import os
from pathlib import Path

from notifier.watch.tail import Tailer


def test_partial_line_is_held_back(tmp_path: Path) -> None:
    p = tmp_path / "s.jsonl"
    p.write_bytes(b'{"a":1}\n{"b":')
    t = Tailer(str(p))
    assert t.read().lines == [b'{"a":1}']
    with p.open("ab") as fh:
        fh.write(b"2}\n")
    assert t.read().lines == [b'{"b":2}']
    assert t.read().lines == []


def test_split_on_newline_only(tmp_path: Path) -> None:
    p = tmp_path / "s.jsonl"
    p.write_bytes('{"t":"a\u2028b\rc"}\n'.encode())
    assert Tailer(str(p)).read().lines == ['{"t":"a\u2028b\rc"}'.encode()]


def test_shrink_and_new_inode_reread_from_zero(tmp_path: Path) -> None:
    p = tmp_path / "s.jsonl"
    p.write_bytes(b"1\n2\n3\n")
    t = Tailer(str(p))
    assert len(t.read().lines) == 3
    p.write_bytes(b"9\n")
    r = t.read()
    assert r.rewritten and r.lines == [b"9"]
    q = tmp_path / "other"
    q.write_bytes(b"7\n8\n")
    os.replace(q, p)
    r = t.read()
    assert r.rewritten and r.lines == [b"7", b"8"]


def test_deleted_file_is_missing(tmp_path: Path) -> None:
    p = tmp_path / "s.jsonl"
    p.write_bytes(b"1\n")
    t = Tailer(str(p))
    t.read()
    p.unlink()
    assert t.read().missing


def test_overlong_line_is_skipped_without_holding_it(tmp_path: Path) -> None:
    p = tmp_path / "s.jsonl"
    t = Tailer(str(p), max_line=1000)
    p.write_bytes(b"x" * 600)
    assert t.read().lines == []
    with p.open("ab") as fh:
        fh.write(b"y" * 3000)
    r = t.read()
    assert r.skipped_long == 1 and r.lines == [] and len(t._partial) == 0
    with p.open("ab") as fh:
        fh.write(b"zzz\nok\n")
    assert t.read().lines == [b"ok"]


def test_find_name_latest_bounded_and_in_the_head(tmp_path: Path) -> None:
    import json

    from notifier.watch.scanner import find_name

    def info(name: str) -> bytes:
        return (
            json.dumps({"type": "session_info", "id": "x", "name": name}, separators=(",", ":")) + "\n"
        ).encode()

    filler = b'{"type":"message","message":{"role":"toolResult","content":"' + b"x" * 5000 + b'"}}\n'
    p = tmp_path / "s.jsonl"
    p.write_bytes(
        b'{"type":"session","id":"s"}\n' + info("first") + filler * 300 + info("second") + filler * 3
    )
    assert find_name(str(p), p.stat().st_size) == "second"
    assert (
        find_name(str(p), p.stat().st_size, limit=10_000) == "first"
    )  # not in the last 10 KB: the head has it
    p.write_bytes(b'{"type":"session","id":"s"}\n' + info("gone") + info("") + filler)
    assert find_name(str(p), p.stat().st_size) is None  # cleared later
    nested = b'{"type":"message","message":{"details":{"type":"session_info","name":"fake"}}}\n'
    p.write_bytes(b'{"type":"session","id":"s"}\n' + info("real") + nested)
    assert find_name(str(p), p.stat().st_size) == "real"

