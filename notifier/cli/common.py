"""What the commands share: one-line failures, SESSION as a file anywhere."""

from __future__ import annotations

import dataclasses
import os
import sys

from notifier import APP_NAME
from notifier.core.model import Snapshot
from notifier.core.text import clean
from notifier.sessions import EngineOptions, scan_once


def fail(code: int, message: object) -> int:
    """Say ``message`` as one line on stderr; return the exit ``code``."""
    sys.stderr.write(f"{APP_NAME}: {clean(message)}\n")
    return code


def with_outside_file(snapshot: Snapshot, options: EngineOptions, spec: str | None) -> Snapshot:
    """``snapshot``, plus the session of ``spec`` when it is a session file outside the watched
    folders (a copied file, another ``--session-dir``): SESSION may be a file anywhere."""
    if not spec or spec == "next":
        return snapshot
    path = os.path.realpath(os.path.expanduser(spec))
    if not path.endswith(".jsonl") or not os.path.isfile(path):
        return snapshot
    if any(os.path.realpath(v.ref.key) == path for v in snapshot.sessions):
        return snapshot

    folder = EngineOptions([os.path.dirname(path)], options.catalog, options.liveness, options.max_line)
    extra = [v for v in scan_once(folder).sessions if os.path.realpath(v.ref.key) == path]
    return dataclasses.replace(snapshot, sessions=(*snapshot.sessions, *extra)) if extra else snapshot
