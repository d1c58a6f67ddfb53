"""One read of every session, then done: ``status``, ``answer`` and ``goto`` without a running
app. No watcher, no thread, no queue: what it imports is what the read needs (the engine thread
and its parts, :mod:`notifier.engine.loop`, stay out of a one-shot command's start-up)."""

from __future__ import annotations

import logging
import os
import time
from collections.abc import Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING

from notifier.core.board import Board
from notifier.engine.files import SessionFiles
from notifier.engine.options import EngineOptions
from notifier.sessions.cache import StartupCache

if TYPE_CHECKING:
    from notifier.core.model import Snapshot
    from notifier.engine.liveness import Probe

log = logging.getLogger(__name__)


def open_cache(options: EngineOptions) -> StartupCache | None:
    """The start-up scan cache the options name (None: read every file)."""
    if options.cache_path is None:
        return None
    return StartupCache(options.cache_path, options.catalog.key, options.roots, options.max_line)


def scan_once(options: EngineOptions, processes: Probe | None = None) -> Snapshot:
    """Read every session once (for ``answer``, ``goto``): no watcher, no thread."""
    with scanned(options, processes) as board:
        return board.snapshot(time.time())


@contextmanager
def scanned(options: EngineOptions, processes: Probe | None = None) -> Iterator[Board]:
    """The board after one read of every session (a snapshot of it is :func:`scan_once`). The
    scan cache is written once the caller is done with it (after ``status`` printed it)."""
    wall = time.time
    files = SessionFiles(options, Board(liveness=options.liveness), wall)
    cache = open_cache(options)
    for root in options.roots:
        if os.path.isdir(root):
            files.scan(root, initial=True, cache=cache)
    if options.liveness:
        from notifier.engine.liveness import read_processes
        from notifier.system.supervisor import FailureLog

        board = files.board
        board.local.set_processes(read_processes(processes, FailureLog(), board.local.asking_folders()), wall())
    files.fill_names()
    if cache is not None:
        log.debug("scanned %d session files, %d unchanged since the last scan", len(files.board.local), cache.hits)
    try:
        yield files.board
    finally:
        if cache is not None:
            cache.save(files.tailers, files.board)
