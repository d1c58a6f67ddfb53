"""Incremental reader of one session file: byte offset, partial-line buffer, rewrite detection.

Lines are split on b"\\n" only (pi does not escape U+2028 inside strings). An unterminated tail
is held back until its newline arrives. A line longer than ``max_line`` is skipped without being
held in memory: only its first bytes come, as a :class:`LongLine`.

Only regular files are opened, and never in a way that can block: a FIFO, a device or a folder
named ``*.jsonl`` is reported (``ReadResult.special``) and left alone.

Rewrites. pi appends, except that it rewrites old files on open (v1/v2 migration, the size can
drop or grow), gives an empty file a header, and ``/resume`` can delete or replace a file. The
tailer remembers a digest of the file's first bytes (the header) and of the last ``WINDOW``
bytes before its offset, both as they were when read, and checks them whenever the file changed
(the window comes in the same ``pread`` as what was appended). A new inode, a shrink, or either
differing means a rewrite: the tailer starts again from 0 and says so, so the caller rebuilds
its state from the start of the file. Once the tailer has read them itself it keeps those bytes
(at most ``HEAD`` + ``WINDOW`` per file that changed while we ran) and compares them exactly,
which is cheaper than a digest on every change; what the start-up scan or the scan cache handed
over is kept as the digest only (thousands of idle files), and :meth:`Tailer.state` gives digests.
"""

from __future__ import annotations

import hashlib
import os
import stat
from dataclasses import dataclass, field
from typing import Any

CHUNK = 1 << 20
WINDOW = 4096  # bytes before the offset checked for a rewrite on every change
HEAD = 1024  # the first bytes of the file (pi's header line), checked likewise
DEFAULT_MAX_LINE = 32 << 20
READ_BUDGET = 64 << 20  # bytes read per call; the rest on the next call (``more``)
SLACK = 16 << 10  # read beyond the size fstat gave: what was appended since comes in the same pread
LONG_HEAD = 64 << 10  # the first bytes of a line too long to read, kept for what they say
_OPEN_FLAGS = (
    os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_BINARY", 0) | getattr(os, "O_CLOEXEC", 0)
)


def digest(data: bytes | memoryview) -> bytes:
    return hashlib.sha256(data).digest()[:16]  # (OpenSSL: about twice as fast as blake2b here)


_EMPTY = digest(b"")


class LongLine(bytes):
    """The first bytes of a line longer than ``max_line``: the line itself is skipped unread
    (see :func:`notifier.pi.parse.too_large_events` for what they can still say)."""


def long_head(data: bytes, max_line: int) -> bytes:
    """What a :class:`LongLine` keeps of a line that begins with ``data``."""
    return data[: min(LONG_HEAD, max_line)]


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
        self._partial = bytearray()
        self._skipping = False  # inside a line that is too long, dropping bytes up to its newline
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
        self.offset = offset
        self.ident = ident
        self._partial = bytearray(partial)
        self._skipping = False
        window = sig[-WINDOW:] if offset >= len(sig) else b""
        self._tail_start = offset - len(window)
        self._tail, self._tail_bytes = digest(window), None
        head = (head or b"")[:HEAD]
        self._head_len, self._head, self._head_bytes = len(head), digest(head), None
        self._stamp = None

    @property
    def partial(self) -> bytes:
        """The unterminated tail held back (it waits for its newline)."""
        return bytes(self._partial)

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

    def restore(self, state: dict[str, Any], ident: tuple[int, int]) -> None:
        """The inverse of :meth:`state` (the caller validated the types)."""
        self.offset = int(state["offset"])
        self.ident = ident
        self._partial = bytearray(state["partial"])
        self._skipping = False
        self._head_len, self._head = int(state["head_len"]), bytes(state["head"])
        self._tail_start, self._tail = int(state["tail_start"]), bytes(state["tail"])
        self._head_bytes = self._tail_bytes = None
        self._stamp = None

    def reset(self) -> None:
        self.offset = 0
        self._partial.clear()
        self._skipping = False
        self._head_len, self._head, self._head_bytes = 0, _EMPTY, None
        self._tail_start, self._tail, self._tail_bytes = 0, _EMPTY, b""
        self._stamp = None

    def read(self) -> ReadResult:
        """What was appended since the last call. After a rewrite only ``rewritten`` is set (and
        the tailer is back at 0): the caller decides how much of the new content to read."""
        result = ReadResult()
        try:
            fd = os.open(self.path, _OPEN_FLAGS)
        except FileNotFoundError:
            result.missing = True
            return result
        except OSError as exc:
            result.error = exc
            return result
        try:
            st = os.fstat(fd)
            if not stat.S_ISREG(st.st_mode):
                result.special = True
                return result
            ident = (st.st_dev, st.st_ino)
            stamp = (st.st_size, st.st_mtime_ns, st.st_ctime_ns)
            if self.ident is not None and ident != self.ident:
                return self._rewritten(result, ident)
            self.ident = ident
            if st.st_size < self.offset:
                return self._rewritten(result, ident)
            if st.st_size == self.offset and stamp == self._stamp:
                return result  # nothing changed since the last look
            if not self._read_on(fd, st.st_size, result):
                return self._rewritten(result, ident)
            self._stamp = stamp if self.offset == st.st_size else None
        except OSError as exc:
            result.error = exc
        finally:
            os.close(fd)
        return result

    def _rewritten(self, result: ReadResult, ident: tuple[int, int]) -> ReadResult:
        result.rewritten = True
        self.reset()
        self.ident = ident
        return result

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
        self._feed(data, result, kept)
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
            self._feed(chunk, result)
            window = chunk[-WINDOW:] if len(chunk) >= WINDOW else (window + chunk)[-WINDOW:]
            self._tail_start, self._tail_bytes = self.offset - len(window), window
        else:
            result.more = True

    def _feed(self, chunk: bytes, result: ReadResult, start: int = 0) -> None:
        """Split ``chunk[start:]`` into lines (the partial line held back; a line too long comes
        as the :class:`LongLine` of its first bytes, as soon as it is known to be too long)."""
        while True:
            nl = chunk.find(b"\n", start)
            piece = chunk[start:] if nl < 0 else chunk[start:nl]
            if self._skipping:
                pass
            elif len(self._partial) + len(piece) > self.max_line:
                head = long_head(bytes(self._partial[:LONG_HEAD]) + piece[:LONG_HEAD], self.max_line)
                result.lines.append(LongLine(head))
                result.skipped_long += 1
                self._partial.clear()
                self._skipping = True
            elif nl < 0:
                self._partial += piece
            elif self._partial:
                self._partial += piece
                result.lines.append(bytes(self._partial))
                self._partial.clear()
            else:
                result.lines.append(piece)
            if nl < 0:
                return
            self._skipping = False
            start = nl + 1
