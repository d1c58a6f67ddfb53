"""The state of one session file at start-up (and after a rewrite), read from its end only as
far as needed. One loop: read the file's last ``first`` bytes; going back from the newest line,
skip the lines without a marker (:data:`notifier.pi.lines.MARKERS`) and take the events of the
others until they settle the state (:mod:`notifier.core.settle`); replay those forward through
the reducer. Not settled yet: double the window and go on where the last one stopped. Past
``cap`` (and for a file whose first line is no header) the file is replayed forward instead, in
bounded memory. Either way the result equals a full read."""

from __future__ import annotations

import os
from collections import deque
from collections.abc import Callable

from notifier.core.reducer import Event, Header, Renamed, SessionReducer
from notifier.core.settle import Suffix
from notifier.pi.lines import MARKERS, may_have_events
from notifier.watch.readers import HEADER_LIMIT, forward_lines, last_line_end, read_head
from notifier.watch.tail import LONG_HEAD, WINDOW, LongLine, Tailer, long_head

FIRST_WINDOW = 16 << 10
KEEP_LINES = 10_000  # a rewrite of a file replayed forward: the newest lines' events kept at most
Events = Callable[[bytes], list[Event]]


def settle_file(
    fd: int,
    st: os.stat_result,
    tailer: Tailer,
    max_line: int,
    events: Events,
    keep: list[Event] | None = None,
    first: int = FIRST_WINDOW,
    cap: int | None = None,
) -> SessionReducer:
    """The state of the open file ``fd`` (``st``: its fstat); ``tailer`` is set to continue at its
    end. ``events``: one line's events. ``keep`` receives the events that state was built from
    (the header's first): what a rewrite is compared with. ``cap``: the largest window (at least
    ``max_line``, so that any line read whole fits in it)."""
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
        found = _from_the_end(fd, body, size, max_line, events, first, max(cap or max_line, first))
    if found is None:  # not settled within the cap, or no header: the whole file, forward
        end = last_line_end(fd, body, size)
        reducer, start, renamed = _forward(fd, body, end, max_line, events, head_events, keep), body, True
    else:
        suffix, start, end = found
        reducer, renamed = suffix.replay(head_events), suffix.renamed
        if keep is not None:
            keep += head_events + suffix.events()
    held = b"" if end == size else os.pread(fd, size - end, end) if size - end <= max_line else None
    offset = size if held is not None else end
    want = min(WINDOW, offset)
    tailer.seek(offset, ident, held or b"", os.pread(fd, want, offset - want), head=head)
    tailer.window_start = start
    tailer.name_checked = renamed or Renamed in map(type, head_events)
    return reducer


def _from_the_end(
    fd: int, body: int, size: int, max_line: int, events: Events, first: int, cap: int
) -> tuple[Suffix, int, int] | None:
    """``(the settling suffix, where its oldest line starts, where complete lines end)`` read
    from windows at the file's end (``body``: where its lines after the header start), or
    ``None`` if no window up to ``cap`` bytes settles it."""
    suffix = Suffix()
    window, lo, data = first, size, b""  # data: the file's bytes [lo, size)
    end = top = -1  # where complete lines end; where the lines still to look at end
    while True:
        new_lo = max(body, size - window)
        more = os.pread(fd, lo - new_lo, new_lo)
        if len(more) != lo - new_lo:
            return None  # (the file shrank under us: read forward, the tailer notices the rewrite)
        data, lo = more + data, new_lo
        if end < 0:
            nl = data.rfind(b"\n")
            end = top = lo + nl + 1 if nl >= 0 else -1
        if end >= 0:
            # the lines that lie wholly in the window (the first begins before it, unless at body)
            start = lo if lo == body else lo + data.find(b"\n", 0, top - lo) + 1
            oldest = _take(data, lo, start, top, max_line, events, suffix)
            if suffix.settled:
                return suffix, oldest, end
            top = start
        if lo == body:  # (the whole file was looked at)
            return suffix, body, max(end, body)
        if window >= cap:
            return None
        window *= 2


def _take(data: bytes, lo: int, start: int, top: int, max_line: int, events: Events, suffix: Suffix) -> int:
    """Add to ``suffix`` the events of the lines in the file's ``[start, top)`` (``data`` holds
    its bytes from ``lo``) that hold a marker, newest first, until it is settled. Where the
    last line taken starts (``start`` if none settled it). Each marker is searched for once per
    byte: the newest occurrence of each is kept, and searched again below a line taken."""
    a, b = start - lo, top - lo
    last = [data.rfind(marker, a, b) for marker in MARKERS]
    while True:
        hit = max(last)
        if hit < 0:
            return start
        s = data.rfind(b"\n", a, hit) + 1 or a
        e = data.find(b"\n", hit, b)
        line = data[s:e] if e - s <= max_line else LongLine(long_head(data[s : s + LONG_HEAD], max_line))
        suffix.add(events(line))
        if suffix.settled:
            return lo + s
        for i, at in enumerate(last):
            if at >= s:
                last[i] = data.rfind(MARKERS[i], a, s)


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
