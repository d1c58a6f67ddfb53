"""All sessions at once (pure): reducer changes → transitions, liveness applied, snapshots.

Time is always passed in; the board never reads a clock, a file or a process table.

Liveness is judged only on fresh data: the board counts every feeding (a logical clock, immune to
wall-clock jumps), remembers at which count it first saw each question, and a process list says
at which count its read began (:meth:`Board.mark` taken before reading). A question is called
abandoned only by a list read *after* the board saw it; an abandoned question whose pi shows up
again in a later list is pending again (a fresh, non-initial ``needs_input``).

Liveness is per session, never per folder: the pis running in a folder are paired with that
folder's sessions, one session each, by the evidence the process list carries (start times,
arguments, tmux screens; :mod:`notifier.core.owners` says how and what is kept when it cannot
tell). A session left without a pi is not alive, though another pi runs beside it.

Remote sessions (:mod:`notifier.core.remote_sessions`) and the companion extension's dialogs
(:mod:`notifier.core.dialogs`) live on the same board: one snapshot, one set of transitions.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from notifier.core.dialogs import Dialogs, Source, closed, dialog_view, with_dialogs
from notifier.core.local_session import LocalSession, norm_folder
from notifier.core.model import Outcome, Question, SessionRef, SessionView, Snapshot, Transition, TurnChange
from notifier.core.owners import START_SLACK_S, Wanted, bind
from notifier.core.owners import Proc as Proc
from notifier.core.reducer import Asked, Ended, Event, SessionReducer
from notifier.core.remote_sessions import RemoteSessions
from notifier.core.session_views import SessionViews


class Board:
    def __init__(self, liveness: bool = True) -> None:
        self.liveness = liveness
        self._sessions: dict[str, LocalSession] = {}
        self._remote = RemoteSessions()
        self._procs: dict[str, list[Proc]] | None = None  # the last process list, by folder
        self._askers: dict[str, tuple[int, float]] = {}  # session → its pi, where that waits for a human
        self._tick = 0  # counts feedings: the order in which questions were seen
        self._read_tick = -1  # the count at which the last process list began to be read
        self._turns: list[TurnChange] = []
        # Snapshots are built incrementally: only sessions that changed get a new view.
        self._views = SessionViews()
        self._dirty: set[str] = set()
        self._dialogs = Dialogs()

    # ---- feeding ----

    def _session(self, key: str) -> LocalSession:
        """The session for ``key`` (created if new), marked as changed."""
        self._dirty.add(key)
        session = self._sessions.get(key)
        if session is None:
            session = LocalSession(key, SessionReducer())
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
        """A session rebuilt from a summary (the scan cache): its questions are reported as asked.
        (Called for every file at start-up: a session asking nothing costs a dict entry.)"""
        self._tick += 1
        self._dirty.add(key)
        session = self._sessions.get(key)
        if session is None:
            session = self._sessions[key] = LocalSession(key, reducer)
        else:
            session.reducer = reducer
        if not reducer.pending:
            return []
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
        self, session: LocalSession, changes: Sequence[Asked | Ended], now: float, initial: bool
    ) -> list[Transition]:
        out = session.transitions(changes, self._tick, now, initial)
        asker = self._askers.get(session.key)
        if asker is not None:  # its pi, as last seen, waits for a human (see Transition.asker)
            out = [
                Transition(t.kind, t.session, t.question, t.at, t.initial, asker=asker) if t.kind == "needs_input" else t
                for t in out
            ]
        if out and self.liveness and any(isinstance(c, Asked) for c in changes):
            out += self._check(session, now)
        return out

    # ---- dialogs: pending in pi, not in the file (the companion extension announces them) ----

    def add_dialog(
        self, source: Source, ref: SessionRef, question: Question, now: float, initial: bool = False
    ) -> list[Transition]:
        """A dialog pi shows, from ``source`` = (socket, dialog id), in the session file ``ref.key``."""
        ref = self._ref(ref)
        if not self._dialogs.open(source, ref, question):
            return []
        self._tick += 1
        self._dirty.add(ref.key)
        return [Transition("needs_input", ref, question, now, initial=initial)]

    def remove_dialog(
        self, source: Source, outcome: Outcome | None, now: float, answer: str | None = None
    ) -> list[Transition]:
        """The dialog closed with ``outcome`` (``answer``: what was chosen or typed), or (``None``)
        its pi went away: abandoned, not listed."""
        found = self._dialogs.close(source)
        if found is None:
            return []
        ref = self._ref(found[0])
        self._dirty.add(ref.key)
        return [closed(ref, found[1], outcome, now, answer)]

    def pi_gone(self, key: str) -> None:
        """The pi writing ``key`` died in the middle of its session (its companion extension's
        connection was lost without a goodbye): not alive, until a process list says otherwise."""
        session = self._sessions.get(key)
        if self.liveness and session is not None and session.alive is not False:
            session.alive = False
            self._dirty.add(key)

    def dialog_sources(self, socket: str | None = None) -> list[Source]:
        return self._dialogs.sources(socket)

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
        self._procs = {}
        for p in procs:
            folder = norm_folder(p.cwd)
            if folder:
                self._procs.setdefault(folder, []).append(p)
        return self._judge(list(self._sessions.values()), now)

    def _check(self, session: LocalSession, now: float) -> list[Transition]:
        """Apply the last process list to one session (``None`` = none read yet: nothing). Its
        folder's sessions are paired again, but only this one is judged: the list was read
        before this session changed, so it says nothing new of the others."""
        if self._procs is None:
            return []
        cwd = norm_folder(session.reducer.cwd)
        if not cwd or cwd not in self._procs:
            return self._judge([session], now)
        folder = [s for s in self._sessions.values() if norm_folder(s.reducer.cwd) == cwd]
        return self._judge(folder, now, only=session)

    def _judge(self, sessions: list[LocalSession], now: float, only: LocalSession | None = None) -> list[Transition]:
        """Pair ``sessions`` with the pis of their folders and judge each (or ``only`` that one)."""
        assert self._procs is not None
        by_folder: dict[str, list[tuple[LocalSession, Wanted]]] = {}
        owned: set[str] = set()
        for session in sessions:
            cwd = norm_folder(session.reducer.cwd)
            procs = self._procs.get(cwd) if cwd else None
            if not procs or not session.reducer.has_header:
                continue
            w = self._wanted(session)
            if w.updated_at + START_SLACK_S >= min(p.started for p in procs):  # (else no pi can have it)
                by_folder.setdefault(cwd or "", []).append((session, w))
        for folder, items in by_folder.items():
            owners = bind([w for _, w in items], self._procs[folder])
            owned.update(s.key for s, _ in items if owners.alive(s.key))
            for s, _ in items:
                owner = owners.owner(s.key)
                if owner is not None and owner.interactive and owner.pid:
                    self._askers[s.key] = (owner.pid, owner.started)
                else:
                    self._askers.pop(s.key, None)
        out: list[Transition] = []
        for session in sessions if only is None else [only]:
            changed, trans = session.check(session.key in owned, self._tick, self._read_tick, now)
            if changed:
                self._dirty.add(session.key)
            out += trans
        return out

    def _wanted(self, session: LocalSession) -> Wanted:
        """What pairing needs of a session: for one asking something, when it asked (its pi ran by
        then) and what (its pane may show it)."""
        r = session.reducer
        if not r.pending:
            return Wanted(session.key, r.cwd, r.updated_at, None, None, (), r.session_id)
        first = next(iter(r.pending.values()))
        asked = min(session.asked_at(q) for q in r.pending.values())
        labels = tuple(o.label for o in first.first.options)
        return Wanted(session.key, r.cwd, asked, None, first.first.text, labels, r.session_id)

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
        if key in self._remote:
            return self._remote.clear_abandoned(key, tool_call_id)
        session = self._sessions.get(key)
        if session is None:
            return False
        self._dirty.add(key)
        return session.clear_abandoned(tool_call_id)

    # ---- reading ----

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
        if key in self._remote:
            return self._remote.view(key)
        session = self._sessions.get(key)
        if session is None or not session.reducer.has_header:
            return None
        return self._view(session)

    def _view(self, session: LocalSession, dialogs: list[tuple[SessionRef, Question]] | None = None) -> SessionView:
        """``dialogs``: the session's open dialogs, if looked up already."""
        if dialogs is None:
            dialogs = self._dialogs.of(session.key)
        return with_dialogs(session.view(self.liveness), [q for _, q in dialogs])

    def snapshot(self, now: float) -> Snapshot:
        """The board now: the views of sessions that changed since the last snapshot are built
        again, the others are the same objects as before (shared in chunks, see SessionViews)."""
        changed = self._remote.take_changed()
        if not changed and not self._dialogs and not self._remote:
            # Only this machine's sessions (the common case, and the whole board after the
            # start-up scan): no dialog or remote view to merge in.
            views, sessions, liveness = self._views, self._sessions, self.liveness
            if not views:  # (the first snapshot, after the start-up scan: all new, in bulk)
                new = [
                    (key, session.view(liveness))
                    for key in self._dirty
                    if (session := sessions.get(key)) is not None and session.reducer.has_header
                ]
                views.add_new(new)
            else:
                for key in self._dirty:
                    session = sessions.get(key)
                    if session is not None and session.reducer.has_header:
                        views.set(key, session.view(liveness))
                    else:
                        views.remove(key)
            self._dirty.clear()
            return Snapshot(views.snapshot(), now)
        for key in (self._dirty | changed) if changed else self._dirty:
            session = self._sessions.get(key)
            dialogs = self._dialogs.of(key)
            remote = self._remote.view(key)
            if remote is not None:
                self._views.set(key, remote)
            elif session is not None and session.reducer.has_header:
                self._views.set(key, self._view(session, dialogs))
            elif dialogs:  # a session whose file is not read (yet): its dialogs still show
                self._views.set(key, dialog_view(dialogs[0][0], [q for _, q in dialogs]))
            else:
                self._views.remove(key)
        self._dirty.clear()
        return Snapshot(sessions=self._views.snapshot(), taken_at=now)

    def __len__(self) -> int:
        return sum(1 for s in self._sessions.values() if s.reducer.has_header)

    # ---- remote sessions (fed from another machine's run --json stream) ----

    def remote_asked(self, ref: SessionRef, q: Question, now: float, initial: bool) -> list[Transition]:
        """A remote question is pending (see :meth:`RemoteSessions.asked`)."""
        return self._remote.asked(ref, q, now, initial)

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
        return self._remote.ended(ref, q, now, outcome, answer, waited_s)

    def remote_refused(self) -> dict[tuple[str, str], int]:
        """Remote questions refused by the per-host bounds since the last call (see
        :meth:`RemoteSessions.take_refused`)."""
        return self._remote.take_refused()

    def remote_offline(self, host: str, now: float) -> None:
        """The link to ``host`` is down: its questions stay listed, as offline."""
        self._remote.offline(host, now)

    def remote_synced(self, host: str, still: set[tuple[str, str]], now: float) -> list[Transition]:
        """``host`` is back and has re-sent what is pending there (see :meth:`RemoteSessions.synced`)."""
        return self._remote.synced(host, still, now)

    def remote_offline_since(self, host: str) -> float | None:
        return self._remote.offline_since(host)
