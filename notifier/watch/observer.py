"""watchdog wrapper: recursive watches on each sessions root, waiting for roots that do not exist.

Only created / modified / moved / deleted events are reacted to (watchdog 7 also reports opens and
closes, and a handler that reads on those wakes itself up forever). Each event becomes a small
message on the engine's queue (the engine coalesces them per file and does all reading). The
handlers never raise into watchdog's threads (one that raised would end that thread, and the
watching with it).

watchdog is used through its public face only: ``Observer.schedule``/``unschedule``, event
handlers (run on the observer's thread), the ``OSError`` that ``schedule`` raises when inotify
refuses a watch, the emitter's ``DirDeletedEvent`` for a watched folder that is removed, and
``EventsLostEvent`` (watchdog 7.1.1: the kernel's queue overflowed, the folder is read again).

A sessions folder that is a symlink (a dotfile manager's, a moved home folder) is watched where it
points: inotify on the link itself sees only its sub-folders. Events are reported under the
folder's own name, as the start-up scan read it, and the link's folder is watched for the link
being re-pointed or removed.
"""

from __future__ import annotations

import logging
import os
import threading
import warnings
from collections.abc import Callable
from typing import Any, Protocol

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
from watchdog.observers.api import BaseObserver, ObservedWatch
from watchdog.observers.polling import PollingObserver

from notifier.compat.watchdog import events_lost
from notifier.core.text import clean
from notifier.sessions.scanner import is_session_name, walk_tree
from notifier.system.log import LogOnce
from notifier.watch.events import (
    EventsLost,
    FileChanged,
    FolderAppeared,
    PathGone,
    RootBack,
    RootGone,
    RootRelinked,
    WatchEvent,
)
from notifier.watch.watchlimit import LIMITS, UNWATCHED_POLL_S, watch_refused, watched_inodes

log = logging.getLogger(__name__)
EVENTS_LOST = events_lost()
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
    *([EVENTS_LOST] if EVENTS_LOST is not None else []),
]


class Outbox(Protocol):
    """Where watch events go (the engine's queue)."""

    def put(self, item: Any) -> None: ...


def _s(path: Any) -> str:
    return os.fsdecode(path)


def _hand_on(out: Outbox, once: LogOnce, messages: Callable[[], list[WatchEvent]]) -> None:
    """Put ``messages()``; a failure costs them, never watchdog's thread (that would end it)."""
    try:
        for message in messages():
            out.put(message)
    except Exception as exc:
        once("handler", type(exc).__name__, "a watch event could not be handled (%s)", clean(exc))


class _Handler(FileSystemEventHandler):
    """Turns the events of one root's watch into messages for the engine. ``target`` is the
    folder really watched (``root`` resolved); paths are reported under ``root``."""

    def __init__(self, out: Outbox, root: str, once: LogOnce, target: str | None = None) -> None:
        self.out = out
        self.root = root
        self.target = target if target is not None else root
        self._once = once

    def on_any_event(self, event: FileSystemEvent) -> None:
        _hand_on(self.out, self._once, lambda: self.messages(event))

    def _under_root(self, path: Any) -> str:
        path = _s(path)
        if self.target == self.root:
            return str(path)
        if path == self.target:
            return self.root
        prefix = self.target.rstrip(os.sep) + os.sep
        return os.path.join(self.root, path[len(prefix) :]) if path.startswith(prefix) else str(path)

    def messages(self, event: FileSystemEvent) -> list[WatchEvent]:
        kind = event.event_type
        src = self._under_root(event.src_path)
        if _lost(event):
            return [EventsLost(self.root)]  # (its path is the watched folder's: read all of it again)
        if event.is_directory:
            if kind == "created":
                return [FolderAppeared(src)]
            if kind == "moved":
                return [PathGone(src), FolderAppeared(self._under_root(event.dest_path))]
            if kind == "deleted":
                return [RootGone(src) if src == self.root else PathGone(src)]
            return []
        if kind == "moved":
            dest = self._under_root(event.dest_path)
            out: list[WatchEvent] = []
            if is_session_name(src):
                out.append(PathGone(src))
            if is_session_name(dest):
                out.append(FileChanged(dest))
            return out
        if is_session_name(src):
            return [PathGone(src) if kind == "deleted" else FileChanged(src)]
        return []


class _ParentHandler(FileSystemEventHandler):
    """Watches the nearest existing ancestor of missing roots (one or more) until they appear."""

    def __init__(self, out: Outbox, once: LogOnce) -> None:
        self.out = out
        self._once = once
        # Replaced, never changed in place: the observer's thread reads it while roots come and go.
        self.roots: frozenset[str] = frozenset()
        self.watch: ObservedWatch | None = None

    def on_any_event(self, event: FileSystemEvent) -> None:
        # A root, or a folder on the way to it, appeared (or events were lost: look anyway): the
        # engine re-checks each root waiting here (and the watcher moves a root's wait one level
        # closer if it is still missing).
        if event.event_type in ("created", "moved") or _lost(event):
            roots = self.roots
            _hand_on(self.out, self._once, lambda: [RootBack(root) for root in sorted(roots)])


class _LinkHandler(FileSystemEventHandler):
    """Watches the folder a symlinked root is in, for the link being re-pointed or removed."""

    def __init__(self, out: Outbox, root: str, once: LogOnce) -> None:
        self.out = out
        self.root = root
        self.name = os.path.basename(root.rstrip(os.sep))
        self._once = once

    def on_any_event(self, event: FileSystemEvent) -> None:
        paths = (_s(event.src_path), _s(getattr(event, "dest_path", "") or ""))
        if _lost(event) or self.name in {os.path.basename(path) for path in paths}:
            _hand_on(self.out, self._once, lambda: [RootRelinked(self.root)])


def _lost(event: FileSystemEvent) -> bool:
    return EVENTS_LOST is not None and isinstance(event, EVENTS_LOST)


def _nearest_existing(path: str) -> str:
    current = os.path.dirname(path)
    while current and not os.path.isdir(current):
        parent = os.path.dirname(current)
        if parent == current:
            break
        current = parent
    return current or os.sep


class Watcher:
    def __init__(self, out: Outbox) -> None:
        self.out = out
        self.observer = Observer()
        self.poller: PollingObserver | None = None
        self._lock = threading.Lock()
        self._watches: dict[str, ObservedWatch] = {}
        self._polled: set[str] = set()  # roots inotify refused: the poller watches all of them
        self._targets: dict[str, str] = {}  # root → the folder watched (the root, resolved)
        self._links: dict[str, ObservedWatch] = {}  # symlinked root → the watch of the link's folder
        # The folders missing roots wait on: one watch and one handler per folder, however many
        # roots wait there (unscheduling a shared watch for one root would drop the others').
        self._waiting: dict[str, _ParentHandler] = {}
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
            target = os.path.realpath(root)
            handler = _Handler(self.out, root, self._once, target)
            try:
                self._watches[root] = self.observer.schedule(handler, target, recursive=True, event_filter=EVENTS)
            except OSError as exc:
                self._watches[root] = self._poll(root, handler, target, exc)
            self._targets[root] = target
            if os.path.islink(root.rstrip(os.sep)):
                self._watch_link(root)
            return True

    def _poll(self, root: str, handler: _Handler, target: str, exc: OSError) -> ObservedWatch:
        """inotify refused the folder: poll it. At the watch limit watchdog 7.1.1 refuses the
        whole tree (older releases left the sub-folders past the limit unwatched instead:
        :mod:`notifier.watch.watchlimit`)."""
        limit = LIMITS.get(exc.errno or 0)
        if limit is not None:
            folders = len(walk_tree(root).dirs)
            self._once(
                root,
                "limit",
                "inotify %s limit reached: none of the %d folders in %s are watched; polling them every %.0f s "
                "(raise %s to fix)",
                limit[0],
                folders,
                clean(root),
                UNWATCHED_POLL_S,
                limit[1],
            )
        else:
            self._once(
                root,
                "limit",
                "cannot watch %s with inotify (%s); polling it every %.0f s instead",
                clean(root),
                clean(exc.strerror or exc),
                UNWATCHED_POLL_S,
            )
        if self.poller is None:
            self.poller = PollingObserver(timeout=UNWATCHED_POLL_S)
            self.poller.daemon = True
            self.poller.start()
        self._polled.add(root)
        return self.poller.schedule(handler, target, recursive=True, event_filter=EVENTS)

    def _watch_link(self, root: str) -> None:
        """The root is a symlink: watch the folder it is in for the link changing."""
        folder = os.path.realpath(os.path.dirname(root.rstrip(os.sep)))
        try:
            self._links[root] = self.observer.schedule(
                _LinkHandler(self.out, root, self._once), folder, recursive=False, event_filter=EVENTS
            )
        except OSError as exc:
            self._once(root, "link", "cannot watch %s for the link being re-pointed (%s)", clean(folder), clean(exc))

    def retarget(self, root: str) -> bool:
        """The link ``root`` may point elsewhere now: if so (or it is gone), stop watching what it
        pointed to and return True (the caller forgets what was read there and calls
        :meth:`watch` again)."""
        with self._lock:
            if root not in self._watches:
                return False
            target = os.path.realpath(root) if os.path.isdir(root) else None
            if target == self._targets.get(root):
                return False
            self._drop(root)
            return True

    def _drop(self, root: str) -> None:
        watch = self._watches.pop(root, None)
        polled = root in self._polled
        self._polled.discard(root)
        self._targets.pop(root, None)
        obs = self.poller if polled else self.observer
        if watch is not None and obs is not None:
            _unschedule(obs, watch)
        link = self._links.pop(root, None)
        if link is not None:
            _unschedule(self.observer, link)

    def root_gone(self, root: str) -> None:
        """The root folder was removed: drop its watch and wait for it to come back."""
        with self._lock:
            self._drop(root)
            self._watch_parent(root)
        if os.path.isdir(root):  # re-created before the parent watch existed
            self.out.put(RootBack(root))

    def _watch_parent(self, root: str) -> None:
        parent = _nearest_existing(root)
        if self._waits_on(root) == parent:
            return
        self._unwatch_parent(root)
        self._once(root, "missing", "sessions folder does not exist yet; waiting for it")
        handler = self._waiting.get(parent)
        if handler is not None:
            handler.roots = handler.roots | {root}
        else:
            handler = _ParentHandler(self.out, self._once)
            handler.roots = frozenset({root})
            try:
                handler.watch = self.observer.schedule(handler, parent, recursive=False, event_filter=EVENTS)
                self._waiting[parent] = handler
            except OSError as exc:
                self._once(root, "parent", "cannot watch %s (%s)", clean(parent), clean(exc))
        # A folder may have appeared between looking and watching: look again.
        if _nearest_existing(root) != parent or os.path.isdir(root):
            self.out.put(RootBack(root))

    def _waits_on(self, root: str) -> str | None:
        return next((parent for parent, handler in self._waiting.items() if root in handler.roots), None)

    def _unwatch_parent(self, root: str) -> None:
        parent = self._waits_on(root)
        if parent is None:
            return
        handler = self._waiting[parent]
        handler.roots = handler.roots - {root}
        if not handler.roots:
            del self._waiting[parent]
            if handler.watch is not None:
                _unschedule(self.observer, handler.watch)

    def unwatched(self, root: str, dirs: list[str]) -> list[str]:
        """Folders below ``root`` that no inotify watch covers (the watch limit was reached).

        At the limit watchdog leaves a sub-folder unwatched without a word (only the root's own
        watch raises), so the kernel is asked instead: the folders whose inode none of this
        process's inotify watches is on. Returns [] for a root the poller watches (inotify refused
        it whole) and where the kernel cannot be asked."""
        if root not in self._watches or root in self._polled:
            return []
        watched = watched_inodes()
        if watched is None:
            return []
        missing = []
        for folder in dirs:
            try:
                inode = os.stat(folder).st_ino
            except OSError:
                continue  # gone meanwhile: nothing to watch
            if inode not in watched:
                missing.append(folder)
        return missing

    def limit_reached(self, missing: list[str]) -> bool:
        """True if the kernel refuses one more inotify watch on a folder found unwatched: the
        folders are then really unwatched. A folder missing for another reason (its watch is
        being added right now, after a ``mkdir -p``) is not a limit."""
        return watch_refused(missing[:3])


def _unschedule(observer: BaseObserver, watch: ObservedWatch) -> None:
    try:
        observer.unschedule(watch)
    except (KeyError, ValueError, OSError):
        pass  # (watchdog dropped it already: its folder was removed)
