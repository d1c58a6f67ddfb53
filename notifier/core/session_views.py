"""The board's session views, in the order they first appeared (pure).

The order is a dict's (a changed view keeps its place; a removed one leaves, and comes back at
the end), but the views are kept in a list, so a snapshot's tuple is one copy of that list:
``tuple(dict.values())`` walks the dict instead, four times slower with thousands of sessions,
and every event pays for it before the run --json line goes out."""

from __future__ import annotations

from typing import cast

from notifier.core.model import SessionView


class SessionViews:
    def __init__(self) -> None:
        self._slot: dict[str, int] = {}  # key → index in the lists
        self._keys: list[str | None] = []
        self._views: list[SessionView | None] = []  # None: removed (gone at the next snapshot)
        self._holes = 0

    def __len__(self) -> int:
        return len(self._slot)

    def set(self, key: str, view: SessionView) -> None:
        at = self._slot.get(key)
        if at is None:
            self._slot[key] = len(self._views)
            self._keys.append(key)
            self._views.append(view)
        else:
            self._views[at] = view

    def remove(self, key: str) -> None:
        at = self._slot.pop(key, None)
        if at is not None:
            self._keys[at] = self._views[at] = None
            self._holes += 1

    def snapshot(self) -> tuple[SessionView, ...]:
        """Every view, in order (an immutable copy)."""
        if self._holes:
            kept = [(k, v) for k, v in zip(self._keys, self._views, strict=True) if v is not None]
            self._keys = [k for k, _ in kept]
            self._views = [v for _, v in kept]
            self._slot = {k: i for i, k in enumerate(self._keys) if k is not None}
            self._holes = 0
        return cast("tuple[SessionView, ...]", tuple(self._views))
