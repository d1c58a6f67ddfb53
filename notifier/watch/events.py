"""What the watcher tells the engine: typed messages on the engine's queue.

The watcher (watchdog's thread, or the poller of folders past the inotify limit) only ever puts
these; the engine thread alone acts on them."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class FileChanged:
    """A file was created, written or moved here: read what is new."""

    path: str


@dataclass(frozen=True)
class PathGone:
    """A file or folder was deleted or moved away: forget the sessions under it."""

    path: str


@dataclass(frozen=True)
class FolderAppeared:
    """A folder was created or moved in: scan it (files can be written before its watch exists)."""

    path: str


@dataclass(frozen=True)
class RootGone:
    """A watched sessions folder itself was removed: wait for it to come back."""

    path: str


@dataclass(frozen=True)
class RootBack:
    """A removed (or not yet created) sessions folder exists now: watch and scan it."""

    path: str


@dataclass(frozen=True)
class RootRelinked:
    """A sessions folder that is a symlink was re-pointed or removed: watch what it points to now."""

    path: str


@dataclass(frozen=True)
class EventsLost:
    """The kernel dropped events under this sessions folder (its queue overflowed): read it again."""

    path: str


WatchEvent = FileChanged | PathGone | FolderAppeared | RootGone | RootBack | RootRelinked | EventsLost
