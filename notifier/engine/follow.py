"""One session file, read as the engine reads it at start-up, then followed as it grows.

For ``answer``: is this question still waiting, and how did it end? No thread, no watcher, no
liveness: each ``read`` takes what the file gained since the last one."""

from __future__ import annotations

import time
from collections.abc import Callable

from notifier.core.board import Board
from notifier.core.model import SessionView, Transition
from notifier.engine.files import SessionFiles
from notifier.engine.options import EngineOptions
from notifier.pi.catalog import QuestionCatalog


class FollowedFile:
    def __init__(self, path: str, catalog: QuestionCatalog, wall: Callable[[], float] = time.time) -> None:
        self.path = path
        options = EngineOptions(roots=[], catalog=catalog, liveness=False)
        self._files = SessionFiles(options, Board(liveness=False), wall)
        self._files.add(path, initial=True)

    def read(self) -> list[Transition]:
        """What changed since the last read (a file that is gone is forgotten: no session left)."""
        return self._files.read(self.path)

    def view(self) -> SessionView | None:
        """The session as read so far (``None``: no session header read)."""
        return self._files.board.view(self.path)
