"""The one way to read a pi session file, in bounded memory whatever it holds.

Opening. Only regular files are opened, and never in a way that can block
(:func:`open_regular`): a FIFO, a device or a folder named ``*.jsonl`` is reported and left alone.

Lines. Split on b"\\n" only (pi does not escape U+2028 inside strings), by one splitter
(:class:`Lines`) for every reader: an unterminated tail is held back until its newline arrives; a
line longer than ``max_line`` is skipped without being held in memory, only its first bytes come,
as a :class:`LongLine`.

Following (:class:`Tailer`). A byte offset and the splitter's partial line. pi appends, except that
it rewrites old files on open (v1/v2 migration, the size can drop or grow), gives an empty file a
header, and ``/resume`` can delete or replace a file. The tailer remembers a digest of the file's
first bytes (the header) and of the last ``WINDOW`` bytes before its offset, both as they were when
read, and checks them whenever the file changed (the window comes in the same ``pread`` as what was
appended). A new inode, a shrink, or either differing means a rewrite: the tailer starts again from
0 and says so, so the caller rebuilds its state. Once the tailer has read them itself it keeps
those bytes (at most ``HEAD`` + ``WINDOW`` per file that changed while we ran) and compares them
exactly; what the start-up read or the scan cache handed over is kept as the digest only.

The start-up read (:func:`settle_file`). The state of a file at start-up (and after a rewrite),
read from its end only as far as needed: read the file's end window; going back from the newest
line, skip the lines without a marker (:data:`notifier.pi.parse.MARKERS`) and take the events of
the others until they settle the state (:mod:`notifier.core.reducer`); replay those forward through
the reducer. Not settled yet: double the window and go on where the last one stopped. Past a cap
(too many entries that do not settle it, a line too long to hold) and for a file whose first line
is no header, the file is replayed forward instead. Memory stays bounded either way, and the result
equals a full read.

Names (:func:`look_up_name`). A session's name, looked up further back than the start-up read went
(bounded): the newest ``session_info`` entry before a given offset, however it is spelled.

Which files are sessions. One rule, for the start-up scan, ``status`` and live watching alike
(:func:`is_session_name`, :func:`walk_tree`): a ``*.jsonl`` regular file (or a symlink to one)
anywhere below a sessions root, reached through real folders (watchdog does not follow symlinked
folders, so neither does the walk). A file reached by two names (hard links, a symlink next to its
target, an overlapping root) is one session, read once: the walk keeps the first name in sorted
order.

The files, into a board (:class:`SessionFiles`): a tailer per file, every line through the one
bounded parse and pi's adapter (:mod:`notifier.pi.parse`), the events applied to the board; a bad
line, file or folder is said once (per file and kind of problem) and skipped. The engine thread
owns one; ``status``, ``goto`` and ``answer`` without the app read through one too
(:mod:`notifier.sessions`)."""

from __future__ import annotations

import errno
import hashlib
import logging
import os
import stat
from collections import deque
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field, replace
from functools import partial
from typing import Any, Protocol

from notifier.core import codec
from notifier.core.board import Board
from notifier.core.model import Transition
from notifier.core.reducer import Event, Header, Renamed, SessionReducer, Suffix
from notifier.core.text import clean
from notifier.pi.parse import (
    ESCAPE,
    MARKERS,
    EntryError,
    QuestionCatalog,
    may_have_events,
    odd_line_events,
    to_events,
    too_large_events,
)
from notifier.system.log import LogOnce

log = logging.getLogger(__name__)

CHUNK = 1 << 20  # bytes per read while following
BLOCK = 64 << 10  # bytes per read of the start-up read: below glibc's mmap threshold, blocks are reused
WINDOW = 4096  # bytes before the offset checked for a rewrite on every change
HEAD = 1024  # the first bytes of the file (pi's header line), checked likewise
HEADER_LIMIT = 1 << 20  # a first line longer than this is no pi header
DEFAULT_MAX_LINE = 32 << 20
SESSION_SUFFIX = ".jsonl"
BLAME_LIMIT = 3  # a file that made the engine fail this often is ignored
LIVE_FULL_READ = 4 << 20  # a file appearing while we run is read whole up to this size
READ_BUDGET = 64 << 20  # bytes read per call; the rest on the next call (``more``)
SLACK = 16 << 10  # read beyond the size fstat gave: what was appended since comes in the same pread
LONG_HEAD = 64 << 10  # the first bytes of a line too long to read, kept for what they say
FIRST_WINDOW = 16 << 10
STEP = 1 << 20  # bytes the start-up window grows by at most at a time
CAP = 20_000  # entries taken from the end that do not settle the state: past them, read forward
KEEP_LINES = 10_000  # a rewrite of a file replayed forward: the newest lines' events kept at most
NAME_SEARCH_LIMIT = 1 << 20
_OPEN_FLAGS = (
    os.O_RDONLY
    | getattr(os, "O_NONBLOCK", 0)
    | getattr(os, "O_NOCTTY", 0)
    | getattr(os, "O_CLOEXEC", 0)
    | getattr(os, "O_BINARY", 0)
)
Events = Callable[[bytes], list[Event]]


# ---- opening ----


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


# ---- lines ----


def digest(data: bytes | memoryview) -> bytes:
    return hashlib.sha256(data).digest()[:16]  # (OpenSSL: about twice as fast as blake2b here)


_EMPTY = digest(b"")


class LongLine(bytes):
    """The first bytes of a line longer than ``max_line``: the line itself is skipped unread
    (see :func:`notifier.pi.parse.too_large_events` for what they can still say)."""


def long_head(data: bytes, max_line: int) -> bytes:
    """What a :class:`LongLine` keeps of a line that begins with ``data``."""
    return data[: min(LONG_HEAD, max_line)]


class Lines:
    """Splits bytes into lines as they come: the unfinished last line held back (``partial``); a
    line longer than ``max_line`` comes as the :class:`LongLine` of its first bytes as soon as it
    is known to be too long, and the rest of it is dropped up to its newline."""

    __slots__ = ("max_line", "partial", "skipping")

    def __init__(self, max_line: int) -> None:
        self.max_line = max_line
        self.partial = bytearray()
        self.skipping = False  # inside a line that is too long, dropping bytes up to its newline

    def reset(self, partial: bytes = b"") -> None:
        self.partial = bytearray(partial)
        self.skipping = False

    def feed(self, chunk: bytes, out: list[bytes], start: int = 0) -> int:
        """Append the complete lines of ``chunk[start:]`` to ``out``; the number of them too long."""
        long = 0
        while True:
            nl = chunk.find(b"\n", start)
            piece = chunk[start:] if nl < 0 else chunk[start:nl]
            if self.skipping:
                pass
            elif len(self.partial) + len(piece) > self.max_line:
                out.append(LongLine(long_head(bytes(self.partial[:LONG_HEAD]) + piece[:LONG_HEAD], self.max_line)))
                long += 1
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
                return long
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
    skipped_long: int = 0  # lines longer than max_line (each in ``lines`` as its LongLine)
    error: OSError | None = None


class Tailer:
    def __init__(self, path: str, max_line: int = DEFAULT_MAX_LINE) -> None:
        self.path = path
        self.max_line = max_line
        self.offset = 0
        self.window_start = 0  # where the startup scan began reading (older bytes were never read)
        self.name_checked = False  # the session name was looked for in the unread part
        self.ident: tuple[int, int] | None = None
        self._lines = Lines(max_line)
        # What was read, to notice a rewrite: file[0:head_len] and file[tail_start:offset], each
        # as the bytes themselves (``*_bytes``, once read here) or else as their digest.
        self._head_len = 0
        self._head = b""
        self._head_bytes: bytes | None = None
        self._tail_start = 0
        self._tail = _EMPTY
        self._tail_bytes: bytes | None = b""
        self._stamp: tuple[int, int, int] | None = None  # (size, mtime_ns, ctime_ns) at the last read

    def seek(
        self,
        offset: int,
        ident: tuple[int, int] | None,
        partial: bytes = b"",
        sig: bytes = b"",
        head: bytes | None = None,
    ) -> None:
        """Continue from ``offset`` (used after the startup scan read a bounded tail). ``sig`` are
        the bytes just before ``offset`` and ``head`` the file's first bytes, as they were read:
        the longer they are (up to ``WINDOW`` and ``HEAD``), the surer the rewrite check."""
        window = sig[-WINDOW:] if offset >= len(sig) else b""
        head = (head or b"")[:HEAD]
        position = {"offset": offset, "partial": partial, "head_len": len(head), "head": digest(head)}
        self.restore({**position, "tail_start": offset - len(window), "tail": digest(window)}, ident)

    @property
    def partial(self) -> bytes:
        """The unterminated tail held back (it waits for its newline)."""
        return bytes(self._lines.partial)

    def state(self) -> dict[str, Any]:
        """What :meth:`restore` needs to continue exactly here (for the scan cache): plain data."""
        return {
            "offset": self.offset,
            "partial": self.partial,
            "head_len": self._head_len,
            "head": self._head if self._head_bytes is None else digest(self._head_bytes),
            "tail_start": self._tail_start,
            "tail": self._tail if self._tail_bytes is None else digest(self._tail_bytes),
        }

    def restore(self, state: dict[str, Any], ident: tuple[int, int] | None) -> None:
        """The inverse of :meth:`state` (the caller validated the types): what was read is
        known by its digests only."""
        self.offset = state["offset"]
        self.ident = ident
        self._lines.reset(state["partial"])
        self._head_len, self._head = state["head_len"], state["head"]
        self._tail_start, self._tail = state["tail_start"], state["tail"]
        self._head_bytes = self._tail_bytes = None
        self._stamp = None

    def reset(self) -> None:
        self.offset = 0
        self._lines.reset()
        self._head_len, self._head, self._head_bytes = 0, _EMPTY, None
        self._tail_start, self._tail, self._tail_bytes = 0, _EMPTY, b""
        self._stamp = None

    def read(self) -> ReadResult:
        """What was appended since the last call (see :meth:`reading`)."""
        with self.reading() as (result, _):
            return result

    @contextmanager
    def reading(self) -> Iterator[tuple[ReadResult, int | None]]:
        """What was appended since the last call, and the file still open (its descriptor, until
        the block ends; ``None`` where it could not be opened): what the caller makes of the
        lines may need more of the file (a name, a rewrite read again), without opening it again.
        After a rewrite only ``rewritten`` is set (and the tailer is back at 0): the caller
        decides how much of the new content to read."""
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
        try:
            ident = (st.st_dev, st.st_ino)
            stamp = (st.st_size, st.st_mtime_ns, st.st_ctime_ns)
            if (self.ident is not None and ident != self.ident) or st.st_size < self.offset:
                self._rewritten(result, ident)
                return
            self.ident = ident
            if st.st_size == self.offset and stamp == self._stamp:
                return  # nothing changed since the last look
            if not self._read_on(fd, st.st_size, result):
                self._rewritten(result, ident)
                return
            self._stamp = stamp if self.offset == st.st_size else None
        except OSError as exc:
            result.error = exc

    def _rewritten(self, result: ReadResult, ident: tuple[int, int]) -> None:
        result.rewritten = True
        self.reset()
        self.ident = ident

    def _read_on(self, fd: int, size: int, result: ReadResult) -> bool:
        """Check that the head and the window before the offset are as they were read (else
        ``False``: a rewrite), and read on from the offset. The window and what was appended
        come in one ``pread`` (``size``: the file's size at the ``fstat``; ``SLACK`` more catches
        what was appended since), the head in a second one when the window does not hold it.
        The new window is the bytes actually consumed, so a rewrite racing this read is noticed
        on the next one."""
        kept = self.offset - self._tail_start
        want = min(max(size - self.offset, 0) + SLACK, CHUNK, READ_BUDGET)
        data = os.pread(fd, kept + want, self._tail_start)
        if len(data) < kept:
            return False
        if self._tail_bytes is not None:  # (as long as the window: kept bytes)
            if not data.startswith(self._tail_bytes):
                return False
        elif digest(memoryview(data)[:kept]) != self._tail:
            return False
        if self._head_len and self._tail_start > 0:  # (else the window covers the head)
            head = os.pread(fd, self._head_len, 0)
            if self._head_bytes is not None:
                if head != self._head_bytes:
                    return False
            elif digest(head) == self._head:
                self._head_bytes = head  # the same bytes: compared exactly from now on
            else:
                return False
        got = len(data) - kept
        if not got:
            return True
        if self._tail_start == 0 and self.offset < HEAD:  # read from 0: the head is known
            self._head_bytes = data[:HEAD]
            self._head_len = len(self._head_bytes)
        self.offset += got
        result.skipped_long += self._lines.feed(data, result.lines, kept)
        window = data[-WINDOW:] if len(data) > WINDOW else data
        self._tail_start, self._tail_bytes = self.offset - len(window), window
        if got == want or self.offset < size:  # (a short read ends the file)
            self._read_more(fd, window, READ_BUDGET - got, result)
        return True

    def _read_more(self, fd: int, window: bytes, budget: int, result: ReadResult) -> None:
        """Read on in chunks until the end of the file or of the read budget (``more``)."""
        while budget > 0:
            chunk = os.pread(fd, min(CHUNK, budget), self.offset)
            if not chunk:
                break
            budget -= len(chunk)
            if self._tail_start == 0 and self.offset < HEAD:
                self._head_bytes = (window + chunk)[:HEAD]
                self._head_len = len(self._head_bytes)
            self.offset += len(chunk)
            result.skipped_long += self._lines.feed(chunk, result.lines)
            window = chunk[-WINDOW:] if len(chunk) >= WINDOW else (window + chunk)[-WINDOW:]
            self._tail_start, self._tail_bytes = self.offset - len(window), window
        else:
            result.more = True


# ---- the start-up read ----


def read_head(fd: int, size: int) -> tuple[bytes, int]:
    """``(first line without its newline, where the next line starts)``; ``(head, -1)`` if the
    first ``HEADER_LIMIT`` bytes hold no newline (``head``: what was read, for an unfinished line)."""
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
    """Each line of ``[lo, hi)`` (``hi`` just after a newline), oldest first, in bounded memory,
    split as the tailer splits them (:class:`Lines`)."""
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


def settle_file(
    fd: int,
    st: os.stat_result,
    tailer: Tailer,
    max_line: int,
    events: Events,
    keep: list[Event] | None = None,
    first: int = FIRST_WINDOW,
    cap: int = CAP,
) -> SessionReducer:
    """The state of the open file ``fd`` (``st``: its fstat); ``tailer`` is set to continue at its
    end. ``events``: one line's events. ``keep`` receives the events that state was built from
    (the header's first): what a rewrite is compared with. ``first``: the first window's size;
    ``cap``: the entries taken from the end at most before the file is read forward instead."""
    size = st.st_size
    ident = (st.st_dev, st.st_ino)
    tailer.name_checked = False
    head, body = read_head(fd, size)
    if body < 0:
        # No complete first line yet: the tailer picks it up when its newline arrives
        # (an absurdly long first line is not a pi session: follow new data only).
        partial = head if size <= HEADER_LIMIT else b""
        tailer.seek(size, ident, partial, partial[-WINDOW:], head=partial)
        tailer.window_start = 0
        return SessionReducer()
    head_events = events(head)
    found = None
    if Header in map(type, head_events):  # (event types are final)
        found = _from_the_end(fd, body, size, max_line, events, first, cap)
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
    file's last bytes)`` read
    from the file's end (``body``: where its lines after the header start) in a window that
    doubles, or ``None`` past the cap: more than ``cap`` entries that do not settle it, or a line
    too long to hold (see :func:`settle_file`). Only what the window gained is read each time
    (at most STEP bytes), and only the line it begins inside is kept from before."""
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
    """Add to ``suffix`` the events of the lines in the file's ``[start, top)`` (``data`` holds
    its bytes from ``lo``) that hold a marker, newest first, until it is settled. Where the
    last line taken starts (``start`` if none settled it). The main marker (the common one) is
    searched for once per byte; the others only in the lines above the next line that holds it,
    which is taken whatever else it holds (a tool result of megabytes is not searched five times)."""
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
    reducer. ``keep`` receives the events from the newest line that settles the state by itself
    on (at most KEEP_LINES lines of them)."""
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


# ---- names ----


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


def name_before(fd: int, before: int, limit: int = NAME_SEARCH_LIMIT, head: int = 64 << 10) -> str | None:
    """The latest ``session_info`` name written before byte ``before`` of the open file ``fd``:
    searched in the last ``limit`` bytes before it, then near the start (pi writes ``--name`` in
    its first flush). Bounded, so the cost does not grow with the file."""
    try:
        start = max(0, before - limit)
        found, name = _last_name(os.pread(fd, before - start, start), cut_at_start=start > 0)
        if found or start == 0:
            return name
        return _last_name(os.pread(fd, min(head, start), 0), cut_at_start=False)[1]
    except OSError:
        return None


def find_name(path: str, before: int, limit: int = NAME_SEARCH_LIMIT, head: int = 64 << 10) -> str | None:
    """:func:`name_before` in the file at ``path`` (``None`` if it cannot be read)."""
    try:
        fd, _ = open_regular(path)
    except OSError:
        return None
    try:
        return name_before(fd, before, limit, head)
    finally:
        os.close(fd)


def look_up_name(tailer: Tailer, fd: int) -> str | None:
    """The name of the session ``tailer`` follows (``fd``: its file, open), set before the part
    of its file that was read (looked for once: bounded read); ``None`` if there is none or it was
    looked for already."""
    if tailer.name_checked or tailer.window_start == 0:
        return None
    tailer.name_checked = True
    name = name_before(fd, tailer.window_start)
    return clean(name, 200) if name else None


# ---- which files are sessions ----


def is_session_name(path: str) -> bool:
    """The name part of the rule (live events are filtered with it before any ``stat``)."""
    return path.endswith(SESSION_SUFFIX)


@dataclass(slots=True)
class Tree:
    """What a walk found below a folder (:func:`walk_tree`)."""

    files: list[str] = field(default_factory=list)  # session files, one name per (device, inode)
    dirs: list[str] = field(default_factory=list)  # real folders, the root first
    skipped: list[tuple[str, str]] = field(default_factory=list)  # (path, kind): session names not read
    idents: dict[tuple[int, int], str] = field(default_factory=dict)  # (device, inode) → the name kept
    stats: dict[str, os.stat_result] = field(default_factory=dict)  # each file's stat, by the walk


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


# ---- the files, into the board ----


class Reading(Protocol):
    """What reading the files is told (``notifier.sessions.EngineOptions``)."""

    catalog: QuestionCatalog
    max_line: int


class Cache(Protocol):
    """What the start-up scan remembered of each file (``notifier.sessions.StartupCache``)."""

    def lookup(self, path: str, st: os.stat_result) -> tuple[Tailer, SessionReducer] | None:
        """An unchanged file: its tailer (at its end) and its state; None: read it."""


class SessionFiles:
    """Owned by one thread (the engine's): every tailer, and the board they feed."""

    def __init__(
        self,
        options: Reading,
        board: Board,
        wall: Callable[[], float],
        more: Callable[[str], None] = lambda path: None,
    ) -> None:
        self.options = options
        self.board = board
        self.tailers: dict[str, Tailer] = {}
        self.ignored: set[str] = set()  # files that made the engine fail again and again
        self.reading: str | None = None  # the file being read (blamed if the engine fails)
        self._wall = wall
        self._more = more  # a huge append: read the rest of this file after what is queued
        self._once = LogOnce(log)
        self._idents: dict[tuple[int, int], str] = {}  # (device, inode) → the one name read
        self._blame: dict[str, int] = {}  # failures that happened while reading each file

    # ---- folders ----

    def scan(self, folder: str, initial: bool, cache: Cache | None = None) -> list[Transition]:
        """Every session file under ``folder``: known ones read on, new ones added (at start-up,
        ``initial``, unchanged ones restored from ``cache``)."""
        tree = walk_tree(folder)
        for path, kind in tree.skipped:
            self._once(path, "kind", "skipped: %s, not a regular file", kind)
        out: list[Transition] = []
        names = {path: ident for ident, path in tree.idents.items()}
        for path in tree.files:
            ident = names[path]
            known = self._idents.get(ident)
            if known is not None and known != path and known in self.tailers:
                continue  # a second name of a file already read (a hard link, another root)
            if path in self.tailers:
                out += self.read(path)
                continue
            self._idents[ident] = path
            found = cache.lookup(path, tree.stats[path]) if initial and cache is not None else None
            if found is not None:
                self.tailers[path], restored = found
                out += self.board.local.restore(path, restored, self._wall(), initial=True)
            else:
                out += self.add(path, initial)
        return out

    def gone(self, path: str, everything: bool = False) -> list[Transition]:
        """A file or folder was removed or moved away: forget the sessions that no longer exist
        (``everything``: all under ``path``, a symlinked folder that points elsewhere now)."""
        prefix = path.rstrip(os.sep) + os.sep
        out: list[Transition] = []
        for key in [k for k in self.tailers if k == path or k.startswith(prefix)]:
            if everything or not os.path.exists(key):
                out += self.forget(key)
        return out

    # ---- files ----

    def add(self, path: str, initial: bool) -> list[Transition]:
        """Follow a file not followed yet. At start-up (``initial``) only the state it ends in is
        reported; a file that appears while we run is new, so read whole when small."""
        if not initial:
            try:
                st = os.stat(path)
            except OSError:
                return []
            if not stat.S_ISREG(st.st_mode):
                self._once(path, "kind", "skipped: %s, not a regular file", kind_of(st.st_mode))
                return []
            ident = (st.st_dev, st.st_ino)
            known = self._idents.get(ident)
            if known is not None and known != path:
                other = self.tailers.get(known)
                if other is not None and other.ident == ident:
                    return self.read(known)  # another name of a file we follow: read it once
            self._idents[ident] = path
            if st.st_size <= LIVE_FULL_READ:
                # Every question in it is reported, even one asked and answered before we looked.
                self.tailers[path] = Tailer(path, self.options.max_line)
                return self.read(path)
        tailer = Tailer(path, self.options.max_line)
        reducer = self.load(tailer, name=True)
        if reducer is None:
            return []
        self.tailers[path] = tailer
        if tailer.ident is not None:
            self._idents[tailer.ident] = path
        # Only the state the file ends in is reported: a question asked and answered before we
        # looked is history, not news (no needs_input + resolved pair at start-up).
        return self.board.local.restore(path, reducer, self._wall(), initial=initial)

    def read(self, path: str) -> list[Transition]:
        """What changed in ``path`` (a file not followed yet is added)."""
        if path in self.ignored:
            return []
        self.reading = path
        out = self._read(path)
        self.reading = None
        return out

    def _read(self, path: str) -> list[Transition]:
        tailer = self.tailers.get(path)
        if tailer is None:
            return self.add(path, initial=False)
        with tailer.reading() as (result, fd):
            now = self._wall()
            if result.missing:
                return self.forget(path)
            if result.special:
                # A FIFO, device or folder named *.jsonl: never opened in a way that blocks, never
                # read. The tailer stays, so the next event costs one fstat and no log line.
                self._once(path, "special", "not a regular file; ignored")
                return self.board.local.forget(path, now) if self.board.local.reducer(path) is not None else []
            if result.error is not None or fd is None:
                self._once(
                    path, "read", "cannot read (%s)", clean(getattr(result.error, "strerror", None) or result.error)
                )
                return []
            if result.more:
                self._more(path)
            if result.rewritten:
                log.info("%s was rewritten; reading it again from the start", path)
                events = self._read_bounded(tailer, fd)
                if events is None:
                    return self.forget(path)
                return self.board.local.replace(path, events, now)
            if not result.lines:
                return []
            out = self.board.local.apply(path, self.events(path, result.lines, now), now)
            if not any(t.kind == "needs_input" and t.session.name is None for t in out):
                return out
            # A session that asks deserves its name, even one set before the part of the file
            # read so far: looked up once (bounded), in the file still open.
            name = look_up_name(tailer, fd)
            if not name:
                return out
            self.board.local.apply(path, [Renamed(name)], now)
            return self.renamed(out)

    def forget(self, path: str) -> list[Transition]:
        self.tailers.pop(path, None)
        self._once.forget(path)
        return self.board.local.forget(path, self._wall())

    def _read_bounded(self, tailer: Tailer, fd: int | None = None) -> list[Event] | None:
        """The events that settle the file's state (see :meth:`load`), ``None`` if unreadable."""
        keep: list[Event] = []
        return keep if self.load(tailer, keep, fd, name=True) is not None else None

    def load(
        self, tailer: Tailer, keep: list[Event] | None = None, fd: int | None = None, name: bool = False
    ) -> SessionReducer | None:
        """The state a full read of the tailer's file would give, read from its end only as far
        as needed; the tailer continues at the end. ``None`` if it cannot be read (said once).
        ``keep`` receives the events that state was built from (header first); ``fd``: the file,
        open already. ``name``: a session that asks gets its name, even one set before what was
        read (looked up in the same open file: a bounded read more)."""
        path = tailer.path
        if fd is None:
            try:
                fd, _ = open_regular(path)
            except NotRegularFile as exc:
                self._once(path, "kind", "skipped: %s, not a regular file", exc.kind)
                return None
            except OSError as exc:
                if not isinstance(exc, FileNotFoundError):
                    self._once(path, "open", "cannot read (%s)", exc.strerror or exc)
                return None
            try:
                return self.load(tailer, keep, fd, name)
            finally:
                os.close(fd)
        try:
            events = partial(self.line_events, path, now=self._wall())
            reducer = settle_file(fd, os.fstat(fd), tailer, self.options.max_line, events, keep)
        except OSError as exc:
            self._once(path, "read", "cannot read (%s)", exc.strerror or exc)
            return None
        found = name and reducer.pending and reducer.name is None and reducer.has_header and look_up_name(tailer, fd)
        if found:
            reducer.apply(Renamed(found))
            if keep is not None:
                keep.append(Renamed(found))
        return reducer

    def events(self, path: str, lines: Iterable[bytes], now: float) -> list[Event]:
        """pi's events in ``lines`` (the one bounded parse each); a bad line is skipped, said once."""
        events: list[Event] = []
        for line in lines:
            events += self.line_events(path, line, now)
        return events

    def line_events(self, path: str, line: bytes, now: float) -> list[Event]:
        """pi's events in one line (see :meth:`events`)."""
        if not line or line.isspace():
            return []
        if type(line) is LongLine:  # too long to read: what its first bytes say
            self._once(path, "long", "skipped a line longer than %d MB", self.options.max_line >> 20)
            return too_large_events(line, self.options.catalog, now)
        try:
            entry = codec.loads(line)  # size: the tailer's max_line; depth: capped
        except UnicodeDecodeError:  # (what its bytes still say: a question tool's call, a result)
            self._once(path, "utf8", "read only the calls of a line that is not UTF-8")
            return odd_line_events(line, self.options.catalog, now)
        except ValueError as exc:
            self._once(path, "json", "read only the calls of a line that is not usable JSON (%s)", clean(exc, 80))
            return odd_line_events(line, self.options.catalog, now)
        if not isinstance(entry, dict):
            self._once(path, "object", "skipped a JSON line that is not an object")
            return []
        try:
            return to_events(entry, self.options.catalog, now)
        except EntryError as exc:
            self._once(path, "shape", "skipped an entry with an unexpected shape (%s)", exc)
        except Exception as exc:  # a bug meeting odd data must cost this entry, not the engine
            self._once(path, "shape", "skipped an entry with an unexpected shape (%s)", type(exc).__name__)
        return []

    # ---- names ----

    def renamed(self, items: list[Transition]) -> list[Transition]:
        """The same transitions, carrying the sessions' current names."""
        out = []
        for t in items:
            view = self.board.view(t.session.key)
            out.append(replace(t, session=view.ref) if view is not None else t)
        return out

    # ---- after a failure ----

    def blame(self) -> None:
        """The engine failed: count it against the file it was reading, if any."""
        if self.reading is not None:
            self._blame[self.reading] = self._blame.get(self.reading, 0) + 1

    def resync(self) -> list[Transition]:
        """After a restart: read what every file gained meanwhile (a lost wake-up loses nothing).
        The file being read when it failed is read again from its tail (what the failed read
        took is not lost); if it makes the engine fail again, it is skipped past, and after
        BLAME_LIMIT failures ignored, so one file cannot stop the app telling about the others."""
        out: list[Transition] = []
        culprit, self.reading = self.reading, None
        if culprit is not None:
            blamed = self._blame.get(culprit, 0)
            tailer = self.tailers.get(culprit)
            if blamed >= BLAME_LIMIT:
                self.ignored.add(culprit)
                log.error(
                    "ignoring %s from now on: reading it made the engine fail %d times",
                    culprit,
                    blamed,
                )
                out += self.board.local.forget(culprit, self._wall())
                self.tailers.pop(culprit, None)
            elif blamed == 1 and tailer is not None:
                self.reading = culprit
                events = self._read_bounded(tailer)
                if events is not None:
                    out += self.board.local.replace(culprit, events, self._wall())
                self.reading = None
        for path in list(self.tailers):
            out += self.read(path)
        return out
