"""This machine's session files on the board (pure): reducer changes → transitions, turn changes,
and liveness applied from process lists. Time is always passed in.

Liveness is judged only on fresh data: every feeding is counted (a logical clock, immune to
wall-clock jumps), each question remembers at which count it was first seen, and a process list
says at which count its read began (:meth:`LocalSessions.mark` taken before reading). A question
is called abandoned only by a list read *after* it was seen; an abandoned question whose pi shows
up again in a later list is pending again (a fresh, non-initial ``needs_input``).

Liveness is per session, never per folder: the pis running in a folder are paired with that
folder's sessions, one session each (:mod:`notifier.core.pairing`). A session left without a pi
is not alive, though another pi runs beside it.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import replace

from notifier.core.local_session import LocalSession
from notifier.core.model import SessionRef, SessionView, Transition, TurnChange
from notifier.core.owners import Proc, norm_folder
from notifier.core.pairing import Pairing
from notifier.core.reducer import Asked, Ended, Event, SessionReducer


class LocalSessions:
    """Every session file read, by path. Every key whose view may have changed is collected
    until :meth:`take_changed`."""

    def __init__(self, liveness: bool = True) -> None:
        self.liveness = liveness
        self._sessions: dict[str, LocalSession] = {}
        self._pairing = Pairing()
        self._tick = 0  # counts feedings: the order in which questions were seen
        self._turns: list[TurnChange] = []
        self._changed: set[str] = set()
        self.relived = False  # who is alive changed (see take_relived)

    # ---- feeding ----

    def _session(self, key: str) -> LocalSession:
        """The session for ``key`` (created if new), marked as changed."""
        self._changed.add(key)
        session = self._sessions.get(key)
        if session is None:
            session = LocalSession(key, SessionReducer())
            self._sessions[key] = session
        return session

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
        self._changed.add(key)  # else the snapshot keeps showing what the rewrite removed
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
        """A session rebuilt from a summary (the scan cache): its questions are reported as asked.
        (Called for every file at start-up: a session asking nothing costs a dict entry.)"""
        self._tick += 1
        self._changed.add(key)
        session = self._sessions.get(key)
        if session is None:
            session = self._sessions[key] = LocalSession(key, reducer)
        else:
            session.reducer = reducer
        if not reducer.pending:
            return []
        return self._transitions(session, [Asked(q) for q in reducer.pending.values()], now, initial)

    def forget(self, key: str, now: float) -> list[Transition]:
        """The file is gone: whatever it still asked will never be answered."""
        session = self._sessions.pop(key, None)
        self._changed.add(key)
        if session is None:
            return []
        changes = [Ended(q, "superseded", None, now) for q in session.reducer.pending.values()]
        return self._transitions(session, changes, now, False)

    def _transitions(
        self, session: LocalSession, changes: Sequence[Asked | Ended], now: float, initial: bool
    ) -> list[Transition]:
        out = session.transitions(changes, self._tick, now, initial)
        asker = self._pairing.asker(session.key)
        if asker is not None:  # its pi, as last seen, waits for a human (see Transition.asker)
            out = [
                Transition(t.kind, t.session, t.question, t.at, t.initial, asker=asker)
                if t.kind == "needs_input" else t
                for t in out
            ]
        if out and self.liveness and any(isinstance(c, Asked) for c in changes):
            out += self._check(session, now)
        return out

    # ---- liveness ----

    def mark(self) -> int:
        """The feeding count now. Take it *before* reading the process table and pass it to
        :meth:`set_processes`: only questions seen by then can be judged on that list."""
        return self._tick

    def set_processes(
        self, procs: Sequence[Proc] | None, now: float, as_of: int | None = None
    ) -> list[Transition]:
        """A fresh process list (``None`` = could not be read: change nothing). ``as_of`` is
        :meth:`mark` taken before the read began; ``None`` means the read began just now."""
        if not self.liveness or procs is None:
            return []
        if not self._pairing.take(procs, self._tick if as_of is None else as_of):
            return []  # an older read overtaken by a newer one: it knows less
        return self._judge(list(self._sessions.values()), now)

    def take_relived(self) -> bool:
        """Whether who is alive (or which asking pi waits for a human) changed since the last
        call (a process list, a pi gone), transitions or not: a change of the snapshot all the same."""
        relived, self.relived = self.relived, False
        return relived

    def pi_gone(self, key: str) -> None:
        """The pi writing ``key`` died in the middle of its session (its companion extension's
        connection was lost without a goodbye): not alive, until a process list says otherwise."""
        session = self._sessions.get(key)
        if self.liveness and session is not None and session.alive is not False:
            session.alive = False
            self._changed.add(key)
            self.relived = True

    def _check(self, session: LocalSession, now: float) -> list[Transition]:
        """Apply the last process list to one session (none read yet: nothing). Its folder's
        sessions are paired again, but only this one is judged: the list was read before this
        session changed, so it says nothing new of the others."""
        if not self._pairing.known:
            return []
        cwd = norm_folder(session.reducer.cwd)
        if not self._pairing.runs_in(cwd):
            return self._judge([session], now)
        folder = [s for s in self._sessions.values() if norm_folder(s.reducer.cwd) == cwd]
        return self._judge(folder, now, only=session)

    def _judge(self, sessions: list[LocalSession], now: float, only: LocalSession | None = None) -> list[Transition]:
        """Pair ``sessions`` with the pis of their folders and judge each (or ``only`` that one)."""
        askers = {s.key: self._pairing.asker(s.key) for s in sessions if s.reducer.pending}
        owned = self._pairing.owned(sessions)
        for key, asker in askers.items():
            if self._pairing.asker(key) != asker:  # (its view says who waits for a human)
                self._changed.add(key)
                self.relived = True
        out: list[Transition] = []
        for session in sessions if only is None else [only]:
            changed, trans = session.check(session.key in owned, self._tick, self._pairing.read_tick, now)
            if changed:
                self._changed.add(session.key)
                self.relived = True
            out += trans
        return out

    def needs_liveness(self) -> bool:
        """True while some question is pending and not yet known to be abandoned."""
        return self.liveness and any(
            len(s.reducer.pending) > len(s.abandoned) for s in self._sessions.values() if s.reducer.has_header
        )

    def asking_folders(self) -> frozenset[str]:
        """The folders of the sessions that ask something (or asked, abandoned): where the pis'
        screens are worth capturing with the next process list."""
        return frozenset(
            f for s in self._sessions.values() if s.reducer.pending and (f := norm_folder(s.reducer.cwd))
        )

    def has_abandoned(self) -> bool:
        """True while some question is abandoned (its pi may yet be seen again)."""
        return self.liveness and any(s.abandoned for s in self._sessions.values())

    def clear_abandoned(self, key: str, tool_call_id: str | None = None) -> bool:
        """The user dismissed an abandoned question (or all of a session's): stop listing it."""
        session = self._sessions.get(key)
        if session is None:
            return False
        self._changed.add(key)
        return session.clear_abandoned(tool_call_id)

    # ---- reading ----

    def reducer(self, key: str) -> SessionReducer | None:
        session = self._sessions.get(key)
        return session.reducer if session is not None else None

    def ref_of(self, ref: SessionRef) -> SessionRef:
        """``ref`` as the session file says (its id, folder and name), once its header is read."""
        session = self._sessions.get(ref.key)
        return session.ref if session is not None and session.reducer.has_header else ref

    def unnamed_askers(self, keys: Iterable[str] | None = None) -> list[str]:
        """Sessions (of ``keys``, or all) that ask something but whose name is not known yet."""
        sessions = self._sessions
        if keys is None:
            candidates: Iterable[LocalSession] = sessions.values()
        else:
            candidates = [sessions[k] for k in keys if k in sessions]
        out = []
        for session in candidates:
            r = session.reducer
            if r.name is None and (r.pending or session.abandoned) and r.has_header:
                out.append(session.key)
        return out

    def view(self, key: str) -> SessionView | None:
        """The session's view (``None``: not known, or its header not read)."""
        session = self._sessions.get(key)
        if session is None or not session.reducer.has_header:
            return None
        view = session.view(self.liveness)
        asker = self._pairing.asker(key) if view.pending else None
        return replace(view, asker=asker) if asker is not None else view

    def take_changed(self) -> set[str]:
        """The keys whose view may have changed since the last call."""
        changed, self._changed = self._changed, set()
        return changed

    def __len__(self) -> int:
        """The sessions whose header was read."""
        return sum(1 for s in self._sessions.values() if s.reducer.has_header)
