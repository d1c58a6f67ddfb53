"""Title and body of a notification for a planner notice.

Every untrusted string goes through the one sanitizer and its escaping (:mod:`notifier.core.text`):
entities for servers that render markup, look-alike characters for those that do not advertise it
(some render it anyway)."""

from __future__ import annotations

from dataclasses import dataclass

from notifier.core.planner import Notice
from notifier.core.text import clean, duration, markup

OPTIONS_SHOWN = 6
TEXT_LIMIT = 300


@dataclass(frozen=True)
class Message:
    title: str
    body: str
    critical: bool = False
    sticky: bool = False  # needs an answer: stays on screen until answered (notifications.expire)


def render(notice: Notice, show_text: bool, markup_ok: bool) -> Message:
    """Title and body for a notice. Titles are never markup (some servers render it anyway)."""

    def esc(text: str, limit: int | None = None) -> str:
        return markup(text, limit, entities=markup_ok)

    items = notice.items
    if notice.kind in ("burst", "startup"):
        projects = sorted({i.project for i in items})
        sessions = len({i.ref.key for i in items})
        title = (
            f"{sessions} pi sessions need answers"
            if sessions > 1
            else f"{projects[0]}: {len(items)} questions"
        )
        lines = []
        for item in items[:5]:
            proj = esc(item.project)
            lines.append(f"{proj} — {esc(item.question.text, 80)}" if show_text else proj)
        if len(items) > 5:
            lines.append(f"+{len(items) - 5} more")
        return Message(markup(title, 120, entities=False), "\n".join(lines), sticky=True)
    item = items[0]
    q = item.question
    if notice.kind in ("idle", "failed"):
        what = "finished its turn" if notice.kind == "idle" else "stopped with an error"
        body = (
            "pi is waiting for your next instruction"
            if notice.kind == "idle"
            else "The run ended with an error"
        )
        return Message(markup(f"{item.project} {what}", entities=False), body)
    title = markup(f"{item.project} needs an answer", entities=False)
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
    return Message(title, "\n".join(lines), notice.critical, sticky=True)
