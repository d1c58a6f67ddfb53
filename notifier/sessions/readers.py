"""Reading a session file in bounded memory whatever its size, for the start-up read: its first
line, where its last complete line ends, and its lines oldest first, one block at a time."""

from __future__ import annotations

import os
from collections.abc import Iterator

from notifier.sessions.tail import LongLine, long_head

CHUNK = 64 << 10  # below glibc's mmap threshold: blocks are reused, never churned
HEADER_LIMIT = 1 << 20


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
        n = min(CHUNK, pos - lo)
        pos -= n
        nl = os.pread(fd, n, pos).rfind(b"\n")
        if nl >= 0:
            return pos + nl + 1
    return lo


def forward_lines(fd: int, lo: int, hi: int, max_line: int) -> Iterator[bytes]:
    """Each line of ``[lo, hi)`` (``hi`` just after a newline), oldest first, in bounded memory:
    a line longer than ``max_line`` comes as the :class:`~notifier.sessions.tail.LongLine` of its
    first bytes, as the tailer gives it."""
    pos = lo
    carry = bytearray()
    skipping = False
    while pos < hi:
        block = os.pread(fd, min(CHUNK, hi - pos), pos)
        if not block:
            return
        pos += len(block)
        i = 0
        while True:
            nl = block.find(b"\n", i)
            piece = block[i:] if nl < 0 else block[i:nl]
            if not skipping and len(carry) + len(piece) > max_line:
                yield LongLine(long_head(bytes(carry[: 64 << 10]) + piece, max_line))
                carry.clear()
                skipping = True
            elif not skipping:
                carry += piece
            if nl < 0:
                break
            if not skipping:
                yield bytes(carry)
            carry.clear()
            skipping = False
            i = nl + 1
