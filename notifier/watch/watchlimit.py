"""Folders inotify cannot watch (the per-user watch limit was reached): said once, then polled."""

from __future__ import annotations

import logging
import os
import time
from typing import Protocol

from notifier.core.text import clean
from notifier.sessions.scanner import is_session_name, walk_tree

log = logging.getLogger(__name__)

UNWATCHED_POLL_S = 2.0


class Watches(Protocol):
    """What this needs of ``notifier.watch.observer.Watcher``."""

    def unwatched(self, root: str, dirs: list[str]) -> list[str]: ...

    def limit_reached(self, missing: list[str]) -> bool: ...


class WatchLimit:
    def __init__(self, roots: list[str]) -> None:
        self.roots = roots
        self.next_poll: float | None = None  # time.monotonic() of the next poll, if any
        self._unwatched: dict[str, list[str]] = {}

    def check(self, root: str, watcher: Watches) -> None:
        """Say once, and poll, when inotify really ran out of watches under ``root``. A folder
        missing from watchdog's table is not enough (it may be adding it right now, after a
        ``mkdir -p``): the limit is confirmed by the kernel refusing one more watch."""
        dirs = walk_tree(root).dirs
        missing = watcher.unwatched(root, dirs)
        if missing and not watcher.limit_reached(missing):
            missing = []
        if missing:
            if root not in self._unwatched:
                log.warning(
                    "inotify watch limit reached: %d of %d folders in %s are not watched; polling them every %.0f s "
                    "(raise fs.inotify.max_user_watches to fix)",
                    len(missing),
                    len(dirs),
                    clean(root),
                    UNWATCHED_POLL_S,
                )
            self._unwatched[root] = missing
            self.next_poll = time.monotonic() + UNWATCHED_POLL_S
        else:
            self._unwatched.pop(root, None)

    def check_folder(self, folder: str, watcher: Watches) -> None:
        """A folder appeared: check the root it is in."""
        for root in self.roots:
            if folder == root or folder.startswith(root.rstrip(os.sep) + os.sep):
                self.check(root, watcher)
                return

    def due(self, mono: float) -> list[str]:
        """The session files in unwatched folders, if it is time to poll them (else none)."""
        if self.next_poll is None or mono < self.next_poll:
            return []
        files = []
        for folders in list(self._unwatched.values()):
            for folder in folders:
                try:
                    names = os.listdir(folder)
                except OSError:
                    continue
                files += [os.path.join(folder, name) for name in names if is_session_name(name)]
        self.next_poll = mono + UNWATCHED_POLL_S if self._unwatched else None
        return files
