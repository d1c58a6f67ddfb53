"""When a session file's last entries decide its state (pure): the start-up read replays only
those, not the whole file.

Why this is exact (the reducer says which events clear and which set the base, beside
:meth:`notifier.core.reducer.SessionReducer.apply`):

- ``pending``, ``running`` and ``current_tool`` are emptied by every *clearing* event (``Input``,
  ``Supersede``); only the entries from the last one on decide them.
- ``base`` is the value set by the last *base-setting* event (everything but ``Header``,
  ``Renamed`` and a ``Supersede`` without a state).

So once the last entries of a file hold a clearing event and a base-setting event, replaying
them oldest first through a fresh reducer gives the state of replaying the whole file.
``name`` and ``updated_at`` come from the entries read (the engine looks a name up further back
for sessions that ask something). tests/hostile/test_scan.py checks this against the reducer.
"""

from __future__ import annotations

from notifier.core.reducer import Event, Renamed, SessionReducer, clears, sets_base


class Suffix:
    """The events of a file's last entries, fed newest entry first (:meth:`add`)."""

    def __init__(self) -> None:
        self._entries: list[list[Event]] = []  # newest first
        self.cleared = False
        self.based = False
        self.renamed = False  # a session_info was read: the name is known, none to look up

    def __len__(self) -> int:
        return len(self._entries)

    @property
    def settled(self) -> bool:
        """Older entries can no longer change the state a replay of these gives."""
        return self.cleared and self.based

    def add(self, events: list[Event]) -> None:
        """One entry's events (in file order), older than those added before."""
        if not events:
            return
        self._entries.append(events)
        for event in events:
            self.renamed = self.renamed or type(event) is Renamed
            self.cleared = self.cleared or clears(event)
            self.based = self.based or sets_base(event)

    def events(self) -> list[Event]:
        """The events added, oldest first."""
        return [event for entry in reversed(self._entries) for event in entry]

    def replay(self, head: list[Event]) -> SessionReducer:
        """A reducer fed ``head`` (the header line's events), then the events added."""
        reducer = SessionReducer()
        for event in head + self.events():
            reducer.apply(event)
        return reducer
