"""What one remote's link has read and the engine has not applied yet: bounded, folded and paced.

A remote that floods (hundreds of thousands of events, or huge ones) must neither hold up the
engine (a local question is reported within its usual latency) nor make memory grow. So:

- the link reads at a bounded pace (:class:`Pace`: events and bytes per second, with a burst for
  the start-up re-sync); beyond it, reading waits and the remote's own output waits in its pipe;
- what is read waits here, at most :data:`MAX_ITEMS` events (a full inbox makes the link wait too);
- the engine takes it in batches of at most :data:`TAKE_MAX`, one engine call at a time, so its own
  messages (a local session's change) come between two batches;
- a question asked and ended again before the engine took it is *folded*: only its end is kept
  (an end of a question the board never had changes nothing), and counted.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from dataclasses import dataclass

from notifier.remote.stream import RemoteAsked, RemoteEnded, StreamEvent

MAX_ITEMS = 2000  # events waiting for the engine, per remote
TAKE_MAX = 500  # events applied in one engine call
RATE = 1000.0  # cost units a second: an event costs 1 + its bytes / BYTES_PER_UNIT
BURST = 4000.0
BYTES_PER_UNIT = 1024


@dataclass(frozen=True)
class Down:
    """The link went down (after the events read before it)."""


Item = StreamEvent | Down
Key = tuple[str, str]  # (session key, tool call id)


class Inbox:
    def __init__(self, size: int = MAX_ITEMS) -> None:
        self.size = size
        self._cond = threading.Condition()
        self._items: dict[object, Item] = {}  # in order; a question's slot is (key, n)
        self._latest: dict[Key, object] = {}  # a question's newest slot
        self._n = 0
        self._scheduled = False  # the engine has been asked to take (and has not emptied it yet)
        self._closed = False
        self.folded = 0  # questions asked and ended before the engine saw them (all time)

    def __len__(self) -> int:
        with self._cond:
            return len(self._items)

    def put(self, item: Item) -> bool:
        """Add what the link read (waits while the inbox is full). True: the caller must ask the
        engine to :meth:`take` (no such call is outstanding)."""
        with self._cond:
            while len(self._items) >= self.size and not self._closed:
                self._cond.wait(0.5)
            if self._closed:
                return False
            key: Key | None = None
            if isinstance(item, (RemoteAsked, RemoteEnded)):
                key = (item.session.key, item.question.tool_call_id)
                slot = self._latest.get(key)
                waiting = self._items.get(slot) if slot is not None else None
                if isinstance(item, RemoteEnded) and isinstance(waiting, RemoteAsked) and not waiting.initial:
                    self._items[slot] = item  # asked and ended between two looks: only the end
                    self.folded += 1
                    return self._schedule()
                if waiting is not None and type(waiting) is type(item):
                    self._items[slot] = item  # the newer word on it, in the older one's place
                    return self._schedule()
            self._n += 1
            new_slot: object = (key, self._n) if key is not None else self._n
            self._items[new_slot] = item
            if key is not None:
                self._latest[key] = new_slot
            return self._schedule()

    def _schedule(self) -> bool:
        if self._scheduled:
            return False
        self._scheduled = True
        return True

    def take(self, limit: int = TAKE_MAX) -> tuple[list[Item], bool]:
        """Up to ``limit`` events, oldest first, and whether more wait (then the caller asks the
        engine again; else the next :meth:`put` does)."""
        with self._cond:
            out: list[Item] = []
            for slot in list(self._items)[:limit]:
                item = self._items.pop(slot)
                if isinstance(slot, tuple) and slot[0] is not None and self._latest.get(slot[0]) is slot:
                    del self._latest[slot[0]]
                out.append(item)
            more = bool(self._items)
            self._scheduled = more
            self._cond.notify_all()
            return out, more

    def close(self) -> None:
        """Stop: a link waiting on a full inbox goes on (and what it adds is dropped)."""
        with self._cond:
            self._closed = True
            self._cond.notify_all()


class Pace:
    """A token bucket: :meth:`spend` waits (on ``stop``) until the cost of one more line fits."""

    def __init__(
        self,
        rate: float = RATE,
        burst: float = BURST,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.rate = rate
        self.burst = burst
        self.clock = clock
        self._tokens = burst
        self._at = clock()
        self.waited = 0  # how many lines had to wait

    def spend(self, size: int, stop: threading.Event) -> None:
        cost = min(self.burst, 1.0 + size / BYTES_PER_UNIT)
        now = self.clock()
        self._tokens = min(self.burst, self._tokens + (now - self._at) * self.rate)
        self._at = now
        if self._tokens < cost:
            self.waited += 1
            stop.wait((cost - self._tokens) / self.rate)
            now = self.clock()
            self._tokens = min(self.burst, self._tokens + (now - self._at) * self.rate)
            self._at = now
        self._tokens -= cost
