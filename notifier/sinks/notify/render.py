"""Title and body of a notification for a planner notice.

Every untrusted string goes through the one sanitizer and its escaping (:mod:`notifier.core.text`):
entities for servers that render markup, look-alike characters for those that do not advertise it
(some render it anyway)."""

from __future__ import annotations

import re
from dataclasses import dataclass

from notifier.core.commands import ANSWERABLE_TOOLS
from notifier.core.model import Notice, Question, SessionRef
from notifier.core.text import clean, duration, markup
from notifier.sinks.notify.servers import Actions

OPTIONS_SHOWN = 6
TEXT_LIMIT = 300
OPTION_ACTIONS = 3  # a question with at most this many options offers each as a button
ANSWER_PREFIX = "answer:"  # action "answer:2": the question's option 2 (from 1)
SOUND_NEEDS_ANSWER = "message-new-instant"  # the freedesktop sound theme's name for it


@dataclass(frozen=True)
class Message:
    title: str
    body: str
    critical: bool = False
    sticky: bool = False  # needs an answer: stays on screen until answered (notifications.expire)
    # Where the server supports actions: "default" (a click on the bubble) goes to the session.
    # What a server is sent of them, in which order, is chosen for it (:func:`.servers.choose`).
    actions: Actions = (("default", "Show"), ("snooze", "Snooze 15 min"))
    takes_text: bool = False  # its question can be answered with free text (a reply field, where offered)


def who(ref: SessionRef) -> str:
    """Names a session in a title: its project folder and its name, after the remote's
    ("devbox · webshop · billing refactor"; "webshop" when it has no name)."""
    folder = ""
    if ref.cwd:
        parts = [p for p in re.split(r"[/\\]", ref.cwd) if p]
        folder = clean(parts[-1], 60) if parts else ""
    name = clean(ref.name, 80)
    names = [n for n in (folder, name) if n]
    if len(names) == 2 and names[0] == names[1]:
        names = names[:1]
    text = " · ".join(names) or "pi"
    return f"{clean(ref.host, 64)} · {text}" if ref.host else text


def option_actions(q: Question, show_text: bool) -> Actions:
    """Each option of a question as a button, where that answer can be given from here: never for
    an extension dialog (a permission gate is answered in the window, after its whole command was
    shown), a form of several questions, a multi-select, or with the text hidden (privacy)."""
    if not show_text or q.kind != "question" or q.tool not in ANSWERABLE_TOOLS or len(q.items) != 1:
        return ()
    item = q.items[0]
    if item.multi or not item.options or len(item.options) > OPTION_ACTIONS:
        return ()
    return tuple((f"{ANSWER_PREFIX}{n}", clean(o.label, 40) or str(n)) for n, o in enumerate(item.options, 1))


def takes_text(q: Question, show_text: bool) -> bool:
    """The question can be answered with free text from here, as ``answer --text`` does: one
    question of a tool with a key map, one pick, with a free-text row; never an extension dialog
    (a permission gate), nor with the text hidden (privacy)."""
    if not show_text or q.kind != "question" or q.tool not in ANSWERABLE_TOOLS or len(q.items) != 1:
        return False
    item = q.items[0]
    return not item.multi and item.other


def session_actions(q: Question | None, show_text: bool) -> Actions:
    """A notification about one session: a click goes to it (labelled for servers that draw it
    as a button); buttons: answer it (each option, where allowed), show the window, snooze."""
    options = option_actions(q, show_text) if q is not None else ()
    return (("default", "Go to session"), *options, ("show", "Show"), ("snooze", "Snooze 15 min"))


def render(notice: Notice, show_text: bool, markup_ok: bool) -> Message:
    """Title and body for a notice. Titles are never markup (some servers render it anyway)."""

    def esc(text: str, limit: int | None = None) -> str:
        return markup(text, limit, entities=markup_ok)

    items = notice.items
    if notice.kind in ("burst", "startup"):
        sessions = len({i.ref.key for i in items})
        title = (
            f"{sessions} pi sessions need answers"
            if sessions > 1
            else f"{who(items[0].ref)}: {len(items)} questions"
        )
        lines = []
        for item in items[:5]:
            proj = esc(item.project)
            lines.append(f"{proj} — {esc(item.question.text, 80)}" if show_text else proj)
        if len(items) > 5:
            lines.append(f"+{len(items) - 5} more")
        # one session: a click goes to it (as for a single question); several: the window
        actions = session_actions(None, show_text) if sessions == 1 else Message.actions
        return Message(markup(title, 120, entities=False), "\n".join(lines), sticky=True, actions=actions)
    item = items[0]
    q = item.question
    if notice.kind in ("idle", "failed"):
        what = "finished its turn" if notice.kind == "idle" else "stopped with an error"
        body = (
            "pi is waiting for your next instruction"
            if notice.kind == "idle"
            else "The run ended with an error"
        )
        return Message(
            markup(f"{who(item.ref)} {what}", entities=False), body, actions=session_actions(None, show_text)
        )
    title = markup(f"{who(item.ref)} needs an answer", entities=False)
    lines = []
    if notice.kind == "reminder" or notice.waited_s >= 60:  # reminders, and questions first seen late
        lines.append(f"Waiting for {duration(notice.waited_s)}")
    if show_text:
        text = clean(q.text, TEXT_LIMIT)
        if q.header and q.header != q.text:
            text = f"[{clean(q.header, 40)}] {text}"
        lines.append(esc(text))
        options = [clean(o, 40) for o in q.options]
        if options and len(options) <= OPTIONS_SHOWN and sum(len(o) for o in options) <= 160:
            lines.append(esc(" · ".join(options)))
    else:
        lines.append("pi is waiting for your answer")
    if q.count > 1:
        lines.append(f"+{q.count - 1} more question{'s' if q.count > 2 else ''}")
    return Message(
        title,
        "\n".join(lines),
        notice.critical,
        sticky=True,
        actions=session_actions(q, show_text),
        takes_text=takes_text(q, show_text),
    )
