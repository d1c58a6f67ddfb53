"""What the tray menu and its tooltip show, built from an immutable snapshot (pure, no toolkit):
the entries and the command each gives when clicked, the tooltip's title, and when either next
reads differently. Every untrusted string goes through the one sanitizer here."""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, field

from notifier.core.commands import Clear, Command, Focus, Goto, Mute, Quit, Show, Snooze
from notifier.core.model import Question, SessionView
from notifier.core.planner import quiet_hours_note
from notifier.core.planner import (
    tomorrow_morning as tomorrow_morning,  # (until cli/snooze.py imports core.quiet's)
)
from notifier.core.text import clean, duration_changes_in, project_name
from notifier.core.text import duration as waited
from notifier.ui.state import UiState
from notifier.ui.view import offline_note

MENU_TEXT = 48
MENU_MAX = 12

Action = Callable[[float], Command]  # the command a menu entry gives when clicked at a time


@dataclass(frozen=True)
class Entry:
    """One menu line. ``action(now)``: the command it gives when clicked at ``now`` (a menu is
    built before it is clicked, so times are taken at the click), None = disabled."""

    label: str
    action: Action | None = None
    default: bool = False
    children: tuple[Entry, ...] = field(default_factory=tuple)
    separator: bool = False


SEPARATOR = Entry("", separator=True)


def always(command: Command) -> Action:
    return lambda now: command


def snooze_all_for(seconds: float) -> Action:
    """Snooze every session for ``seconds`` from the click (0: resume)."""
    return lambda now: Snooze(now + seconds if seconds > 0 else 0.0)


def _show(view: SessionView, q: Question) -> Action:
    return always(Show(Focus(view.ref.key, q.tool_call_id)))


def age(seconds: float) -> str:
    """A question's age in the menu, in whole minutes ("<1 min", "4 min", "2 h 05 min"): a
    label changes at most once a minute, so the menu is re-sent to the tray host at most that
    often (a host re-reads the whole menu at each change, and an open menu closes)."""
    return "<1 min" if isinstance(seconds, (int, float)) and seconds < 60 else waited(seconds)


def age_changes_in(seconds: float) -> float | None:
    """How long until :func:`age` of an age of ``seconds`` (growing with the clock) says
    something else (None: never, for what it calls nonsense)."""
    if isinstance(seconds, (int, float)) and seconds < 60:  # (NaN is not)
        return 60 - seconds
    return duration_changes_in(seconds)


def question_label(view: SessionView, q: Question, now: float) -> str:
    project = project_name(view.ref.name, view.ref.cwd, view.ref.host)
    label = f"{clean(project, 40)} — {clean(q.text, MENU_TEXT)} ({age(now - q.asked_at)})"
    return label + offline_note(view)


Shape = tuple[tuple[str, "Command | None", bool, bool, "Shape"], ...]


def shape(entries: tuple[Entry, ...]) -> Shape:
    """What a menu shows and does (labels, the command each gives, default, separators,
    submenus), to tell whether it differs from the one drawn. (Commands are taken at one fixed
    time: those that depend on the click's time compare equal.)"""
    return tuple(
        (e.label, None if e.action is None else e.action(0.0), e.default, e.separator, shape(e.children))
        for e in entries
    )


def next_redraw(state: UiState, now: float) -> float | None:
    """When the menu or the tooltip next reads differently with nothing else changed: an age of a
    waiting question ticking over ("<1 min" → "1 min", "4 min" → "5 min"), or the snooze's time
    left (the tooltip's, by the second in its last two minutes). None while no question waits
    (nothing ticks: no timer)."""
    snapshot, snoozed_until = state.snapshot, state.snoozed_until(now)
    waiting = [q for _, q in snapshot.pending] + [q for v in snapshot.sessions for q in v.offline]
    if not waiting:
        return None
    changes = [d for d in (age_changes_in(now - q.asked_at) for q in waiting) if d is not None]
    if snoozed_until is not None:  # a time left, counting down
        left = snoozed_until - now
        step = 1 if left < 120 else 60 if left < 86400 else 86400
        changes.append(left - math.floor(left / step) * step or step)
    return now + min(changes) if changes else None


def title(state: UiState, now: float, quiet_hours: str = "") -> str:
    """``quiet_hours``: the config's quiet hours (said while in effect)."""
    pending, snoozed_until = state.snapshot.pending, state.snoozed_until(now)
    sessions = len({v.ref.key for v, _ in pending})
    if not pending:
        text = "pi-notifier: no questions waiting"
    elif sessions == 1:
        n = len(pending)
        ref = pending[0][0].ref
        text = f"{project_name(ref.name, ref.cwd, ref.host)} needs an answer" + (
            f" ({n} questions)" if n > 1 else ""
        )
    else:
        text = f"{sessions} pi sessions need answers"
    if snoozed_until is not None:
        text += f" — snoozed for {waited(snoozed_until - now)}"
    quiet = quiet_hours_note(quiet_hours, now)
    if quiet:
        text += f" — {quiet}"
    if state.health:
        return clean(text, 120) + " — ⚠ " + clean(state.health[0], 120)
    return clean(text, 120)


def menu(state: UiState, now: float) -> tuple[Entry, ...]:
    snapshot, muted = state.snapshot, state.preferences.muted
    entries: list[Entry] = []
    pending = snapshot.pending
    if not pending:
        entries.append(Entry("No questions waiting"))
    for view, q in pending[:MENU_MAX]:
        entries.append(Entry(question_label(view, q, now), _show(view, q)))
    if len(pending) > MENU_MAX:
        entries.append(Entry(f"… {len(pending) - MENU_MAX} more", always(Show())))
    if pending:  # the terminal (tmux pane) of each waiting pi, one click away
        entries.append(
            Entry(
                "Go to session",
                None,
                children=tuple(
                    Entry(question_label(view, q, now), always(Goto(view.ref.key, q.tool_call_id)))
                    for view, q in pending[:MENU_MAX]
                ),
            )
        )
    offline = [(v, q) for v in snapshot.sessions for q in v.offline]
    for view, q in offline[:MENU_MAX]:
        entries.append(Entry(question_label(view, q, now), always(Show(Focus(view.ref.key, q.tool_call_id)))))
    abandoned = snapshot.abandoned
    if abandoned:
        entries.append(SEPARATOR)
        entries.append(Entry("Abandoned (the pi that asked has stopped)"))
        for view, q in abandoned[:MENU_MAX]:
            entries.append(Entry(question_label(view, q, now), _show(view, q)))
        entries.append(Entry("Clear abandoned", always(Clear())))
    entries.append(SEPARATOR)
    snooze_items = [
        Entry("15 minutes", snooze_all_for(15 * 60)),
        Entry("1 hour", snooze_all_for(3600)),
        Entry("Until tomorrow", lambda at: Snooze(tomorrow_morning(at))),
    ]
    if state.snoozed_until(now) is not None:
        snooze_items.append(Entry("Resume notifications now", snooze_all_for(0)))
    entries.append(Entry("Snooze all", None, children=tuple(snooze_items)))
    if muted:
        entries.append(
            Entry(
                "Unmute",
                None,
                children=tuple(Entry(clean(p, 40), always(Mute(p, on=False))) for p in sorted(muted)),
            )
        )
    entries.append(Entry("Open window", always(Show()), default=True))
    entries.append(Entry("Quit", always(Quit())))
    return tuple(entries)


