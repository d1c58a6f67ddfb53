"""Watching: one watchdog ``Observer`` for every folder the app watches — the sessions folders
(:class:`Watcher`), the config file, the instance lock and a headless run's store ``-wal`` file
(:class:`FileFollower`), the companion extension's socket folder (:func:`watch_folder`) — plus the
poll fallback for what inotify refuses, the folders past the watch limit (:class:`WatchLimit`),
lost events (read again) and symlinked sessions folders.

One Observer (:func:`observer`): one dispatcher thread, and one emitter and inotify reader per
folder watched; each part of the app schedules and unschedules its own watches on it
(:func:`schedule`, :func:`unschedule`: a folder two parts watch is one watch with two handlers). A
handler puts a message, starts a timer or hands the path to its part's callback (the companion's
starts a reader thread): it never schedules, and never raises into watchdog's thread (that would
end the watching).
Only created / modified / moved / deleted events are reacted to (watchdog 7 also reports opens and
closes: a handler that reads on those wakes itself up forever). The sessions watch turns each event
into a typed message on the engine's queue (:data:`WatchEvent`; the engine coalesces and reads).

watchdog is used through its public face only: ``schedule``/``unschedule``,
``add``/``remove_handler_for_watch``, event handlers, the ``OSError`` ``schedule`` raises when
inotify refuses a watch, ``DirDeletedEvent`` for a watched folder removed, and ``EventsLostEvent``
(watchdog 7.1.1: the kernel's queue overflowed; :mod:`notifier.compat`).

A sessions folder that is a symlink is watched where it points (inotify on the link sees only its
sub-folders), its events reported under the folder's own name, and the link's folder watched for
the link being re-pointed or removed. A sessions folder that is not a link, moved away while
watched, is not seen (inotify follows a folder moved and watchdog says nothing of it: watching the
folder each is in would cost every app a thread, for a move nobody makes while pi runs).

The watch limit: watchdog's recursive watch leaves each sub-folder it cannot watch unwatched (7.1.1
logs each one); only a failure while the root's watch is set up raises (from 7.1.1 including its
sub-folders: the whole tree is then polled, :meth:`Watcher.watch`). Folders that appear later are
:class:`WatchLimit`'s concern: the kernel is asked which folders are watched
(:func:`watched_inodes`) and whether it refuses one more watch (:func:`watch_refused`). The same
gap was closed upstream elsewhere (https://github.com/notify-rs/notify/pull/970,
https://github.com/oven-sh/bun/pull/36415); https://github.com/gorakhargosh/watchdog/issues/790
asks for a say in which folders are watched."""

from __future__ import annotations

import contextlib
import errno
import itertools
import logging
import os
import re
import threading
import time
import warnings
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from functools import partial
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

from notifier.compat import events_lost
from notifier.config import Config, ConfigError, load
from notifier.core.text import clean
from notifier.system import paths
from notifier.system.log import LogOnce
from notifier.tail import is_session_name, walk_tree

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
UNWATCHED_POLL_S = 2.0
# Folders without a watch while the limit is not reached: watchdog may still be adding their
# watches (a burst of mkdir), and the limit may come once it has. Looked at again after these
# pauses (then no more: a folder nothing can watch for another reason is not polled for ever).
RECHECKS_S = (0.5, 1.0, 2.0, 4.0)
# What inotify ran out of, by the errno it refused a watch with: (what, the setting to raise).
LIMITS = {
    errno.ENOSPC: ("watch", "fs.inotify.max_user_watches"),
    errno.EMFILE: ("instance", "fs.inotify.max_user_instances"),
}


# ---- what the sessions watch tells the engine (typed messages on its queue) ----


@dataclass(frozen=True)
class WatchEvent:
    """A message of the sessions watch: what happened at ``path``, by its type."""

    path: str


class FileChanged(WatchEvent):
    """A file was created, written or moved here: read what is new."""


class PathGone(WatchEvent):
    """A file or folder was deleted or moved away: forget the sessions under it."""


class FolderAppeared(WatchEvent):
    """A folder was created or moved in: scan it (files can be written before its watch exists)."""


@dataclass(frozen=True)
class RootGone(WatchEvent):
    """A watched sessions folder itself was removed, as its watch number ``of`` saw it: wait for
    it to come back."""

    of: int = 0


class RootBack(WatchEvent):
    """A removed (or not yet created) sessions folder exists now: watch and scan it."""


class RootRelinked(WatchEvent):
    """A sessions folder that is a symlink was re-pointed or removed: watch what it points to now."""


class EventsLost(WatchEvent):
    """The kernel dropped events under this sessions folder (its queue overflowed): read it again."""


# ---- the one Observer ----

_lock = threading.RLock()
_observers: dict[bool, BaseObserver] = {}  # polled? → the Observer (True: the poll fallback's)
_users: dict[tuple[bool, ObservedWatch], int] = {}  # how many handlers each watch serves


_once = LogOnce(log)
React = Callable[[FileSystemEvent], None]


class _Handler(FileSystemEventHandler):
    """Hands each event to ``react`` (on the Observer's thread): whatever that raises costs this
    event only, never watchdog's thread (one that raised would end it, and the watching)."""

    def __init__(self, react: React) -> None:
        self.react = react

    def on_any_event(self, event: FileSystemEvent) -> None:
        try:
            self.react(event)
        except Exception as exc:
            _once("handler", type(exc).__name__, "a watch event could not be handled (%s)", clean(exc))


@dataclass(frozen=True)
class Watch:
    """One part's watch of one folder (:func:`schedule`)."""

    handler: _Handler
    watch: ObservedWatch
    polled: bool


def observer(polled: bool = False) -> BaseObserver:
    """The process's one Observer (``polled``: the poll fallback's ``PollingObserver``, made when
    inotify first refuses a folder), started on first use. A daemon: it lasts as long as the
    process; what a part of the app stops is its watches."""
    with _lock:
        found = _observers.get(polled)
        if found is None:
            found = PollingObserver(timeout=UNWATCHED_POLL_S) if polled else Observer()
            found.daemon = True
            found.start()
            _observers[polled] = found
        return found


def schedule(react: React, path: str, recursive: bool = False, polled: bool = False) -> Watch:
    """Watch ``path``: ``react(event)`` for each of its events, on the Observer's thread (raises
    ``OSError`` where inotify refuses it). Never called from a reaction: the caller holds this
    module's lock while watchdog takes its own."""
    handler = _Handler(react)
    with _lock:
        watch = observer(polled).schedule(handler, path, recursive=recursive, event_filter=EVENTS)
        _users[(polled, watch)] = _users.get((polled, watch), 0) + 1
        return Watch(handler, watch, polled)


def unschedule(watch: Watch | None) -> None:
    """Let ``watch`` go: the folder's watch itself once no other handler uses it."""
    if watch is None:
        return
    with _lock:
        key = (watch.polled, watch.watch)
        left = _users.pop(key, 1) - 1
        obs = observer(watch.polled)
        with contextlib.suppress(KeyError, ValueError, OSError):  # (dropped already: its folder was removed)
            if left > 0:
                _users[key] = left
                obs.remove_handler_for_watch(watch.handler, watch.watch)
            else:
                obs.unschedule(watch.watch)


def lost(event: FileSystemEvent) -> bool:
    """The kernel dropped events (watchdog 7.1.1 says so): whatever was watched is looked at anew."""
    return EVENTS_LOST is not None and isinstance(event, EVENTS_LOST)


def nearest_folder(path: str) -> str:
    """``path`` if it is a folder, else the nearest folder above it that exists."""
    while not os.path.isdir(path) and os.path.dirname(path) != path:
        path = os.path.dirname(path)
    return path


# ---- the sessions folders ----


class Outbox(Protocol):
    """Where watch events go (the engine's queue)."""

    def put(self, item: Any) -> None: ...


def _messages(root: str, target: str, of: int, event: FileSystemEvent) -> list[WatchEvent]:
    """The engine's messages for an event of the watch number ``of`` of ``root`` (watched at
    ``target``, the root resolved; paths are reported under ``root``, as the start-up scan read
    them)."""

    def under_root(path: Any) -> str:
        path = os.fsdecode(path)
        prefix = target.rstrip(os.sep) + os.sep
        if target == root or not (path == target or path.startswith(prefix)):
            return str(path)
        return root if path == target else os.path.join(root, path[len(prefix) :])

    kind, src = event.event_type, under_root(event.src_path)
    if lost(event):
        return [EventsLost(root)]  # (its path is the watched folder's: read all of it again)
    if event.is_directory:
        if kind == "created":
            return [FolderAppeared(src)]
        if kind == "moved":
            return [PathGone(src), FolderAppeared(under_root(event.dest_path))]
        if kind == "deleted":
            return [RootGone(src, of) if src == root else PathGone(src)]
        return []
    if kind == "moved":
        dest = under_root(event.dest_path)
        out: list[WatchEvent] = [PathGone(src)] if is_session_name(src) else []
        return out + ([FileChanged(dest)] if is_session_name(dest) else [])
    if is_session_name(src):
        return [PathGone(src) if kind == "deleted" else FileChanged(src)]
    return []


def _appeared(root: str, event: FileSystemEvent) -> list[WatchEvent]:
    """An event where the missing ``root`` waits: something appeared (or events were lost)."""
    return [RootBack(root)] if event.event_type in ("created", "moved") or lost(event) else []


def _relinked(root: str, event: FileSystemEvent) -> list[WatchEvent]:
    """An event in the folder of the symlinked ``root``: the link itself re-pointed or removed?"""
    name = os.path.basename(root.rstrip(os.sep))
    paths = (os.fsdecode(event.src_path), os.fsdecode(getattr(event, "dest_path", "") or ""))
    return [RootRelinked(root)] if lost(event) or name in {os.path.basename(p) for p in paths} else []


class Watcher:
    """The sessions folders (the roots): each watched recursively where it points, a missing one
    waited for, one inotify refuses polled. Its messages go to ``out`` (the engine's queue)."""

    def __init__(self, out: Outbox) -> None:
        self.out = out
        self._lock = threading.Lock()
        self._watches: dict[str, Watch] = {}  # root → its watch (``polled``: inotify refused it)
        self._targets: dict[str, str] = {}  # root → the folder watched (the root, resolved)
        self._links: dict[str, Watch] = {}  # symlinked root → the watch of the link's folder
        self._covers: dict[str, list[Watch]] = {}  # root → watches of folders its own watch left out
        self._numbers = itertools.count(1)  # each root's watch is numbered (what a removal was seen by)
        self._number: dict[str, int] = {}  # root → the number of its watch now
        self._waiting: dict[str, tuple[str, Watch]] = {}  # missing root → (the folder it waits on, its watch)
        self._once = LogOnce(log)

    def start(self) -> None:
        observer()

    def stop(self) -> None:
        """Let every watch of this watcher go (the Observer stays, for the rest of the app)."""
        with self._lock:
            for root in list(self._watches):
                self._drop(root)
            for root in list(self._waiting):
                self._unwatch_parent(root)

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
            self._number[root] = number = next(self._numbers)
            react = partial(self._put, _messages, root, target, number)
            try:
                self._watches[root] = schedule(react, target, recursive=True)
            except OSError as exc:
                self._watches[root] = self._poll(root, react, target, exc)
            self._targets[root] = target
            if os.path.islink(root.rstrip(os.sep)):  # (polled or not: the poller watches the target)
                self._watch_link(root)
            return True

    def _put(self, messages: Callable[..., list[WatchEvent]], *args: Any) -> None:
        """(The Observer's thread.) Hand the engine the messages of an event."""
        for message in messages(*args):
            self.out.put(message)

    def _poll(self, root: str, react: React, target: str, exc: OSError) -> Watch:
        """inotify refused the folder: poll it. At the watch limit watchdog 7.1.1 refuses the
        whole tree (older releases left the sub-folders past the limit unwatched instead:
        :mod:`notifier.watch`)."""
        limit = LIMITS.get(exc.errno or 0)
        if limit is not None:
            what, setting, folders = *limit, len(walk_tree(root, files=False).dirs)
            said = "inotify %s limit reached: none of the %d folders in %s are watched; polling them every %.0f s"
            said += " (raise %s to fix)"
            self._once(root, "limit", said, what, folders, clean(root), UNWATCHED_POLL_S, setting)
        else:
            said = "cannot watch %s with inotify (%s); polling it every %.0f s instead"
            self._once(root, "limit", said, clean(root), clean(exc.strerror or exc), UNWATCHED_POLL_S)
        return schedule(react, target, recursive=True, polled=True)

    def _watch_link(self, root: str) -> None:
        """The root is a symlink: watch the folder it is in for the link changing."""
        folder = os.path.realpath(os.path.dirname(root.rstrip(os.sep)))
        try:
            self._links[root] = schedule(partial(self._put, _relinked, root), folder)
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

    def cover(self, folder: str) -> None:
        """``folder``, below a root, could not be read when the root's watch was set up (watchdog
        leaves such a folder out, and a chmod says nothing) and can be now: watched on its own,
        recursively, its events the root's, unless inotify watches it already."""
        with self._lock:
            root = next((r for r in self._watches if folder.startswith(r.rstrip(os.sep) + os.sep)), None)
            if root is None or self._watches[root].polled:
                return
            inode, watched = _inode(folder), watched_inodes()
            if inode is None or watched is None or inode in watched:
                return
            target, number = self._targets[root], self._number[root]
            try:
                watch = schedule(partial(self._put, _messages, root, target, number), os.path.realpath(folder),
                                 recursive=True)
            except OSError as exc:
                self._once(folder, "cover", "cannot watch %s (%s)", clean(folder), clean(exc))
                return
            self._covers.setdefault(root, []).append(watch)

    def _drop(self, root: str) -> None:
        self._targets.pop(root, None)
        self._number.pop(root, None)
        unschedule(self._watches.pop(root, None))
        unschedule(self._links.pop(root, None))
        for watch in self._covers.pop(root, []):
            unschedule(watch)

    def root_gone(self, root: str, of: int) -> bool:
        """The root folder was removed, as its watch number ``of`` saw it: drop that watch and wait
        for it to come back. False if it was not watched (dropped already: the link's folder saw
        it go), or is watched anew since (the link was re-pointed first: this removal is the old
        target's)."""
        with self._lock:
            if root in self._watches and self._number.get(root) != of:
                return False
            watched = root in self._watches
            self._drop(root)
            self._watch_parent(root)
        if os.path.isdir(root):  # re-created before the parent watch existed
            self.out.put(RootBack(root))
        return watched

    def _watch_parent(self, root: str) -> None:
        """Wait for a missing root: watch the nearest folder above it that exists (a root, or a
        folder on the way to it, appearing there: the engine checks the root again, and the wait
        moves one level closer while it is still missing)."""
        parent = nearest_folder(os.path.dirname(root))
        if root in self._waiting and self._waiting[root][0] == parent:
            return
        self._unwatch_parent(root)
        self._once(root, "missing", "sessions folder does not exist yet; waiting for it")
        try:
            self._waiting[root] = (parent, schedule(partial(self._put, _appeared, root), parent))
        except OSError as exc:
            self._once(root, "parent", "cannot watch %s (%s)", clean(parent), clean(exc))
        # A folder may have appeared between looking and watching: look again.
        if nearest_folder(os.path.dirname(root)) != parent or os.path.isdir(root):
            self.out.put(RootBack(root))

    def _unwatch_parent(self, root: str) -> None:
        unschedule(self._waiting.pop(root, (None, None))[1])

    def unwatched(self, root: str, dirs: list[str]) -> list[str]:
        """Folders below ``root`` that no inotify watch covers (the watch limit was reached).

        At the limit watchdog leaves a sub-folder unwatched without a word (only the root's own
        watch raises), so the kernel is asked instead: the folders whose inode none of this
        process's inotify watches is on. Returns [] for a root the poller watches (inotify refused
        it whole) and where the kernel cannot be asked."""
        if root not in self._watches or self._watches[root].polled:
            return []
        watched = watched_inodes()
        if watched is None:
            return []
        return [folder for folder in dirs if (inode := _inode(folder)) is not None and inode not in watched]

    def limit_reached(self, missing: list[str]) -> bool:
        """True if the kernel refuses one more inotify watch on a folder found unwatched: the
        folders are then really unwatched. A folder missing for another reason (its watch is
        being added right now, after a ``mkdir -p``) is not a limit."""
        return watch_refused(missing[:3])


def _inode(folder: str) -> int | None:
    """The folder's inode; ``None`` if it is gone meanwhile (nothing to watch)."""
    try:
        return os.stat(folder).st_ino
    except OSError:
        return None


# ---- folders past the watch limit ----


class Watches(Protocol):
    """What :class:`WatchLimit` needs of :class:`Watcher`."""

    def unwatched(self, root: str, dirs: list[str]) -> list[str]: ...

    def limit_reached(self, missing: list[str]) -> bool: ...


class WatchLimit:
    """The folders below the roots that inotify ran out of watches for: said once, then polled
    (the engine reads their session files every ``UNWATCHED_POLL_S``)."""

    def __init__(self, roots: list[str]) -> None:
        self.roots = roots
        self.next_poll: float | None = None  # time.monotonic() of the next poll, if any
        self.next_check: float | None = None  # time.monotonic() of the next look again, if any
        self._unwatched: dict[str, list[str]] = {}
        self._appeared: set[str] = set()  # the roots folders appeared in, to check (check_appeared)
        self._again: dict[str, tuple[float, int]] = {}  # root → (when it is looked at again, how often it was)

    def check(self, root: str, watcher: Watches, mono: float | None = None) -> None:
        """Say once, and poll, when inotify really ran out of watches under ``root``. A folder
        without a watch is not enough (watchdog may be adding it right now, after a
        ``mkdir -p``): the limit is confirmed by the kernel refusing one more watch; until it
        is, such a root is looked at again (:data:`RECHECKS_S`), as watchdog may reach the
        limit only after this look, with no event left to tell."""
        mono = time.monotonic() if mono is None else mono
        dirs = walk_tree(root, files=False).dirs
        missing = watcher.unwatched(root, dirs)
        looked = self._again.pop(root, (0.0, 0))[1]
        if missing and watcher.limit_reached(missing):
            if root not in self._unwatched:
                said = "inotify watch limit reached: %d of %d folders in %s are not watched; polling them every %.0f s"
                fix = " (raise fs.inotify.max_user_watches to fix)"
                log.warning(said + fix, len(missing), len(dirs), root, UNWATCHED_POLL_S)
            self._unwatched[root] = missing
            self.next_poll = time.monotonic() + UNWATCHED_POLL_S
        else:
            self._unwatched.pop(root, None)
            if missing and looked < len(RECHECKS_S):
                self._again[root] = (mono + RECHECKS_S[looked], looked + 1)
        self.next_check = min((at for at, _ in self._again.values()), default=None)

    def appeared(self, folder: str) -> None:
        """A folder appeared: the root it is in is checked at the next :meth:`check_appeared`."""
        for root in self.roots:
            if folder == root or folder.startswith(root.rstrip(os.sep) + os.sep):
                self._appeared.add(root)
                self._again.pop(root, None)  # (looked at anew: the times it was looked at again start over)
                return

    def check_appeared(self, watcher: Watches, mono: float | None = None) -> None:
        """Check each root folders appeared in since the last call, once (a burst of new folders
        is one look at the tree, not one each: a thousand took 23 s and held up every question),
        and each root due to be looked at again."""
        mono = time.monotonic() if mono is None else mono
        roots, self._appeared = self._appeared | {r for r, (at, _) in self._again.items() if at <= mono}, set()
        for root in sorted(roots):
            self.check(root, watcher, mono)

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
            if os.readlink(f"/proc/self/fd/{fd}") == "anon_inode:inotify":
                with open(f"/proc/self/fdinfo/{fd}", encoding="ascii") as fh:
                    inodes.update(int(ino, 16) for ino in re.findall(r"^inotify .*?\bino:([0-9a-f]+)", fh.read(), re.M))
        except (OSError, ValueError):
            continue  # closed meanwhile (the listing's own descriptor, a watcher stopping)
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


# ---- one file (the config file, the instance lock, a headless run's store -wal file) ----


class FileFollower:
    """A call when one file is created, written, replaced or removed: its folder watched (or,
    while that folder does not exist, the nearest folder that does), so nothing wakes while the
    file is left alone; a burst of events (an editor writing, renaming, touching) becomes one call
    ``debounce_s`` after the last of them, on a timer's thread, which first moves the watch if a
    folder on the way to the file appeared or went."""

    def __init__(self, path: str, on_change: Callable[[], None], debounce_s: float = 0.2) -> None:
        self.path = os.path.abspath(path)
        self.folder = os.path.dirname(self.path)
        self.on_change = on_change
        self.debounce_s = debounce_s
        self._lock = threading.Lock()
        self._target: str | None = None  # the folder watched
        self._watch: Watch | None = None
        self._timer: threading.Timer | None = None
        self._stopped = False

    def start(self) -> None:
        self._arm()

    def stop(self) -> None:
        with self._lock:
            self._stopped = True
            if self._timer is not None:
                self._timer.cancel()
            watch, self._watch, self._target = self._watch, None, None
        unschedule(watch)

    def _arm(self) -> None:
        """Watch the file's folder, or the nearest one there while it is not."""
        target = nearest_folder(self.folder)
        with self._lock:
            if self._stopped or self._target == target:
                return
            before, self._watch, self._target = self._watch, None, None
        unschedule(before)
        try:
            watch = schedule(self._event, target)
        except OSError as exc:
            log.warning("cannot follow %s (%s): changes apply at the next start", self.path, exc.strerror or exc)
            return
        with self._lock:
            self._target, self._watch = target, watch

    def _event(self, event: FileSystemEvent) -> None:
        """(The Observer's thread.) An event for the file, or a folder on the way to it?"""
        paths = {os.fsdecode(event.src_path), os.fsdecode(getattr(event, "dest_path", "") or "")}
        if any(p and (p == self.path or p == self.folder or self.folder.startswith(p + "/")) for p in paths):
            with self._lock:
                if self._stopped:
                    return
                if self._timer is not None:
                    self._timer.cancel()
                self._timer = threading.Timer(self.debounce_s, self._fire)
                self._timer.daemon = True
                self._timer.start()

    def _fire(self) -> None:
        try:
            self._arm()  # (a folder on the way to the file appeared or went: watch the nearest)
            self.on_change()
        except Exception:
            log.exception("following %s failed; carrying on", self.path)


class ConfigFollower:
    """The config file, followed while the app runs: quiet hours follow the file at once, other
    keys apply at the next start (said in the log); a bad edit keeps the last good config (said
    once)."""

    def __init__(self, config: Config, on_quiet_hours: Callable[[str], None]) -> None:
        """``on_quiet_hours(value)``: the quiet hours changed (``config`` holds the new value)."""
        self.config = config
        self.on_quiet_hours = on_quiet_hours
        self._values: dict[str, Any] = {}  # what the file said when last read well
        self._error = ""  # the last bad edit's reason (said once)
        self._follower: FileFollower | None = None

    def start(self) -> None:
        path = self.config.file or paths.config_file()
        self._values = self._read(path) or {}
        self._follower = FileFollower(path, lambda: self._changed(path))
        self._follower.start()

    def stop(self) -> None:
        if self._follower is not None:
            self._follower.stop()

    def _read(self, path: str) -> dict[str, Any] | None:
        """The file's settings (a missing file: the defaults); None for a bad edit."""
        try:
            values = load(path, explicit=False).values
        except ConfigError as exc:
            if str(exc) != self._error:
                self._error = str(exc)
                log.warning("%s; keeping the last good config", exc)
            return None
        self._error = ""
        return values

    def _changed(self, path: str) -> None:
        """(The follower's timer thread.)"""
        values = self._read(path)
        if values is None:
            return
        before, self._values = self._values, values
        changed = sorted(k for k in values if values[k] != before.get(k))
        if "quiet_hours" in changed:
            quiet = values["quiet_hours"]
            self.config.set("quiet_hours", quiet, clean(path))
            log.info("config: quiet hours %s", quiet or "off")
            self.on_quiet_hours(quiet)
        later = [k for k in changed if k != "quiet_hours"]
        if later:
            log.info("config: %s changed; applies at the next start", ", ".join(later))


# ---- one folder's new entries (the companion extension's sockets) ----


def watch_folder(folder: str, found: Callable[[str], None]) -> Watch:
    """Call ``found(path)`` (on the Observer's thread) for each entry created or moved into
    ``folder`` (not below it); :func:`unschedule` the result to stop. Raises ``OSError`` where
    the folder cannot be watched."""

    def react(event: FileSystemEvent) -> None:
        if not event.is_directory and event.event_type in ("created", "moved"):
            found(os.fsdecode(event.dest_path if event.event_type == "moved" else event.src_path))

    return schedule(react, folder)
