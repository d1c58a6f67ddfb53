"""Start-up scan: which files are sessions, and reading them without blocking or unbounded memory.

One rule decides what a session file is, for the start-up scan, ``status`` and live watching
alike (:func:`is_session_name`, :func:`walk`): a ``*.jsonl`` regular file (or a symlink to one)
anywhere below a sessions root, reached through real folders (watchdog does not follow symlinked
folders, so neither does the walk). A file reached by two names (hard links, a symlink next to its
target) is one session: the walk keeps the first name in sorted order.

Nothing here blocks: files are opened with ``O_NONBLOCK`` and used only if ``fstat`` says they
are regular (a FIFO named ``*.jsonl`` would otherwise hang ``open``/``read`` forever).

Reading the lines of a file is :mod:`notifier.sessions.readers`; finding a session's name further
back is :mod:`notifier.sessions.names`.
"""

from __future__ import annotations

import errno
import os
import stat
from dataclasses import dataclass, field

SESSION_SUFFIX = ".jsonl"
_OPEN_FLAGS = (
    os.O_RDONLY
    | getattr(os, "O_NONBLOCK", 0)
    | getattr(os, "O_NOCTTY", 0)
    | getattr(os, "O_CLOEXEC", 0)
    | getattr(os, "O_BINARY", 0)
)


def is_session_name(path: str) -> bool:
    """The name part of the rule (live events are filtered with it before any ``stat``)."""
    return path.endswith(SESSION_SUFFIX)


def kind_of(mode: int) -> str:
    """What a non-regular file is, for the one log line that says it was skipped."""
    if stat.S_ISFIFO(mode):
        return "a FIFO"
    if stat.S_ISSOCK(mode):
        return "a socket"
    if stat.S_ISCHR(mode) or stat.S_ISBLK(mode):
        return "a device"
    if stat.S_ISDIR(mode):
        return "a folder"
    return "not a regular file"


class NotRegularFile(OSError):
    """A session-named path that is a FIFO, socket, device …: never read."""

    def __init__(self, kind: str) -> None:
        super().__init__(errno.EINVAL, f"{kind}, not a regular file")
        self.kind = kind


def open_regular(path: str) -> tuple[int, os.stat_result]:
    """``(fd, stat)`` of a regular file, opened without blocking. Raises :class:`NotRegularFile`
    for anything else (after closing it) and ``OSError`` when it cannot be opened."""
    try:
        fd = os.open(path, _OPEN_FLAGS)
    except OSError as exc:
        if exc.errno == errno.ENXIO:  # a socket (or a FIFO without writer on some systems)
            try:
                raise NotRegularFile(kind_of(os.stat(path).st_mode)) from exc
            except OSError:
                pass
        raise
    try:
        st = os.fstat(fd)
    except OSError:
        os.close(fd)
        raise
    if not stat.S_ISREG(st.st_mode):
        os.close(fd)
        raise NotRegularFile(kind_of(st.st_mode))
    return fd, st


@dataclass(slots=True)
class Tree:
    """What a walk found below a folder (:func:`walk_tree`)."""

    files: list[str] = field(default_factory=list)  # session files, one name per (device, inode)
    dirs: list[str] = field(default_factory=list)  # real folders, the root first
    skipped: list[tuple[str, str]] = field(default_factory=list)  # (path, kind): session names not read
    idents: dict[tuple[int, int], str] = field(default_factory=dict)  # (device, inode) → the name kept
    stats: dict[str, os.stat_result] = field(default_factory=dict)  # each file's stat, by the walk


def walk_tree(root: str) -> Tree:
    """Every session file below ``root`` (any depth; iterative, so no recursion limit)."""
    tree = Tree()
    seen_dirs: set[tuple[int, int]] = set()
    try:
        st = os.stat(root)
    except OSError:
        return tree
    if not stat.S_ISDIR(st.st_mode):
        return tree
    seen_dirs.add((st.st_dev, st.st_ino))
    stack = [root]
    while stack:
        folder = stack.pop()
        tree.dirs.append(folder)
        try:
            with os.scandir(folder) as it:
                entries = sorted(it, key=lambda e: e.name)
        except OSError:
            continue
        subdirs: list[str] = []
        for entry in entries:
            try:
                if entry.is_dir(follow_symlinks=False):
                    est = entry.stat(follow_symlinks=False)
                    key = (est.st_dev, est.st_ino)
                    if key not in seen_dirs:
                        seen_dirs.add(key)
                        subdirs.append(entry.path)
                    continue
                if not is_session_name(entry.name):
                    continue
                if entry.is_file(follow_symlinks=False):
                    # st_dev is not in the directory entry: a stat per file (cheap, cached inode)
                    fst = entry.stat(follow_symlinks=False)
                elif entry.is_symlink():
                    fst = os.stat(entry.path)  # where it points decides
                    if not stat.S_ISREG(fst.st_mode):
                        if not stat.S_ISDIR(fst.st_mode):
                            tree.skipped.append((entry.path, kind_of(fst.st_mode)))
                        continue
                else:
                    tree.skipped.append((entry.path, kind_of(entry.stat(follow_symlinks=False).st_mode)))
                    continue
            except OSError:
                continue  # vanished or unreadable: the live watcher sees it if it comes back
            ident = (fst.st_dev, fst.st_ino)
            if ident in tree.idents:
                continue  # another name of a file already found
            tree.idents[ident] = entry.path
            tree.stats[entry.path] = fst
            tree.files.append(entry.path)
        stack.extend(reversed(subdirs))  # depth first, in name order
    return tree


def walk(root: str) -> tuple[list[str], list[str]]:
    """``(session files, folders)`` below ``root`` (see :func:`walk_tree`)."""
    tree = walk_tree(root)
    return tree.files, tree.dirs
