"""watchdog wrapper: recursive watches on each sessions root, waiting for roots that do not exist.

Only created / modified / moved / deleted events are reacted to (watchdog 7 also reports opens and
closes, and a handler that reads on those wakes itself up forever). Each event becomes a small
message on the engine's queue; the engine does all reading.
"""

from __future__ import annotations

import errno
import logging
import os
import threading
import warnings
from typing import Any, Protocol, cast

from watchdog.events import (
    DirCreatedEvent,
    DirDeletedEvent,
    DirMovedEvent,
    FileCreatedEvent,
    FileDeletedEvent,
    FileModifiedEvent,
    FileMovedEvent,
    FileSystemEvent,
    FileSystemEventHandler,
)
from watchdog.observers import Observer
from watchdog.observers.api import EventQueue
from watchdog.observers.polling import PollingObserver

from notifier.core.text import clean
from notifier.sessions.scanner import is_session_name
from notifier.system.logonce import LogOnce

log = logging.getLogger(__name__)
# watchdog warns when a folder created inside a new folder is registered twice (a harmless race).
warnings.filterwarnings("ignore", message="Callback with id", category=RuntimeWarning)

EVENTS: list[type[FileSystemEvent]] = [
    FileCreatedEvent,
    FileModifiedEvent,
    FileMovedEvent,
    FileDeletedEvent,
    DirCreatedEvent,
    DirMovedEvent,
    DirDeletedEvent,
]

from notifier.watch.events import FileChanged, FolderAppeared, PathGone, RootBack, RootGone  # noqa: E402


class Outbox(Protocol):
    """Where watch events go (the engine's queue)."""

    def put(self, item: Any) -> None: ...


def _s(path: Any) -> str:
    return os.fsdecode(path)


class _Handler(FileSystemEventHandler):
    def __init__(self, out: Outbox, root: str) -> None:
        self.out = out
        self.root = root

    def on_any_event(self, event: FileSystemEvent) -> None:
        kind = event.event_type
        src = _s(event.src_path)
        if event.is_directory:
            if kind == "created":
                self.out.put(FolderAppeared(src))
            elif kind == "moved":
                self.out.put(PathGone(src))
                self.out.put(FolderAppeared(_s(event.dest_path)))
            elif kind == "deleted":
                self.out.put(RootGone(src) if src == self.root else PathGone(src))
            return
        if kind == "moved":
            if is_session_name(src):
                self.out.put(PathGone(src))
            dest = _s(event.dest_path)
            if is_session_name(dest):
                self.out.put(FileChanged(dest))
        elif is_session_name(src):
            self.out.put(PathGone(src) if kind == "deleted" else FileChanged(src))


class _ParentHandler(FileSystemEventHandler):
    """Watches the nearest existing ancestor of a missing root until the root appears."""

    def __init__(self, out: Outbox, root: str) -> None:
        self.out = out
        self.root = root

    def on_any_event(self, event: FileSystemEvent) -> None:
        # The root, or a folder on the way to it, appeared: the engine re-checks (and the
        # watcher moves this watch one level closer if the root is still missing).
        if event.event_type in ("created", "moved"):
            self.out.put(RootBack(self.root))


def _nearest_existing(path: str) -> str:
    current = os.path.dirname(path)
    while current and not os.path.isdir(current):
        parent = os.path.dirname(current)
        if parent == current:
            break
        current = parent
    return current or os.sep


class _HandOver(EventQueue):
    """The observer's event queue, short-circuited: an emitter's event for a watched folder is
    handed to the folder's handlers at once, on the emitter's thread, instead of waiting for
    the observer's dispatch thread to take it from the queue (one thread hop less between a
    write and the engine; our handlers only put a message on the engine's queue). The stop
    request, and any event this does not recognise, still go through the queue."""

    def __init__(self, handlers: dict[Any, set[FileSystemEventHandler]]) -> None:
        super().__init__()
        self._handlers = handlers  # the observer's own table (changed under its lock)
        self._once = LogOnce(log)

    def put(self, item: Any, block: bool = True, timeout: float | None = None) -> None:
        watch = item[1] if isinstance(item, tuple) and len(item) == 2 else None
        if watch is None or getattr(watch, "is_file", True):  # (file watches filter paths)
            super().put(item, block, timeout)
            return
        try:
            handlers = list(self._handlers.get(watch, ()))
        except RuntimeError:  # (the observer changed that set meanwhile, under its lock)
            super().put(item, block, timeout)
            return
        for handler in handlers:
            try:
                handler.dispatch(item[0])
            except Exception as exc:  # a bug must cost this event, not the emitter's thread
                self._once("handler", type(exc).__name__, "a watch event could not be handled (%s)", clean(exc))


def _hand_over(observer: Any) -> None:
    """Short-circuit ``observer``'s dispatch thread if its internals are the ones this knows
    (watchdog 7: the handler table, the event queue, folder watches with ``is_file``); else, or
    for anything else, events take the usual way through the queue."""
    handlers = getattr(observer, "_handlers", None)
    if isinstance(handlers, dict) and type(getattr(observer, "_event_queue", None)) is EventQueue:
        observer._event_queue = _HandOver(handlers)  # noqa: SLF001


class Watcher:
    def __init__(self, out: Outbox) -> None:
        self.out = out
        self.observer = Observer()
        _hand_over(self.observer)
        self.poller: PollingObserver | None = None
        self._lock = threading.Lock()
        self._watches: dict[str, Any] = {}
        self._parent_watches: dict[str, tuple[str, Any]] = {}
        self._once = LogOnce(log)

    def start(self) -> None:
        self.observer.daemon = True
        self.observer.start()

    def stop(self) -> None:
        for obs in (self.observer, self.poller):
            if obs is not None:
                obs.stop()
        for obs in (self.observer, self.poller):
            if obs is not None and obs.is_alive():
                obs.join(timeout=2)

    def watch(self, root: str) -> bool:
        """Watch ``root`` recursively; if it does not exist yet, wait for it. True if watching."""
        with self._lock:
            if root in self._watches:
                return True
            if not os.path.isdir(root):
                self._watch_parent(root)
                return False
            self._unwatch_parent(root)
            handler = _Handler(self.out, root)
            try:
                self._watches[root] = self.observer.schedule(
                    handler, root, recursive=True, event_filter=EVENTS
                )
            except OSError as exc:
                self._once(root, "limit", "cannot watch with inotify (%s); polling it every 2 s instead", exc.strerror or exc)
                if self.poller is None:
                    self.poller = PollingObserver(timeout=2)
                    self.poller.daemon = True
                    self.poller.start()
                self._watches[root] = self.poller.schedule(handler, root, recursive=True, event_filter=EVENTS)
            return True

    def root_gone(self, root: str) -> None:
        """The root folder was removed: drop its watch and wait for it to come back."""
        with self._lock:
            watch = self._watches.pop(root, None)
            if watch is not None:
                for obs in (self.observer, self.poller):
                    if obs is None:
                        continue
                    try:
                        obs.unschedule(watch)
                    except (KeyError, ValueError, OSError):
                        pass
            self._watch_parent(root)
        if os.path.isdir(root):  # re-created before the parent watch existed
            self.out.put(RootBack(root))

    def _watch_parent(self, root: str) -> None:
        parent = _nearest_existing(root)
        current = self._parent_watches.get(root)
        if current is not None and current[0] == parent:
            return
        self._unwatch_parent(root)
        self._once(root, "missing", "sessions folder does not exist yet; waiting for it")
        try:
            watch = self.observer.schedule(
                _ParentHandler(self.out, root), parent, recursive=False, event_filter=EVENTS
            )
            self._parent_watches[root] = (parent, watch)
        except OSError as exc:
            self._once(root, "parent", "cannot watch %s (%s)", clean(parent), clean(exc))
        # A folder may have appeared between looking and watching: look again.
        if _nearest_existing(root) != parent or os.path.isdir(root):
            self.out.put(RootBack(root))

    def _unwatch_parent(self, root: str) -> None:
        entry = self._parent_watches.pop(root, None)
        if entry is not None:
            try:
                self.observer.unschedule(entry[1])
            except (KeyError, ValueError, OSError):
                pass

    def unwatched(self, root: str, dirs: list[str]) -> list[str]:
        """Folders below ``root`` that inotify is not watching (the watch limit was reached).

        watchdog drops sub-folder watches silently at the limit; this looks at its watch table.
        Returns [] when that table cannot be inspected."""
        watch = self._watches.get(root)
        if watch is None:
            return []
        try:
            emitter = self.observer._emitter_for_watch[watch]  # noqa: SLF001
            group = cast(Any, emitter)._inotify  # noqa: SLF001
            with group._lock:  # noqa: SLF001  (watchdog changes the table on its own thread)
                active = {os.fsdecode(p) for p in list(group._active_callbacks_by_path)}  # noqa: SLF001
        except (AttributeError, KeyError, TypeError, RuntimeError):
            return []
        return [d for d in dirs if d not in active]

    def limit_reached(self, missing: list[str]) -> bool:
        """True if the kernel refuses one more inotify watch (ENOSPC) on a folder watchdog is
        missing: the folders are then really unwatched. A folder missing for another reason (its
        watch is being added right now) is not a limit."""
        return any(_watch_refused(path) for path in missing[:3])


def _watch_refused(path: str) -> bool:
    try:
        import ctypes
        import ctypes.util

        libc = ctypes.CDLL(ctypes.util.find_library("c") or None, use_errno=True)
        fd = libc.inotify_init1(os.O_CLOEXEC | os.O_NONBLOCK)
    except (OSError, AttributeError):
        return True  # cannot probe (not Linux): trust watchdog's table
    if fd < 0:
        return ctypes.get_errno() in (errno.EMFILE, errno.ENOSPC)
    try:
        wd = libc.inotify_add_watch(fd, os.fsencode(path), 0x00000100)  # IN_CREATE
        return wd < 0 and ctypes.get_errno() == errno.ENOSPC
    finally:
        os.close(fd)
