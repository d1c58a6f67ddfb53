"""One session file of this machine on the board (pure): its reducer, when the board first saw
each of its questions, which are abandoned, and the liveness judgement against a process list.

Whether a pi has this session is the pairing's (:mod:`notifier.core.pairing`): a question
counts as asked by a process only if that process was already running when the question was
written (:meth:`LocalSession.asked_at`). A question is judged only by a list whose read began
after the board saw it (feeding counts, see :mod:`notifier.core.local_sessions`).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from notifier.core.model import Question, SessionRef, SessionView, State, Transition
from notifier.core.owners import Wanted
from notifier.core.reducer import Asked, Ended, SessionReducer


def live_state(base: State, alive: bool | None) -> State:
    """A session's state with its liveness applied: a turn under way whose pi is gone (killed while
    it ran a tool or waited on an extension dialog) is ``stopped``; the file says ``working``
    forever."""
    return "stopped" if alive is False and base == "working" else base


@dataclass(frozen=True, slots=True)
class Seen:
    """When the board first saw a question: its feeding count, its wall time, and whether it was
    found by the start-up scan (then the file's own time is all we know about when it was asked)."""

    tick: int
    at: float
    initial: bool


@dataclass(slots=True)
class LocalSession:
    """One session file on this machine: its state, liveness and questions as the board tracks them."""

    key: str
    reducer: SessionReducer
    abandoned: dict[str, Question] = field(default_factory=dict)
    alive: bool | None = None
    seen: dict[str, Seen] = field(default_factory=dict)

    @property
    def ref(self) -> SessionRef:
        r = self.reducer
        return SessionRef(self.key, r.session_id, r.cwd, r.name)

    def transitions(
        self, changes: Sequence[Asked | Ended], tick: int, now: float, initial: bool
    ) -> list[Transition]:
        """The reducer's changes as transitions (none before the header is read), remembering
        when each question was seen (at feeding count ``tick``)."""
        if not self.reducer.has_header or not changes:
            return []
        out: list[Transition] = []
        ref = self.ref
        for change in changes:
            q = change.question
            if isinstance(change, Asked):
                self.seen[q.tool_call_id] = Seen(tick, now, initial)
                out.append(Transition("needs_input", ref, q, now, initial=initial))
            else:
                self.seen.pop(q.tool_call_id, None)
                if self.abandoned.pop(q.tool_call_id, None) is not None:
                    continue  # it already ended (abandoned): one terminal transition per question
                waited = max(0.0, change.at - q.asked_at)
                out.append(
                    Transition(
                        "resolved", ref, q, now, outcome=change.outcome, answer=change.answer, waited_s=waited
                    )
                )
        return out

    def asked_at(self, q: Question) -> float:
        """By when question ``q`` was asked (its pi ran by then). The file's time can be anything;
        for a question we saw being written, the moment we saw it bounds it from above."""
        seen = self.seen.get(q.tool_call_id)
        return q.asked_at if seen is None or seen.initial else max(q.asked_at, seen.at)

    def wanted(self) -> Wanted:
        """What pairing needs of this session: for one asking something, when it asked (its pi
        ran by then) and what (its pane may show it)."""
        r = self.reducer
        if not r.pending:
            return Wanted(self.key, r.cwd, r.updated_at, None, None, (), r.session_id)
        first = next(iter(r.pending.values()))
        asked = min(self.asked_at(q) for q in r.pending.values())
        labels = tuple(o.label for o in first.first.options)
        return Wanted(self.key, r.cwd, asked, None, first.first.text, labels, r.session_id)

    def check(self, owned: bool, tick: int, read_tick: int, now: float) -> tuple[bool, list[Transition]]:
        """Judge the pending questions by a process list read from feeding count ``read_tick``
        (``owned``: whether a pi there has this session, as the board paired them; ``tick``: the
        board's count now). Whether the view changed, and the transitions."""
        # A list read before a question was seen cannot say its pi is gone (one started since
        # the read): the session's liveness is then not known until a list read after it.
        unjudged = not owned and any(s.tick > read_tick for s in self.seen.values())
        alive = None if unjudged else owned
        changed = self.alive != alive
        self.alive = alive
        out: list[Transition] = []
        if not self.reducer.has_header:
            return changed, out
        for cid, q in self.reducer.pending.items():
            seen = self.seen.get(cid)
            if seen is None:  # (asked before the file's header was read) seen now
                seen = self.seen[cid] = Seen(tick, now, False)
            if seen.tick > read_tick:
                continue  # the list was read before we saw the question: it cannot judge it
            if cid in self.abandoned:
                if owned:  # its pi is seen again (the earlier read missed it): pending again
                    del self.abandoned[cid]
                    changed = True
                    out.append(Transition("needs_input", self.ref, q, now))
            elif not owned:
                self.abandoned[cid] = q
                changed = True
                out.append(Transition("abandoned", self.ref, q, now))
        return changed, out

    def clear_abandoned(self, tool_call_id: str | None = None) -> bool:
        """The user dismissed an abandoned question (or all of them): stop listing it."""
        ids = [tool_call_id] if tool_call_id else list(self.abandoned)
        removed = False
        for cid in ids:
            if cid in self.abandoned:
                self.reducer.drop(cid)
                self.abandoned.pop(cid, None)
                self.seen.pop(cid, None)
                removed = True
        return removed

    def view(self, liveness: bool) -> SessionView:
        r = self.reducer
        ref = SessionRef(self.key, r.session_id, r.cwd, r.name)
        alive = self.alive if liveness else None
        if not r.pending and not self.abandoned:  # (most sessions: built at once)
            return SessionView(ref, live_state(r.base, alive), (), (), alive, r.updated_at, r.current_tool)
        abandoned = self.abandoned
        if abandoned:
            pending = tuple(q for cid, q in r.pending.items() if cid not in abandoned)
        else:
            pending = tuple(r.pending.values())
        # Every question abandoned: the pi that asked is gone.
        state = r.state if pending or not abandoned else "stopped"
        abandoned_now = tuple(abandoned.values())
        return SessionView(ref, state, pending, abandoned_now, alive, r.updated_at, r.current_tool)
