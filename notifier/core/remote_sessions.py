"""Sessions on other machines (pure), known only from their host's ``run --json`` stream.

Liveness is the remote host's business: a remote question is pending until its host says it was
resolved or abandoned. When the link to a host goes down its questions stay listed, as offline;
when it comes back the host re-sends what is still pending there, and what it no longer lists
ended while the link was down.

Each host is bounded: at most ``max_sessions`` sessions and ``max_questions`` questions (pending
and abandoned) per session; a question beyond them is refused (counted in :meth:`take_refused`
for the caller to say once), so a host that floods cannot make the board grow without end.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from notifier.core.model import Outcome, Question, SessionRef, SessionView, State, Transition

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


class RemoteSessions:
    """All remote sessions, by ``remote_key(host, file)``. Every key whose view may have changed
    is collected until :meth:`take_changed`."""

    def __init__(self, max_sessions: int = MAX_SESSIONS, max_questions: int = MAX_QUESTIONS) -> None:
        self.max_sessions = max_sessions
        self.max_questions = max_questions
        self._by_key: dict[str, _Remote] = {}
        self._changed: set[str] = set()
        self._per_host: dict[str, int] = {}  # sessions of each host
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

    def take_changed(self) -> set[str]:
        """The keys whose view may have changed since the last call."""
        changed, self._changed = self._changed, set()
        return changed

    def asked(self, ref: SessionRef, q: Question, now: float, initial: bool) -> list[Transition]:
        """A remote question is pending. One already known (host + file + call id, e.g. re-sent
        as an initial event after a reconnect) raises nothing again; an abandoned one whose pi
        came back is pending again."""
        remote = self._by_key.get(ref.key)
        host = ref.host or ""
        if remote is None:
            if self._per_host.get(host, 0) >= self.max_sessions:
                return self._refuse(host, "sessions")
            remote = self._by_key[ref.key] = _Remote(ref)
            self._per_host[host] = self._per_host.get(host, 0) + 1
        elif (
            q.tool_call_id not in remote.pending
            and q.tool_call_id not in remote.abandoned
            and len(remote.pending) + len(remote.abandoned) >= self.max_questions
        ):
            return self._refuse(host, "questions")
        self._changed.add(ref.key)
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

    def ended(
        self,
        ref: SessionRef,
        q: Question,
        now: float,
        outcome: Outcome | None = None,
        answer: str | None = None,
        waited_s: float | None = None,
    ) -> list[Transition]:
        """A remote question was resolved (``outcome`` given) or abandoned (``outcome`` None)."""
        remote = self._by_key.get(ref.key)
        if remote is None:
            return []
        self._changed.add(ref.key)
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
            for cid, q in list(remote.pending.items()):
                if (key, cid) not in still:
                    del remote.pending[cid]
                    waited = max(0.0, now - q.asked_at)
                    out.append(Transition("resolved", remote.ref, q, now, outcome="superseded", waited_s=waited))
            for cid in [c for c in remote.abandoned if (key, c) not in still]:
                del remote.abandoned[cid]
            self._drop_if_empty(remote)
        return out

    def offline_since(self, host: str) -> float | None:
        return next(
            (r.offline_since for r in self._by_key.values() if r.ref.host == host and r.offline_since),
            None,
        )

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

    def _drop_if_empty(self, remote: _Remote) -> None:
        self._changed.add(remote.ref.key)
        if not remote.pending and not remote.abandoned:
            del self._by_key[remote.ref.key]
            host = remote.ref.host or ""
            left = self._per_host.get(host, 1) - 1
            if left > 0:
                self._per_host[host] = left
            else:
                self._per_host.pop(host, None)
