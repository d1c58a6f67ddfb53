"""The history sink: every question (asked, resolved, how long it waited) in the store."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from notifier.core.model import Snapshot
from notifier.store import Store

if TYPE_CHECKING:
    from notifier.engine import Batch


class HistorySink:
    def __init__(self, store: Store) -> None:
        self.store = store

    def ready(self, info: Any, snapshot: Snapshot) -> None:
        pass

    def publish(self, batch: Batch) -> None:
        if batch.transitions:
            self.store.record(batch.transitions)
