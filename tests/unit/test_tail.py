from __future__ import annotations

import os
from pathlib import Path

import pytest

from notifier.tail import LongLine, Tailer


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
    assert r.rewritten and r.lines == [] and t.offset == 0  # the caller decides how to re-read
    assert t.read().lines == [b"9"]
    q = tmp_path / "other"
    q.write_bytes(b"7\n8\n")
    os.replace(q, p)
    r = t.read()
    assert r.rewritten and r.lines == []
    assert t.read().lines == [b"7", b"8"]


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
    assert [type(line) for line in r.lines].count(LongLine) == 1 and t.partial == b""
    assert r.lines == [b"x" * 600 + b"y" * 400] and type(r.lines[0]) is LongLine  # (its first bytes)
    with p.open("ab") as fh:
        fh.write(b"zzz\nok\n")
    assert t.read().lines == [b"ok"]


def test_find_name_latest_bounded_and_in_the_head(tmp_path: Path) -> None:
    import json

    from notifier.tail import name_before

    def find_name(path: str, before: int, limit: int = 1 << 20) -> str | None:
        with open(path, "rb") as fh:
            return name_before(fh.fileno(), before, limit)

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


def _rewrite_in_place(p: Path, new: bytes) -> None:
    """Overwrite the file's bytes without truncating it (same inode, no shrink)."""
    with p.open("r+b") as fh:
        fh.write(new)


def test_rewrite_in_place_keeping_the_bytes_before_the_offset(tmp_path: Path) -> None:
    header = b'{"type":"session","version":3,"id":"s","cwd":"/p"}\n'
    tail = b'{"type":"label","id":"x","label":"' + b"k" * 200 + b'"}\n'
    p = tmp_path / "s.jsonl"
    p.write_bytes(header + b'{"n":1}\n' * 50 + tail)
    t = Tailer(str(p))
    assert len(t.read().lines) == 52
    # Same size, same header, same last 200+ bytes: only the middle differs.
    _rewrite_in_place(p, header + b'{"n":2}\n' * 50 + tail)
    assert t.read().rewritten


def test_rewrite_that_grows_and_keeps_a_long_window_but_changes_the_header(tmp_path: Path) -> None:
    p = tmp_path / "s.jsonl"
    body = b"".join(b'{"i":%05d}\n' % i for i in range(2000))  # 24 KB
    p.write_bytes(b'{"type":"session","id":"s"}\n' + body)
    t = Tailer(str(p))
    t.read()
    # v2 -> v3 migration style: the header changes, the end stays byte-identical, the file grows
    p.write_bytes(b'{"type":"session","version":3,"id":"s"}\n' + body + b'{"new":1}\n')
    assert t.read().rewritten


def test_appends_are_not_rewrites_whatever_the_chunking(tmp_path: Path) -> None:
    p = tmp_path / "s.jsonl"
    t = Tailer(str(p))
    p.write_bytes(b"")
    seen: list[bytes] = []
    data = b"".join(b'{"i":%d,"pad":"%s"}\n' % (i, b"x" * (i * 37 % 9000)) for i in range(300))
    pos = 0
    step = 1
    while pos < len(data):
        with p.open("ab") as fh:
            fh.write(data[pos : pos + step])
        pos += step
        step = step * 3 % 7001 + 1
        r = t.read()
        assert not r.rewritten
        seen += r.lines
    assert seen == data.split(b"\n")[:-1]


def test_a_touch_without_a_change_is_not_a_rewrite(tmp_path: Path) -> None:
    p = tmp_path / "s.jsonl"
    p.write_bytes(b"1\n" * 5000)
    t = Tailer(str(p))
    t.read()
    os.utime(p, ns=(1, 1))
    r = t.read()
    assert not r.rewritten and r.lines == []


def test_seek_with_the_scanned_window_notices_a_rewrite(tmp_path: Path) -> None:
    p = tmp_path / "s.jsonl"
    data = b'{"type":"session","id":"s"}\n' + b'{"a":"' + b"y" * 9000 + b'"}\n'
    p.write_bytes(data)
    st = p.stat()
    t = Tailer(str(p))
    t.seek(len(data), (st.st_dev, st.st_ino), b"", data[-4096:], head=data[:27])
    assert t.read().lines == [] and not t.read().rewritten
    _rewrite_in_place(p, b'{"type":"session","id":"t"}')  # a new header, nothing else
    assert t.read().rewritten


def test_state_gives_the_same_digests_whether_the_bytes_were_read_here_or_handed_over(tmp_path: Path) -> None:
    p = tmp_path / "s.jsonl"
    data = b'{"type":"session","id":"s"}\n' + b'{"a":"' + b"y" * 9000 + b'"}\n'
    p.write_bytes(data)
    st = p.stat()
    ident = (st.st_dev, st.st_ino)
    read = Tailer(str(p))
    assert len(read.read().lines) == 2
    seeked = Tailer(str(p))
    seeked.seek(len(data), ident, b"", data[-4096:], head=data[:1024])
    assert read.state() == seeked.state()
    restored = Tailer(str(p))
    restored.restore(read.state(), ident)  # (the scan cache): continues exactly there
    with p.open("ab") as fh:
        fh.write(b'{"b":1}\n')
    assert restored.read().lines == [b'{"b":1}'] and read.read().lines == [b'{"b":1}']
    _rewrite_in_place(p, b'{"type":"session","id":"t"}')  # the head changed, nothing else
    assert restored.read().rewritten and read.read().rewritten


def test_a_fifo_is_never_opened_blocking(tmp_path: Path) -> None:
    import stat as st_mod

    p = tmp_path / "f.jsonl"
    os.mkfifo(p)
    r = Tailer(str(p)).read()  # would block forever without O_NONBLOCK
    assert r.special and r.lines == [] and st_mod.S_ISFIFO(p.stat().st_mode)
    d = tmp_path / "d.jsonl"
    d.mkdir()
    assert Tailer(str(d)).read().special


def test_a_huge_append_is_read_in_budgeted_steps(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from notifier import tail

    monkeypatch.setattr(tail, "READ_BUDGET", 1000)
    monkeypatch.setattr(tail, "CHUNK", 300)
    p = tmp_path / "s.jsonl"
    lines = [b"%04d" % i for i in range(1000)]
    p.write_bytes(b"\n".join(lines) + b"\n")
    t = Tailer(str(p))
    got: list[bytes] = []
    calls = 0
    while True:
        r = t.read()
        calls += 1
        got += r.lines
        assert not r.rewritten
        if not r.more:
            break
    assert got == lines and calls >= 5


def test_a_walk_of_the_folders_only_looks_at_no_file(tmp_path: Path) -> None:
    """What the watch limit asks for (the folders below a root) is the walk's folders, found
    without looking at a file: no stat of each session file, none listed or skipped."""
    from notifier.tail import walk_tree

    for folder in ("--a--", "--b--/sub", "--c--"):
        (tmp_path / folder).mkdir(parents=True)
        (tmp_path / folder / "s.jsonl").write_text("{}\n")
    os.mkfifo(tmp_path / "--c--" / "fifo.jsonl")
    (tmp_path / "--a--" / "link").symlink_to(tmp_path / "--b--")  # (a symlinked folder is not walked)
    whole, folders = walk_tree(str(tmp_path)), walk_tree(str(tmp_path), files=False)
    assert len(whole.files) == 3 and whole.skipped  # (the FIFO, said by the full walk)
    assert folders.dirs == whole.dirs == [str(tmp_path / f) for f in ("", "--a--", "--b--", "--b--/sub", "--c--")]
    assert folders.files == {} and folders.skipped == []
