"""Dialogs pi shows that are not in the session file (pure): the companion extension announces
them (permission gates, any blocking ``ctx.ui`` dialog) and they are pending questions of the
session they belong to until they close.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import replace

from notifier.core.model import Outcome, Question, SessionRef, SessionView, Snapshot, Transition

# Where a dialog comes from: (the extension's socket, the dialog's id).
Source = tuple[str, str]

STARTUP_PREFIX = "pid:"


def startup_key(pid: int) -> str:
    """The board key of a pi that shows a dialog before it has a session file (project trust at
    start-up): its process. No session file path (absolute) or remote key (``@``) starts so."""
    return f"{STARTUP_PREFIX}{pid}"


class Dialogs:
    """The dialogs open right now, by source, each with the session (file) it belongs to."""

    def __init__(self) -> None:
        self._open: dict[Source, tuple[SessionRef, Question]] = {}

    def open(self, source: Source, ref: SessionRef, question: Question) -> bool:
        """Record a dialog; False if it is already known (then nothing changes)."""
        if source in self._open:
            return False
        self._open[source] = (ref, question)
        return True

    def close(self, source: Source) -> tuple[SessionRef, Question] | None:
        """Forget a dialog; what it was, or None if it was not known."""
        return self._open.pop(source, None)

    def __len__(self) -> int:
        return len(self._open)

    def sources(self, socket: str | None = None) -> list[Source]:
        return [src for src in self._open if socket is None or src[0] == socket]

    def of(self, key: str) -> list[tuple[SessionRef, Question]]:
        """The open dialogs of the session file ``key``."""
        if not self._open:
            return []
        return [(ref, q) for ref, q in self._open.values() if ref.key == key]


def closed(
    ref: SessionRef, q: Question, outcome: Outcome | None, now: float, answer: str | None = None
) -> Transition:
    """The transition for a dialog that closed with ``outcome`` (and ``answer``: the choice or text
    it returned), or (``None``) whose pi went away."""
    if outcome is None:
        return Transition("abandoned", ref, q, now)
    return Transition(
        "resolved", ref, q, now, outcome=outcome, answer=answer, waited_s=max(0.0, now - q.asked_at)
    )


def with_dialogs(view: SessionView, dialogs: Sequence[Question]) -> SessionView:
    """``view`` with extension dialogs added to its pending questions. A question tool's own
    dialog (same tool call as a pending question) is that question: not added twice."""
    if not dialogs:
        return view
    asked = {q.tool_call_id for q in view.pending}
    extra = tuple(q for q in dialogs if q.tool_call_id not in asked)
    if not extra:
        return view
    return replace(view, pending=view.pending + extra, state="needs_input")


def dialog_view(ref: SessionRef, dialogs: Sequence[Question]) -> SessionView:
    """A session known only from its dialogs (its file not read)."""
    at = max(q.asked_at for q in dialogs)
    return SessionView(ref, "needs_input", tuple(dialogs), (), None, at)


def add_dialogs(snapshot: Snapshot, dialogs: Iterable[tuple[SessionRef, Question]]) -> Snapshot:
    """A snapshot with the dialogs pi shows right now added (for one-shot readers: ``status``)."""
    by_key: dict[str, tuple[SessionRef, list[Question]]] = {}
    for ref, q in dialogs:
        by_key.setdefault(ref.key, (ref, []))[1].append(q)
    views = [with_dialogs(v, by_key.pop(v.ref.key, (v.ref, []))[1]) for v in snapshot.sessions]
    views += [dialog_view(ref, qs) for ref, qs in by_key.values()]
    from dataclasses import replace

    return replace(snapshot, sessions=tuple(views))
