"""Reading a session file's lines in bounded memory whatever its size: its first line, where its
complete lines end, and its lines newest first (:func:`backward_lines`, or only those that can
matter: :func:`backward_matching_lines`) or oldest first, one block at a time; the caller stops
as soon as the newest entries settle the session's state (see :mod:`notifier.core.settle`)."""

from __future__ import annotations

import os
from collections.abc import Iterator

from notifier.core.values import Record

FIRST_WINDOW = 16 << 10
CHUNK = 64 << 10  # below glibc's mmap threshold: blocks are reused, never churned
HEADER_LIMIT = 1 << 20
# A marker starting with a backslash (``\\u00``) is looked for only where a backslash is: a
# one-byte search (memrchr) is ~50× faster than the two-way search for a needle of that shape.
_BACKSLASH = ord("\\")


def rfind_marker(data: bytes, marker: bytes, lo: int, hi: int) -> int:
    """``data.rfind(marker, lo, hi)``; a marker starting with a backslash only where one is."""
    if marker[0] == _BACKSLASH and data.rfind(b"\\", lo, hi) < 0:
        return -1
    return data.rfind(marker, lo, hi)


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


class Tail(Record):
    """Where a file's complete lines end (:func:`find_end`)."""

    end: int  # just after the last newline: complete lines end here
    partial: bytes | None  # the unfinished line after ``end`` (None: longer than max_line)
    block: bytes  # the bytes just before ``end``, already read (handed to backward_lines)

    def __init__(self, end: int, partial: bytes | None, block: bytes) -> None:
        self.end = end
        self.partial = partial
        self.block = block


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
            if nl == n - 1 and not pieces:  # (the usual case: the file ends with a newline)
                return Tail(pos + n, b"" if held <= max_line else None, block)
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
def backward_matching_lines(
    fd: int,
    lo: int,
    hi: int,
    max_line: int,
    markers: tuple[bytes, ...],
    first: int = FIRST_WINDOW,
    block: bytes = b"",
) -> Iterator[tuple[int, bytes]]:
    """Like :func:`backward_lines`, but only the lines holding one of ``markers`` (none holds a
    newline): the lines in between are passed over in bulk with ``rfind`` (no per-line work), so
    the cost of a tail of small irrelevant entries is a few C scans per block. Within a block the
    first marker (the common one) is looked for first, from the end; the others only between its
    newest occurrence and the end (over the whole block when it has none). So each byte is scanned
    at most once per marker, and when the common marker is near the end, the cost is that distance,
    not the size of the block."""
    main = markers[0]
    others = range(1, len(markers))
    given = block[max(0, len(block) - (hi - lo)) :]
    carry: list[bytes] = []  # a line that began in an earlier block (newest piece first)
    carry_len = 0
    skipping = False
    continuing = False  # the piece at the end of the next block continues a line (carry/skipping)
    pos = hi - 1  # the final newline ends the last line
    step = first
    while pos > lo:
        if given:
            # The given block as it is (no copy): ``n`` leaves out its final newline.
            data, given = given, b""
            n = len(data) - 1
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
                    carry.append(data)  # (a whole block read from the file: ``n == len(data)``)
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
            while True:
                hit = max(last)
                if hit < 0:
                    if floor <= low:
                        break
                    # Search on down: the first marker (the common one) as far as its newest
                    # occurrence, the others only down to the start of that line.
                    top = min(j, floor + len(main) - 1)  # an occurrence across ``floor`` counts too
                    p = data.rfind(main, low, top)
                    below = data.rfind(b"\n", first_nl, p) + 1 if p >= 0 else low
                    last[0] = p
                    for i in others:
                        marker = markers[i]
                        last[i] = rfind_marker(data, marker, below, min(j, floor + len(marker) - 1))
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
                    if at >= s:  # in the line just yielded: look for the one before it
                        last[i] = rfind_marker(data, markers[i], floor, j)
            j = first_nl
        # the piece before the first newline belongs to a line that may begin further back
        if j > max_line:
            skipping = True
        else:
            carry.append(data[:j] if j < len(data) else data)
            carry_len = j
        continuing = True
    if continuing and not skipping:
        line = b"".join(reversed(carry))
        if any(m in line for m in markers):
            yield lo, line
