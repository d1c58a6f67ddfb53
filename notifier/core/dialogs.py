"""Dialogs pi shows that are not in the session file (pure): the companion extension announces
them (permission gates, any blocking ``ctx.ui`` dialog) and they are pending questions of the
session they belong to until they close.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
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
    """The dialogs open right now, by source, each with the session (file) it belongs to. Every
    session whose dialogs changed is collected until :meth:`take_changed`.

    ``ref_of``: the session as the board knows it (its name and id, once its file is read), for
    the transitions; by default the dialog's own."""

    def __init__(self, ref_of: Callable[[SessionRef], SessionRef] = lambda ref: ref) -> None:
        self._open: dict[Source, tuple[SessionRef, Question]] = {}
        self._changed: set[str] = set()
        self._ref_of = ref_of

    def open(
        self, source: Source, ref: SessionRef, question: Question, now: float, initial: bool = False
    ) -> list[Transition]:
        """A dialog pi shows, from ``source`` = (socket, dialog id), in the session file ``ref.key``
        (one already known changes nothing)."""
        if source in self._open:
            return []
        ref = self._ref_of(ref)
        self._open[source] = (ref, question)
        self._changed.add(ref.key)
        return [Transition("needs_input", ref, question, now, initial=initial)]

    def close(
        self, source: Source, outcome: Outcome | None, now: float, answer: str | None = None
    ) -> list[Transition]:
        """The dialog closed with ``outcome`` (``answer``: what was chosen or typed), or (``None``)
        its pi went away: abandoned, not listed."""
        found = self._open.pop(source, None)
        if found is None:
            return []
        ref, q = self._ref_of(found[0]), found[1]
        self._changed.add(ref.key)
        if outcome is None:
            return [Transition("abandoned", ref, q, now)]
        waited = max(0.0, now - q.asked_at)
        return [Transition("resolved", ref, q, now, outcome=outcome, answer=answer, waited_s=waited)]

    def __len__(self) -> int:
        return len(self._open)

    def sources(self, socket: str | None = None) -> list[Source]:
        return [src for src in self._open if socket is None or src[0] == socket]

    def of(self, key: str) -> list[tuple[SessionRef, Question]]:
        """The open dialogs of the session file ``key``."""
        if not self._open:
            return []
        return [(ref, q) for ref, q in self._open.values() if ref.key == key]

    def take_changed(self) -> set[str]:
        """The sessions whose dialogs changed since the last call."""
        changed, self._changed = self._changed, set()
        return changed


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
    return replace(snapshot, sessions=tuple(views))
