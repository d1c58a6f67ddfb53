"""What the window shows, built from an immutable snapshot (pure, no toolkit): one object per
question (the JSON every output has, plus the window's display fields), the snoozes it is under,
the command that resumes its session, and the text of the details pane. Every untrusted string
goes through the one sanitizer here, with the length each place allows."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from notifier.core import codec as formats
from notifier.core import text as shellcmd
from notifier.core.commands import Snooze, short_id
from notifier.core.model import Question, SessionView, Snapshot
from notifier.core.planner import Preferences
from notifier.core.text import clean, project_name
from notifier.core.text import duration as waited

MIN_PATH = 32  # a path in the details pane is never shortened below this many characters


def offline_note(view: SessionView) -> str:
    """" — devbox offline since 10:02" for a remote session whose link is down."""
    if view.offline_since is None:
        return ""
    since = datetime.fromtimestamp(view.offline_since).strftime("%H:%M")
    return f" — {clean(view.ref.host, 40)} offline since {since}"


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
    its session as every JSON output has them (:mod:`notifier.core.codec`), every item in
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
            "instructions": q.instructions,
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
    if q.get("instructions"):
        lines += ([] if q.get("title") else [""]) + [clean(q["instructions"])]
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
