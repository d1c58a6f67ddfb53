"""The app's notifier: the desktop notifications, whose actions (show, snooze, go to, answer) are
commands for the app. It keeps its own worker running (``sinks/notify/sink.py``); the app only
builds it, once, among the engine's sinks."""

from __future__ import annotations

from collections.abc import Callable

from notifier.app.choices import PreferencesOwner
from notifier.config.load import Config
from notifier.core.commands import Answer, Command, Focus, Goto, Show, Snooze
from notifier.sinks.notify.sink import AlertSink
from notifier.state.store import Store
from notifier.system.supervisor import FailureLog


def notifier(
    config: Config,
    store: Store,
    preferences: PreferencesOwner,
    health: FailureLog,
    execute: Callable[[Command], object],
    instead: str | None = None,
) -> AlertSink:
    """The notifier, started, following the user's snoozes and mutes. ``instead``: what shows
    questions while notifications cannot (None: the tray)."""

    def show(file: str | None, call: str | None) -> None:
        execute(Show(Focus(file, call) if file and call else None))

    def snooze(session: str | None, until: float) -> None:  # 'Snooze 15 min' on a bubble
        execute(Snooze(until, session))

    def goto(session: str, call: str | None) -> None:  # the default action, 'Go to session'
        execute(Goto(session, call))

    def answer(session: str, call: str, choice: str) -> None:  # an option's action
        execute(Answer(session, call, (choice,)))

    def reply(session: str, call: str, text: str) -> None:  # typed into the notification
        execute(Answer(session, call, text=text))

    alerts = AlertSink(
        config,
        store,
        on_show=show,
        on_snooze=snooze,
        on_goto=goto,
        on_answer=answer,
        on_reply=reply,
        instead=instead,
        health=health,
    )
    preferences.listen(alerts.set_preferences)  # handed the current value before start
    alerts.start()
    return alerts
