"""What SESSION on the command line names: a session file, an id, a short id, an id prefix, a
session or project name, or ``next``; and the short id that tells sessions apart.

pi's ids are UUIDv7: their first 12 hex digits are the start time, so two pis started a minute
apart share their first 8. The short id is the id's *last* 8 hex digits (random bits).

Pure: the views are passed in."""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence

from notifier.core.model import SessionView
from notifier.core.text import clean, project_name

NEXT = "next"  # SESSION meaning the question waiting longest
SHORT = 8
_HEX = re.compile(r"[^0-9A-Za-z]")


def short_id(session_id: str | None) -> str | None:
    """The id's last 8 letters or digits (dashes dropped); None without an id."""
    if not session_id:
        return None
    plain = _HEX.sub("", session_id)
    return (plain[-SHORT:] or session_id[-SHORT:]).lower()


def folder_name(view: SessionView) -> str | None:
    """The last folder of the session's cwd (what "project" means on the command line)."""
    parts = [p for p in re.split(r"[/\\]", view.ref.cwd or "") if p]
    return parts[-1] if parts else None


def label(view: SessionView) -> str:
    """How a candidate is named in a message: project and short id ("blog 9f2c1d3e")."""
    sid = short_id(view.ref.id)
    name = project_name(view.ref.name, view.ref.cwd, view.ref.host)
    return f"{name} {sid}" if sid else f"{name} ({clean(view.ref.file, 80)})"


# Each rule, tried in order: the first that matches any session decides (an id beats a name).
# (A session file is matched by the caller first: resolving paths is not pure.)
Rule = Callable[[SessionView, str], bool]


def _by_id(v: SessionView, spec: str) -> bool:
    return bool(v.ref.id) and v.ref.id == spec


def _by_short_id(v: SessionView, spec: str) -> bool:
    return len(spec) >= 4 and short_id(v.ref.id) == spec.lower()


def _by_id_prefix(v: SessionView, spec: str) -> bool:
    return bool(v.ref.id) and v.ref.id.startswith(spec)  # type: ignore[union-attr]


def _by_short_prefix(v: SessionView, spec: str) -> bool:
    sid = short_id(v.ref.id)
    return len(spec) >= 4 and sid is not None and sid.startswith(spec.lower())


def _by_name(v: SessionView, spec: str) -> bool:
    return v.ref.name is not None and (v.ref.name == spec or clean(v.ref.name, 200) == spec)


def _by_project(v: SessionView, spec: str) -> bool:
    folder = folder_name(v)
    return folder is not None and (folder == spec or clean(folder, 200) == spec)  # (as it is shown too)


def _by_name_any_case(v: SessionView, spec: str) -> bool:
    low = spec.casefold()
    names = (v.ref.name or "", folder_name(v) or "")
    return any(n.casefold() == low or clean(n, 200).casefold() == low for n in names)


RULES: tuple[Rule, ...] = (
    _by_id,
    _by_short_id,
    _by_id_prefix,
    _by_short_prefix,
    _by_name,
    _by_project,
    _by_name_any_case,
)


def matches(views: Sequence[SessionView], spec: str) -> list[SessionView]:
    """The sessions ``spec`` (not a file) names, by the first rule that names any; where several,
    the ones waiting for an answer if any do, else the ones with a live pi if any have one
    (``blog`` is the blog session that waits, not its forty old files). Several left: ambiguous;
    none: no such session."""
    for rule in RULES:
        found = [v for v in views if rule(v, spec)]
        if found:
            break
    else:
        return []
    if len(found) > 1:
        waiting = [v for v in found if v.pending]
        live = [v for v in found if v.alive]
        found = waiting or live or found
    return found


def candidates_line(spec: str, found: Sequence[SessionView], shown: int = 5) -> str:
    """One line for an ambiguous SESSION: how many it matches, and which."""
    names = ", ".join(label(v) for v in sorted(found, key=lambda v: -v.updated_at)[:shown])
    more = f" and {len(found) - shown} more" if len(found) > shown else ""
    return f"{clean(spec, 80)!r} matches {len(found)} sessions: {names}{more}; give its short id or file"
