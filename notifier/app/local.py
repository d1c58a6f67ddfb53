"""The window's source when no app runs (`pi-notifier show`): an engine of its own (following the
companion extension's dialogs too, as the app does); its snoozes and mutes go straight to the store
(where the app finds them when it starts). Also :func:`clear_abandoned`, which the app uses too."""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from typing import Any

from notifier.actions.answer import carry_out
from notifier.app import choices
from notifier.app.dialog_feed import DialogFeed
from notifier.config import Config
from notifier.core.commands import Answer, Clear, Command, Goto, Mute, Snooze
from notifier.core.model import Snapshot, Transition, TurnChange
from notifier.engine import Engine, ReadyInfo
from notifier.sessions import engine_options
from notifier.window.view import window_obj


def clear_abandoned(engine: Engine, command: Clear) -> None:
    """Forget abandoned questions (one, a session's, or all), on the engine thread."""

    def do() -> list[Transition]:  # (the engine's last snapshot: a new one here would be a change of its own)
        keys = [command.session] if command.session else [v.ref.key for v in engine.snapshot.sessions if v.abandoned]
        for key in keys:
            engine.board.clear_abandoned(key, command.call)
        return []  # (no transition: the next snapshot no longer lists them)

    engine.call(do)


class LocalSource:
    def __init__(self, config: Config) -> None:
        self.config = config
        self.engine: Engine | None = None
        self.dialogs: DialogFeed | None = None  # the companion extension's dialogs, if any
        self._push: Callable[[dict[str, Any]], None] | None = None

    def start(self, push: Callable[[dict[str, Any]], None]) -> None:
        self._push = push
        self.engine = Engine(engine_options(self.config), [self])
        self.engine.start()
        self.dialogs = DialogFeed.attach(self.engine)

    def ready(self, info: ReadyInfo, snapshot: Snapshot) -> None:
        self._send(snapshot)

    def transitions(self, items: Sequence[Transition], snapshot: Snapshot) -> None:
        self._send(snapshot)

    def turns(self, items: Sequence[TurnChange]) -> None:
        pass  # (finished turns are not this output's business)

    def _send(self, snapshot: Snapshot) -> None:
        if self._push is not None:
            self._push({"window": window_obj(snapshot)})

    def command(self, command: Command) -> None:
        engine = self.engine
        if engine is None:
            return
        if isinstance(command, Clear):
            clear_abandoned(engine, command)
        elif isinstance(command, (Snooze, Mute)):
            store = choices.open_store()
            try:
                choices.PreferencesOwner(store, time.time()).apply(command, time.time())
            finally:
                store.close()

    def ask(self, command: Command) -> dict[str, Any] | None:
        """A Goto or Answer from the window, carried out here as the CLI would (no app runs)."""
        engine = self.engine
        if engine is None or not isinstance(command, (Goto, Answer)):
            return None

        code, said = carry_out(self.config, engine.snapshot, command)
        return {"ok": code == 0, "code": code, "said": said}

    def close(self) -> None:
        if self.dialogs is not None:
            self.dialogs.stop()
            self.dialogs = None
        if self.engine is not None:
            self.engine.stop()
