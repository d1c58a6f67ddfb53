"""The bytes before a tailer's offset, kept as read for the files read last (compared on the next
read without hashing) and as a digest for the others: either way the same rewrite check and the
same state for the scan cache; at most HOT files keep their bytes, whatever the number of files."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from notifier.core.board import Board
from notifier.sessions import HOT, BoardReader, EngineOptions
from notifier.tail import WINDOW, Tailer, digest


@pytest.mark.parametrize("settled", [False, True], ids=["bytes as read", "their digest"])
def test_a_rewrite_before_the_offset_is_seen_either_way(tmp_path: Path, settled: bool) -> None:
    p = tmp_path / "s.jsonl"
    line = b'{"n":%d,"pad":"' + b"x" * 300 + b'"}\n'
    p.write_bytes(b"".join(line % (i % 10) for i in range(40)))
    t = Tailer(str(p))
    assert len(t.read().lines) == 40
    state = t.state()
    if settled:
        t.keep_digest_only()
    assert t.state() == state  # (the digest of the same bytes)
    assert t.tail == digest(p.read_bytes()[-WINDOW:])
    with p.open("ab") as fh:
        fh.write(line % 1)
    assert t.read().lines == [(line % 1)[:-1]]  # (an append is no rewrite)
    if settled:
        t.keep_digest_only()
    size = p.stat().st_size
    with p.open("r+b") as fh:  # (in place: the same size and head, only the window differs)
        fh.seek(size - 200)
        fh.write(b"y" * 100)
    assert p.stat().st_size == size
    assert t.read().rewritten


def test_only_the_files_read_last_keep_their_bytes(tmp_path: Path) -> None:
    header = b'{"type":"session","version":3,"id":"s%d","cwd":"/p"}\n'
    paths = []
    for i in range(HOT + 8):
        folder = tmp_path / f"p{i}"
        folder.mkdir()
        (folder / "s.jsonl").write_bytes(header % i)
        paths.append(str(folder / "s.jsonl"))
    files = BoardReader(EngineOptions(roots=[str(tmp_path)], liveness=False), Board(liveness=False), time.time)
    files.scan(str(tmp_path), initial=True)
    for path in paths:
        with open(path, "ab") as fh:
            fh.write(b'{"type":"message","timestamp":"2026-12-07T02:00:00Z","message":{"role":"user"}}\n')
        files.read(path)
    kept = [path for path in paths if files.tailers[path]._seen is not None]
    assert kept == paths[-HOT:]
    for path in paths:  # (the state is the same for both kinds)
        tailer = files.tailers[path]
        assert tailer.tail == digest(Path(path).read_bytes()[tailer.tail_start : tailer.offset])
