"""Reminders of a question that waits (pure): when each is due and how many it has had.

Each reminder comes at its time after the question was *asked* (``after_s``), so a restart in
between neither delays nor repeats one: the counts sent before it are handed in (``before``), and
every count that changes is collected for the caller to persist (:meth:`Reminders.drain`).
Reminders whose time passed unsent (the app not running, the machine asleep, the question first
seen at start-up, or muted, snoozed, in quiet hours) count as sent: only the latest comes, once.
The last one is critical. What a reminder replaces on screen is the planner's
(:mod:`notifier.core.planner`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence


class Reminders:
    """The schedule and the counts to persist, by question (session file, toolCallId)."""

    def __init__(self, after_s: Sequence[float], before: Mapping[tuple[str, str], int]) -> None:
        self.after_s = tuple(after_s)
        self._before = before
        self._changed: dict[tuple[str, str], int] = {}

    def passed(self, key: tuple[str, str], waited: float) -> int:
        """The reminders whose time is already past when a question that has waited ``waited``
        is first shown (counted as sent)."""
        passed = sum(1 for after in self.after_s if waited >= after)
        if passed:
            self._changed[key] = passed
        return passed

    def before(self, key: tuple[str, str]) -> int:
        """The reminders a question notified before a restart had then."""
        return self._before.get(key, 0)

    def due(self, key: tuple[str, str], sent: int, waited: float) -> int | None:
        """The count once the reminder due now is sent, for a question that has waited ``waited``
        and had ``sent``; ``None``: none is due."""
        after = self.after_s
        if sent >= len(after) or waited < after[sent]:
            return None
        while sent < len(after) and waited >= after[sent]:
            sent += 1  # skip reminders missed while asleep or silenced
        self._changed[key] = sent
        return sent

    def last(self, sent: int) -> bool:
        """Whether the reminder that made the count ``sent`` is the last one (critical)."""
        return sent >= len(self.after_s)

    def next_at(self, since: float, sent: int) -> float | None:
        """When the next reminder of a question asked at ``since`` is due (``None``: no more)."""
        return since + self.after_s[sent] if sent < len(self.after_s) else None

    def drain(self) -> dict[tuple[str, str], int]:
        """Counts changed since the last call, for the caller to persist (so a restart neither
        repeats a reminder nor loses the next one)."""
        out, self._changed = self._changed, {}
        return out
