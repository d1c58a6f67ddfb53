"""All sessions at once (pure, time passed in): the board, its sources, the liveness judgement,
and the views snapshots share.

**The board** composes its sources and merges them into snapshots. Each source owns its own
state and says which sessions changed: this machine's session files (:class:`LocalSessions`,
with their liveness), sessions on other machines (:class:`RemoteSessions`) and the dialogs pi
shows that are not in a session file (:class:`Dialogs`). Callers feed the source that owns the
thing; every change returns its transitions. A snapshot builds again only the views of sessions
that changed since the last one; the others are the same objects as before
(:class:`SessionViews`).

**Liveness, judged once, here.** Liveness is per session, never per folder: the pis running in a
folder are paired with that folder's sessions, one session each (:meth:`LocalSessions.set_processes`, by the
evidence :func:`notifier.core.owners.bind` weighs, never by the folder alone). A session left
without a pi is not alive, though another pi runs beside it. It is judged only on fresh data:
every feeding is counted (a logical clock, immune to wall-clock jumps), each question remembers
at which count it was first seen (:class:`Seen`), and a process list says at which count its
read began (:meth:`LocalSessions.mark`, taken before reading): a question is called abandoned
only by a list read *after* it was seen, and counts as asked by a process only if that process
was already running when it was written (:meth:`LocalSession.asked_at`). An abandoned question
whose pi shows up again in a later list is pending again (a fresh, non-initial ``needs_input``).
A change of who is alive (or of which asking pi waits for a human) is a change of the snapshot
(:meth:`LocalSessions.take_alive_changed`), transitions or not.

**Remote sessions** are known only from their host's ``run --json`` stream. Liveness is the remote
host's business: a remote question is pending until its host says it was resolved or abandoned.
When the link to a host goes down its questions stay listed, as offline; when it comes back the
host re-sends what is still pending there, and what it no longer lists ended while the link was
down. Each host is bounded: at most ``max_sessions`` sessions and ``max_questions`` questions
(pending and abandoned) per session; a question beyond them is refused (counted in
:meth:`RemoteSessions.take_refused` for the caller to say once), so a host that floods cannot
make the board grow without end.

**Dialogs** pi shows that are not in the session file: the companion extension announces them
(permission gates, any blocking ``ctx.ui`` dialog) and they are pending questions of the session
they belong to until they close.

**Session views** are kept in the order they first appeared (a dict's: a changed view keeps its
place; a removed one leaves, and comes back at the end), in chunks of ``CHUNK`` (tuples, see
:class:`~notifier.core.model.Views`) that successive snapshots share, so a snapshot costs the
chunk that changed plus one reference per chunk, not one per session (with thousands of
sessions, one tuple of them all would be the largest part of the work between a line appended to
a session file and its run --json line)."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field, replace

from notifier.core.model import (
    Outcome,
    Question,
    SessionRef,
    SessionView,
    Snapshot,
    State,
    Transition,
    TurnChange,
    Views,
)
from notifier.core.owners import START_SLACK_S, Proc, Wanted, bind, decisive, norm_folder
from notifier.core.reducer import Asked, Ended, Event, SessionReducer

DRAWN_S = 1.0  # a question seen being written: how long its pi may take to show it before a list judges it

# ---- the board ----

class Board:
    def __init__(self, liveness: bool = True) -> None:
        self.local = LocalSessions(liveness)
        self.remote = RemoteSessions()
        self.dialogs = Dialogs(self.local.ref_of)  # (a dialog's session is named as its file says)
        self._views = SessionViews()

    def view(self, key: str) -> SessionView | None:
        """One session as a snapshot shows it (``None``: not on the board)."""
        return with_dialogs(self.remote.view(key) or self.local.view(key), self.dialogs.of(key))

    def clear_abandoned(self, key: str, tool_call_id: str | None = None) -> bool:
        """The user dismissed an abandoned question (or all of a session's): stop listing it."""
        if key in self.remote:
            return self.remote.clear_abandoned(key, tool_call_id)
        return self.local.clear_abandoned(key, tool_call_id)

    def snapshot(self, now: float) -> Snapshot:
        """The board now: the views of sessions that changed since the last snapshot are built
        again, the others are the same objects as before (shared in chunks, see SessionViews)."""
        changed = self.local.take_changed()
        changed |= self.remote.take_changed() | self.dialogs.take_changed()
        views = self._views
        # Only this machine's sessions (the common case): nothing to merge in.
        view_of = self.view if self.dialogs or self.remote else self.local.view
        for key in changed:
            view = view_of(key)
            if view is not None:
                views.set(key, view)
            else:
                views.remove(key)
        return Snapshot(views.snapshot(), now)


def resolved(
    ref: SessionRef, q: Question, now: float, outcome: Outcome, answer: str | None = None,
    ended: float | None = None, waited_s: float | None = None,
) -> Transition:  # fmt: skip
    """``q`` ended with ``outcome``: it waited from its asking until ``ended`` (default ``now``),
    unless the source says how long (``waited_s``, a remote host's)."""
    waited = max(0.0, (now if ended is None else ended) - q.asked_at) if waited_s is None else waited_s
    return Transition("resolved", ref, q, now, outcome=outcome, answer=answer, waited_s=waited)


# ---- one local session ----

@dataclass(frozen=True, slots=True)
class Seen:
    """When the board first saw a question: its feeding count, its wall time, and whether it was
    found by the start-up scan (then the file's own time is all we know about when it was asked)."""

    tick: int
    at: float
    initial: bool

    def judged_by(self, read_tick: int, now: float, asked_at: float) -> bool:
        """Whether a process list read from feeding count ``read_tick``, judged at ``now``, can
        say the pi of this question (asked at ``asked_at`` by its file) is gone: one read after
        the question was seen, and, for one seen being written just now, once its pi had time to
        draw it (a pane shows the dialog a moment after the line). One found at start-up, or
        written before (a file copied in, a folder back), is judged at once; a clock set back
        counts as time enough."""
        just_written = 0 <= now - self.at < DRAWN_S and now - asked_at < DRAWN_S
        return self.tick <= read_tick and (self.initial or not just_written)


@dataclass(slots=True)
class LocalSession:
    """One session file on this machine: its state, liveness and questions as the board tracks
    them. Its pi: ``asker``, as the last list paired it, where it waits for a human (a TUI);
    ``owner``, exact, for the question asked now (what ``answer`` and ``goto`` act on)."""

    key: str
    reducer: SessionReducer
    abandoned: dict[str, Question] = field(default_factory=dict)
    alive: bool | None = None
    seen: dict[str, Seen] = field(default_factory=dict)
    asker: tuple[int, float] | None = None  # its pi, as last paired, where that waits for a human
    # (question, pid, start time): the pi a list read after that question was seen paired with this
    # session in every reading, and that showed it (evidence for the lists after it: :attr:`Wanted.owner`)
    owner: tuple[str, int, float] | None = None
    # question → the other tools of its turn started before it (in the file) when it was asked: in a
    # sequential batch pi runs those first, and its pane may show no dialog meanwhile
    ahead: dict[str, frozenset[str]] = field(default_factory=dict)

    @property
    def ref(self) -> SessionRef:
        r = self.reducer
        return SessionRef(self.key, r.session_id, r.cwd, r.name)

    def transitions(self, changes: Sequence[Asked | Ended], tick: int, now: float, initial: bool) -> list[Transition]:
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
                self._forget(q.tool_call_id)
                if self.abandoned.pop(q.tool_call_id, None) is not None:
                    continue  # it already ended (abandoned): one terminal transition per question
                out.append(resolved(ref, q, now, change.outcome, change.answer, ended=change.at))
        if not self.reducer.pending and any(isinstance(c, Ended) for c in changes):
            self.alive = None  # judged only while a question waits: not known from now on
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
        q = next(iter(r.pending.values()), None)
        w = Wanted.asking(self.key, r.cwd, self.asked_at(q) if q else r.updated_at, None, q, r.session_id)
        before = self.ahead.get(q.tool_call_id) if q is not None else None  # (None: not seen asked)
        w = replace(w, busy=bool(r.running.keys() & before if before is not None else r.running))
        if q is not None and self.owner is not None and self.owner[0] == q.tool_call_id:
            w = replace(w, owner=self.owner[1:])
        return w

    def check(self, owned: bool, tick: int, read_tick: int, now: float) -> tuple[bool, list[Transition]]:
        """Judge the pending questions by a process list read from feeding count ``read_tick``
        (``owned``: whether a pi there has this session, as the board paired them; ``tick``: the
        board's count now). Whether the view changed, and the transitions."""
        # A list read before a question was seen cannot say its pi is gone (one started since
        # the read): the session's liveness is then not known until a list read after it.
        asked = {cid: q.asked_at for cid, q in self.reducer.pending.items()}
        judged = all(s.judged_by(read_tick, now, asked.get(cid, s.at)) for cid, s in self.seen.items())
        unjudged = not owned and not judged
        alive = None if unjudged else owned
        changed = self.alive != alive
        self.alive = alive
        out: list[Transition] = []
        if not self.reducer.has_header:
            return changed, out
        for cid, q in self.reducer.pending.items():
            # (one asked before the file's header was read is seen now)
            seen = self.seen.setdefault(cid, Seen(tick, now, False))
            if not owned and not seen.judged_by(read_tick, now, q.asked_at):
                continue  # read before we saw the question, or before its pi could draw it
            if seen.tick > read_tick:
                continue  # (nor is its pi seen again by a list read before it was asked)
            if cid in self.abandoned and owned:  # its pi is seen again (the earlier read missed it)
                del self.abandoned[cid]
                out.append(Transition("needs_input", self.ref, q, now))
            elif cid not in self.abandoned and not owned:
                self.abandoned[cid] = q
                out.append(Transition("abandoned", self.ref, q, now))
        return changed or bool(out), out

    def clear_abandoned(self, tool_call_id: str | None = None) -> bool:
        """The user dismissed an abandoned question (or all of them): stop listing it."""
        ids = [cid for cid in self.abandoned if tool_call_id in (None, "", cid)]
        for cid in ids:
            self.reducer.drop(cid)
            del self.abandoned[cid]
            self._forget(cid)
        return bool(ids)

    def _forget(self, cid: str) -> None:
        """What was judged of a question that ended (a later question with the same id is another's evidence)."""
        self.seen.pop(cid, None)
        self.ahead.pop(cid, None)
        if self.owner is not None and self.owner[0] == cid:
            self.owner = None

    def view(self, liveness: bool) -> SessionView:
        r, abandoned = self.reducer, self.abandoned
        alive = self.alive if liveness else None
        pending = tuple(q for cid, q in r.pending.items() if cid not in abandoned) if r.calls else ()
        state = r.state
        # Every question abandoned, or a turn under way whose pi is gone (killed while it ran a
        # tool or waited on an extension dialog; the file says working forever): stopped.
        if (abandoned and not pending) or (alive is False and state == "working"):
            state = "stopped"
        return SessionView(
            self.ref, state, pending, tuple(abandoned.values()), alive, r.updated_at, r.current_tool,
            asker=self.asker if pending else None,
            owner=self.owner[1:] if self.owner and pending and pending[0].tool_call_id == self.owner[0] else None,
        )  # fmt: skip


# ---- what every source of the board does ----

class Changes:
    """A part of the board: it collects the keys whose view may have changed until
    :meth:`take_changed`."""

    def __init__(self) -> None:
        self._changed: set[str] = set()

    def take_changed(self) -> set[str]:
        """The keys whose view may have changed since the last call."""
        changed, self._changed = self._changed, set()
        return changed


# ---- this machine's sessions ----

class LocalSessions(Changes):
    """Every session file read, by path. Every key whose view may have changed is collected
    until :meth:`take_changed`."""

    def __init__(self, liveness: bool = True) -> None:
        self.liveness = liveness
        self._sessions: dict[str, LocalSession] = {}
        self._procs: dict[str, list[Proc]] | None = None  # the last process list, by folder
        self._read_tick = -1  # the feeding count at which it began to be read
        self._tick = 0  # counts feedings: the order in which questions were seen
        self._turns: list[TurnChange] = []
        super().__init__()
        self.alive_changed = False  # who is alive changed (see take_alive_changed)

    # ---- feeding ----

    def apply(self, key: str, events: Iterable[Event], now: float, initial: bool = False) -> list[Transition]:
        self._tick += 1
        self._changed.add(key)
        session = self._sessions.get(key)
        if session is None:
            session = self._sessions[key] = LocalSession(key, SessionReducer())
        before = session.reducer.state
        changes = []
        for event in events:
            made = session.reducer.apply(event)
            for change in made:  # (what runs at the moment a question is asked started before it)
                if isinstance(change, Asked):
                    session.ahead[change.question.tool_call_id] = frozenset(session.reducer.running)
            changes += made
        after = session.reducer.state
        turned = before in ("working", "needs_input") and after in ("idle", "failed")
        if turned and not initial and session.reducer.has_header:
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
        gone: list[Asked | Ended] = [  # (what the rewrite says of how it ended, if it does)
            ended[cid]._replace(question=q) if cid in ended else Ended(q, "superseded", None, now)
            for cid, q in old.reducer.pending.items()
            if cid not in fresh.pending
        ]
        asked: list[Asked | Ended] = [
            Asked(q) for cid, q in fresh.pending.items() if cid not in old.reducer.pending
        ]
        # Report what ended under the old identity: the re-read may even have caught the file empty.
        out = self._transitions(old, gone, now, False)
        old.reducer = fresh
        return out + self._transitions(old, asked, now, False)

    def restore(self, key: str, reducer: SessionReducer, now: float, initial: bool) -> list[Transition]:
        """A session whose state was built whole elsewhere (a file's first read, its start-up
        read, or the scan cache's summary) takes ``reducer`` as its state: its questions are
        reported as asked. (Called for every file at start-up: a session asking nothing costs a
        dict entry.)"""
        self._tick += 1
        self._changed.add(key)
        session = self._sessions.get(key)
        if session is None:
            session = self._sessions[key] = LocalSession(key, reducer)
        else:
            session.reducer = reducer
        if not reducer.calls:  # (the common case at start-up, kept cheap)
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
        if out and self.liveness and any(isinstance(c, Asked) for c in changes):
            out += self._check(session, now)
        return out

    # ---- liveness ----

    def mark(self) -> int:
        """The feeding count now. Take it *before* reading the process table and pass it to
        :meth:`set_processes`: only questions seen by then can be judged on that list."""
        return self._tick

    def set_processes(self, procs: Sequence[Proc] | None, now: float, as_of: int | None = None) -> list[Transition]:
        """A fresh process list (``None`` = could not be read: change nothing). ``as_of`` is
        :meth:`mark` taken before the read began; ``None`` means the read began just now."""
        read_tick = self._tick if as_of is None else as_of
        if not self.liveness or procs is None or read_tick < self._read_tick:
            return []  # (an older read overtaken by a newer one knows less)
        self._read_tick = read_tick
        self._procs = {}
        for p in procs:
            folder = norm_folder(p.cwd)
            if folder:
                self._procs.setdefault(folder, []).append(p)
        return self._judge(list(self._sessions.values()), now)

    def take_alive_changed(self) -> bool:
        """Whether who is alive (or which asking pi waits for a human) changed since the last
        call (a process list, a pi gone), transitions or not: a change of the snapshot all the same."""
        alive_changed, self.alive_changed = self.alive_changed, False
        return alive_changed

    def pi_gone(self, key: str) -> None:
        """The pi writing ``key`` died in the middle of its session (its companion extension's
        connection was lost without a goodbye): not alive, until a process list says otherwise."""
        session = self._sessions.get(key)
        if self.liveness and session is not None and session.alive is not False:
            session.alive = False
            self._changed.add(key)
            self.alive_changed = True

    def asker(self, key: str) -> tuple[int, float] | None:
        """The pi last paired with session ``key`` where it waits for a human (its view's ``asker``)."""
        session = self._sessions.get(key)
        return session.asker if session is not None else None

    def asker_gone(self, key: str) -> None:
        """The pi last seen waiting for a human in ``key`` no longer runs (found before the next
        process list): the session's view names no asker until a list finds one again."""
        session = self._sessions.get(key)
        if session is not None and session.asker is not None:
            session.asker = None
            self._changed.add(key)

    def _check(self, session: LocalSession, now: float) -> list[Transition]:
        """Apply the last process list to one session (none read yet: nothing). Its folder's
        sessions are paired again, but only this one is judged: the list was read before this
        session changed, so it says nothing new of the others."""
        if self._procs is None:
            return []
        cwd = norm_folder(session.reducer.cwd)
        if not cwd or cwd not in self._procs:
            return self._judge([session], now)
        folder = [s for s in self._sessions.values() if norm_folder(s.reducer.cwd) == cwd]
        return self._judge(folder, now, only=session)

    def _judge(self, sessions: list[LocalSession], now: float, only: LocalSession | None = None) -> list[Transition]:
        """Pair ``sessions`` with the pis of their folders and judge each (or ``only`` that one)."""
        askers = [(s, (s.asker, s.owner)) for s in sessions if s.reducer.pending]
        owned = self._owned(sessions)
        # the views that change: whose asker or owner changed (a view says who waits for a human,
        # and which pi showed it has the session), whose liveness did
        moved = {s.key for s, before in askers if (s.asker, s.owner) != before}
        out: list[Transition] = []
        for session in sessions if only is None else [only]:
            changed, trans = session.check(session.key in owned, self._tick, self._read_tick, now)
            if changed:
                moved.add(session.key)
            out += trans
        self._changed |= moved
        self.alive_changed = self.alive_changed or bool(moved)
        return out

    def _owned(self, sessions: Iterable[LocalSession]) -> set[str]:
        """Pair ``sessions`` with the pis of their folders (the last process list's): the keys of
        those a pi has. Each session's ``asker`` and ``owner`` are set on the way (:meth:`_found`)."""
        assert self._procs is not None
        by_folder: dict[str, list[tuple[LocalSession, Wanted]]] = {}
        for session in sessions:
            session.asker = None  # (known again below, from this list, or not at all)
            cwd = norm_folder(session.reducer.cwd)
            procs = self._procs.get(cwd) if cwd else None
            if not procs or not session.reducer.has_header:
                continue
            w = session.wanted()
            if w.updated_at + START_SLACK_S >= min(p.started for p in procs):  # (else no pi can have it)
                by_folder.setdefault(cwd or "", []).append((session, w))
        owned: set[str] = set()
        for folder, items in by_folder.items():
            owners = bind([w for _, w in items], self._procs[folder])
            owned.update(s.key for s, _ in items if s.key in owners.living)
            for s, w in items:
                owner = owners.owners.get(s.key)
                if owner is not None and owner.pid:
                    self._found(s, w, owner)
        return owned

    def _found(self, s: LocalSession, w: Wanted, owner: Proc) -> None:
        """``owner`` has session ``s`` in every reading of the last list: its asker if its terminal
        is in raw mode; its owner for the question it asks, if the list was read after that
        question was seen and the pi showed it has the session (:func:`decisive`)."""
        if owner.interactive:
            s.asker = (owner.pid, owner.started)
        for cid in list(s.reducer.pending)[:1]:
            seen = s.seen.get(cid)
            if seen is not None and seen.tick <= self._read_tick and decisive(owner, w):
                s.owner = (cid, owner.pid, owner.started)

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

    def view(self, key: str) -> SessionView | None:
        """The session's view (``None``: not known, or its header not read)."""
        session = self._sessions.get(key)
        if session is None or not session.reducer.has_header:
            return None
        return session.view(self.liveness)

    def __len__(self) -> int:
        """The sessions whose header was read."""
        return sum(1 for s in self._sessions.values() if s.reducer.has_header)


# ---- remote sessions ----

MAX_SESSIONS = 200  # per host
MAX_QUESTIONS = 20  # per remote session, pending and abandoned


@dataclass(slots=True)
class _Remote:
    """One remote session: its questions and since when the link to its host is down."""

    ref: SessionRef
    pending: dict[str, Question] = field(default_factory=dict)
    abandoned: dict[str, Question] = field(default_factory=dict)
    updated_at: float = 0.0
    offline_since: float | None = None


class RemoteSessions(Changes):
    """All remote sessions, by ``remote_key(host, file)``. Every key whose view may have changed
    is collected until :meth:`take_changed`."""

    def __init__(self, max_sessions: int = MAX_SESSIONS, max_questions: int = MAX_QUESTIONS) -> None:
        self.max_sessions = max_sessions
        self.max_questions = max_questions
        self._by_key: dict[str, _Remote] = {}
        super().__init__()
        self._refused: dict[tuple[str, str], int] = {}  # (host, "sessions" | "questions") → count

    def take_refused(self) -> dict[tuple[str, str], int]:
        """Questions refused since the last call: ``{(host, "sessions"|"questions"): count}``."""
        refused, self._refused = self._refused, {}
        return refused

    def _refuse(self, host: str, why: str) -> list[Transition]:
        self._refused[(host, why)] = self._refused.get((host, why), 0) + 1
        return []

    def __contains__(self, key: object) -> bool:
        return key in self._by_key

    def __len__(self) -> int:
        return len(self._by_key)

    def asked(self, ref: SessionRef, q: Question, now: float, initial: bool) -> list[Transition]:
        """A remote question is pending. One already known (host + file + call id, e.g. re-sent
        as an initial event after a reconnect) raises nothing again; an abandoned one whose pi
        came back is pending again."""
        remote = self._by_key.get(ref.key)
        host = ref.host or ""
        if remote is None:
            if sum(1 for r in self._by_key.values() if r.ref.host == ref.host) >= self.max_sessions:
                return self._refuse(host, "sessions")
            remote = self._by_key[ref.key] = _Remote(ref)
        elif (
            q.tool_call_id not in remote.pending
            and q.tool_call_id not in remote.abandoned
            and len(remote.pending) + len(remote.abandoned) >= self.max_questions
        ):
            return self._refuse(host, "questions")
        self._changed.add(ref.key)
        if ref.name or ref.cwd or ref.id:  # (what the host says of it now)
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

    def ended(
        self, ref: SessionRef, q: Question, now: float, outcome: Outcome | None = None, answer: str | None = None,
        waited_s: float | None = None,
    ) -> list[Transition]:  # fmt: skip
        """A remote question was resolved (``outcome`` given) or abandoned (``outcome`` None)."""
        remote = self._by_key.get(ref.key)
        if remote is None:
            return []
        self._changed.add(ref.key)
        cid = q.tool_call_id
        known = remote.pending.pop(cid, None)
        out: list[Transition] = []
        if known is None:
            if outcome is not None:
                remote.abandoned.pop(cid, None)  # one terminal transition per question
        elif outcome is None:
            remote.abandoned[cid] = known
            out.append(Transition("abandoned", remote.ref, known, now))
        else:
            out.append(resolved(remote.ref, known, now, outcome, answer, waited_s=waited_s))
        self._drop_if_empty(remote)
        return out

    def offline(self, host: str, now: float) -> None:
        """The link to ``host`` is down: its questions stay listed, as offline."""
        for key, remote in self._by_key.items():
            if remote.ref.host == host and remote.offline_since is None:
                remote.offline_since = now
                self._changed.add(key)

    def synced(self, host: str, still: set[tuple[str, str]], now: float) -> list[Transition]:
        """``host`` is back and has re-sent what is pending there (``still``: the keys + call ids,
        as (key, call id)). What it no longer lists ended while the link was down."""
        out: list[Transition] = []
        for key, remote in list(self._by_key.items()):
            if remote.ref.host != host:
                continue
            self._changed.add(key)
            remote.offline_since = None
            gone = [cid for cid in remote.pending if (key, cid) not in still]
            out += [resolved(remote.ref, remote.pending.pop(cid), now, "superseded") for cid in gone]
            remote.abandoned = {cid: q for cid, q in remote.abandoned.items() if (key, cid) in still}
            self._drop_if_empty(remote)
        return out

    def clear_abandoned(self, key: str, tool_call_id: str | None = None) -> bool:
        """The user dismissed an abandoned remote question (or all of a session's)."""
        remote = self._by_key.get(key)
        if remote is None:
            return False
        ids = [tool_call_id] if tool_call_id else list(remote.abandoned)
        removed = any([remote.abandoned.pop(cid, None) is not None for cid in ids])
        self._drop_if_empty(remote)
        return removed

    def view(self, key: str) -> SessionView | None:
        remote = self._by_key.get(key)
        if remote is None:
            return None
        offline = remote.offline_since is not None
        questions = tuple(remote.pending.values())
        state: State = "needs_input" if questions else "stopped"
        pending, abandoned = () if offline else questions, tuple(remote.abandoned.values())
        return SessionView(
            remote.ref, state, pending, abandoned, None, remote.updated_at,
            offline_since=remote.offline_since, offline=questions if offline else (),
        )  # fmt: skip

    def _drop_if_empty(self, remote: _Remote) -> None:
        self._changed.add(remote.ref.key)
        if not remote.pending and not remote.abandoned:
            del self._by_key[remote.ref.key]


# ---- dialogs ----

# Where a dialog comes from: (the extension's socket, the dialog's id).
Source = tuple[str, str]

def startup_key(pid: int) -> str:
    """The board key of a pi that shows a dialog before it has a session file (project trust at
    start-up): its process. No session file path (absolute) or remote key (``@``) starts so."""
    return f"pid:{pid}"


class Dialogs(Changes):
    """The dialogs open right now, by source, each with the session (file) it belongs to. Every
    session whose dialogs changed is collected until :meth:`take_changed`.

    ``ref_of``: the session as the board knows it (its name and id, once its file is read), for
    the transitions; by default the dialog's own."""

    def __init__(self, ref_of: Callable[[SessionRef], SessionRef] = lambda ref: ref) -> None:
        self._open: dict[Source, tuple[SessionRef, Question]] = {}
        super().__init__()
        self._ref_of = ref_of

    def open(self, source: Source, ref: SessionRef, q: Question, now: float, initial: bool = False) -> list[Transition]:
        """A dialog pi shows, from ``source`` = (socket, dialog id), in the session file ``ref.key``
        (one already known changes nothing)."""
        if source in self._open:
            return []
        ref = self._ref_of(ref)
        self._open[source] = (ref, q)
        self._changed.add(ref.key)
        return [Transition("needs_input", ref, q, now, initial=initial)]

    def close(self, source: Source, outcome: Outcome | None, now: float, answer: str | None = None) -> list[Transition]:
        """The dialog closed with ``outcome`` (``answer``: what was chosen or typed), or (``None``)
        its pi went away: abandoned, not listed."""
        found = self._open.pop(source, None)
        if found is None:
            return []
        ref, q = self._ref_of(found[0]), found[1]
        self._changed.add(ref.key)
        if outcome is None:
            return [Transition("abandoned", ref, q, now)]
        return [resolved(ref, q, now, outcome, answer)]

    def __len__(self) -> int:
        return len(self._open)

    def sources(self, socket: str | None = None) -> list[Source]:
        return [src for src in self._open if socket is None or src[0] == socket]

    def of(self, key: str) -> list[tuple[SessionRef, Question]]:
        """The open dialogs of the session file ``key``."""
        if not self._open:
            return []
        return [(ref, q) for ref, q in self._open.values() if ref.key == key]


def with_dialogs(view: SessionView | None, dialogs: Sequence[tuple[SessionRef, Question]]) -> SessionView | None:
    """``view`` with extension dialogs added to its pending questions. A question tool's own
    dialog (same tool call as a pending question) is that question: not added twice. A session
    whose file is not read (yet, ``view`` None): its dialogs still show."""
    if not dialogs:
        return view
    if view is None:
        ref, at = dialogs[0][0], max(q.asked_at for _, q in dialogs)
        return SessionView(ref, "needs_input", tuple(q for _, q in dialogs), (), None, at)
    asked = {q.tool_call_id for q in view.pending}
    extra = tuple(q for _, q in dialogs if q.tool_call_id not in asked)
    return replace(view, pending=view.pending + extra, state="needs_input") if extra else view


def add_dialogs(snapshot: Snapshot, dialogs: Iterable[tuple[SessionRef, Question]]) -> Snapshot:
    """A snapshot with the dialogs pi shows right now added (for one-shot readers: ``status``)."""
    by_key: dict[str, list[tuple[SessionRef, Question]]] = {}
    for ref, q in dialogs:
        by_key.setdefault(ref.key, []).append((ref, q))
    views = [with_dialogs(v, by_key.pop(v.ref.key, [])) for v in snapshot.sessions]
    views += [with_dialogs(None, listed) for listed in by_key.values()]
    return replace(snapshot, sessions=tuple(v for v in views if v is not None))


# ---- session views ----

CHUNK = 64


class SessionViews:
    """Every session's view in a dict's order, and the chunks of it the last snapshot shares: a
    chunk's keys are a run of the dict's, so the chunks in order are the dict in order."""

    def __init__(self) -> None:
        self._views: dict[str, SessionView] = {}
        self._chunk_of: dict[str, int] = {}
        self._keys: list[list[str]] = []  # the keys of each chunk, in order
        self._chunks: list[tuple[SessionView, ...]] = []  # their views, as the last snapshot shares them
        self._dirty: set[int] = set()  # the chunks changed since
        self._last: Views | None = None  # the last snapshot

    def __len__(self) -> int:
        return len(self._views)

    def set(self, key: str, view: SessionView) -> None:
        c = self._chunk_of.get(key)
        if c is None:  # a new key: at the end
            if not self._keys or len(self._keys[-1]) >= CHUNK:
                self._keys.append([])
                self._chunks.append(())
            c = self._chunk_of[key] = len(self._keys) - 1
            self._keys[c].append(key)
        self._views[key] = view
        self._dirty.add(c)

    def remove(self, key: str) -> None:
        c = self._chunk_of.pop(key, None)
        if c is None:
            return
        del self._views[key]
        self._keys[c].remove(key)
        self._dirty.add(c)
        if not self._keys[c]:  # chunks emptied by removals are dropped once they are many
            empty = sum(1 for ks in self._keys if not ks)
            if empty > 8 and empty * 2 > len(self._keys):
                keys = list(self._views)
                self._keys = [keys[i : i + CHUNK] for i in range(0, len(keys), CHUNK)]
                self._chunk_of = {k: c for c, ks in enumerate(self._keys) for k in ks}
                self._chunks = [()] * len(self._keys)
                self._dirty = set(range(len(self._keys)))

    def snapshot(self) -> Views:
        """Every view, in order (immutable; shares its unchanged chunks with the last one)."""
        if self._dirty or self._last is None:
            for c in self._dirty:
                self._chunks[c] = tuple([self._views[k] for k in self._keys[c]])
            self._dirty.clear()
            self._last = Views(self._chunks, len(self._views))
        return self._last
