"""What the tray and the window show: the engine's snapshot as it made it, the user's choices
(snoozes, mutes) and what failed and was recovered from. Built by the app for each redraw; the
snapshot the sinks get is never changed for the UI."""

from __future__ import annotations

from dataclasses import dataclass, field

from notifier.core.model import Snapshot
from notifier.core.planner import Preferences


@dataclass(frozen=True, slots=True)
class UiState:
    snapshot: Snapshot = field(default_factory=Snapshot)
    preferences: Preferences = field(default_factory=Preferences)
    health: tuple[str, ...] = ()  # one line per part that failed (``FailureLog.lines``)

    def snoozed_until(self, now: float) -> float | None:
        """When the snooze of everything ends, while it lasts (None: not snoozed)."""
        until = self.preferences.snooze_all_until
        return until if until > now else None
