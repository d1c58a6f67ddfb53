"""Where each session of a ``status --json`` object runs (its ``"location"``, :mod:`.locate`), and
the pi folders ``status`` judges liveness by when no app answers.

Only a session in a folder where a pi runs can be matched, so the others are not even looked at:
with thousands of sessions and a few pi processes (or none) this costs the process listing, not a
parse of every session."""

from __future__ import annotations

import logging
import os
from typing import Any

from notifier.core.codec import parse_iso
from notifier.core.owners import Wanted
from notifier.core.text import clean
from notifier.system.locate import Location, locate_sessions
from notifier.system.processes import PiProcess, maybe_pi, pi_processes

log = logging.getLogger(__name__)

Listed = tuple[list[PiProcess] | None, set[str]]  # (pi_folders)


def pi_folders(needed: bool = True) -> Listed:
    """The live pi processes and the folders they run in (as written and resolved, without a
    trailing slash); nothing is listed unless ``needed`` (no session could be matched)."""
    if not needed:
        return None, set()
    procs = pi_processes(maybe_pi() if os.path.isdir("/proc/self") else None)
    folders: set[str] = set()
    for p in procs or ():
        folders.update(cwd.rstrip("/") or "/" for cwd in (p.cwd, os.path.realpath(p.cwd)))
    return procs, folders


def in_folders(cwd: object, folders: set[str]) -> bool:
    """Whether a session in ``cwd`` can be matched: a pi runs in that folder (:func:`pi_folders`)."""
    return isinstance(cwd, str) and (cwd.rstrip("/") or "/") in folders


def may_match(session: dict[str, Any]) -> bool:
    """Whether a ``status --json`` session could have a live pi at all (worth listing processes)."""
    return session.get("alive") is not False and bool(session.get("cwd"))


def add_locations(status: dict[str, Any], listed: Listed | None = None) -> dict[str, Any]:
    """Fill ``"location"`` into each session of a ``status --json`` object (``null``: no live pi
    or unknown). Additive: nothing else changes. ``listed``: :func:`pi_folders`, if the caller
    listed them already."""
    sessions = status.get("sessions")
    if not isinstance(sessions, list):
        return status
    found: dict[str, Location] = {}
    try:
        if listed is None:
            listed = pi_folders(any(isinstance(s, dict) and may_match(s) for s in sessions))
        procs, folders = listed
        wanted = [
            _wanted(s)
            for s in sessions
            if isinstance(s, dict) and isinstance(s.get("file"), str) and in_folders(s.get("cwd"), folders)
        ]
        if wanted:
            found = locate_sessions(wanted, procs=procs)
    except Exception as exc:  # locating is a bonus: status still works
        log.debug("cannot locate sessions: %s", clean(exc, 200))
        found = {}
    for s in sessions:
        if isinstance(s, dict):
            loc = found.get(s.get("file"))  # type: ignore[arg-type]
            s["location"] = loc.obj() if loc is not None else None
    return status


def _wanted(s: dict[str, Any]) -> Wanted:
    """What the pairing needs of one ``status --json`` session: its file, folder, last change, the
    first question pending (text and labels) and whether it is alive."""
    updated = parse_iso(s.get("updated_at")) or 0.0
    pending = s.get("pending") or []
    first = pending[0] if pending and isinstance(pending[0], dict) else {}
    text = first.get("text") if isinstance(first.get("text"), str) else None
    labels = tuple(o for o in first.get("options") or () if isinstance(o, str))
    alive = s.get("alive")
    sid = s.get("id") if isinstance(s.get("id"), str) else None
    return Wanted(s["file"], s.get("cwd"), updated, alive if isinstance(alive, bool) else None, text, labels, sid)
