"""All sessions at once (pure): reducer changes → transitions, liveness applied, snapshots.

Time is always passed in; the board never reads a clock, a file or a process table.

Liveness is judged only on fresh data: the board counts every feeding (a logical clock, immune to
wall-clock jumps), remembers at which count it first saw each question, and a process list says
at which count its read began (:meth:`Board.mark` taken before reading). A question is called
abandoned only by a list read *after* the board saw it; an abandoned question whose pi shows up
again in a later list is pending again (a fresh, non-initial ``needs_input``).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

from notifier.core.model import (
    Outcome,
    Question,
    SessionRef,
    SessionView,
    Snapshot,
    State,
    Transition,
    TurnChange,
)
from notifier.core.reducer import Asked, Ended, Event, SessionReducer

# A question counts as asked by a process only if that process was already running when the
# question was written (a pi started later on the same project did not ask it).
START_SLACK_S = 2.0


@dataclass(frozen=True)
class Proc:
    """A running pi process: its working directory and start time (epoch seconds)."""

    cwd: str
    started: float


def _norm(path: str | None) -> str | None:
    if not path:
        return None
    return path.rstrip("/\\") or path


@dataclass(frozen=True)
class _Seen:
    """When the board first saw a question: its feeding count, its wall time, and whether it was
    found by the start-up scan (then the file's own time is all we know about when it was asked)."""

    tick: int
    at: float
    initial: bool


@dataclass
class _Session:
    key: str
    reducer: SessionReducer
    abandoned: dict[str, Question]
    alive: bool | None = None
    seen: dict[str, _Seen] = field(default_factory=dict)

    @property
    def ref(self) -> SessionRef:
        r = self.reducer
        return SessionRef(self.key, r.session_id, r.cwd, r.name)


@dataclass
class _Remote:
    """A session on another machine, known only from its ``run --json`` stream: its questions
    and whether the link to its host is down. Liveness is its own host's business."""

    ref: SessionRef
    pending: dict[str, Question] = field(default_factory=dict)
    abandoned: dict[str, Question] = field(default_factory=dict)
    updated_at: float = 0.0
    offline_since: float | None = None


class Board:
    def __init__(self, liveness: bool = True) -> None:
        self.liveness = liveness
        self._sessions: dict[str, _Session] = {}
        self._remote: dict[str, _Remote] = {}  # by remote_key(host, file)
        self._starts: dict[str, list[float]] | None = None  # the last process list, by folder
        self._tick = 0  # counts feedings: the order in which questions were seen
        self._read_tick = -1  # the count at which the last process list began to be read
        self._turns: list[TurnChange] = []
        # Snapshots are built incrementally: only sessions that changed get a new view.
        self._views: dict[str, SessionView] = {}
        self._dirty: set[str] = set()
        # Extension dialogs (the companion extension): (socket, dialog id) → (session, question).
        self._dialogs: dict[tuple[str, str], tuple[SessionRef, Question]] = {}

    # ---- feeding ----

    def _session(self, key: str) -> _Session:
        """The session for ``key`` (created if new), marked as changed."""
        self._dirty.add(key)
        session = self._sessions.get(key)
        if session is None:
            session = _Session(key, SessionReducer(), {})
            self._sessions[key] = session
        return session

    def mark(self) -> int:
        """The feeding count now. Take it *before* reading the process table and pass it to
        :meth:`set_processes`: only questions seen by then can be judged on that list."""
        return self._tick

    def apply(self, key: str, events: Iterable[Event], now: float, initial: bool = False) -> list[Transition]:
        self._tick += 1
        session = self._session(key)
        before = session.reducer.state
        changes = []
        for event in events:
            changes += session.reducer.apply(event)
        after = session.reducer.state
        if (
            not initial
            and after != before
            and after in ("idle", "failed")
            and before in ("working", "needs_input")
            and session.reducer.has_header
        ):
            self._turns.append(TurnChange(session.ref, after, now))
        return self._transitions(session, changes, now, initial)

    def has_turns(self) -> bool:
        return bool(self._turns)

    def drain_turns(self) -> list[TurnChange]:
        """Turns that ended since the last call (for the optional idle/failed notifications)."""
        turns, self._turns = self._turns, []
        return turns

    def replace(self, key: str, events: Iterable[Event], now: float) -> list[Transition]:
        """The file was rewritten or truncated: rebuild it, report only what really changed."""
        self._tick += 1
        old = self._sessions.get(key)
        self._dirty.add(key)  # else the snapshot keeps showing what the rewrite removed
        fresh = SessionReducer()
        ended: dict[str, Ended] = {}
        for event in events:
            for change in fresh.apply(event):
                if isinstance(change, Ended):
                    ended[change.question.tool_call_id] = change
        if old is None:
            return self.restore(key, fresh, now, initial=False)
        gone: list[Asked | Ended] = []
        for cid, q in old.reducer.pending.items():
            if cid not in fresh.pending:
                known = ended.get(cid)
                gone.append(
                    Ended(q, known.outcome, known.answer, known.at)
                    if known
                    else Ended(q, "superseded", None, now)
                )
        asked: list[Asked | Ended] = [
            Asked(q) for cid, q in fresh.pending.items() if cid not in old.reducer.pending
        ]
        # Report what ended under the old identity: the re-read may even have caught the file empty.
        out = self._transitions(old, gone, now, False)
        old.reducer = fresh
        return out + self._transitions(old, asked, now, False)

    def restore(self, key: str, reducer: SessionReducer, now: float, initial: bool) -> list[Transition]:
        """A session rebuilt from a summary (the scan cache): its questions are reported as asked."""
        self._tick += 1
        session = self._session(key)
        session.reducer = reducer
        return self._transitions(session, [Asked(q) for q in reducer.pending.values()], now, initial)

    def reducer(self, key: str) -> SessionReducer | None:
        session = self._sessions.get(key)
        return session.reducer if session is not None else None

    def forget(self, key: str, now: float) -> list[Transition]:
        """The file is gone: whatever it still asked will never be answered."""
        session = self._sessions.pop(key, None)
        self._dirty.add(key)
        if session is None:
            return []
        changes = [Ended(q, "superseded", None, now) for q in session.reducer.pending.values()]
        return self._transitions(session, changes, now, False)

    def _transitions(
        self, session: _Session, changes: Sequence[Asked | Ended], now: float, initial: bool
    ) -> list[Transition]:
        if not session.reducer.has_header:
            return []
        out: list[Transition] = []
        ref = session.ref
        for change in changes:
            q = change.question
            if isinstance(change, Asked):
                session.seen[q.tool_call_id] = _Seen(self._tick, now, initial)
                out.append(Transition("needs_input", ref, q, now, initial=initial))
            else:
                session.seen.pop(q.tool_call_id, None)
                if session.abandoned.pop(q.tool_call_id, None) is not None:
                    continue  # it already ended (abandoned): one terminal transition per question
                waited = max(0.0, change.at - q.asked_at)
                out.append(
                    Transition(
                        "resolved", ref, q, now, outcome=change.outcome, answer=change.answer, waited_s=waited
                    )
                )
        if self.liveness and self._starts is not None and any(isinstance(c, Asked) for c in changes):
            out += self._check(session, now)
        return out

    # ---- dialogs: pending in pi, not in the file (the companion extension announces them) ----

    def add_dialog(
        self, source: tuple[str, str], ref: SessionRef, question: Question, now: float, initial: bool = False
    ) -> list[Transition]:
        """A dialog pi shows, from ``source`` = (socket, dialog id), in the session file ``ref.key``."""
        if source in self._dialogs:
            return []
        self._tick += 1
        ref = self._ref(ref)
        self._dialogs[source] = (ref, question)
        self._dirty.add(ref.key)
        return [Transition("needs_input", ref, question, now, initial=initial)]

    def remove_dialog(self, source: tuple[str, str], outcome: Outcome | None, now: float) -> list[Transition]:
        """The dialog closed with ``outcome``, or (``None``) its pi went away: abandoned, not listed."""
        found = self._dialogs.pop(source, None)
        if found is None:
            return []
        ref, q = self._ref(found[0]), found[1]
        self._dirty.add(ref.key)
        if outcome is None:
            return [Transition("abandoned", ref, q, now)]
        return [Transition("resolved", ref, q, now, outcome=outcome, waited_s=max(0.0, now - q.asked_at))]

    def dialog_sources(self, socket: str | None = None) -> list[tuple[str, str]]:
        return [src for src in self._dialogs if socket is None or src[0] == socket]

    def _ref(self, ref: SessionRef) -> SessionRef:
        session = self._sessions.get(ref.key)
        return session.ref if session is not None and session.reducer.has_header else ref

    # ---- liveness ----

    def set_processes(
        self, procs: Sequence[Proc] | None, now: float, as_of: int | None = None
    ) -> list[Transition]:
        """A fresh process list (``None`` = could not be read: change nothing). ``as_of`` is
        :meth:`mark` taken before the read began; ``None`` means the read began just now."""
        if not self.liveness or procs is None:
            return []
        read_tick = self._tick if as_of is None else as_of
        if read_tick < self._read_tick:
            return []  # an older read overtaken by a newer one: it knows less
        self._read_tick = read_tick
        self._starts = {}
        for p in procs:
            folder = _norm(p.cwd)
            if folder:
                self._starts.setdefault(folder, []).append(p.started)
        out: list[Transition] = []
        for session in self._sessions.values():
            out += self._check(session, now)
        return out

    def _check(self, session: _Session, now: float) -> list[Transition]:
        """Apply the last process list to one session (``None`` = none read yet: nothing)."""
        if self._starts is None:
            return []
        cwd = _norm(session.reducer.cwd)
        starts = self._starts.get(cwd, []) if cwd else []
        if session.alive != bool(starts):
            session.alive = bool(starts)
            self._dirty.add(session.key)
        out: list[Transition] = []
        if not session.reducer.has_header:
            return out
        for cid, q in session.reducer.pending.items():
            seen = session.seen.get(cid)
            if seen is None:  # (asked before the file's header was read) seen now
                seen = session.seen[cid] = _Seen(self._tick, now, False)
            if seen.tick > self._read_tick:
                continue  # the list was read before we saw the question: it cannot judge it
            # The pi that asked was running when the question was written. A pi started later on
            # the same project did not ask it. The file's time can be anything; for a question we
            # saw being written, the moment we saw it bounds when it was asked from above.
            asked = q.asked_at if seen.initial else max(q.asked_at, seen.at)
            asker = any(start <= asked + START_SLACK_S for start in starts)
            if cid in session.abandoned:
                if asker:  # its pi is seen again (the earlier read missed it): pending again
                    del session.abandoned[cid]
                    self._dirty.add(session.key)
                    out.append(Transition("needs_input", session.ref, q, now))
            elif not asker:
                session.abandoned[cid] = q
                self._dirty.add(session.key)
                out.append(Transition("abandoned", session.ref, q, now))
        return out

    def needs_liveness(self) -> bool:
        """True while some question is pending and not yet known to be abandoned."""
        return self.liveness and any(
            len(s.reducer.pending) > len(s.abandoned) for s in self._sessions.values() if s.reducer.has_header
        )

    def has_abandoned(self) -> bool:
        """True while some question is abandoned (its pi may yet be seen again)."""
        return self.liveness and any(s.abandoned for s in self._sessions.values())

    def clear_abandoned(self, key: str, tool_call_id: str | None = None) -> bool:
        """The user dismissed an abandoned question (or all of a session's): stop listing it."""
        remote = self._remote.get(key)
        if remote is not None:
            ids = [tool_call_id] if tool_call_id else list(remote.abandoned)
            removed = any([remote.abandoned.pop(cid, None) is not None for cid in ids])
            self._drop_if_empty(remote)
            return removed
        session = self._sessions.get(key)
        if session is None:
            return False
        self._dirty.add(key)
        ids = [tool_call_id] if tool_call_id else list(session.abandoned)
        removed = False
        for cid in ids:
            if cid in session.abandoned:
                session.reducer.pending.pop(cid, None)
                session.abandoned.pop(cid, None)
                session.seen.pop(cid, None)
                removed = True
        return removed

    # ---- reading ----

    def unnamed_askers(self, keys: Iterable[str] | None = None) -> list[str]:
        """Sessions (of ``keys``, or all) that ask something but whose name is not known yet."""
        candidates = self._sessions.keys() if keys is None else [k for k in keys if k in self._sessions]
        out = []
        for k in candidates:
            r = self._sessions[k].reducer
            if r.has_header and r.name is None and (r.pending or self._sessions[k].abandoned):
                out.append(k)
        return out

    def view(self, key: str) -> SessionView | None:
        remote = self._remote.get(key)
        if remote is not None:
            return self._remote_view(remote)
        session = self._sessions.get(key)
        if session is None or not session.reducer.has_header:
            return None
        return self._view(session)

    def _view(self, session: _Session) -> SessionView:
        r = session.reducer
        pending = tuple(q for cid, q in r.pending.items() if cid not in session.abandoned)
        # Every question abandoned: the pi that asked is gone.
        state = r.state if pending or not session.abandoned else "stopped"
        view = SessionView(
            ref=session.ref,
            state=state,
            pending=pending,
            abandoned=tuple(session.abandoned.values()),
            alive=session.alive if self.liveness else None,
            updated_at=r.updated_at,
            current_tool=r.current_tool,
        )
        return with_dialogs(view, [q for ref, q in self._dialogs.values() if ref.key == session.key])

    def snapshot(self, now: float) -> Snapshot:
        for key in self._dirty:
            remote = self._remote.get(key)
            session = self._sessions.get(key)
            dialogs = [(ref, q) for ref, q in self._dialogs.values() if ref.key == key]
            if remote is not None:
                self._views[key] = self._remote_view(remote)
            elif session is not None and session.reducer.has_header:
                self._views[key] = self._view(session)
            elif dialogs:  # a session whose file is not read (yet): its dialogs still show
                self._views[key] = dialog_view(dialogs[0][0], [q for _, q in dialogs])
            else:
                self._views.pop(key, None)
        self._dirty.clear()
        return Snapshot(sessions=tuple(self._views.values()), taken_at=now)

    def __len__(self) -> int:
        return sum(1 for s in self._sessions.values() if s.reducer.has_header)

    # ---- remote sessions (fed from another machine's run --json stream) ----

    def remote_asked(self, ref: SessionRef, q: Question, now: float, initial: bool) -> list[Transition]:
        """A remote question is pending. One already known (host + file + call id, e.g. re-sent
        as an initial event after a reconnect) raises nothing again; an abandoned one whose pi
        came back is pending again."""
        remote = self._remote.get(ref.key)
        if remote is None:
            remote = self._remote[ref.key] = _Remote(ref)
        self._dirty.add(ref.key)
        if ref != remote.ref and (ref.name or ref.cwd or ref.id):
            remote.ref = ref
        remote.updated_at = max(remote.updated_at, q.asked_at)
        cid = q.tool_call_id
        if cid in remote.pending:
            return []
        back = remote.abandoned.pop(cid, None) is not None
        if back and initial:  # a re-sync of a question its host already called abandoned
            remote.abandoned[cid] = q
            return []
        remote.pending[cid] = q
        return [Transition("needs_input", remote.ref, q, now, initial=initial and not back)]

    def remote_ended(
        self,
        ref: SessionRef,
        q: Question,
        now: float,
        outcome: Outcome | None = None,
        answer: str | None = None,
        waited_s: float | None = None,
    ) -> list[Transition]:
        """A remote question was resolved (``outcome`` given) or abandoned (``outcome`` None)."""
        remote = self._remote.get(ref.key)
        if remote is None:
            return []
        self._dirty.add(ref.key)
        cid = q.tool_call_id
        known = remote.pending.pop(cid, None)
        out: list[Transition] = []
        if outcome is None:
            if known is not None:
                remote.abandoned[cid] = known
                out.append(Transition("abandoned", remote.ref, known, now))
        elif known is not None:
            waited = waited_s if waited_s is not None else max(0.0, now - known.asked_at)
            out.append(Transition("resolved", remote.ref, known, now, outcome=outcome, answer=answer, waited_s=waited))
        else:
            remote.abandoned.pop(cid, None)  # one terminal transition per question
        self._drop_if_empty(remote)
        return out

    def remote_offline(self, host: str, now: float) -> None:
        """The link to ``host`` is down: its questions stay listed, as offline."""
        for key, remote in self._remote.items():
            if remote.ref.host == host and remote.offline_since is None:
                remote.offline_since = now
                self._dirty.add(key)

    def remote_synced(self, host: str, still: set[tuple[str, str]], now: float) -> list[Transition]:
        """``host`` is back and has re-sent what is pending there (``still``: the keys + call ids,
        as (key, call id)). What it no longer lists ended while the link was down."""
        out: list[Transition] = []
        for key, remote in list(self._remote.items()):
            if remote.ref.host != host:
                continue
            self._dirty.add(key)
            remote.offline_since = None
            for cid, q in list(remote.pending.items()):
                if (key, cid) not in still:
                    del remote.pending[cid]
                    waited = max(0.0, now - q.asked_at)
                    out.append(Transition("resolved", remote.ref, q, now, outcome="superseded", waited_s=waited))
            for cid in [c for c in remote.abandoned if (key, c) not in still]:
                del remote.abandoned[cid]
            self._drop_if_empty(remote)
        return out

    def remote_offline_since(self, host: str) -> float | None:
        return next(
            (r.offline_since for r in self._remote.values() if r.ref.host == host and r.offline_since),
            None,
        )

    def _drop_if_empty(self, remote: _Remote) -> None:
        self._dirty.add(remote.ref.key)
        if not remote.pending and not remote.abandoned:
            del self._remote[remote.ref.key]

    def _remote_view(self, remote: _Remote) -> SessionView:
        offline = remote.offline_since is not None
        questions = tuple(remote.pending.values())
        state: State = "needs_input" if questions else "stopped"
        return SessionView(
            ref=remote.ref,
            state=state,
            pending=() if offline else questions,
            abandoned=tuple(remote.abandoned.values()),
            alive=None,
            updated_at=remote.updated_at,
            offline_since=remote.offline_since,
            offline=questions if offline else (),
        )


def with_dialogs(view: SessionView, dialogs: Sequence[Question]) -> SessionView:
    """``view`` with extension dialogs added to its pending questions. A question tool's own
    ``custom`` dialog (same tool call as a pending question) is that question: not added twice."""
    asked = {q.tool_call_id for q in view.pending}
    extra = tuple(q for q in dialogs if not (q.dialog == "custom" and q.tool_call_id in asked))
    if not extra:
        return view
    return dataclasses.replace(view, pending=view.pending + extra, state="needs_input")


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
    return dataclasses.replace(snapshot, sessions=tuple(views))
