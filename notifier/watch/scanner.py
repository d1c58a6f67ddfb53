"""Startup scan: find session files and read a bounded tail of each.

The cost grows with the number of files, not their bytes: the header line, then the last 16 KB,
going further back only until the window holds an entry that fixes what is pending (an assistant
or user message, a compaction, a branch summary, a shell command).
"""

from __future__ import annotations

import json
import os
import stat
from dataclasses import dataclass, field
from typing import Any

from notifier.watch.tail import WINDOW as SIG_BYTES  # what the tailer checks for a rewrite

FIRST_WINDOW = 16 << 10
HEADER_LIMIT = 1 << 20
NAME_SEARCH_LIMIT = 1 << 20
MAX_DEPTH = 4
_BOUNDARY_TYPES = frozenset({"compaction", "branch_summary"})
_BOUNDARY_ROLES = frozenset({"assistant", "user", "bashExecution"})
_MARKERS = (b'"role":"assistant"', b'"role":"user"', b'"compaction"', b'"branch_summary"', b'"bashExecution"')


def walk(root: str, max_depth: int = MAX_DEPTH) -> tuple[list[str], list[str]]:
    """``(session files, folders)`` below ``root``. Symlinked folders are followed at the first
    level only (as pi does) and never twice, so symlink loops end."""
    files: list[str] = []
    dirs: list[str] = []
    seen: set[tuple[int, int]] = set()

    def visit(path: str, depth: int) -> None:
        try:
            st = os.stat(path)
        except OSError:
            return
        key = (st.st_dev, st.st_ino)
        if key in seen:
            return
        seen.add(key)
        dirs.append(path)
        try:
            entries = list(os.scandir(path))
        except OSError:
            return
        for entry in entries:
            try:
                if entry.name.endswith(".jsonl") and entry.is_file():
                    files.append(entry.path)
                elif depth < max_depth and entry.is_dir(follow_symlinks=depth == 0):
                    if entry.is_symlink() and depth > 0:
                        continue
                    visit(entry.path, depth + 1)
            except OSError:
                continue

    visit(root, 0)
    return files, dirs


@dataclass
class Scan:
    header: bytes | None = None
    lines: list[bytes | dict[str, Any]] = field(default_factory=list)  # raw lines, or already parsed
    offset: int = 0
    ident: tuple[int, int] | None = None
    partial: bytes = b""
    window_start: int = 0  # the first byte of the lines returned: older entries were not read
    sig: bytes = b""  # the last bytes read, for the tailer's rewrite check
    error: OSError | None = None


def _parse_boundary(line: bytes) -> dict[str, Any] | None:
    """The parsed entry if ``line`` fixes what is pending.

    A cheap substring test on the line's start comes first (pi writes ``type`` and the message
    ``role`` near the start). Missing a boundary is safe: the scan then reads further back."""
    prefix = line[:1024]
    if not any(m in prefix for m in _MARKERS):
        return None
    try:
        entry: Any = json.loads(line.decode("utf-8"))
    except ValueError:
        return None
    if not isinstance(entry, dict):
        return None
    if entry.get("type") in _BOUNDARY_TYPES:
        return entry
    message = entry.get("message")
    if (
        entry.get("type") == "message"
        and isinstance(message, dict)
        and message.get("role") in _BOUNDARY_ROLES
    ):
        return entry
    return None


def read_bounded(path: str, first_window: int = FIRST_WINDOW, max_line: int = 32 << 20) -> Scan:
    scan = Scan()
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_BINARY", 0))
    except OSError as exc:
        scan.error = exc
        return scan
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            return scan
        size = st.st_size
        scan.ident = (st.st_dev, st.st_ino)
        head = b""
        nl = -1
        for limit in (4 << 10, 64 << 10, HEADER_LIMIT):
            head = os.pread(fd, min(size, limit), 0)
            nl = head.find(b"\n")
            if nl >= 0 or len(head) >= size:
                break
        if nl < 0:
            # No complete first line yet: the tailer picks it up when its newline arrives.
            scan.offset = size
            if size <= HEADER_LIMIT:
                scan.partial = head
                scan.sig = head[-SIG_BYTES:]
            return scan  # else an absurd first line: not a pi session; follow new data only
        header_end = nl + 1
        scan.header = head[:nl]
        window = first_window
        while True:
            start = max(header_end, size - window)
            data = os.pread(fd, size - start, start) if size > start else b""
            at_start = start <= header_end
            items: list[bytes | dict[str, Any]] = []
            end = data.rfind(b"\n")
            partial = data[end + 1 :] if end >= 0 else data
            found = False
            pos = end
            first = end + 1  # where the lines we keep begin (relative to data)
            while pos >= 0:
                prev = data.rfind(b"\n", 0, pos)
                if prev < 0 and not at_start:
                    break  # the first piece may be the cut end of a longer line
                piece = data[prev + 1 : pos]
                first = prev + 1
                if len(piece) <= max_line:
                    entry = _parse_boundary(piece)
                    items.append(piece if entry is None else entry)
                    if entry is not None:
                        found = True
                        break
                pos = prev
            if found or at_start:
                break
            window *= 4
        items.reverse()
        scan.lines = items
        scan.partial = partial if len(partial) <= max_line else b""
        scan.offset = size
        scan.window_start = start + first  # nothing before this byte was read as entries
        scan.sig = data[-SIG_BYTES:] if data else head[-SIG_BYTES:]
    except OSError as exc:
        scan.error = exc
    finally:
        os.close(fd)
    return scan


def _last_name(block: bytes, cut_at_start: bool) -> tuple[bool, str | None]:
    """(found, name) of the last ``session_info`` entry in ``block``."""
    needle = b'"type":"session_info"'
    end = len(block)
    while True:
        hit = block.rfind(needle, 0, end)
        if hit < 0:
            return False, None
        start = block.rfind(b"\n", 0, hit) + 1
        stop = block.find(b"\n", hit)
        end = hit
        if start == 0 and cut_at_start:
            continue  # the line began before this block
        try:
            entry = json.loads(block[start : stop if stop >= 0 else len(block)])
        except ValueError:
            continue
        if isinstance(entry, dict) and entry.get("type") == "session_info":
            name = entry.get("name")
            return True, name if isinstance(name, str) and name else None


def find_name(path: str, before: int, limit: int = NAME_SEARCH_LIMIT, head: int = 64 << 10) -> str | None:
    """The latest ``session_info`` name written before byte ``before``: searched in the last
    ``limit`` bytes before it, then near the start (pi writes ``--name`` in its first flush).
    Bounded, so the cost does not grow with the file."""
    try:
        with open(path, "rb") as fh:
            start = max(0, before - limit)
            fh.seek(start)
            found, name = _last_name(fh.read(before - start), cut_at_start=start > 0)
            if found or start == 0:
                return name
            fh.seek(0)
            return _last_name(fh.read(min(head, start)), cut_at_start=False)[1]
    except OSError:
        return None
