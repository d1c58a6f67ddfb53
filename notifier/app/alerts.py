"""The notifier's supervision: the desktop notifications work on a thread of their own; if that
thread dies, a new notifier is started (bounded back-off) and handed what is pending now (already
notified questions stay quiet). Its actions (show, snooze, go to, answer) are commands for the app.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable
from typing import TYPE_CHECKING

from notifier.app.choices import PreferencesOwner
from notifier.config.load import Config
from notifier.core.commands import Answer, Command, Focus, Goto, Show, Snooze
from notifier.core.model import Snapshot, Transition
from notifier.core.text import clean
from notifier.engine.loop import Engine
from notifier.engine.supervise import Health as HealthLog
from notifier.state.store import Store

if TYPE_CHECKING:
    from notifier.sinks.notify.sink import AlertSink

log = logging.getLogger(__name__)


class AlertsKeeper:
    """Owns the current notifier (``current``): starts it, and starts it again when it died."""

    def __init__(
        self,
        config: Config,
        store: Store,
        preferences: PreferencesOwner,
        health: HealthLog,
        execute: Callable[[Command], object],
        stop_event: threading.Event,
    ) -> None:
        self.config = config
        self.store = store
        self.preferences = preferences
        self.health = health
        self.execute = execute
        self.stop_event = stop_event
        self.current: AlertSink | None = None
        self.instead: str | None = None  # what shows questions while notifications cannot (None: the tray)
        self.restarts = 0
        self.handed_over = False  # another process notifies now (hand_over)
        self._next = 0.0  # monotonic: the earliest the notifier may be restarted again

    def start(self) -> AlertSink:
        """A new notifier, started and made ``current``."""
        from notifier.sinks.notify.sink import AlertSink

        def show(file: str | None, call: str | None) -> None:
            self.execute(Show(Focus(file, call) if file and call else None))

        def snooze(session: str | None, until: float) -> None:  # 'Snooze 15 min' on a bubble
            self.execute(Snooze(until, session))

        def goto(session: str, call: str | None) -> None:  # the default action, 'Go to session'
            self.execute(Goto(session, call))

        def answer(session: str, call: str, choice: str) -> None:  # an option's action
            self.execute(Answer(session, call, (choice,)))

        def reply(session: str, call: str, text: str) -> None:  # typed into the notification
            self.execute(Answer(session, call, text=text))

        alerts = AlertSink(
            self.config,
            self.store,
            on_show=show,
            on_snooze=snooze,
            on_goto=goto,
            on_answer=answer,
            on_reply=reply,
            instead=self.instead,
        )
        self.preferences.listen(alerts.set_preferences)  # handed the current value before start
        alerts.start()
        self.current = alerts
        return alerts

    def hand_over(self) -> None:
        """Stop notifying for good (another process notifies these questions now): what is on
        screen stays there, recorded in the store, for that one to adopt; nothing is restarted."""
        self.handed_over = True  # (set before the thread ends: supervise() sees it then)
        alerts, self.current = self.current, None
        if alerts is not None:
            self.preferences.unlisten(alerts.set_preferences)
            alerts.stop(close=False)

    def supervise(self, snapshot: Snapshot, engine: Engine | None) -> None:
        """If the notifier's thread died, start a new notifier (bounded back-off), put it in the
        old one's place among the engine's sinks and hand it what is pending now."""
        alerts = self.current
        thread = getattr(alerts, "_thread", None)
        if alerts is None or thread is None or thread.is_alive() or self.stop_event.is_set() or self.handed_over:
            return
        if not thread.ident:
            return  # not started yet
        mono = time.monotonic()
        if mono < self._next:
            return
        self.restarts += 1
        delay = min(1.0 * 2 ** (self.restarts - 1), 60.0)
        self._next = mono + delay
        first = self.health.failed(
            "notifications", RuntimeError("the notifier stopped"), f"restarted {self.restarts}×"
        )
        (log.error if first else log.warning)("the notifier stopped; starting it again")
        try:
            fresh = self.start()
        except Exception as exc:
            log.warning("cannot start the notifier again (%s)", clean(exc, 200))
            return
        self.preferences.unlisten(alerts.set_preferences)
        if engine is not None:
            engine.sinks[:] = [fresh if s is alerts else s for s in engine.sinks]
        pending = [
            Transition("needs_input", view.ref, q, snapshot.taken_at, initial=True)
            for view, q in snapshot.pending
        ]
        if pending:
            fresh.transitions(pending, snapshot)
        self.health.recovered("notifications")
