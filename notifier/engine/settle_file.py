"""The state of one session file, read from its end only as far as needed (start-up, rewrites).

The header (first line), then the lines that can change a session's state, newest first, until
the state is settled (``core/settle.py``); a file whose first line is no header, or a pathological
tail, is replayed forward in bounded memory instead. Either way the result equals a full read."""

from __future__ import annotations

import os
from collections import deque
from collections.abc import Callable

from notifier.core.reducer import Event, Header, Input, Renamed, SessionReducer, Supersede
from notifier.core.settle import EVENT_BUDGET, Settler, sets_base, settles_alone
from notifier.pi.lines import MARKERS, may_have_events
from notifier.watch.readers import (
    CHUNK,
    FIRST_WINDOW,
    HEADER_LIMIT,
    backward_matching_lines,
    find_end,
    forward_lines,
    read_head,
    rfind_marker,
)
from notifier.watch.tail import WINDOW, Tailer


def settle_file(
    fd: int,
    st: os.stat_result,
    tailer: Tailer,
    max_line: int,
    events: Callable[[bytes], list[Event]],
    keep: list[bytes] | None = None,
) -> SessionReducer:
    """The state of the open file ``fd`` (``st``: its fstat); ``tailer`` is set to continue at its
    end. ``events``: one line's events. ``keep`` receives the raw lines that state was built from
    (header first): what a rewrite is compared with."""
    size = st.st_size
    ident = (st.st_dev, st.st_ino)
    tailer.name_checked = False
    head, header_end = read_head(fd, size)
    if header_end < 0:
        # No complete first line yet: the tailer picks it up when its newline arrives
        # (an absurdly long first line is not a pi session: follow new data only).
        partial = head if size <= HEADER_LIMIT else b""
        tailer.seek(size, ident, partial, partial[-WINDOW:], head=partial)
        tailer.window_start = 0
        return SessionReducer()
    head_events = events(head)
    if keep is not None:
        keep.append(head)
    tail = find_end(fd, header_end, size, max_line)
    offset = size if tail.partial is not None else tail.end
    seen = tail.block + (tail.partial or b"") if offset == size else tail.block
    want = min(WINDOW, offset)
    sig = seen[-want:] if len(seen) >= want else os.pread(fd, want, offset - want)
    tailer.seek(offset, ident, tail.partial or b"", sig, head=head)
    has_header = Header in map(type, head_events)  # (event types are final)
    hi, block = tail.end, tail.block  # where the general way starts, and what it has read
    if has_header:
        newest = _settled_by_newest(block, hi, header_end, max_line, events)
        step = len(block)
        while isinstance(newest, int) and newest > header_end:
            # Nothing in the block can matter (a long tail of entries that change nothing): the
            # same look at the bytes before it, in growing blocks (each read and searched once).
            hi, step = newest, min(max(step, FIRST_WINDOW) * 2, CHUNK)
            n = min(step, hi - header_end)
            block = os.pread(fd, n, hi - n)
            if len(block) != n:  # (the file shrank under us: the general way notices)
                newest = None
                break
            newest = _settled_by_newest(block, hi, header_end, max_line, events)
        if isinstance(newest, int):  # (no line before the last block can matter either)
            hi, block = newest, b""
        elif newest is not None:  # (the common case, without the general machinery below)
            start, line, line_events = newest
            tailer.window_start = start
            tailer.name_checked = Renamed in map(type, line_events) or Renamed in map(type, head_events)
            if keep is not None:
                keep.append(line)
            reducer = SessionReducer()
            for event in head_events:
                reducer.apply(event)
            for event in line_events:
                reducer.apply(event)
            return reducer
    settler = Settler()
    window_start = tail.end
    kept: list[bytes] = []
    if has_header:
        lines = backward_matching_lines(fd, header_end, hi, max_line, MARKERS, block=block)
        for start, line in lines:
            window_start = start
            if keep is not None:
                kept.append(line)
            if settler.feed(events(line)) or settler.over_budget:
                break
        else:
            window_start = header_end  # every line was looked at
    if settler.settled or window_start <= header_end and not settler.over_budget:
        tailer.window_start = window_start
        tailer.name_checked = settler.renamed or any(isinstance(e, Renamed) for e in head_events)
        if keep is not None:
            keep += reversed(kept)
        return settler.replay(head_events)
    # A first line that is no header, or a pathological tail (no message among a huge number
    # of tool results): replay the whole file forward, in bounded memory.
    tailer.window_start = header_end
    tailer.name_checked = True  # the whole file was read
    reducer = SessionReducer()
    for event in head_events:
        reducer.apply(event)
    # ``keep`` (a rewrite being compared) gets the lines from the last superseding entry on
    # (plus the last one that set the state before it), at most EVENT_BUDGET of them.
    tail_lines: deque[bytes] = deque(maxlen=EVENT_BUDGET)
    last_base: bytes | None = None
    for _, line in forward_lines(fd, header_end, tail.end, max_line):
        if reducer.has_header and not may_have_events(line):
            continue
        line_events = events(line)
        for event in line_events:
            reducer.apply(event)
        if keep is None or not line_events:
            continue
        based = any(sets_base(e) for e in line_events)
        if any(isinstance(e, (Input, Supersede)) for e in line_events):
            tail_lines.clear()
            if not based and last_base is not None:
                tail_lines.append(last_base)
        tail_lines.append(line)
        if based:
            last_base = line
    if keep is not None:
        keep += tail_lines
    return reducer


_MAIN = MARKERS[0]
# The other markers, those starting with a backslash apart (see rfind_marker); no line shorter
# than the shortest of them can hold one.
_RARE = tuple(m for m in MARKERS[1:] if not m.startswith(b"\\"))
_RARE_ESCAPED = tuple(m for m in MARKERS[1:] if m.startswith(b"\\"))
_SHORTEST = min(map(len, MARKERS[1:]))


def _settled_by_newest(
    block: bytes, end: int, lo: int, max_line: int, events: Callable[[bytes], list[Event]]
) -> tuple[int, bytes, list[Event]] | int | None:
    """``(offset, line, its events)`` when the newest line that can carry an event lies in
    ``block`` (the bytes ending at ``end``, just after a newline; the file's lines start at
    ``lo``) and settles the state by itself: what the general way would read and stop at.
    An offset when no line that lies wholly in ``block`` can carry an event: the general way may
    start there, just after the line that began before the block. ``None`` otherwise."""
    n = len(block) - 1  # (the final newline)
    p = block.rfind(_MAIN, 0, n)
    if p < 0:
        first = block.find(b"\n")
        # (a marker in the line that began before the block is found by the general way)
        if first < n and not _has_rare(block, first + 1, n):
            return end - len(block) + first + 1
        return None
    s = block.rfind(b"\n", 0, p) + 1
    if s == 0 and end - len(block) != lo:  # the line may begin before the block
        return None
    e = block.find(b"\n", p)
    if e - s > max_line:
        return None
    # No newer line may hold any marker (nor the main one cut by the block's end: ``p`` is its
    # last occurrence, so none lies after it).
    if _has_rare(block, e, n):
        return None
    line = block[s:e]
    found = events(line)
    if not settles_alone(found):
        return None
    return end - len(block) + s, line, found


def _has_rare(block: bytes, lo: int, hi: int) -> bool:
    """Whether ``block[lo:hi]`` holds one of the markers other than the main one."""
    if hi - lo < _SHORTEST:  # (the usual end: nothing after the newest line that matters)
        return False
    for marker in _RARE:
        if block.rfind(marker, lo, hi) >= 0:
            return True
    return any(rfind_marker(block, marker, lo, hi) >= 0 for marker in _RARE_ESCAPED)
