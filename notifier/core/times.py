"""Times from untrusted sources (session entries, stored rows) are kept inside a sane window.

Pure: no clock is read here."""

from __future__ import annotations

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
