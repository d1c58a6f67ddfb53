"""Quiet hours: a daily window without notifications (the tray icon still changes); and the next
morning, when a snooze "until tomorrow" ends.

Pure: the time is passed in (epoch seconds); only the conversion to the local time of day uses
the machine's time zone."""

from __future__ import annotations

import re
from datetime import datetime, timedelta
from typing import Any

from notifier.core.formats import iso
from notifier.core.text import clean

QUIET_HOURS_FORMAT = "'HH:MM-HH:MM' such as '22:00-07:30' (start and end differ), or '' for none"

_HHMM = r"([01]?\d|2[0-3]):([0-5]\d)-([01]?\d|2[0-3]):([0-5]\d)"  # (compiled when quiet hours are set)


def parse_quiet_hours(value: str) -> tuple[int, int] | None:
    """'22:00-07:00' → (start minute, end minute) of the day; '' → None. ValueError (saying
    :data:`QUIET_HOURS_FORMAT`) for anything else."""
    if not value:
        return None
    m = re.fullmatch(_HHMM, value.strip())
    if not m:
        raise ValueError(QUIET_HOURS_FORMAT)
    a, b, c, d = (int(x) for x in m.groups())
    if (a, b) == (c, d):
        raise ValueError(QUIET_HOURS_FORMAT)
    return a * 60 + b, c * 60 + d


def in_quiet_hours(window: tuple[int, int] | None, now: float) -> bool:
    """Whether ``now`` falls in ``window`` (minutes of the local day; it may span midnight)."""
    if window is None:
        return False

    local = datetime.fromtimestamp(now)
    minute = local.hour * 60 + local.minute
    start, end = window
    if start == end:
        return False
    return start <= minute < end if start < end else (minute >= start or minute < end)


def next_quiet_change(window: tuple[int, int] | None, now: float) -> float | None:
    """The next moment after ``now`` when quiet hours start or end (None: no quiet hours)."""
    if window is None:
        return None

    day = datetime.fromtimestamp(now).replace(hour=0, minute=0, second=0, microsecond=0)
    times = [
        (day + timedelta(days=d)).replace(hour=m // 60, minute=m % 60).timestamp()
        for d in (0, 1, 2)
        for m in window
    ]
    return min(t for t in times if t > now)


def tomorrow_morning(now: float) -> float:
    """8:00 tomorrow, local time ("Until tomorrow")."""
    local = datetime.fromtimestamp(now)
    return (local + timedelta(days=1)).replace(hour=8, minute=0, second=0, microsecond=0).timestamp()


def quiet_hours_obj(value: str, now: float) -> dict[str, Any]:
    """``status --json``'s ``quiet_hours`` (docs/contract.md §3): while the quiet hours of
    ``value`` (the config's text) are in effect at ``now``, ``{"hours": "22:00-07:30", "until":
    <ISO-8601 UTC>}``; else null (also for a value that does not parse)."""
    try:
        window = parse_quiet_hours(value)
    except ValueError:
        window = None
    end = next_quiet_change(window, now)
    if end is None or not in_quiet_hours(window, now):
        return {"quiet_hours": None}

    return {"quiet_hours": {"hours": value.strip(), "until": iso(end)}}


def quiet_hours_line(obj: object) -> str:
    """`status`'s line while quiet hours are in effect (with its newline), from the status
    object's ``quiet_hours`` (:func:`quiet_hours_obj`, the app's or our own); "" otherwise."""
    if not isinstance(obj, dict) or not isinstance(obj.get("hours"), str):
        return ""
    hours = clean(obj["hours"], 20)
    try:
        window = parse_quiet_hours(hours)
    except ValueError:
        window = None
    until = f" until {_hhmm(window[1])}" if window else ""
    return f"Quiet hours{until} ({hours}): no notifications; the tray still counts.\n"


def _hhmm(minute: int) -> str:
    return f"{minute // 60:02d}:{minute % 60:02d}"


def quiet_hours_note(value: str, now: float) -> str:
    """"quiet hours until 07:30" while the quiet hours of ``value`` (the config's text) are in
    effect at ``now``; "" otherwise (also for a value that does not parse)."""
    try:
        window = parse_quiet_hours(value)
    except ValueError:
        return ""
    if window is None or not in_quiet_hours(window, now):
        return ""
    return f"quiet hours until {_hhmm(window[1])}"
