"""Times from untrusted sources (session entries, stored rows) are kept inside a sane window.

Pure: no clock is read here."""

from __future__ import annotations

from datetime import datetime, timezone

# Times outside this window come from a broken clock or a hostile file: they are ignored (the
# time the entry was seen is used instead), so no later arithmetic, storage or rendering breaks.
MIN_TIME = 946684800.0  # 2000-01-01T00:00:00Z
MAX_TIME = 7258118400.0  # 2200-01-01T00:00:00Z


def sane_time(value: object) -> float | None:
    """``value`` as epoch seconds if it is a real number inside [MIN_TIME, MAX_TIME], else None."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    if isinstance(value, int) and not MIN_TIME <= value <= MAX_TIME:
        return None  # also ints too large for a float
    seconds = float(value)
    return seconds if MIN_TIME <= seconds <= MAX_TIME else None  # NaN compares False


def parse_iso(text: object) -> float | None:
    """An ISO-8601 time (ours: :func:`notifier.core.formats.iso`; pi's entries) as epoch
    seconds, or None when it is not one or lies outside [MIN_TIME, MAX_TIME]. ``Z`` is UTC, and
    so is a time without a zone."""
    if not isinstance(text, str) or not 0 < len(text) <= 64:
        return None
    if text[-1] in ("Z", "z"):
        text = text[:-1] + "+00:00"  # (Python 3.10's fromisoformat does not take Z)
    try:
        parsed = datetime.fromisoformat(text)
        if parsed.tzinfo is None:
            parsed = parsed.replace(tzinfo=timezone.utc)
        return sane_time(parsed.timestamp())
    except (ValueError, OverflowError, OSError):
        return None
