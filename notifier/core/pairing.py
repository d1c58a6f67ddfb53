"""The last process list, paired with this machine's sessions (pure): which pis run in each
folder, which session each has (:func:`notifier.core.owners.bind`: one session each, by the
evidence the list carries, never by the folder alone) and whether that pi waits for a human.

A list says at which feeding count its read began (:meth:`LocalSessions.mark
<notifier.core.local_sessions.LocalSessions.mark>`): an older read overtaken by a newer one
knows less, and is not taken.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from notifier.core.local_session import LocalSession
from notifier.core.owners import START_SLACK_S, Proc, Wanted, bind, norm_folder


class Pairing:
    def __init__(self) -> None:
        self._procs: dict[str, list[Proc]] | None = None  # the last process list, by folder
        self.read_tick = -1  # the feeding count at which it began to be read
        self._askers: dict[str, tuple[int, float]] = {}  # session → its pi, where that waits for a human

    @property
    def known(self) -> bool:
        """Whether a process list was taken yet."""
        return self._procs is not None

    def take(self, procs: Sequence[Proc], read_tick: int) -> bool:
        """A fresh process list, read from feeding count ``read_tick``; False (nothing changes)
        if a newer read was taken already."""
        if read_tick < self.read_tick:
            return False
        self.read_tick = read_tick
        self._procs = {}
        for p in procs:
            folder = norm_folder(p.cwd)
            if folder:
                self._procs.setdefault(folder, []).append(p)
        return True

    def runs_in(self, folder: str | None) -> bool:
        """Whether the last list has pis in ``folder``."""
        return bool(folder) and self._procs is not None and folder in self._procs

    def asker(self, key: str) -> tuple[int, float] | None:
        """The pi (pid, start time) that has session ``key`` and waits for a human, as last seen
        (see :attr:`Transition.asker <notifier.core.model.Transition.asker>`)."""
        return self._askers.get(key)

    def owned(self, sessions: Iterable[LocalSession]) -> set[str]:
        """Pair ``sessions`` with the pis of their folders: the keys of those a pi has."""
        assert self._procs is not None
        by_folder: dict[str, list[tuple[LocalSession, Wanted]]] = {}
        for session in sessions:
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
            owned.update(s.key for s, _ in items if owners.alive(s.key))
            for s, _ in items:
                owner = owners.owner(s.key)
                if owner is not None and owner.interactive and owner.pid:
                    self._askers[s.key] = (owner.pid, owner.started)
                else:
                    self._askers.pop(s.key, None)
        return owned
