"""Incremental reader of one session file: byte offset, partial-line buffer, rewrite detection.

Lines are split on b"\\n" only (pi does not escape U+2028 inside strings). An unterminated tail
is held back until its newline arrives. A line longer than ``max_line`` is skipped without being
held in memory. A shrink or a new inode means the file was rewritten: start again from 0.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field

CHUNK = 1 << 20
SIG = 32  # bytes before the offset kept to notice a rewrite that did not shrink the file
DEFAULT_MAX_LINE = 32 << 20


@dataclass
class ReadResult:
    lines: list[bytes] = field(default_factory=list)
    rewritten: bool = False  # the file was truncated or replaced: the caller must rebuild its state
    missing: bool = False  # the file does not exist (any more)
    skipped_long: int = 0  # lines dropped for being longer than max_line
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
        self._sig = b""  # the last SIG bytes before offset, as they were when read

    def seek(
        self, offset: int, ident: tuple[int, int] | None, partial: bytes = b"", sig: bytes = b""
    ) -> None:
        """Continue from ``offset`` (used after the startup scan read a bounded tail)."""
        self.offset = offset
        self.ident = ident
        self._partial = bytearray(partial)
        self._skipping = False
        self._sig = sig[-SIG:]

    @property
    def partial(self) -> bytes:
        """The unterminated tail held back (it waits for its newline)."""
        return bytes(self._partial)

    @property
    def sig(self) -> bytes:
        return self._sig

    def reset(self) -> None:
        self.offset = 0
        self._partial.clear()
        self._skipping = False
        self._sig = b""

    def read(self) -> ReadResult:
        result = ReadResult()
        try:
            fd = os.open(self.path, os.O_RDONLY | getattr(os, "O_BINARY", 0))
        except FileNotFoundError:
            result.missing = True
            return result
        except OSError as exc:
            result.error = exc
            return result
        try:
            st = os.fstat(fd)
            ident = (st.st_dev, st.st_ino)
            if self.ident is not None and (
                ident != self.ident
                or st.st_size < self.offset
                or (self._sig and os.pread(fd, len(self._sig), self.offset - len(self._sig)) != self._sig)
            ):
                result.rewritten = True
                self.reset()
            self.ident = ident
            if st.st_size == self.offset:
                return result
            os.lseek(fd, self.offset, os.SEEK_SET)
            while True:
                chunk = os.read(fd, CHUNK)
                if not chunk:
                    break
                self.offset += len(chunk)
                self._sig = (self._sig + chunk)[-SIG:] if len(chunk) < SIG else chunk[-SIG:]
                self._feed(chunk, result)
        except OSError as exc:
            result.error = exc
        finally:
            os.close(fd)
        return result

    def _feed(self, chunk: bytes, result: ReadResult) -> None:
        start = 0
        while True:
            nl = chunk.find(b"\n", start)
            if nl < 0:
                rest = chunk[start:]
                if not self._skipping:
                    if len(self._partial) + len(rest) > self.max_line:
                        self._partial.clear()
                        self._skipping = True
                        result.skipped_long += 1
                    else:
                        self._partial += rest
                return
            piece = chunk[start:nl]
            if self._skipping:
                self._skipping = False
            elif len(self._partial) + len(piece) > self.max_line:
                self._partial.clear()
                result.skipped_long += 1
            elif self._partial:
                self._partial += piece
                result.lines.append(bytes(self._partial))
                self._partial.clear()
            else:
                result.lines.append(piece)
            start = nl + 1
