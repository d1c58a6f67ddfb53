"""The history sink: every question (asked, resolved, how long it waited) in the store."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from notifier.core.model import Snapshot, Transition, TurnChange
from notifier.store import Store


class HistorySink:
    def __init__(self, store: Store) -> None:
        self.store = store

    def ready(self, info: Any, snapshot: Snapshot) -> None:
        pass

    def transitions(self, items: Sequence[Transition], snapshot: Snapshot) -> None:
        if items:
            self.store.record(items)

    def turns(self, items: Sequence[TurnChange]) -> None:
        pass  # (finished turns are not this output's business)
