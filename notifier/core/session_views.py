"""The board's session views, in the order they first appeared (pure).

The order is a dict's (a changed view keeps its place; a removed one leaves, and comes back at
the end). The views are kept in chunks of ``CHUNK`` (tuples, see :class:`Views`) that
successive snapshots share, so a snapshot costs the chunk that changed plus one reference per
chunk, not one per session: with thousands of sessions, a tuple of them all was the largest
part of the work between a line appended to a session file and its run --json line."""

from __future__ import annotations

from notifier.core.model import SessionView, Views

CHUNK = 64


class SessionViews:
    def __init__(self) -> None:
        self._slot: dict[str, tuple[int, int]] = {}  # key → (chunk, place in it)
        self._keys: list[list[str]] = []  # the keys of each chunk, in order
        self._chunks: list[tuple[SessionView, ...]] = []
        self._last: Views | None = None  # the last snapshot, while nothing changed

    def __len__(self) -> int:
        return len(self._slot)

    def set(self, key: str, view: SessionView) -> None:
        self._last = None
        at = self._slot.get(key)
        if at is not None:
            c, i = at
            chunk = self._chunks[c]
            self._chunks[c] = (*chunk[:i], view, *chunk[i + 1 :])
            return
        if not self._chunks or len(self._keys[-1]) >= CHUNK:
            self._chunks.append(())
            self._keys.append([])
        c = len(self._chunks) - 1
        self._slot[key] = (c, len(self._keys[c]))
        self._keys[c].append(key)
        self._chunks[c] += (view,)

    def add_new(self, items: list[tuple[str, SessionView]]) -> None:
        """:meth:`set` for keys not here yet, in bulk (the first snapshot after the start-up
        scan: thousands of them), each chunk built once."""
        if not items:
            return
        self._last = None
        slot, keys, chunks = self._slot, self._keys, self._chunks
        start = 0
        if chunks and len(keys[-1]) < CHUNK:  # fill the last chunk first
            start = CHUNK - len(keys[-1])
            c = len(chunks) - 1
            for key, _ in items[:start]:
                slot[key] = (c, len(keys[c]))
                keys[c].append(key)
            chunks[c] += tuple(view for _, view in items[:start])
        for begin in range(start, len(items), CHUNK):
            part = items[begin : begin + CHUNK]
            c = len(chunks)
            keys.append([key for key, _ in part])
            chunks.append(tuple(view for _, view in part))
            for i, (key, _) in enumerate(part):
                slot[key] = (c, i)

    def remove(self, key: str) -> None:
        at = self._slot.pop(key, None)
        if at is None:
            return
        self._last = None
        c, i = at
        chunk, keys = self._chunks[c], self._keys[c]
        self._chunks[c] = chunk[:i] + chunk[i + 1 :]
        del keys[i]
        for j in range(i, len(keys)):
            self._slot[keys[j]] = (c, j)
        if not keys:  # chunks emptied by removals are dropped once they are many
            empty = sum(1 for ks in self._keys if not ks)
            if empty > 8 and empty * 2 > len(self._keys):
                self._compact()

    def snapshot(self) -> Views:
        """Every view, in order (immutable; shares its chunks with the board)."""
        if self._last is None:
            self._last = Views(self._chunks, len(self._slot))
        return self._last

    def _compact(self) -> None:
        keys = [k for ks in self._keys for k in ks]
        views = [v for chunk in self._chunks for v in chunk]
        self._keys = [keys[i : i + CHUNK] for i in range(0, len(keys), CHUNK)]
        self._chunks = [tuple(views[i : i + CHUNK]) for i in range(0, len(views), CHUNK)]
        self._slot = {k: (c, i) for c, ks in enumerate(self._keys) for i, k in enumerate(ks)}
