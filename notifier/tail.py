"""The one way to read a pi session file, in bounded memory whatever it holds.

Only regular files are opened, never in a way that can block (:func:`open_regular`). One splitter
(:class:`Lines`) splits on b"\\n" only (pi does not escape U+2028), holds an unfinished last line
back, and gives a line longer than ``max_line`` as a :class:`LongLine` of its first bytes.

Following (:class:`Tailer`): an offset, the partial line, and digests of the file's first bytes
and of the ``WINDOW`` bytes before the offset. pi appends, but rewrites old files on open and
``/resume`` can replace one: a new inode, a shrink or another digest is a rewrite (read again).

The start-up read (:func:`startup_read`): from the end, in a window that doubles, the lines with a
marker (:data:`notifier.pi.parse.MARKERS`) newest first until they settle the state, replayed
forward; past a cap, or without a header, the file read forward. Bounded either way, and equal
to a full read. A name set before that is looked up further back, bounded (:func:`look_up_name`).

Which files are sessions (:func:`walk_tree`): a ``*.jsonl`` regular file, or a symlink to one,
below a root through real folders (as watchdog watches); a file with two names is one session.
They are read into a board by :class:`notifier.sessions.BoardReader`."""

from __future__ import annotations

import errno
import hashlib
import json
import logging
import operator
import os
import re
import stat
from collections import deque
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from functools import reduce
from typing import Any

from notifier.core import codec
from notifier.core.reducer import Event, Header, Renamed, SessionReducer, Suffix
from notifier.core.text import clean
from notifier.pi.parse import (
    ESCAPE,
    MARKERS,
    may_have_events,
)

log = logging.getLogger(__name__)

CHUNK = 1 << 20  # bytes per read while following
BLOCK = 64 << 10  # bytes per read of the start-up read: below glibc's mmap threshold, blocks are reused
WINDOW = 4096  # bytes before the offset checked for a rewrite on every change
HEAD = 1024  # the first bytes of the file (pi's header line), checked likewise
HEADER_LIMIT = 1 << 20  # a first line longer than this is no pi header
DEFAULT_MAX_LINE = 32 << 20
SESSION_SUFFIX = ".jsonl"
READ_BUDGET = 64 << 20  # bytes read per call; the rest on the next call (``more``)
SLACK = 16 << 10  # read beyond the size fstat gave: what was appended since comes in the same pread
LONG_HEAD = 64 << 10  # the first bytes of a line too long to read, kept for what they say
FIRST_WINDOW = 16 << 10
STEP = 1 << 20  # bytes the start-up window grows by at most at a time
CAP = 20_000  # entries taken from the end that do not settle the state: past them, read forward
KEEP_LINES = 10_000  # a rewrite of a file replayed forward: the newest lines' events kept at most
NAME_SEARCH_LIMIT = 1 << 20
_FLAGS = ("O_NONBLOCK", "O_NOCTTY", "O_CLOEXEC", "O_BINARY")  # (where this system has them)
_OPEN_FLAGS = reduce(operator.or_, (getattr(os, name, 0) for name in _FLAGS), os.O_RDONLY)
Events = Callable[[bytes], list[Event]]
Ident = tuple[int, int]  # (device, inode)


_KINDS = {
    stat.S_IFIFO: "a FIFO",
    stat.S_IFSOCK: "a socket",
    stat.S_IFCHR: "a device",
    stat.S_IFBLK: "a device",
    stat.S_IFDIR: "a folder",
}


def kind_of(mode: int) -> str:
    """What a non-regular file is, for the one log line that says it was skipped."""
    return _KINDS.get(stat.S_IFMT(mode), "not a regular file")


class NotRegularFile(OSError):
    """A session-named path that is a FIFO, socket, device …: never read."""

    def __init__(self, kind: str) -> None:
        super().__init__(errno.EINVAL, f"{kind}, not a regular file")
        self.kind = kind


def open_regular(path: str) -> tuple[int, os.stat_result]:
    """``(fd, stat)`` of a regular file, opened without blocking (else :class:`NotRegularFile`)."""
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
        if not stat.S_ISREG(st.st_mode):
            raise NotRegularFile(kind_of(st.st_mode))
    except OSError:
        os.close(fd)
        raise
    return fd, st


def digest(data: bytes | memoryview) -> bytes:
    return hashlib.sha256(data).digest()[:16]  # (OpenSSL: about twice as fast as blake2b here)


_EMPTY = digest(b"")
AT_START: dict[str, Any] = {"offset": 0, "partial": b"", "head_len": 0, "head": _EMPTY, "tail_start": 0, "tail": _EMPTY}


class LongLine(bytes):
    """The first bytes of a line longer than ``max_line`` (:func:`~notifier.pi.parse.too_large_events`)."""


def long_head(data: bytes, max_line: int) -> bytes:
    """What a :class:`LongLine` keeps of a line that begins with ``data``."""
    return data[: min(LONG_HEAD, max_line)]


class Lines:
    """Splits bytes into lines as they come (the unfinished last one held back); a line longer
    than ``max_line`` comes as its :class:`LongLine` and the rest of it is dropped."""

    __slots__ = ("max_line", "partial", "skipping")

    def __init__(self, max_line: int) -> None:
        self.max_line = max_line
        self.reset()

    def reset(self, partial: bytes = b"") -> None:
        self.partial = bytearray(partial)
        self.skipping = False  # inside a line that is too long, dropping bytes up to its newline

    def feed(self, chunk: bytes, out: list[bytes], start: int = 0) -> None:
        """Append the complete lines of ``chunk[start:]`` to ``out``."""
        while True:
            nl = chunk.find(b"\n", start)
            piece = chunk[start:] if nl < 0 else chunk[start:nl]
            if self.skipping:
                pass
            elif len(self.partial) + len(piece) > self.max_line:
                out.append(LongLine(long_head(bytes(self.partial[:LONG_HEAD]) + piece[:LONG_HEAD], self.max_line)))
                self.partial.clear()
                self.skipping = True
            elif nl < 0:
                self.partial += piece
            elif self.partial:
                self.partial += piece
                out.append(bytes(self.partial))
                self.partial.clear()
            else:
                out.append(piece)
            if nl < 0:
                return
            self.skipping = False
            start = nl + 1


@dataclass(slots=True)
class ReadResult:
    """What one :meth:`Tailer.read` found."""

    lines: list[bytes] = field(default_factory=list)
    rewritten: bool = False  # the file was truncated or replaced: the caller must rebuild its state
    missing: bool = False  # the file does not exist (any more)
    special: bool = False  # not a regular file (FIFO, device, folder…): not read
    more: bool = False  # the read budget ran out before the end of the file: read again
    error: OSError | None = None


class Tailer:
    """Follows one file from ``offset``; digests of its first ``head_len`` bytes and of
    ``[tail_start, offset)`` tell a rewrite."""

    def __init__(
        self, path: str, max_line: int = DEFAULT_MAX_LINE, state: dict[str, Any] = AT_START, ident: Ident | None = None
    ) -> None:
        """A tailer at the start of the file, or at ``state`` (:meth:`restore`'s: the scan cache's)."""
        self.path = path
        self.max_line = max_line
        self.window_start = 0  # where the startup scan began reading (older bytes were never read)
        self.name_checked = False  # the session name was looked for in the unread part
        self._lines = Lines(max_line)
        self._tail: bytes = _EMPTY  # the digest of the bytes [tail_start, offset)
        self._seen: bytes | None = None  # those bytes as read (then their digest is made when asked)
        self.restore(state, ident)

    def seek(self, offset: int, ident: Ident | None, partial: bytes = b"", sig: bytes = b"", head: bytes = b"") -> None:
        """Continue from ``offset`` (after the startup scan read a bounded tail). ``sig`` are
        the bytes just before ``offset`` and ``head`` the file's first bytes, as they were read:
        the longer they are (up to ``WINDOW`` and ``HEAD``), the surer the rewrite check."""
        window, head = sig[-WINDOW:] if offset >= len(sig) else b"", head[:HEAD]
        position = {"offset": offset, "partial": partial, "head_len": len(head), "head": digest(head)}
        self.restore({**position, "tail_start": offset - len(window), "tail": digest(window)}, ident)

    @property
    def partial(self) -> bytes:
        """The unterminated tail held back (it waits for its newline)."""
        return bytes(self._lines.partial)

    @property
    def tail(self) -> bytes:
        """The digest of the bytes ``[tail_start, offset)`` as they were read."""
        return digest(self._seen) if self._seen is not None else self._tail

    def keep_digest_only(self) -> None:
        """Keep only the digest of the bytes before the offset (:meth:`_read_on` keeps them as
        they were read, to compare them without hashing on every read, until told so)."""
        if self._seen is not None:
            self._tail, self._seen = digest(self._seen), None

    def state(self) -> dict[str, Any]:
        """What :meth:`restore` needs to continue exactly here (for the scan cache): plain data."""
        names = ("offset", "head_len", "head", "tail_start", "tail")
        return {"partial": self.partial, **{name: getattr(self, name) for name in names}}

    def restore(self, state: dict[str, Any], ident: Ident | None) -> None:
        """The inverse of :meth:`state` (the caller validated the types)."""
        self.offset: int = state["offset"]
        self.ident = ident
        self._lines.reset(state["partial"])
        self.head_len: int = state["head_len"]
        self.head: bytes = state["head"]
        self.tail_start: int = state["tail_start"]
        self._tail, self._seen = state["tail"], None
        self._stamp: tuple[int, int, int] | None = None  # (size, mtime_ns, ctime_ns) at the last read

    def read(self) -> ReadResult:
        """What was appended since the last call (see :meth:`reading`)."""
        with self.reading() as (result, _):
            return result

    @contextmanager
    def reading(self) -> Iterator[tuple[ReadResult, int | None]]:
        """What was appended since the last call, and the file still open for more of it (``None``
        if not opened). After a rewrite only ``rewritten`` is set, the tailer back at 0."""
        result = ReadResult()
        try:
            fd, st = open_regular(self.path)
        except FileNotFoundError:
            result.missing = True
        except NotRegularFile:
            result.special = True
        except OSError as exc:
            result.error = exc
        else:
            try:
                self._read_open(fd, st, result)
                yield result, fd
            finally:
                os.close(fd)
            return
        yield result, None

    def _read_open(self, fd: int, st: os.stat_result, result: ReadResult) -> None:
        ident = (st.st_dev, st.st_ino)
        stamp = (st.st_size, st.st_mtime_ns, st.st_ctime_ns)
        if self.ident in (None, ident) and st.st_size >= self.offset:
            self.ident = ident
            if st.st_size == self.offset and stamp == self._stamp:
                return  # nothing changed since the last look
            try:
                if self._read_on(fd, st.st_size, result):
                    self._stamp = stamp if self.offset == st.st_size else None
                    return
            except OSError as exc:
                result.error = exc
                return
        result.rewritten = True
        self.restore(AT_START, ident)

    def _read_on(self, fd: int, size: int, result: ReadResult) -> bool:
        """``False`` if the head or the window differ (a rewrite); else read on, in chunks, to the
        end or the read budget (``more``). The window and what was appended (``SLACK`` past
        ``size``) come in one ``pread``; the new window is what was consumed, kept as read (its
        digest made only when asked: :meth:`keep_digest_only`)."""
        kept = self.offset - self.tail_start
        want = min(max(size - self.offset, 0) + SLACK, CHUNK, READ_BUDGET)
        data = os.pread(fd, kept + want, self.tail_start)
        seen = self._seen  # (the ``kept`` bytes as read last time, or only their digest)
        same = data.startswith(seen) if seen is not None else digest(memoryview(data)[:kept]) == self._tail
        if len(data) < kept or not same:
            return False
        if self.head_len and self.tail_start > 0 and digest(os.pread(fd, self.head_len, 0)) != self.head:
            return False
        budget = READ_BUDGET
        while len(data) > kept:  # data: the file's bytes from tail_start, the first ``kept`` read already
            got = len(data) - kept
            if self.tail_start == 0 and self.offset < HEAD:  # read from 0: the head is known
                self.head_len, self.head = min(len(data), HEAD), digest(data[:HEAD])
            self.offset += got
            self._lines.feed(data, result.lines, kept)
            window = data[-WINDOW:]
            self.tail_start, self._seen = self.offset - len(window), window
            budget -= got
            if budget <= 0:
                result.more = True
            if budget <= 0 or (got < want and self.offset >= size):  # (a short read ends the file)
                break
            want = min(CHUNK, budget)
            data, kept = window + os.pread(fd, want, self.offset), len(window)
        return True


def last_lines(path: str, limit: int) -> list[bytes]:
    """The lines in the last ``limit`` bytes of the session file ``path``, oldest first (the first
    may be cut short), read as every session file is: a regular file only, opened without
    blocking. Raises ``OSError``."""
    fd, st = open_regular(path)
    try:
        return os.pread(fd, min(st.st_size, limit), max(0, st.st_size - limit)).split(b"\n")
    finally:
        os.close(fd)


RESULT_TAIL = 8 << 20  # a toolResult is among a file's last lines: past 8 MB of later lines it is not looked for


def result_entry(path: str, call_id: str, limit: int = RESULT_TAIL) -> dict[str, Any] | None:
    """The entry of the toolResult pi wrote for ``call_id`` in the session file ``path``, the last
    one in its last ``limit`` bytes (its ``message`` a dict); ``None``: none there, or the file
    cannot be read. Each line goes through the one bounded parse."""
    # (as JSON.stringify writes it: UTF-8, a lone surrogate as its \u escape)
    quoted = json.dumps(call_id, ensure_ascii=False)
    needle = re.sub("[\ud800-\udfff]", lambda m: f"\\u{ord(m[0]):04x}", quoted).encode()
    try:
        lines = last_lines(path, limit)
    except OSError:
        return None
    for line in reversed(lines):
        if needle not in line or b'"toolResult"' not in line:
            continue
        try:
            entry = codec.loads(line)
        except ValueError:  # (BoundedJSONError, and bytes that are not UTF-8)
            continue
        message = entry.get("message") if isinstance(entry, dict) else None
        if isinstance(message, dict) and message.get("role") == "toolResult" and message.get("toolCallId") == call_id:
            found: dict[str, Any] = entry
            return found
    return None


def read_head(fd: int, size: int) -> tuple[bytes, int]:
    """``(first line, where the next starts)``; ``(what was read, -1)`` without a newline."""
    head = b""
    for limit in (1 << 10, 64 << 10, HEADER_LIMIT):  # (pi's first line: about 200 bytes)
        head = os.pread(fd, min(size, limit), 0)
        nl = head.find(b"\n")
        if nl >= 0:
            return head[:nl], nl + 1
        if len(head) >= size:
            break
    return head, -1


def last_line_end(fd: int, lo: int, hi: int) -> int:
    """Just after the last newline in ``[lo, hi)`` (``lo`` if there is none), read backwards."""
    pos = hi
    while pos > lo:
        n = min(BLOCK, pos - lo)
        pos -= n
        nl = os.pread(fd, n, pos).rfind(b"\n")
        if nl >= 0:
            return pos + nl + 1
    return lo


def forward_lines(fd: int, lo: int, hi: int, max_line: int) -> Iterator[bytes]:
    """Each line of ``[lo, hi)`` (``hi`` just after a newline), oldest first, as :class:`Lines` splits."""
    splitter = Lines(max_line)
    pos = lo
    while pos < hi:
        block = os.pread(fd, min(BLOCK, hi - pos), pos)
        if not block:
            return
        pos += len(block)
        lines: list[bytes] = []
        splitter.feed(block, lines)
        yield from lines


def startup_read(
    fd: int,
    st: os.stat_result,
    tailer: Tailer,
    max_line: int,
    events: Events,
    keep: list[Event] | None = None,
    first: int = FIRST_WINDOW,
    cap: int = CAP,
) -> SessionReducer:
    """The state of the open file ``fd``; ``tailer`` is set to continue at its end. ``keep``
    receives the events that state was built from (the header's first); ``first``: the first
    window's size; ``cap``: the entries taken from the end before reading forward instead."""
    size, ident = st.st_size, (st.st_dev, st.st_ino)
    tailer.name_checked = False
    head, body = read_head(fd, size)
    if body < 0:  # no first line yet: read when its newline comes (one past HEADER_LIMIT is no header)
        partial = head if size <= HEADER_LIMIT else b""
        tailer.seek(size, ident, partial, partial[-WINDOW:], head=partial)
        tailer.window_start = 0
        return SessionReducer()
    head_events = events(head)
    has_header = Header in map(type, head_events)  # (event types are final)
    found = _from_the_end(fd, body, size, max_line, events, first, cap) if has_header else None
    if found is None:  # not settled within the cap, or no header: the whole file, forward
        end = last_line_end(fd, body, size)
        reducer, start, renamed = _forward(fd, body, end, max_line, events, head_events, keep), body, True
        tail = b""
    else:
        suffix, start, end, tail = found
        reducer, renamed = suffix.replay(head_events), suffix.renamed
        if keep is not None:
            keep += head_events + suffix.events()
    held = b"" if end == size else os.pread(fd, size - end, end) if size - end <= max_line else None
    offset = size if held is not None else end
    want = min(WINDOW, offset)  # the bytes before the offset, for the tailer's rewrite check
    sig = tail[-want:] if offset == size and len(tail) >= want else os.pread(fd, want, offset - want)
    tailer.seek(offset, ident, held or b"", sig, head=head)
    tailer.window_start = start
    tailer.name_checked = renamed or Renamed in map(type, head_events)
    return reducer


def _from_the_end(
    fd: int, body: int, size: int, max_line: int, events: Events, first: int, cap: int
) -> tuple[Suffix, int, int, bytes] | None:
    """``(the settling suffix, where its oldest line starts, where complete lines end, the
    file's last bytes)``, read from the end in a window that doubles (what it gained, at most
    STEP bytes at a time); ``None`` past ``cap`` entries or a line too long to hold."""
    suffix = Suffix()
    lo, carry, tail = size, b"", b""  # carry: the file's bytes [lo, top), a line begun before lo
    end = top = -1  # where complete lines end; where the lines still to look at end
    while lo > body:
        n = min(max(size - lo, first), STEP, lo - body)  # (the window doubles)
        more = os.pread(fd, n, lo - n)
        if len(more) != n:
            return None  # (the file shrank under us: read forward, the tailer notices the rewrite)
        lo -= n
        data = more + carry
        tail = tail or data
        if end < 0:
            nl = data.rfind(b"\n")
            end = top = lo + nl + 1 if nl >= 0 else -1
        if end >= 0:
            # the lines that lie wholly in the window (the first begins before it, unless at body)
            start = lo if lo == body else lo + data.find(b"\n", 0, top - lo) + 1
            oldest = _take(data, lo, start, top, max_line, events, suffix)
            if suffix.settled:
                return suffix, oldest, end, tail
            carry, top = data[: start - lo], start
        else:
            carry = data
        if len(carry) > max_line or len(suffix) > cap:
            return None
    return suffix, body, max(end, body), tail


def _take(data: bytes, lo: int, start: int, top: int, max_line: int, events: Events, suffix: Suffix) -> int:
    """Add to ``suffix`` the events of the lines in ``[start, top)`` (``data``: the bytes from
    ``lo``) that hold a marker, newest first, until settled; where the last line taken starts.
    The main marker is searched once per byte, the others only above the next line holding it."""
    a, hi = start - lo, top - lo
    floor = hi  # the markers were searched for in [floor, hi), a line start: last[i] the newest
    last = [-1] * len(MARKERS)
    while True:
        hit = max(last)
        if hit < 0:  # nothing in [floor, hi): search on down, to the line of the next main marker
            if floor <= a:
                return start
            main = data.rfind(MARKERS[0], a, floor)
            if main >= 0:  # (its line: [below, above))
                below, above = data.rfind(b"\n", a, main) + 1 or a, data.find(b"\n", main, floor) + 1 or floor
            else:
                below = above = a
            last = [main, *(data.rfind(marker, above, floor) for marker in MARKERS[1:-1])]
            # (the escape only where a backslash is: a needle of its shape is searched slowly)
            last.append(data.rfind(ESCAPE, above, floor) if data.find(b"\\", above, floor) >= 0 else -1)
            floor = below
            continue
        s = data.rfind(b"\n", a, hit) + 1 or a
        e = data.find(b"\n", hit, hi)
        line = data[s:e] if e - s <= max_line else LongLine(long_head(data[s : s + LONG_HEAD], max_line))
        suffix.add(events(line))
        if suffix.settled:
            return lo + s
        hi = s  # (a line start at or above floor: the markers below it are known or searched again)
        last = [at if at < s else data.rfind(MARKERS[i], floor, s) for i, at in enumerate(last)]


def _forward(
    fd: int, body: int, end: int, max_line: int, events: Events, head: list[Event], keep: list[Event] | None
) -> SessionReducer:
    """The header's events, then every line of ``[body, end)`` that can matter, through a fresh
    reducer; ``keep``: the events from the newest line that settles the state alone on."""
    reducer = SessionReducer()
    for event in head:
        reducer.apply(event)
    kept: deque[list[Event]] = deque(maxlen=KEEP_LINES)
    for line in forward_lines(fd, body, end, max_line):
        if reducer.has_header and not may_have_events(line):
            continue
        line_events = events(line)
        for event in line_events:
            reducer.apply(event)
        if keep is not None and line_events:
            alone = Suffix()
            alone.add(line_events)
            if alone.settled:
                kept.clear()
            kept.append(line_events)
    if keep is not None:
        keep += head + [event for entry in kept for event in entry]
    return reducer


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
            entry = codec.loads(block[start : stop if stop >= 0 else len(block)])
        except ValueError:  # (BoundedJSONError, and bytes that are not UTF-8)
            continue
        if isinstance(entry, dict) and entry.get("type") == "session_info":
            name = entry.get("name")
            return True, name if isinstance(name, str) and name else None


def name_before(fd: int, before: int, limit: int = NAME_SEARCH_LIMIT) -> str | None:
    """The latest ``session_info`` name before byte ``before`` of ``fd``: in the ``limit`` bytes
    before it, else near the start (pi writes ``--name`` in its first flush)."""
    try:
        start = max(0, before - limit)
        found, name = _last_name(os.pread(fd, before - start, start), cut_at_start=start > 0)
        if found or start == 0:
            return name
        return _last_name(os.pread(fd, min(64 << 10, start), 0), cut_at_start=False)[1]
    except OSError:
        return None


def look_up_name(tailer: Tailer, fd: int) -> str | None:
    """The session's name set before the part of its file that was read (looked for once)."""
    if tailer.name_checked or tailer.window_start == 0:
        return None
    tailer.name_checked = True
    name = name_before(fd, tailer.window_start)
    return clean(name, 200) if name else None


def is_session_name(path: str) -> bool:
    """The name part of the rule (live events are filtered with it before any ``stat``)."""
    return path.endswith(SESSION_SUFFIX)


@dataclass(slots=True)
class Tree:
    """What a walk found below a folder (:func:`walk_tree`)."""

    files: dict[str, os.stat_result] = field(default_factory=dict)  # session file → its stat, one per inode
    dirs: list[str] = field(default_factory=list)  # real folders, the root first
    skipped: list[tuple[str, str]] = field(default_factory=list)  # (path, kind): session names not read
    unlisted: list[tuple[str, OSError]] = field(default_factory=list)  # folders whose listing failed
    unread: list[tuple[str, OSError]] = field(default_factory=list)  # session files whose stat failed


def walk_tree(root: str, files: bool = True) -> Tree:
    """Every session file below ``root`` (any depth; iterative, so no recursion limit);
    ``files=False``: its folders only (no file is looked at, so none is stat'ed)."""
    tree = Tree()
    try:
        st = os.stat(root)
    except FileNotFoundError:
        return tree
    except OSError as exc:  # (there, but not to be looked at now: tried again, as a listing that failed)
        tree.unlisted.append((root, exc))
        return tree
    seen = {(st.st_dev, st.st_ino)}  # the folders and files found (inodes: a folder is no file)
    stack = [root] if stat.S_ISDIR(st.st_mode) else []
    while stack:
        folder = stack.pop()
        tree.dirs.append(folder)
        try:
            with os.scandir(folder) as it:
                entries = sorted(it, key=lambda e: e.name)
        except FileNotFoundError:
            continue  # (gone meanwhile: its removal is an event of its own)
        except OSError as exc:
            tree.unlisted.append((folder, exc))
            continue
        subdirs: list[str] = []
        for entry in entries:
            try:
                real_dir = entry.is_dir(follow_symlinks=False)
                if not real_dir and not (files and is_session_name(entry.name)):
                    continue
                found = entry.stat(follow_symlinks=not real_dir)  # (a symlink: where it points decides)
            except FileNotFoundError:
                continue  # (vanished, or a link to nothing: the live watcher sees it if it comes)
            except OSError as exc:
                tree.unread.append((entry.path, exc))
                continue
            ident, mode = (found.st_dev, found.st_ino), found.st_mode
            if not (real_dir or stat.S_ISREG(mode) or stat.S_ISDIR(mode)):
                tree.skipped.append((entry.path, kind_of(mode)))
            elif ident not in seen and (real_dir or stat.S_ISREG(mode)):
                seen.add(ident)  # (another name of a file or folder found already is left out)
                if real_dir:
                    subdirs.append(entry.path)
                else:
                    tree.files[entry.path] = found
        stack.extend(reversed(subdirs))  # depth first, in name order
    return tree
