"""Start-up scan: which files are sessions, and reading them without blocking or unbounded memory.

One rule decides what a session file is, for the start-up scan, ``status`` and live watching
alike (:func:`is_session_name`, :func:`walk`): a ``*.jsonl`` regular file (or a symlink to one)
anywhere below a sessions root, reached through real folders (watchdog does not follow symlinked
folders, so neither does the walk). A file reached by two names (hard links, a symlink next to its
target) is one session: the walk keeps the first name in sorted order.

Nothing here blocks: files are opened with ``O_NONBLOCK`` and used only if ``fstat`` says they
are regular (a FIFO named ``*.jsonl`` would otherwise hang ``open``/``read`` forever).

Reading is bounded in memory whatever the file's size: :func:`backward_lines` hands out the lines
of a byte range newest first, one block at a time; the caller stops as soon as the newest entries
settle the session's state (see :mod:`notifier.core.settle`).
"""

from __future__ import annotations

import errno
import json
import os
import stat
from collections.abc import Iterator
from dataclasses import dataclass, field

FIRST_WINDOW = 16 << 10
CHUNK = 64 << 10  # below glibc's mmap threshold: blocks are reused, never churned
HEADER_LIMIT = 1 << 20
NAME_SEARCH_LIMIT = 1 << 20
WINDOW_START = 1 << 11  # bytes searched for markers first, from the end of a block
# A marker starting with a backslash (``\\u00``) is looked for only where a backslash is: a
# one-byte search (memrchr) is ~50× faster than the two-way search for a needle of that shape.
_BACKSLASH = ord("\\")
SESSION_SUFFIX = ".jsonl"
_OPEN_FLAGS = (
    os.O_RDONLY
    | getattr(os, "O_NONBLOCK", 0)
    | getattr(os, "O_NOCTTY", 0)
    | getattr(os, "O_CLOEXEC", 0)
    | getattr(os, "O_BINARY", 0)
)


def is_session_name(path: str) -> bool:
    """The name part of the rule (live events are filtered with it before any ``stat``)."""
    return path.endswith(SESSION_SUFFIX)


def kind_of(mode: int) -> str:
    """What a non-regular file is, for the one log line that says it was skipped."""
    if stat.S_ISFIFO(mode):
        return "a FIFO"
    if stat.S_ISSOCK(mode):
        return "a socket"
    if stat.S_ISCHR(mode) or stat.S_ISBLK(mode):
        return "a device"
    if stat.S_ISDIR(mode):
        return "a folder"
    return "not a regular file"


class NotRegularFile(OSError):
    """A session-named path that is a FIFO, socket, device …: never read."""

    def __init__(self, kind: str) -> None:
        super().__init__(errno.EINVAL, f"{kind}, not a regular file")
        self.kind = kind


def open_regular(path: str) -> tuple[int, os.stat_result]:
    """``(fd, stat)`` of a regular file, opened without blocking. Raises :class:`NotRegularFile`
    for anything else (after closing it) and ``OSError`` when it cannot be opened."""
    try:
        fd = os.open(path, _OPEN_FLAGS)
    except OSError as exc:
        if exc.errno == errno.ENXIO:  # a socket (or a FIFO without writer on some systems)
            try:
                raise NotRegularFile(kind_of(os.stat(path).st_mode)) from exc
            except OSError:
                pass
        raise
    try:
        st = os.fstat(fd)
    except OSError:
        os.close(fd)
        raise
    if not stat.S_ISREG(st.st_mode):
        os.close(fd)
        raise NotRegularFile(kind_of(st.st_mode))
    return fd, st


@dataclass
class Tree:
    files: list[str] = field(default_factory=list)  # session files, one name per (device, inode)
    dirs: list[str] = field(default_factory=list)  # real folders, the root first
    skipped: list[tuple[str, str]] = field(default_factory=list)  # (path, kind): session names not read
    idents: dict[tuple[int, int], str] = field(default_factory=dict)  # (device, inode) → the name kept
    stats: dict[str, os.stat_result] = field(default_factory=dict)  # each file's stat, taken by the walk


def walk_tree(root: str) -> Tree:
    """Every session file below ``root`` (any depth; iterative, so no recursion limit)."""
    tree = Tree()
    seen_dirs: set[tuple[int, int]] = set()
    try:
        st = os.stat(root)
    except OSError:
        return tree
    if not stat.S_ISDIR(st.st_mode):
        return tree
    seen_dirs.add((st.st_dev, st.st_ino))
    stack = [root]
    while stack:
        folder = stack.pop()
        tree.dirs.append(folder)
        try:
            with os.scandir(folder) as it:
                entries = sorted(it, key=lambda e: e.name)
        except OSError:
            continue
        subdirs: list[str] = []
        for entry in entries:
            try:
                if entry.is_dir(follow_symlinks=False):
                    est = entry.stat(follow_symlinks=False)
                    key = (est.st_dev, est.st_ino)
                    if key not in seen_dirs:
                        seen_dirs.add(key)
                        subdirs.append(entry.path)
                    continue
                if not is_session_name(entry.name):
                    continue
                if entry.is_file(follow_symlinks=False):
                    # st_dev is not in the directory entry: a stat per file (cheap, cached inode)
                    fst = entry.stat(follow_symlinks=False)
                elif entry.is_symlink():
                    fst = os.stat(entry.path)  # where it points decides
                    if not stat.S_ISREG(fst.st_mode):
                        if not stat.S_ISDIR(fst.st_mode):
                            tree.skipped.append((entry.path, kind_of(fst.st_mode)))
                        continue
                else:
                    tree.skipped.append((entry.path, kind_of(entry.stat(follow_symlinks=False).st_mode)))
                    continue
            except OSError:
                continue  # vanished or unreadable: the live watcher sees it if it comes back
            ident = (fst.st_dev, fst.st_ino)
            if ident in tree.idents:
                continue  # another name of a file already found
            tree.idents[ident] = entry.path
            tree.stats[entry.path] = fst
            tree.files.append(entry.path)
        stack.extend(reversed(subdirs))  # depth first, in name order
    return tree


def walk(root: str) -> tuple[list[str], list[str]]:
    """``(session files, folders)`` below ``root`` (see :func:`walk_tree`)."""
    tree = walk_tree(root)
    return tree.files, tree.dirs


def read_head(fd: int, size: int) -> tuple[bytes, int]:
    """``(first line without its newline, where the next line starts)``; ``(head, -1)`` if the
    first ``HEADER_LIMIT`` bytes hold no newline (``head``: what was read, for an unfinished line)."""
    head = b""
    for limit in (4 << 10, 64 << 10, HEADER_LIMIT):
        head = os.pread(fd, min(size, limit), 0)
        nl = head.find(b"\n")
        if nl >= 0:
            return head[:nl], nl + 1
        if len(head) >= size:
            break
    return head, -1


@dataclass
class Tail:
    end: int  # just after the last newline: complete lines end here
    partial: bytes | None  # the unfinished line after ``end`` (None: longer than max_line)
    block: bytes  # the bytes just before ``end``, already read (handed to backward_lines)


def find_end(fd: int, lo: int, size: int, max_line: int, first: int = FIRST_WINDOW) -> Tail:
    """Where the complete lines of ``[lo, size)`` end, reading backwards from ``size``; memory is
    bounded by ``max_line`` however long the unfinished last line is."""
    pos = size
    pieces: list[bytes] = []
    held = 0
    step = first
    while pos > lo:
        n = min(step, pos - lo)
        pos -= n
        step = min(step * 2, CHUNK)
        block = os.pread(fd, n, pos)
        nl = block.rfind(b"\n")
        if nl >= 0:
            rest = block[nl + 1 :]
            partial = None if held + len(rest) > max_line else b"".join([rest, *reversed(pieces)])
            return Tail(pos + nl + 1, partial, block[: nl + 1])
        held += len(block)
        if held <= max_line:
            pieces.append(block)
        else:
            pieces.clear()
    return Tail(lo, None if held > max_line else b"".join(reversed(pieces)), b"")


def backward_lines(
    fd: int, lo: int, hi: int, max_line: int, first: int = FIRST_WINDOW, block: bytes = b""
) -> Iterator[tuple[int, bytes]]:
    """``(offset, line)`` for each line of the bytes ``[lo, hi)``, newest first, where ``lo`` is
    a line start and ``hi`` is just after a newline. ``block``: bytes ending at ``hi`` that were
    read already. Memory stays within one block plus one line (a line longer than ``max_line`` is
    skipped, not assembled). Stops early if the file shrinks."""
    given = block[max(0, len(block) - (hi - lo)) :]
    end = hi - 1  # the final newline ends the last line
    carry: list[bytes] = []  # the end of a line whose start lies further back (newest piece first)
    carry_len = 0
    skipping = False
    pos = end
    step = first
    while pos > lo:
        if given:
            block, given = given[:-1], b""  # without the newline at hi - 1
            n = len(block)
            pos -= n
        else:
            n = min(step, pos - lo)
            pos -= n
            step = min(step * 2, CHUNK)
            block = os.pread(fd, n, pos)
            if len(block) != n:
                return  # the file shrank under us: the tailer notices the rewrite
        j = n
        k = block.rfind(b"\n", 0, j)
        while k >= 0:
            if skipping:
                skipping = False
            elif carry:
                if carry_len + (j - k - 1) <= max_line:
                    carry.append(block[k + 1 : j])
                    yield pos + k + 1, b"".join(reversed(carry))
            elif j - k - 1 <= max_line:
                yield pos + k + 1, block[k + 1 : j]
            carry.clear()
            carry_len = 0
            j = k
            k = block.rfind(b"\n", 0, j)
        if not skipping and j:
            carry.append(block[:j] if j < n else block)
            carry_len += j
            if carry_len > max_line:
                carry.clear()
                carry_len = 0
                skipping = True
    if not skipping and lo <= end:
        yield lo, b"".join(reversed(carry))


def forward_lines(fd: int, lo: int, hi: int, max_line: int) -> Iterator[tuple[int, bytes]]:
    """``(offset, line)`` for each line of ``[lo, hi)`` (``hi`` just after a newline), oldest
    first, in bounded memory (lines longer than ``max_line`` are skipped)."""
    pos = lo
    start = lo
    carry = bytearray()
    skipping = False
    while pos < hi:
        block = os.pread(fd, min(CHUNK, hi - pos), pos)
        if not block:
            return
        i = 0
        while True:
            nl = block.find(b"\n", i)
            if nl < 0:
                if not skipping:
                    if len(carry) + len(block) - i > max_line:
                        carry.clear()
                        skipping = True
                    else:
                        carry += block[i:]
                break
            if not skipping and len(carry) + nl - i <= max_line:
                carry += block[i:nl]
                yield start, bytes(carry)
            carry.clear()
            skipping = False
            i = nl + 1
            start = pos + i
        pos += len(block)


# A line can be a ``session_info`` entry only if it spells the type plainly or with a ``\\u00``
# escape (see notifier.pi.lines, which this layer does not import).
_NAME_NEEDLES = (b'"session_info"', b"\\u00")


def _last_name(block: bytes, cut_at_start: bool) -> tuple[bool, str | None]:
    """(found, name) of the last ``session_info`` entry in ``block``."""
    end = len(block)
    # (the search for an escape, slow for a needle of that shape, only where a backslash is)
    needles = _NAME_NEEDLES if b"\\" in block else _NAME_NEEDLES[:1]
    while True:
        hit = max(block.rfind(needle, 0, end) for needle in needles)
        if hit < 0:
            return False, None
        start = block.rfind(b"\n", 0, hit) + 1
        stop = block.find(b"\n", hit)
        end = start
        if start == 0 and cut_at_start:
            return False, None  # the line began before this block
        try:
            entry = json.loads(block[start : stop if stop >= 0 else len(block)])
        except (ValueError, RecursionError):
            continue
        if isinstance(entry, dict) and entry.get("type") == "session_info":
            name = entry.get("name")
            return True, name if isinstance(name, str) and name else None


def find_name(path: str, before: int, limit: int = NAME_SEARCH_LIMIT, head: int = 64 << 10) -> str | None:
    """The latest ``session_info`` name written before byte ``before``: searched in the last
    ``limit`` bytes before it, then near the start (pi writes ``--name`` in its first flush).
    Bounded, so the cost does not grow with the file."""
    try:
        fd, _ = open_regular(path)
    except OSError:
        return None
    try:
        start = max(0, before - limit)
        found, name = _last_name(os.pread(fd, before - start, start), cut_at_start=start > 0)
        if found or start == 0:
            return name
        return _last_name(os.pread(fd, min(head, start), 0), cut_at_start=False)[1]
    except OSError:
        return None
    finally:
        os.close(fd)


def backward_matching_lines(
    fd: int,
    lo: int,
    hi: int,
    max_line: int,
    markers: tuple[bytes, ...],
    first: int = FIRST_WINDOW,
    block: bytes = b"",
    window: int = WINDOW_START,
) -> Iterator[tuple[int, bytes]]:
    """Like :func:`backward_lines`, but only the lines holding one of ``markers`` (none holds a
    newline): the lines in between are passed over in bulk with ``rfind`` (no per-line work), so
    the cost of a tail of small irrelevant entries is a few C scans per block. Within a block
    the markers are looked for from its end in windows of ``window`` bytes and doubling, so the
    cost is the distance to the lines that matter, not the size of the block."""
    given = block[max(0, len(block) - (hi - lo)) :]
    carry: list[bytes] = []  # a line that began in an earlier block (newest piece first)
    carry_len = 0
    skipping = False
    continuing = False  # the piece at the end of the next block continues a line (carry/skipping)
    pos = hi - 1  # the final newline ends the last line
    step = first
    while pos > lo:
        if given:
            data, given = given[:-1], b""
            n = len(data)
            pos -= n
        else:
            n = min(step, pos - lo)
            pos -= n
            step = min(step * 2, CHUNK)
            data = os.pread(fd, n, pos)
            if len(data) != n:
                return
        j = n
        if continuing:
            k = data.rfind(b"\n", 0, j)
            if k < 0:
                if not skipping:
                    carry.append(data)
                    carry_len += n
                    if carry_len > max_line:
                        carry.clear()
                        carry_len = 0
                        skipping = True
                continue
            if not skipping and carry_len + j - k - 1 <= max_line:
                carry.append(data[k + 1 : j])
                line = b"".join(reversed(carry))
                if any(m in line for m in markers):
                    yield pos + k + 1, line
            carry.clear()
            carry_len = 0
            skipping = continuing = False
            j = k
        first_nl = data.find(b"\n", 0, j)
        if first_nl >= 0:
            low = first_nl + 1
            # ``last[i]``: the last occurrence of ``markers[i]`` in ``[floor, j)`` (-1: none there)
            floor = j
            last = [-1] * len(markers)
            width = window
            while True:
                hit = max(last)
                if hit < 0:
                    if floor <= low:
                        break
                    below = max(low, floor - width)
                    width <<= 1
                    for i, m in enumerate(markers):  # an occurrence across ``floor`` counts too
                        top = min(j, floor + len(m) - 1)
                        if m[0] != _BACKSLASH or data.rfind(b"\\", below, top) >= 0:
                            last[i] = data.rfind(m, below, top)
                    floor = below
                    continue
                s = data.rfind(b"\n", first_nl, hit) + 1
                e = data.find(b"\n", hit, j)
                if e < 0:
                    e = j
                if e - s <= max_line:
                    yield pos + s, data[s:e]
                j = s - 1
                if j < low:
                    break
                floor = min(floor, j)
                for i, at in enumerate(last):
                    if at >= s:
                        m = markers[i]
                        if m[0] != _BACKSLASH or data.rfind(b"\\", floor, j) >= 0:
                            last[i] = data.rfind(m, floor, j)
                        else:
                            last[i] = -1
            j = first_nl
        # the piece before the first newline belongs to a line that may begin further back
        if j > max_line:
            skipping = True
        else:
            carry.append(data[:j] if j < n else data)
            carry_len = j
        continuing = True
    if continuing and not skipping:
        line = b"".join(reversed(carry))
        if any(m in line for m in markers):
            yield lo, line
