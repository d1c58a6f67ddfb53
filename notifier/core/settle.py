"""Settle a session's state from its newest entries (pure): the start-up scan reads a file
backwards and stops as soon as older entries can no longer change what a full read would give.

Why this is exact (see :class:`notifier.core.reducer.SessionReducer`):

- ``pending``, ``running`` and ``current_tool`` are emptied by every *superseding* event
  (``Input``, ``Supersede``); only the entries from the last one on decide them.
- ``base`` is the value set by the last *base-setting* event (everything but ``Header``,
  ``Renamed`` and a ``Supersede`` without a state).

So once the entries collected (newest first) hold a superseding event and a base-setting event,
replaying them oldest first through a fresh reducer gives the same state as replaying the whole
file. ``name`` and ``updated_at`` come from the entries read (the engine looks a name up further
back for sessions that ask something).
"""

from __future__ import annotations

from collections.abc import Iterable

from notifier.core.reducer import (
    Event,
    Header,
    Input,
    Renamed,
    SessionReducer,
    Supersede,
)

# Collected events beyond this mean a pathological tail (e.g. a million tool results and no
# message before them): the caller then replays the whole file forward instead, in bounded memory.
EVENT_BUDGET = 50_000


def sets_base(event: Event) -> bool:
    if type(event) is Supersede:
        return event.state is not None
    return type(event) is not Header and type(event) is not Renamed


def settles_alone(events: list[Event]) -> bool:
    """True if one entry's events settle the state by themselves: what :class:`Settler` says
    after feeding only them (the common end of a session: an assistant message that ends the
    turn or asks something, a user message)."""
    superseded = based = False
    for event in events:
        if type(event) is Input or type(event) is Supersede:
            superseded = True
        if not based and sets_base(event):
            based = True
    return superseded and based


class Settler:
    """Feed each entry's events newest entry first; :attr:`settled` says when to stop."""

    def __init__(self, budget: int = EVENT_BUDGET) -> None:
        self._entries: list[list[Event]] = []  # newest first
        self._count = 0
        self.budget = budget
        self.superseded = False
        self.based = False
        self.renamed = False  # a session_info was read: the name is known, none to look up

    @property
    def settled(self) -> bool:
        return self.superseded and self.based

    @property
    def over_budget(self) -> bool:
        return self._count > self.budget

    def feed(self, events: list[Event]) -> bool:
        """One entry's events (in file order). True once older entries cannot matter."""
        if not events:
            return self.settled
        self._entries.append(events)
        self._count += len(events)
        for event in events:
            if isinstance(event, Renamed):
                self.renamed = True
            if isinstance(event, (Input, Supersede)):
                self.superseded = True
            if not self.based and sets_base(event):
                self.based = True
        return self.settled

    def events(self) -> Iterable[Event]:
        """The collected events, oldest first."""
        for entry in reversed(self._entries):
            yield from entry

    def replay(self, head: Iterable[Event] = ()) -> SessionReducer:
        """A reducer fed ``head`` (the header line's events), then the collected events."""
        reducer = SessionReducer()
        for event in head:
            reducer.apply(event)
        for event in self.events():
            reducer.apply(event)
        return reducer
