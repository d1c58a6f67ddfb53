"""Folders inotify cannot watch (the per-user watch limit was reached): said once, then polled.

At the limit watchdog's recursive watch leaves each sub-folder it cannot watch unwatched (without a
word before 7.1.1; 7.1.1 logs each one): only a failure while the watch of the root is being set up
raises, and from 7.1.1 that includes its sub-folders, so the whole tree is then polled
(``notifier.watch.observer``). The folders that appear later are this module's concern.
No watchdog issue reports this that we found; the same gap was closed upstream elsewhere
(https://github.com/notify-rs/notify/pull/970, https://github.com/oven-sh/bun/pull/36415), and
https://github.com/gorakhargosh/watchdog/issues/790 asks for a say in which folders are watched.
So the kernel is asked which folders are watched (:func:`watched_inodes`), and whether it really
refuses one more watch (:func:`watch_refused`)."""

from __future__ import annotations

import errno
import logging
import os
import time
from collections.abc import Iterable
from typing import Protocol

from watchdog.events import DirCreatedEvent, FileSystemEventHandler
from watchdog.observers import Observer

from notifier.core.text import clean
from notifier.sessions.scanner import is_session_name, walk_tree

log = logging.getLogger(__name__)

UNWATCHED_POLL_S = 2.0
# What inotify ran out of, by the errno it refused a watch with: (what, the setting to raise).
LIMITS = {
    errno.ENOSPC: ("watch", "fs.inotify.max_user_watches"),
    errno.EMFILE: ("instance", "fs.inotify.max_user_instances"),
}


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
        without a watch is not enough (watchdog may be adding it right now, after a
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


def watched_inodes() -> set[int] | None:
    """The inodes this process has an inotify watch on, as the kernel lists them: one
    ``inotify wd:… ino:<hex> sdev:… mask:…`` line per watch in ``/proc/self/fdinfo/<fd>`` of each
    inotify descriptor (proc(5)). None where that cannot be read (not Linux, no /proc).

    Inode numbers alone are compared: ``sdev`` is the superblock's device, which is not always the
    ``st_dev`` that stat reports (btrfs subvolumes, overlayfs), and a root's folders share one
    file system anyway."""
    try:
        fds = os.listdir("/proc/self/fd")
    except OSError:
        return None
    inodes: set[int] = set()
    for fd in fds:
        try:
            if os.readlink(f"/proc/self/fd/{fd}") != "anon_inode:inotify":
                continue
            with open(f"/proc/self/fdinfo/{fd}", encoding="ascii") as fh:
                lines = [line.split() for line in fh if line.startswith("inotify ")]
        except (OSError, ValueError):
            continue  # closed meanwhile (the listing's own descriptor, a watcher stopping)
        for fields in lines:
            for field in fields:
                if field.startswith("ino:"):
                    try:
                        inodes.add(int(field[4:], 16))
                    except ValueError:
                        pass
    return inodes


def watch_refused(paths: Iterable[str]) -> bool:
    """Does inotify refuse one more watch? A fresh observer (an inotify instance of its own, so
    a folder already watched here still costs a new watch) is asked to watch the first of
    ``paths`` that still exists: ``schedule`` raises ``OSError`` ENOSPC at the per-user watch
    limit; EMFILE if no inotify instance is left at all."""
    try:
        probe = Observer()
    except OSError as exc:
        return exc.errno in (errno.EMFILE, errno.ENOSPC)
    probe.start()
    try:
        for path in paths:
            try:
                probe.schedule(FileSystemEventHandler(), path, event_filter=[DirCreatedEvent])
            except OSError as exc:
                if exc.errno == errno.ENOSPC:
                    return True
                continue  # (removed meanwhile, or not readable: the next one)
            return False
        return False
    finally:
        probe.stop()
        probe.join(timeout=2)
