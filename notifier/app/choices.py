"""The one owner of the user's choices (snoozes and mutes).

The current :class:`~notifier.core.preferences.Preferences` value lives here and nowhere else.
It changes only under this owner's lock (commands arrive from the tray, the control channel and
the notifier's worker); each change is written to the store and the new immutable value handed
to every listener (the notifier's planner, the tray and window redraw). Restored from the store
at start."""

from __future__ import annotations

import os
import threading
from collections.abc import Callable

from notifier.core.commands import Mute, Snooze
from notifier.core.preferences import Preferences
from notifier.store import Store
from notifier.system import paths

Listener = Callable[[Preferences], None]


def open_store(state_dir: str | None = None) -> Store:
    """The state store: in ``state_dir`` if given, else in the user's state folder."""
    if state_dir is None:
        state_dir = paths.state_dir()
    return Store(os.path.join(state_dir, "state.sqlite3"))


class PreferencesOwner:
    def __init__(self, store: Store, now: float) -> None:
        self._store = store
        self._lock = threading.Lock()
        self._value = store.preferences(now)
        self._listeners: list[Listener] = []

    @property
    def value(self) -> Preferences:
        """The current choices (immutable: read it as often as you like)."""
        return self._value

    def listen(self, listener: Listener, current: bool = True) -> None:
        """Call ``listener`` with every new value and (``current``) with the current one now;
        under the lock, so none is missed or comes out of order: keep it short."""
        with self._lock:
            self._listeners.append(listener)
            if current:
                listener(self._value)

    def apply(self, command: Snooze | Mute, now: float) -> Preferences:
        """Carry out a snooze or mute: the new value, persisted, handed to every listener."""
        with self._lock:
            if isinstance(command, Snooze):
                value = self._value.snoozed(command.until, now, command.session, command.project)
                if command.session is None and command.project is None and command.until <= now:
                    self._store.clear_snoozes()  # resume: every snooze is lifted
                else:
                    self._store.snooze(command.until, command.session, command.project)
            else:
                value = self._value.with_mute(command.project, command.on)
                self._store.mute(command.project, command.on)
            self._value = value
            for listener in self._listeners:
                listener(value)
            return value
