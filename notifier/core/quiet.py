"""Quiet hours: a daily window without notifications (the tray icon still changes).

Pure: the time is passed in (epoch seconds); only the conversion to the local time of day uses
the machine's time zone."""

from __future__ import annotations

import re

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
    from datetime import datetime  # (only the running app has quiet hours to check)

    local = datetime.fromtimestamp(now)
    minute = local.hour * 60 + local.minute
    start, end = window
    if start == end:
        return False
    return start <= minute < end if start < end else (minute >= start or minute < end)
