"""The state of one session file at start-up (and after a rewrite), read from its end only as
far as needed. One loop: read the file's end window; going back from the newest line, skip the
lines without a marker (:data:`notifier.pi.parse.MARKERS`) and take the events of the others
until they settle the state (:mod:`notifier.core.settle`); replay those forward through the
reducer. Not settled yet: double the window and go on where the last one stopped. Past a cap
(too many entries that do not settle it, a line too long to hold) and for a file whose first
line is no header, the file is replayed forward instead. Memory stays bounded either way, and
the result equals a full read."""

from __future__ import annotations

import os
from collections import deque
from collections.abc import Callable

from notifier.core.reducer import Event, Header, Renamed, SessionReducer
from notifier.core.settle import Suffix
from notifier.pi.parse import ESCAPE, MARKERS, may_have_events
from notifier.sessions.readers import HEADER_LIMIT, forward_lines, last_line_end, read_head
from notifier.sessions.tail import LONG_HEAD, WINDOW, LongLine, Tailer, long_head

FIRST_WINDOW = 16 << 10
STEP = 1 << 20  # bytes the window grows by at most at a time
CAP = 20_000  # entries taken from the end that do not settle the state: past them, read forward
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
