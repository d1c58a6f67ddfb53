"""What a status bar shows: a tmux status-line segment ("π 2", or nothing) and one JSON line for
waybar, polybar or i3blocks (``text``, ``tooltip``, ``class``), from a small summary of the
board that the running app sends for each refresh (a status bar asks every second).

Pure: the snapshot and the time are passed in."""

from __future__ import annotations

from typing import Any

from notifier.core.model import Snapshot
from notifier.core.session_spec import short_id
from notifier.core.text import clean, duration, project_name

MARK = "π"
LISTED = 8  # questions a tooltip lists


def summary(snapshot: Snapshot, now: float) -> dict[str, Any]:
    """``{"pending", "abandoned", "snoozed_until", "questions": [{"project", "id", "text",
    "waited_s"}…]}``: the questions waiting longest first, at most :data:`LISTED` of them."""
    waiting = sorted(snapshot.pending, key=lambda sq: sq[1].asked_at)
    snoozed = snapshot.snoozed_until if snapshot.snoozed_until and snapshot.snoozed_until > now else None
    return {
        "pending": snapshot.pending_count,
        "abandoned": len(snapshot.abandoned),
        "snoozed_until": snoozed,
        "questions": [
            {
                "project": project_name(v.ref.name, v.ref.cwd, v.ref.host),
                "id": short_id(v.ref.id),
                "text": clean(q.text, 80),
                "waited_s": max(0.0, now - q.asked_at),
            }
            for v, q in waiting[:LISTED]
        ],
    }


def _count(s: dict[str, Any]) -> int:
    n = s.get("pending")
    return n if isinstance(n, int) and not isinstance(n, bool) and n > 0 else 0


def tmux_segment(s: dict[str, Any]) -> str:
    """"π 2" while questions wait ("π 2 z" while snoozed), else nothing (the segment vanishes)."""
    n = _count(s)
    if not n:
        return ""
    return f"{MARK} {n}" + (" z" if s.get("snoozed_until") else "")


def bar_obj(s: dict[str, Any], now: float) -> dict[str, str]:
    """waybar's custom module JSON (polybar and i3blocks read ``text``): ``class`` is
    ``needs``, ``snoozed``, ``abandoned`` or ``idle``, for the bar's CSS."""
    n = _count(s)
    lines = []
    for q in s.get("questions") or ():
        if isinstance(q, dict):
            sid = f" {clean(q.get('id'), 8)}" if q.get("id") else ""
            lines.append(
                f"{clean(q.get('project'), 40)}{sid}: {clean(q.get('text'), 80)} ({duration(float(q.get('waited_s') or 0))})"
            )
    if n > len(lines):
        lines.append(f"… {n - len(lines)} more")
    snoozed = s.get("snoozed_until")
    if isinstance(snoozed, (int, float)) and not isinstance(snoozed, bool) and snoozed > now:
        lines.append(f"snoozed for {duration(snoozed - now)}")
    abandoned = s.get("abandoned") or 0
    if abandoned:
        lines.append(f"{abandoned} abandoned (their pi stopped)")
    klass = "snoozed" if snoozed and n else "needs" if n else "abandoned" if abandoned else "idle"
    return {
        "text": tmux_segment(s),
        "tooltip": "\n".join(lines) or "no pi is waiting for an answer",
        "class": klass,
    }
