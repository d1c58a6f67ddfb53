"""A session's name, looked up further back than the start-up read went (bounded): the newest
``session_info`` entry before a given offset, however it is spelled (spaces, escapes)."""

from __future__ import annotations

import os

from notifier.core import codec as jsonbound
from notifier.core.text import clean
from notifier.sessions.scanner import open_regular
from notifier.sessions.tail import Tailer

NAME_SEARCH_LIMIT = 1 << 20


_NAME_NEEDLES = (b'"session_info"', b"\\u00")


def _last_name(block: bytes, cut_at_start: bool) -> tuple[bool, str | None]:
    """(found, name) of the last ``session_info`` entry in ``block``."""
    end = len(block)
    # (the search for an escape, slow for a needle of that shape, only where a backslash is)
    needles = _NAME_NEEDLES if b"\\" in block else _NAME_NEEDLES[:1]
    while True:
        hit = max(block.rfind(needle, 0, end) for needle in needles)
        if hit < 0:
            return False, None
        start = block.rfind(b"\n", 0, hit) + 1
        stop = block.find(b"\n", hit)
        end = start
        if start == 0 and cut_at_start:
            return False, None  # the line began before this block
        try:
            entry = jsonbound.loads(block[start : stop if stop >= 0 else len(block)])
        except ValueError:  # (BoundedJSONError, and bytes that are not UTF-8)
            continue
        if isinstance(entry, dict) and entry.get("type") == "session_info":
            name = entry.get("name")
            return True, name if isinstance(name, str) and name else None


def find_name(path: str, before: int, limit: int = NAME_SEARCH_LIMIT, head: int = 64 << 10) -> str | None:
    """The latest ``session_info`` name written before byte ``before``: searched in the last
    ``limit`` bytes before it, then near the start (pi writes ``--name`` in its first flush).
    Bounded, so the cost does not grow with the file."""
    try:
        fd, _ = open_regular(path)
    except OSError:
        return None
    try:
        start = max(0, before - limit)
        found, name = _last_name(os.pread(fd, before - start, start), cut_at_start=start > 0)
        if found or start == 0:
            return name
        return _last_name(os.pread(fd, min(head, start), 0), cut_at_start=False)[1]
    except OSError:
        return None
    finally:
        os.close(fd)


def look_up_name(tailer: Tailer) -> str | None:
    """The name of the session ``tailer`` follows, set before the part of its file that was read
    (looked for once: bounded read); ``None`` if there is none or it was looked for already."""
    if tailer.name_checked or tailer.window_start == 0:
        return None
    tailer.name_checked = True
    name = find_name(tailer.path, tailer.window_start)
    return clean(name, 200) if name else None
