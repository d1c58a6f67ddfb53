"""What the user has silenced (snoozes and mutes), said for ``status``: one line of text, and
the fields ``status --json`` adds. Pure: the preferences and the time are passed in."""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, NamedTuple

from notifier.core.quiet import tomorrow_morning
from notifier.core.session_spec import short_id
from notifier.core.text import clean, duration, project_name

if TYPE_CHECKING:
    from notifier.core.model import Snapshot
    from notifier.core.preferences import Preferences


class Silences(NamedTuple):
    """The snoozes and mutes as saved (``status`` reads them without building the app's
    :class:`~notifier.core.preferences.Preferences`, a dataclass: a one-shot command's start-up
    is part of its speed)."""

    all_until: float = 0.0
    sessions: Mapping[str, float] = {}
    projects: Mapping[str, float] = {}
    muted: frozenset[str] = frozenset()

    @classmethod
    def of(cls, prefs: Preferences) -> Silences:
        return cls(prefs.snooze_all_until, prefs.sessions, prefs.projects, prefs.muted)

    def running(self, now: float) -> Silences:
        """Without the snoozes that have ended by ``now``."""
        return Silences(
            self.all_until if self.all_until > now else 0.0,
            {k: v for k, v in self.sessions.items() if v > now},
            {k: v for k, v in self.projects.items() if v > now},
            self.muted,
        )


def silenced_obj(silences: Silences, now: float) -> dict[str, Any]:
    """``{"snoozed": {"all": ISO|null, "sessions": {file: ISO}, "projects": {name: ISO}},
    "muted": [project…]}``: the snoozes still running at ``now`` and the muted projects."""
    from notifier.core.formats import iso

    p = silences.running(now)
    return {
        "snoozed": {
            "all": iso(p.all_until) if p.all_until else None,
            "sessions": {k: iso(v) for k, v in sorted(p.sessions.items())},
            "projects": {k: iso(v) for k, v in sorted(p.projects.items())},
        },
        "muted": sorted(p.muted),
    }


def silenced_line(silences: Silences, snapshot: Snapshot, now: float) -> str:
    """"snoozed: everything for 14 min, session blog 1d2e3a4b for 1 h 00 min; muted: shop", or
    "" when nothing is silenced."""
    p = silences.running(now)
    names = {v.ref.key: v for v in snapshot.sessions}
    snoozes = []
    if p.all_until:
        snoozes.append(f"everything for {duration(p.all_until - now)}")
    for key, until in sorted(p.sessions.items()):
        v = names.get(key)
        what = (
            f"{project_name(v.ref.name, v.ref.cwd, v.ref.host)} {short_id(v.ref.id) or ''}".strip() if v
            else clean(key, 80)
        )
        snoozes.append(f"session {what} for {duration(until - now)}")
    for project, until in sorted(p.projects.items()):
        snoozes.append(f"project {clean(project, 80)} for {duration(until - now)}")
    parts = []
    if snoozes:
        parts.append("snoozed: " + ", ".join(snoozes))
    if p.muted:
        parts.append("muted: " + ", ".join(clean(m, 80) for m in sorted(p.muted)))
    return "; ".join(parts)


_UNITS = {"s": 1, "sec": 1, "m": 60, "min": 60, "h": 3600, "d": 86400}
_PART = re.compile(r"(\d+(?:\.\d+)?)\s*(d|h|min|m|sec|s)")
MAX_SNOOZE_S = 7 * 86400.0


def parse_duration(text: str, limit: float | None = MAX_SNOOZE_S) -> float | None:
    """Seconds in "90s", "15m", "15min", "1h", "2h30m", "1d" or a bare number of minutes; "off"
    or none at all ("0", "0m"): 0 (resume). None for anything else (or more than ``limit``, a week)."""
    t = text.strip().lower()
    if t in ("off", "0"):
        return 0.0
    if re.fullmatch(r"\d+(?:\.\d+)?", t):
        seconds = float(t) * 60
    else:
        parts = _PART.findall(t)
        if not parts or _PART.sub("", t).strip():
            return None
        seconds = sum(float(n) * _UNITS[u] for n, u in parts)
    if seconds == 0:
        return 0.0  # ("0m", "0s": as "0")
    return seconds if seconds > 0 and (limit is None or seconds <= limit) else None


DEFAULT_SNOOZE_S = 15 * 60.0  # as the notification's "Snooze 15 min"
DURATIONS = "90s, 15m, 1h, 2h30m, 1d, a number of minutes (up to a week), tomorrow, or off"


def snooze_words(words: list[str], now: float) -> tuple[str | None, float]:
    """``snooze [WHAT] [DURATION]``'s words → (WHAT, None for everything; seconds, 0 resumes).
    DURATION is what :func:`parse_duration` reads or "tomorrow" (until 08:00 the next morning,
    local time); none: 15 min. ValueError (one line, saying what is wrong) for anything else."""
    words = list(words)
    seconds = DEFAULT_SNOOZE_S
    last = words[-1].strip().lower() if words else ""
    if last == "tomorrow":
        words.pop()
        seconds = tomorrow_morning(now) - now
    elif words and (found := parse_duration(last)) is not None:
        words.pop()
        seconds = found
    elif words and parse_duration(last, limit=None) is not None:
        raise ValueError(f"a snooze lasts at most {duration(MAX_SNOOZE_S)}: for longer, 'mute' the project")
    second = words[-1].strip().lower() if len(words) == 2 else ""
    if second and second != "tomorrow" and parse_duration(second, limit=None) is None:
        raise ValueError(not_duration(words[-1]))
    if len(words) > 1:
        raise ValueError("snooze takes [WHAT] [DURATION]: e.g. 'snooze blog 1h', 'snooze all tomorrow', 'snooze off'")
    return (words[0] if words else None), seconds


def not_duration(word: str) -> str:
    return f"{clean(word, 40)!r} is not a DURATION ({DURATIONS})"

