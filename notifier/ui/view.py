"""What the tray menu and the window show, built from an immutable snapshot (pure, no toolkit).

Every untrusted string goes through the one sanitizer here, with the length each place allows.
"""

from __future__ import annotations

import datetime as dt
import math
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from notifier.core import formats, shellcmd
from notifier.core.commands import Clear, Command, Focus, Goto, Mute, Quit, Show, Snooze
from notifier.core.model import Question, SessionView, Snapshot
from notifier.core.preferences import Preferences
from notifier.core.quiet import quiet_hours_note
from notifier.core.session_spec import short_id
from notifier.core.text import clean, duration_changes_in, project_name
from notifier.core.text import duration as waited
from notifier.ui.state import UiState

MENU_TEXT = 48
MENU_MAX = 12
MIN_PATH = 32  # a path in the details pane is never shortened below this many characters


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


def tomorrow_morning(now: float) -> float:
    """8:00 tomorrow, local time ("Until tomorrow")."""
    local = dt.datetime.fromtimestamp(now)
    return (local + dt.timedelta(days=1)).replace(hour=8, minute=0, second=0, microsecond=0).timestamp()


def always(command: Command) -> Action:
    return lambda now: command


def snooze_all_for(seconds: float) -> Action:
    """Snooze every session for ``seconds`` from the click (0: resume)."""
    return lambda now: Snooze(now + seconds if seconds > 0 else 0.0)


def _show(view: SessionView, q: Question) -> Action:
    return always(Show(Focus(view.ref.key, q.tool_call_id)))


def question_label(view: SessionView, q: Question, now: float) -> str:
    project = project_name(view.ref.name, view.ref.cwd, view.ref.host)
    label = f"{clean(project, 40)} — {clean(q.text, MENU_TEXT)} ({waited(now - q.asked_at)})"
    return label + offline_note(view)


def offline_note(view: SessionView) -> str:
    """" — devbox offline since 10:02" for a remote session whose link is down."""
    if view.offline_since is None:
        return ""
    since = datetime.fromtimestamp(view.offline_since).strftime("%H:%M")
    return f" — {clean(view.ref.host, 40)} offline since {since}"


def next_redraw(state: UiState, now: float) -> float | None:
    """When the menu or the tooltip next reads differently with nothing else changed: an age of a
    waiting question ticking over ("12 s" → "13 s", "4 min" → "5 min"), or the snooze's time
    left. None while no question waits (nothing ticks: no timer)."""
    snapshot, snoozed_until = state.snapshot, state.snoozed_until(now)
    waiting = [q for _, q in snapshot.pending] + [q for v in snapshot.sessions for q in v.offline]
    if not waiting:
        return None
    changes = [d for d in (duration_changes_in(now - q.asked_at) for q in waiting) if d is not None]
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


def resume_command(cwd: str | None, file: str, host: str | None = None) -> str:
    """What to type to continue the session in a terminal (``cd DIR && pi --session FILE``). A
    session on the remote ``host`` is resumed there, through ssh (the remote command is one
    argument: ssh hands it to the remote shell). Raises :class:`shellcmd.Unsafe` when a name
    cannot be shown in a command to paste (the reason says which)."""
    run: list[shellcmd.Word] = ["pi", "--session", shellcmd.Arg("the session file name", file)]
    line = shellcmd.chain(["cd", shellcmd.Arg("the folder of the session", cwd)], run) if cwd else shellcmd.join(run)
    return shellcmd.join(["ssh", "-t", shellcmd.Arg("the remote name", host), line]) if host else line


def resume_or_why(cwd: str | None, file: str, host: str | None = None) -> tuple[str | None, str | None]:
    """(the resume command, None), or (None, why no command is offered)."""
    try:
        return resume_command(cwd, file, host), None
    except shellcmd.Unsafe as exc:
        return None, f"no resume command is offered: {exc}"


def question_obj(view: SessionView, q: Question, abandoned: bool) -> dict[str, Any]:
    """Everything the window shows about one question (plain, sanitized text): the question and
    its session as every JSON output has them (:mod:`notifier.core.formats`), every item in
    full, and the window's own display fields on top."""
    obj = formats.question_obj(q)
    resume, refused = resume_or_why(view.ref.cwd, view.ref.file, view.ref.host)
    obj.update(
        {
            "session": formats.session_obj(view.ref),
            "items": formats.items_obj(q),
            "key": [view.ref.key, q.tool_call_id],
            "project": project_name(view.ref.name, view.ref.cwd, view.ref.host),
            "host": view.ref.host,
            "offline": offline_note(view).lstrip(" —") or None,
            "folder": project_name(None, view.ref.cwd),
            "session_name": clean(view.ref.name, 120) or None,
            "session_id": view.ref.id,
            "tool": clean(q.tool, 60),
            "asked_at": q.asked_at,
            "abandoned": abandoned,
            "cwd": view.ref.cwd,
            "file": view.ref.file,
            "title": q.title,
            "dialog": q.dialog,  # an extension dialog (select, confirm, input, editor, custom): see details_text
            "resume": resume,  # None: no command can be shown, "resume_refused" says why
            "resume_refused": refused,
            "alive": view.alive,  # None: not known (liveness off, remote)
            "short_id": short_id(view.ref.id),  # (the id's random end: UUIDv7 starts with a time)
            "snoozed_until": None,  # filled in by mark_snoozes (the app knows the preferences)
        }
    )
    return obj


def mark_snoozes(window: dict[str, Any], preferences: Preferences, now: float) -> dict[str, Any]:
    """Mark each question of a window object whose notifications are snoozed: until when, and by
    what ("session", "project" or "all", the one that ends last), so the window can lift it; and
    the window itself while everything is snoozed."""
    for q in window.get("questions", []):
        session, project = q["key"][0], q["project"]
        spans = [
            (preferences.sessions.get(session, 0.0), "session"),
            (preferences.projects.get(project, 0.0), "project"),
            (preferences.snooze_all_until, "all"),
        ]
        until, by = max(spans)
        q["snoozed_until"], q["snoozed_by"] = (until, by) if until > now else (None, None)
    window["snoozed_until"] = preferences.snooze_all_until if preferences.snooze_all_until > now else None
    return window


def unsnooze(q: dict[str, Any]) -> Snooze | None:
    """The command that lifts the snooze a window question is under (None: not snoozed)."""
    by = q.get("snoozed_by")
    if not q.get("snoozed_until") or by is None:
        return None
    if by == "session":
        return Snooze(0.0, session=q["key"][0])
    if by == "project":
        return Snooze(0.0, project=q["project"])
    return Snooze(0.0)


def live(q: dict[str, Any]) -> bool:
    """Does a running pi hold this question's session (found, or reported alive)?"""
    if q.get("abandoned"):
        return False
    return bool(q.get("location")) or q.get("alive") is True


def shorten_middle(text: str, limit: int) -> str:
    """A long path shortened in the middle ("/home/me/…/webshop/a.jsonl"), never wrapped mid-word."""
    if limit < 5 or len(text) <= limit:
        return text
    keep = limit - 1
    head = keep // 2
    return text[:head] + "…" + text[len(text) - (keep - head) :]


def where_text(q: dict[str, Any]) -> str:
    """Where the pi of a question runs, in a few words: "tmux work:1 %3", "/dev/pts/4", "" (unknown)."""
    where = q.get("location")
    if not isinstance(where, dict):
        return clean(q.get("host"), 40) if q.get("host") else ""
    tm = where.get("tmux")
    if isinstance(tm, dict):
        return f"tmux {clean(tm.get('session'), 40)}:{clean(tm.get('window'), 8)} {clean(tm.get('pane'), 8)}"
    return clean(where.get("terminal") or where.get("tty") or "", 40) or f"pid {clean(where.get('pid'))}"


def window_obj(snapshot: Snapshot) -> dict[str, Any]:
    return {
        "taken_at": snapshot.taken_at,
        "snoozed_until": None,  # filled in by mark_snoozes
        "questions": [question_obj(v, q, False) for v, q in snapshot.pending]
        + [question_obj(v, q, True) for v, q in snapshot.abandoned]
        + [question_obj(v, q, False) for v in snapshot.sessions for q in v.offline],
        "working": sum(1 for s in snapshot.sessions if s.state == "working"),
    }


def is_gate(q: dict[str, Any]) -> bool:
    """A dialog that gates something (a tool call that is no question, or any confirm): the
    window shows all of it and makes "No" the default."""
    return q.get("kind") == "dialog" and (q.get("dialog") == "confirm" or q.get("tool") != "dialog")


def details_text(q: dict[str, Any], now: float, width: int = 0) -> str:
    """The details pane: full questions, headers, options (recommended marked, multi-select noted).
    ``width``: characters a line has (long paths are shortened in the middle to fit; 0: never)."""
    lines = [q["folder"] + (f" — {q['session_name']}" if q.get("session_name") else "")]
    state = "abandoned: the pi that asked has stopped" if q["abandoned"] else q.get("offline") or "waiting"
    lines.append(f"{q['tool']} · {state} · {waited(now - q['asked_at'])}")
    if q.get("title"):
        lines += ["", clean(q["title"])]
    for n, item in enumerate(q["items"], 1):
        lines.append("")
        head = f"[{clean(item['header'], 40)}] " if item.get("header") else ""
        prefix = f"{n}. " if len(q["items"]) > 1 else ""
        if is_gate(q) or q.get("kind") == "dialog" and item.get("detail"):
            # all of it, line by line: a gate's whole command is read before anyone says Yes
            if is_gate(q):
                lines.append(
                    f"{clean(q['tool'], 40)} asks ({q['dialog']}) — read all of it before answering:"
                )
            body = (item.get("detail") or item["text"]).split("\n")
            lines += [f"   {clean(line)}" if clean(line) else "" for line in body]
        else:
            lines.append(prefix + head + clean(item["text"]))
        if item.get("detail") and q.get("kind") != "dialog":
            lines.append("   " + clean(item["detail"]))
        if item.get("multi"):
            lines.append("   (several answers allowed)")
        for opt in item["options"]:
            mark = (
                " (recommended)"
                if opt.get("recommended") and "recommended" not in opt["label"].lower()
                else ""
            )
            desc = f" — {clean(opt['description'], 200)}" if opt.get("description") else ""
            lines.append(f"   • {clean(opt['label'], 120)}{mark}{desc}")
        if not item["options"] and q.get("dialog") in (None, "input"):
            lines.append("   (free text answer)")
    fit = max(MIN_PATH, width - 9) if width else 0  # never shorter than MIN_PATH
    lines += [
        "",
        f"Folder:  {shorten_middle(clean(q['cwd']) or '?', fit)}",
        f"Session: {shorten_middle(clean(q['file']), fit)}",
    ]
    where = q.get("location")
    if isinstance(where, dict):
        spot = where_text(q)
        lines.append(
            f"Where:   pid {clean(where.get('pid'))}" + (f" · {spot}" if not spot.startswith("pid") else "")
        )
    if q.get("snoozed_until"):
        lines.append(
            f"Snoozed: for {waited(q['snoozed_until'] - now)} more ({q.get('snoozed_by') or 'session'})"
        )
    if not live(q):  # no pi holds the session (as far as is known): how to carry it on
        lines += ["", f"Resume:  {q['resume'] or clean(q.get('resume_refused'))}"]
    return "\n".join(lines)
