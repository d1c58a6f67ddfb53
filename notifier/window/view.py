"""What the window shows (pure, no toolkit): its view model is made of model types. A
:class:`Shown` is one question as the window shows it: the :class:`~notifier.core.model.Question`
and :class:`~notifier.core.model.SessionRef` themselves, and what the app knows beside them
(abandoned, alive, offline, where its pi runs, the snooze it is under). The app builds them from
its snapshot and sends them as JSON (:func:`window_obj`, :func:`mark_snoozes`; the channel carries
JSON); the window reads that JSON back into typed values once, at its door
(:meth:`WindowView.from_obj`). Also the command that resumes a session and the text of the
details pane. Every untrusted string goes through the one sanitizer here, with the length each
place allows."""

from __future__ import annotations

import contextlib
from collections.abc import Sequence
from dataclasses import dataclass, fields, replace
from typing import Any, Literal

from notifier.core.codec import decode, encode, finite_number, question_token
from notifier.core.commands import Snooze
from notifier.core.model import Question, QuestionItem, SessionRef, SessionView, Snapshot
from notifier.core.planner import Silences
from notifier.core.text import (
    Arg,
    Unsafe,
    Word,
    chain,
    clean,
    duration,
    join,
    offline_note,
    project_name,
    project_names,
)
from notifier.resources import DEMO_SESSION_ID

MIN_PATH = 32  # a path in the details pane is never shortened below this many characters
SnoozedBy = Literal["session", "project", "all"]


def resume_command(cwd: str | None, file: str, host: str | None = None) -> str:
    """What to type to continue the session in a terminal (``cd DIR && pi --session FILE``). A
    session on the remote ``host`` is resumed there, through ssh (the remote command is one
    argument: ssh hands it to the remote shell). Raises :class:`Unsafe` when a name
    cannot be shown in a command to paste (the reason says which)."""
    run: list[Word] = ["pi", "--session", Arg("the session file name", file)]
    line = chain(["cd", Arg("the folder of the session", cwd)], run) if cwd else join(run)
    return join(["ssh", "-t", Arg("the remote name", host), line]) if host else line


def resume_or_why(cwd: str | None, file: str, host: str | None = None) -> tuple[str | None, str | None]:
    """(the resume command, None), or (None, why no command is offered)."""
    try:
        return resume_command(cwd, file, host), None
    except Unsafe as exc:
        return None, f"no resume command is offered: {exc}"


# ---- the view model ----


@dataclass(frozen=True, slots=True)
class Where:
    """Where the pi of a question runs (the "location" of ``status --json``, as far as shown)."""

    pid: int | None
    tty: str | None = None
    tmux: tuple[str, str, str] | None = None  # session, window, pane

    @staticmethod
    def from_obj(obj: object) -> Where | None:
        if not isinstance(obj, dict):
            return None
        tm, pid = obj.get("tmux"), obj.get("pid")
        pane = (
            (clean(tm.get("session"), 40), clean(tm.get("window"), 8), clean(tm.get("pane"), 8))
            if isinstance(tm, dict)
            else None
        )
        return Where(pid if type(pid) is int else None, clean(obj.get("tty"), 40) or None, pane)

    def text(self) -> str:
        """In a few words: "tmux work:1 %3", "/dev/pts/4", "pid 7"."""
        if self.tmux is not None:
            return f"tmux {self.tmux[0]}:{self.tmux[1]} {self.tmux[2]}"
        return self.tty or f"pid {self.pid}"


@dataclass(frozen=True, slots=True)
class Shown:
    """One question as the window shows it."""

    session: SessionRef
    question: Question
    abandoned: bool = False
    alive: bool | None = None  # None: not known (liveness off, remote)
    offline_since: float | None = None  # a remote session whose link is down, since then
    location: Where | None = None
    snoozed_until: float | None = None
    snoozed_by: SnoozedBy | None = None
    snoozed_project: str | None = None  # the name a project snooze is under (its name or its folder's)

    @property
    def token(self) -> str:
        """What was shown of it (an answer is refused if what waits has changed)."""
        return question_token(self.question)

    @property
    def key(self) -> list[str]:
        return [self.session.key, self.question.tool_call_id]

    @property
    def project(self) -> str:
        return project_name(self.session.name, self.session.cwd, self.session.host)

    @property
    def folder(self) -> str:
        return project_name(None, self.session.cwd)

    @property
    def tool(self) -> str:
        return clean(self.question.tool, 60)

    @property
    def offline(self) -> str | None:
        return offline_note(self.session.host, self.offline_since).lstrip(" —") or None

    @property
    def is_demo(self) -> bool:
        """The demo's recorded question: no pi runs it (its file goes with the demo)."""
        return self.session.id == DEMO_SESSION_ID

    def resume(self) -> tuple[str | None, str | None]:
        """(the resume command, None) or (None, why none is offered)."""
        return resume_or_why(self.session.cwd, self.session.file, self.session.host)

    @property
    def live(self) -> bool:
        """Does a running pi hold this question's session (found, or reported alive)?"""
        return not self.abandoned and (self.location is not None or self.alive is True)

    @property
    def gate(self) -> bool:
        """A dialog that gates something (a tool call that is no question, or any confirm): the
        window shows all of it and makes "No" the default."""
        q = self.question
        return q.kind == "dialog" and (q.dialog == "confirm" or q.tool != "dialog")

    def unsnooze(self) -> Snooze | None:
        """The command that lifts the snooze it is under (None: not snoozed)."""
        by = self.snoozed_by if self.snoozed_until else None
        if by is None:
            return None
        project = self.snoozed_project or self.project
        return Snooze(0.0, self.session.key if by == "session" else None, project if by == "project" else None)

    def to_obj(self) -> dict[str, Any]:
        """As the channel carries it: every field, as the one codec writes it
        (:func:`notifier.core.codec.encode`); on top, what the app itself reads of it (where its pi
        may run, what a project snooze names). What is derived from these (the resume command,
        names to show) is derived by the reader, from :meth:`from_obj`'s typed values."""
        ref = self.session
        extra = {"key": self.key, "project": self.project, "file": ref.file, "cwd": ref.cwd, "host": ref.host}
        return {**encode(self), **extra, "asked_at": self.question.asked_at}

    @staticmethod
    def from_obj(obj: object) -> Shown:
        """The question :meth:`to_obj` (and the app's decoration: snoozes, where its pi runs) made
        ``obj`` of, read by the one codec; raises :class:`ValueError` (or KeyError, TypeError) on
        anything else."""
        if not isinstance(obj, dict):
            raise ValueError("a window question is not an object")
        shown = decode(Shown, {name: obj.get(name) for name in _FIELDS} | {"location": None})
        return replace(shown, location=Where.from_obj(obj.get("location")))


_FIELDS = tuple(f.name for f in fields(Shown))


@dataclass(frozen=True, slots=True)
class WindowView:
    """What the window shows at once: every question, and the snooze of everything."""

    questions: tuple[Shown, ...] = ()
    snoozed_until: float | None = None
    taken_at: float = 0.0

    @staticmethod
    def from_obj(obj: object) -> WindowView:
        """The window object the app sent, read once into typed values; a question that cannot
        be read is left out (bad input never crashes the window)."""
        if not isinstance(obj, dict):
            return WindowView()
        questions = []
        listed = obj.get("questions")
        for q in listed if isinstance(listed, list) else ():
            with contextlib.suppress(ValueError, KeyError, TypeError):
                questions.append(Shown.from_obj(q))
        until, taken = finite_number(obj.get("snoozed_until")), finite_number(obj.get("taken_at"))
        return WindowView(tuple(questions), until, taken or 0.0)


def question_obj(view: SessionView, q: Question, abandoned: bool) -> dict[str, Any]:
    """Everything the window shows about one question, as the channel carries it."""
    return Shown(view.ref, q, abandoned, view.alive, view.offline_since).to_obj()


def window_obj(snapshot: Snapshot) -> dict[str, Any]:
    return {
        "taken_at": snapshot.taken_at,
        "snoozed_until": None,  # filled in by mark_snoozes
        "questions": [question_obj(v, q, False) for v, q in snapshot.pending]
        + [question_obj(v, q, True) for v, q in snapshot.abandoned]
        + [question_obj(v, q, False) for v in snapshot.sessions for q in v.offline],
        "working": sum(1 for s in snapshot.sessions if s.state == "working"),
    }


def mark_snoozes(window: dict[str, Any], silences: Silences, now: float) -> dict[str, Any]:
    """Mark each question of a window object whose notifications are snoozed: until when, and by
    what ("session", "project" or "all", the one that ends last), so the window can lift it; and
    the window itself while everything is snoozed."""
    for q in window.get("questions", []):
        names = project_names(q["session"].get("name"), q.get("cwd"), q.get("host"))
        by_project = max((silences.projects.get(name, 0.0), name) for name in names)
        until, by = max(
            (silences.sessions.get(q["key"][0], 0.0), "session"),
            (by_project[0], "project"),
            (silences.snooze_all_until, "all"),
        )
        q["snoozed_until"], q["snoozed_by"] = (until, by) if until > now else (None, None)
        q["snoozed_project"] = by_project[1] if by == "project" and until > now else None
    window["snoozed_until"] = silences.snooze_all_until if silences.snooze_all_until > now else None
    return window


# ---- text ----


def shorten_middle(text: str, limit: int) -> str:
    """A long path shortened in the middle ("/home/me/…/webshop/a.jsonl"), never wrapped mid-word."""
    if limit < 5 or len(text) <= limit:
        return text
    keep = limit - 1
    head = keep // 2
    return text[:head] + "…" + text[len(text) - (keep - head) :]


OPTION_WIDTH = 40  # characters of an option's label on a button, a box or a list's entry


def option_labels(labels: Sequence[str], width: int = OPTION_WIDTH) -> list[str]:
    """What the window says of each option (on a button, a box, a list's entry): its label, plain
    and cut to ``width``. Where two would read the same, each of those says its number, as pi
    draws it ("2. …"), and, where its label is longer, its end too ("2. Use the Postgre…
    (fallback)"); where one would still read as another (a label "2. A" beside two "A"), every
    one says its number: a click always reads as the option it answers."""

    def numbered(n: int, label: str) -> str:
        return f"{n}. " + shorten_middle(clean(label), width - len(f"{n}. "))

    shown = [clean(label, width) for label in labels]
    pairs = enumerate(zip(labels, shown, strict=True), 1)
    out = [numbered(n, label) if shown.count(said) > 1 else said for n, (label, said) in pairs]
    if len(set(out)) < len(out):
        out = [numbered(n, label) for n, label in enumerate(labels, 1)]
    return out


def where_text(q: Shown) -> str:
    """Where the pi of a question runs, in a few words: "tmux work:1 %3", "/dev/pts/4", the
    remote's name, "" (unknown)."""
    return q.location.text() if q.location is not None else clean(q.session.host, 40)


def heading_text(questions: Sequence[Shown], snoozed_until: float | None, now: float) -> str:
    """The line above the list: how many questions wait, how many were abandoned, the snooze."""
    live_n = sum(1 for q in questions if not q.abandoned)
    gone = len(questions) - live_n
    text = f"{live_n} question{'s' if live_n != 1 else ''} waiting" if live_n else "No questions waiting"
    if gone:
        text += f" · {gone} abandoned"
    if snoozed_until and snoozed_until > now:
        text += f" · all snoozed for {duration(snoozed_until - now)}"
    return text


def row_id(key: list[str]) -> str:
    """A question's row in the tree: its key (session file, tool call) joined."""
    return "\x1f".join(key)


def details_text(q: Shown, now: float, width: int = 0) -> str:
    """The details pane: who asks, the question in full (headers, options, recommended marked,
    multi-select noted), where its session is, and how to carry it on when no pi holds it.
    ``width``: characters a line has (long paths are shortened in the middle to fit; 0: never)."""
    return "\n".join([*_heading(q, now), *_body(q), *_paths(q, now, width)])


def _heading(q: Shown, now: float) -> list[str]:
    name = clean(q.session.name, 120)
    state = "abandoned: the pi that asked has stopped" if q.abandoned else q.offline or "waiting"
    lines = [q.folder + (f" — {name}" if name else ""), f"{q.tool} · {state} · {duration(now - q.question.asked_at)}"]
    title, instructions = clean(q.question.title), clean(q.question.instructions)
    if title:
        lines += ["", title]
    if instructions:
        lines += ([] if title else [""]) + [instructions]
    return lines


def _body(q: Shown) -> list[str]:
    items = q.question.items
    lines: list[str] = []
    for n, item in enumerate(items, 1):
        lines.append("")
        lines += _item_text(q, item, f"{n}. " if len(items) > 1 else "")
        if item.multi:
            lines.append("   (several answers allowed)")
        lines += [_option_text(o.label, o.description, o.recommended) for o in item.options]
        if not item.options and q.question.dialog in (None, "input"):
            lines.append("   (free text answer)")
    return lines


def _item_text(q: Shown, item: QuestionItem, prefix: str) -> list[str]:
    """An item's text: a dialog's whole text line by line (a gate's whole command is read before
    anyone says Yes), a question's on one line with its header, and its detail below."""
    dialog = q.question.kind == "dialog"
    if q.gate or (dialog and item.detail):
        said = (
            [f"{clean(q.question.tool, 40)} asks ({q.question.dialog}) — read all of it before answering:"]
            if q.gate
            else []
        )
        body = (item.detail or item.text).split("\n")
        return said + [f"   {clean(line)}" if clean(line) else "" for line in body]
    head = f"[{clean(item.header, 40)}] " if item.header else ""
    detail = ["   " + clean(item.detail)] if item.detail and not dialog else []
    return [prefix + head + clean(item.text), *detail]


def _option_text(label: str, description: str | None, recommended: bool) -> str:
    mark = " (recommended)" if recommended and "recommended" not in label.lower() else ""
    desc = f" — {clean(description, 200)}" if description else ""
    return f"   • {clean(label, 120)}{mark}{desc}"


def _paths(q: Shown, now: float, width: int) -> list[str]:
    """Where its session is, and how to carry it on when no pi holds it (as far as is known)."""
    fit = max(MIN_PATH, width - 9) if width else 0  # never shorter than MIN_PATH
    lines = [
        "",
        f"Folder:  {shorten_middle(clean(q.session.cwd) or '?', fit)}",
        f"Session: {shorten_middle(clean(q.session.file), fit)}",
    ]
    if q.location is not None:
        spot = q.location.text()
        lines.append(f"Where:   pid {q.location.pid}" + ("" if spot.startswith("pid") else f" · {spot}"))
    if q.snoozed_until:
        lines.append(f"Snoozed: for {duration(q.snoozed_until - now)} more ({q.snoozed_by or 'session'})")
    if not q.live:
        resume, refused = q.resume()
        lines += ["", f"Resume:  {resume or clean(refused)}"]
    return lines
