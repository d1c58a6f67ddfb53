"""Clearing abandoned questions from the tray or window (``Clear``) on a running engine: one, or
all, and the next snapshot shows them gone (a real watcher on a real folder)."""

from __future__ import annotations

from pathlib import Path

from notifier.app import clear_abandoned
from notifier.core.commands import Clear

from ..conftest import wait_for
from ..harness import Harness
from ..writer import append, ask, header, user


def test_clear_all_abandoned_then_the_snapshot_has_none(tmp_path: Path) -> None:
    files = [tmp_path / f"--p{i}--" / "s.jsonl" for i in range(3)]
    with Harness([tmp_path], liveness=True, processes=lambda: [], liveness_interval=0.05) as h:
        for i, f in enumerate(files):
            append(f, header(f"/home/u/p{i}"), user(), ask(f"q{i}", "Still there?"))
        h.wait("abandoned", count=3)
        clear_abandoned(h.engine, Clear(str(files[0]), "q0"))
        wait_for(lambda: len(h.engine.snapshot.abandoned) == 2, 10, "one cleared")
        clear_abandoned(h.engine, Clear())
        wait_for(lambda: h.engine.snapshot.abandoned == (), 10, "all cleared")
        assert h.collected.snapshot.abandoned == ()  # (and the outputs were handed that snapshot)
