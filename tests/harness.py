"""An in-process engine with a real watcher on a real folder, collecting what outputs would get."""

from __future__ import annotations

import threading
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from notifier.core.model import Snapshot, Transition
from notifier.core.owners import Proc
from notifier.engine import Batch, Engine, Output, ReadyInfo
from notifier.pi.parse import QuestionCatalog
from notifier.sessions import EngineOptions

from .conftest import wait_for


class Collect:
    def __init__(self) -> None:
        self.items: list[Transition] = []
        self.info: ReadyInfo | None = None
        self.snapshot = Snapshot()
        self.lock = threading.Lock()

    def ready(self, info: ReadyInfo, snapshot: Snapshot) -> None:
        self.info = info
        self.snapshot = snapshot

    def publish(self, batch: Batch) -> None:
        with self.lock:
            self.items.extend(batch.transitions)
            self.snapshot = batch.snapshot

    def of(self, kind: str) -> list[Transition]:
        with self.lock:
            return [t for t in self.items if t.kind == kind]


class Harness:
    def __init__(
        self,
        roots: Sequence[Path],
        liveness: bool = False,
        processes: Callable[[], Sequence[Proc] | None] | None = None,
        extra_tools: Sequence[str] = (),
        outputs: Sequence[Output] = (),
        **kw: Any,
    ) -> None:
        """``outputs``: outputs of the engine's before the one that collects (``self.collected``)."""
        self.collected = Collect()
        opts = EngineOptions([str(r) for r in roots], QuestionCatalog(extra_tools), liveness=liveness, **kw)
        self.engine = Engine(opts, [*outputs, self.collected], processes=processes)

    def __enter__(self) -> Harness:
        self.engine.start()
        wait_for(lambda: self.engine.ready_event.is_set(), 20, "engine ready")
        assert self.engine.failed is None, self.engine.failed
        return self

    def __exit__(self, *exc: object) -> None:
        self.engine.stop()

    def wait(self, kind: str, count: int = 1, timeout: float = 10.0) -> list[Transition]:
        return wait_for(
            lambda: len(self.collected.of(kind)) >= count and self.collected.of(kind), timeout, f"{count}×{kind}"
        )
