"""The snoozes and mutes the app saved in its state store, read without opening the store
(``status`` and ``snooze`` read them beside the app, or without it): a read-only SQLite query,
nothing created. The rows are as :class:`notifier.state.store.Store` writes them."""

from __future__ import annotations

import os
import sqlite3

from notifier.core.planner import Silences

ALL = "*"  # (Store's scopes: one session's file, "project:<name>", or all)
PROJECT = "project:"


def saved_silences(state_dir: str, now: float) -> Silences:
    """What ``state.sqlite3`` in ``state_dir`` holds, still running at ``now`` (none: nothing
    saved yet, or a store that cannot be read)."""
    path = os.path.join(state_dir, "state.sqlite3")
    if not os.path.isfile(path):
        return Silences()
    try:
        db = sqlite3.connect(f"file:{path}?mode=ro", uri=True, timeout=2)
        try:
            snoozes = db.execute("SELECT scope, until FROM snoozes WHERE until > ?", (now,)).fetchall()
            muted = frozenset(p for (p,) in db.execute("SELECT project FROM mutes"))
        finally:
            db.close()
    except sqlite3.Error:
        return Silences()
    all_until, sessions, projects = 0.0, {}, {}
    for scope, until in snoozes:
        if scope == ALL:
            all_until = max(all_until, until)
        elif scope.startswith(PROJECT):
            projects[scope[len(PROJECT) :]] = until
        else:
            sessions[scope] = until
    return Silences(all_until, sessions, projects, muted)
