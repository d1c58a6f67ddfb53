"""What the user chose to hear: snoozes (all, a session, a project) and muted projects.

One immutable value. The app owns the current one (``app/runtime.py``, changed on one thread
and persisted in the store); the planner, the tray and the window only ever read the value they
were handed. Pure: times are absolute and passed in."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from types import MappingProxyType


def _frozen(values: Mapping[str, float] | None = None) -> Mapping[str, float]:
    return MappingProxyType(dict(values or {}))


@dataclass(frozen=True)
class Preferences:
    snooze_all_until: float = 0.0
    sessions: Mapping[str, float] = field(default_factory=_frozen)  # session key → until
    projects: Mapping[str, float] = field(default_factory=_frozen)  # project name → until
    muted: frozenset[str] = frozenset()  # project names (see core.text.project_name)

    def silenced_until(self, session: str, project: str) -> float:
        """Until when a question of this session and project raises nothing (0: not silenced)."""
        return max(self.snooze_all_until, self.sessions.get(session, 0.0), self.projects.get(project, 0.0))

    def is_muted(self, project: str) -> bool:
        return project in self.muted

    def snoozed(self, until: float, now: float, session: str | None = None, project: str | None = None) -> Preferences:
        """Snooze one session, one project, or (both None) everything until ``until``. Snoozing
        everything with ``until`` ≤ ``now`` resumes: every snooze is lifted."""
        if session is not None:
            return replace(self, sessions=_frozen({**self.sessions, session: until}))
        if project is not None:
            return replace(self, projects=_frozen({**self.projects, project: until}))
        if until <= now:
            return replace(self, snooze_all_until=0.0, sessions=_frozen(), projects=_frozen())
        return replace(self, snooze_all_until=until)

    def with_mute(self, project: str, on: bool) -> Preferences:
        muted = self.muted | {project} if on else self.muted - {project}
        return replace(self, muted=frozenset(muted))

    def shifted(self, offset: float) -> Preferences:
        """The same choices with every snooze's end moved by ``offset`` (from the wall clock they
        are kept in to a monotonic clock: ``monotonic now - wall now``, taken once)."""
        return Preferences(
            self.snooze_all_until + offset if self.snooze_all_until else 0.0,
            _frozen({k: v + offset for k, v in self.sessions.items()}),
            _frozen({k: v + offset for k, v in self.projects.items()}),
            self.muted,
        )

    def expired(self, now: float) -> Preferences:
        """The same choices without the snoozes that have ended."""
        return Preferences(
            self.snooze_all_until if self.snooze_all_until > now else 0.0,
            _frozen({k: v for k, v in self.sessions.items() if v > now}),
            _frozen({k: v for k, v in self.projects.items() if v > now}),
            self.muted,
        )
