"""What a status bar shows: a tmux status-line segment ("π 2", or nothing) and one JSON line for
waybar, polybar or i3blocks (``text``, ``tooltip``, ``class``), from a small summary of the
board that the running app sends for each refresh (a status bar asks every second).

Pure: the snapshot and the time are passed in."""

from __future__ import annotations

from typing import Any

from notifier.core.formats import finite_number
from notifier.core.model import Snapshot
from notifier.core.session_spec import short_id
from notifier.core.text import clean, duration, markup, project_name

MARK = "π"
LISTED = 8  # questions a tooltip lists


def summary(snapshot: Snapshot, now: float, snoozed_until: float | None = None, quiet: str = "") -> dict[str, Any]:
    """``{"pending", "abandoned", "snoozed_until", "quiet", "questions": [{"project", "id",
    "text", "waited_s"}…]}``: the questions waiting longest first, at most :data:`LISTED` of
    them. ``snoozed_until``: when the snooze of everything ends (the user's choice, not the
    board's); ``quiet``: the quiet hours in effect ("quiet hours until 07:30", or "")."""
    waiting = sorted(snapshot.pending, key=lambda sq: sq[1].asked_at)
    snoozed = snoozed_until if snoozed_until and snoozed_until > now else None
    return {
        "pending": snapshot.pending_count,
        "abandoned": len(snapshot.abandoned),
        "snoozed_until": snoozed,
        "quiet": quiet,
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
    ``needs``, ``snoozed``, ``abandoned`` or ``idle``, for the bar's CSS; the ``tooltip`` is
    markup-escaped (waybar renders it as Pango markup). (The summary crossed a socket: a field of
    the wrong type counts as missing.)"""
    n = _count(s)
    questions = s.get("questions")
    lines = []
    for q in questions if isinstance(questions, list) else ():
        if isinstance(q, dict):
            sid = f" {markup(q.get('id'), 8)}" if q.get("id") else ""
            waited = duration(finite_number(q.get("waited_s")) or 0.0)
            lines.append(f"{markup(q.get('project'), 40)}{sid}: {markup(q.get('text'), 80)} ({waited})")
    if n > len(lines):
        lines.append(f"… {n - len(lines)} more")
    snoozed = finite_number(s.get("snoozed_until"))
    snoozed = snoozed if snoozed is not None and snoozed > now else None
    if snoozed is not None:
        lines.append(f"snoozed for {duration(snoozed - now)}")
    abandoned = finite_number(s.get("abandoned")) or 0
    if abandoned > 0:
        lines.append(f"{int(abandoned)} abandoned (their pi stopped)")
    klass = "snoozed" if snoozed and n else "needs" if n else "abandoned" if abandoned > 0 else "idle"
    lines = lines or ["no pi is waiting for an answer"]
    if isinstance(s.get("quiet"), str) and s["quiet"]:
        lines.append(f"{markup(s['quiet'], 60)}: no notifications")
    return {
        "text": tmux_segment({"pending": n, "snoozed_until": snoozed}),
        "tooltip": "\n".join(lines),
        "class": klass,
    }
