"""The ``run --json`` output: one JSON object per line on stdout (docs/contract.md §2). The objects
themselves (and ``status --json``) are built by :mod:`notifier.core.codec`."""

from __future__ import annotations

import sys
import threading
from collections.abc import Callable, Sequence
from time import time
from typing import IO, TYPE_CHECKING, Any

from notifier.core.codec import dumps, event_obj, iso
from notifier.core.model import Snapshot

if TYPE_CHECKING:
    from notifier.engine import Batch


class JsonOutput:
    """Prints one JSON object per line, flushed at once. Stops the app if stdout goes away. The
    engine's first output (:class:`notifier.engine.Output`): it reads only the transitions."""

    def __init__(self, stream: IO[str] | None = None, on_broken: Callable[[], None] | None = None) -> None:
        self.stream = stream or sys.stdout
        self.on_broken = on_broken
        self._lock = threading.Lock()

    def _write(self, objs: Sequence[dict[str, Any]]) -> None:
        if not objs:
            return
        text = "".join(dumps(o) + "\n" for o in objs)
        with self._lock:
            try:
                self.stream.write(text)
                self.stream.flush()
            except (BrokenPipeError, ValueError, OSError):
                if self.on_broken is not None:
                    self.on_broken()

    def ready(self, info: Any, snapshot: Snapshot) -> None:
        self._write([{"event": "ready", "at": iso(time()), "sessions": info.sessions, "pending": info.pending,
                      "scan_s": round(info.scan_s, 4)}])

    def publish(self, batch: Batch) -> None:
        self._write([event_obj(t) for t in batch.transitions])
