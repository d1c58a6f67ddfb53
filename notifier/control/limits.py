"""The control channel's caps and timeouts, and the decisions made with them: which connection
makes room for a new one, when a connection has waited too long, when the server thread must
wake next, and what it watches a connection for. No I/O here: the server acts on the answers."""

from __future__ import annotations

import selectors
from collections.abc import Collection
from typing import Literal

from notifier.control.connection import Connection

MAX_CONNECTIONS = 64
READ_PAUSE = 256 << 10  # with this much of its answers unread, a client's next requests wait
IDLE_TIMEOUT = 10.0  # seconds a connection that is not subscribed may sit without a request
STALL_TIMEOUT = 5.0  # seconds queued output may wait for a peer that reads nothing at all
EVICT_GRACE = 0.5  # a connection this young is never evicted (its request is on the way)


def eviction_victim(conns: Collection[Connection], now: float, max_connections: int) -> Connection | None:
    """Who makes room for a new connection: the longest idle one that is neither subscribed nor
    being answered, or, when subscriptions hold over half the places, the oldest of them; None
    when nobody should."""
    idle = [
        c
        for c in conns
        if not c.kept and not c.busy and not c.inbuf and now - c.active >= EVICT_GRACE and not c.pending()
    ]
    if not idle:
        kept = [c for c in conns if c.kept]
        if len(kept) <= max_connections // 2:
            return None
        idle = kept
    return min(idle, key=lambda c: c.active)


def timed_out(
    conn: Connection, now: float, idle_timeout: float, stall_timeout: float = STALL_TIMEOUT
) -> Literal["stalled", "idle"] | None:
    """``stalled``: its output waited over ``stall_timeout`` with nothing read; ``idle``: not
    subscribed, nothing asked for over ``idle_timeout``."""
    waiting = conn.stalled_since()
    if waiting is not None and now - waiting > stall_timeout:
        return "stalled"
    if not conn.kept and not conn.busy and waiting is None and now - conn.active > idle_timeout:
        return "idle"
    return None


def next_deadline(
    conns: Collection[Connection],
    now: float,
    idle_timeout: float,
    also: float = 0.0,
    stall_timeout: float = STALL_TIMEOUT,
) -> float | None:
    """Seconds until a timeout could fire (or the time ``also``, when set, comes); None (sleep
    until something happens) when none can."""
    deadlines = [also] if also else []
    for conn in conns:
        waiting = conn.stalled_since()
        if waiting is not None:
            deadlines.append(waiting + stall_timeout)
        elif not conn.kept and not conn.busy:
            deadlines.append(conn.active + idle_timeout)
    if not deadlines:
        return None
    return max(min(deadlines) - now, 0.0) + 0.01


def wanted_events(conn: Connection) -> int:
    """What to watch ``conn`` for: reading unless a request is being answered, the peer is done
    or too much of its answers is unread; writing while output is queued."""
    events = 0
    if not conn.busy and not conn.eof and conn.queued_bytes < READ_PAUSE:
        events |= selectors.EVENT_READ
    if conn.pending():
        events |= selectors.EVENT_WRITE
    return events
