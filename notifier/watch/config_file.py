"""Following one file (the config file): a call when it is created, written, replaced or removed.

inotify through watchdog on the file's folder (or, while that folder does not exist, the nearest
folder that does), so nothing wakes while the file is left alone; a burst of events (an editor
writing, renaming, touching) becomes one call ``settle_s`` after the last of them."""

from __future__ import annotations

import logging
import os
import threading
from collections.abc import Callable
from typing import Any

from watchdog.events import FileSystemEvent, FileSystemEventHandler
from watchdog.observers import Observer

from notifier.watch.observer import EVENTS

log = logging.getLogger(__name__)


def _nearest_existing(path: str) -> str:
    while not os.path.isdir(path) and os.path.dirname(path) != path:
        path = os.path.dirname(path)
    return path


class _Handler(FileSystemEventHandler):
    def __init__(self, follower: FileFollower) -> None:
        self.follower = follower

    def on_any_event(self, event: FileSystemEvent) -> None:
        paths = {os.fsdecode(event.src_path), os.fsdecode(getattr(event, "dest_path", "") or "")}
        self.follower.touched(paths)


class FileFollower:
    def __init__(self, path: str, on_change: Callable[[], None], settle_s: float = 0.2) -> None:
        self.path = os.path.abspath(path)
        self.folder = os.path.dirname(self.path)
        self.on_change = on_change
        self.settle_s = settle_s
        self.observer = Observer()
        self.observer.daemon = True
        self._lock = threading.Lock()
        self._watched: tuple[str, Any] | None = None
        self._timer: threading.Timer | None = None
        self._stopped = False

    def start(self) -> None:
        self.observer.start()
        self._arm()

    def stop(self) -> None:
        with self._lock:
            self._stopped = True
            if self._timer is not None:
                self._timer.cancel()
        self.observer.stop()
        if self.observer.is_alive():
            self.observer.join(timeout=0.3)  # (a daemon thread: the shutdown budget is short)

    def _arm(self) -> None:
        """Watch the file's folder, or the nearest one there while it is not."""
        target = _nearest_existing(self.folder)
        with self._lock:
            if self._watched is not None and self._watched[0] == target:
                return
            if self._watched is not None:
                self.observer.unschedule(self._watched[1])
            try:
                self._watched = (target, self.observer.schedule(_Handler(self), target, event_filter=EVENTS))
            except OSError as exc:
                self._watched = None
                log.warning("cannot follow %s (%s): changes apply at the next start", self.path, exc.strerror or exc)

    def touched(self, paths: set[str]) -> None:
        """(Observer thread.) Events for ``paths``: the file, or a folder on the way to it."""
        if any(p and (p == self.folder or self.folder.startswith(p + "/")) for p in paths):
            self._arm()  # a folder on the way to the file appeared or went: watch the nearest
            self._soon()
        elif self.path in paths:
            self._soon()

    def _soon(self) -> None:
        with self._lock:
            if self._stopped:
                return
            if self._timer is not None:
                self._timer.cancel()
            self._timer = threading.Timer(self.settle_s, self._fire)
            self._timer.daemon = True
            self._timer.start()

    def _fire(self) -> None:
        try:
            self.on_change()
        except Exception:
            log.exception("following %s failed; carrying on", self.path)
