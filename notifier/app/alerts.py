"""The app's notifier: the desktop notifications, whose actions (show, snooze, go to, answer) are
commands for the app. It keeps its own worker running (``sinks/notify/sink.py``); the app only
builds it, once, among the engine's sinks."""

from __future__ import annotations

from collections.abc import Callable

from notifier.app.choices import PreferencesOwner
from notifier.config import Config
from notifier.core.commands import Command
from notifier.outputs.desktop import AlertSink
from notifier.store import Store
from notifier.system.supervisor import FailureLog


def notifier(
    config: Config,
    store: Store,
    preferences: PreferencesOwner,
    health: FailureLog,
    execute: Callable[[Command], object],
    instead: str | None = None,
) -> AlertSink:
    """The notifier, started, following the user's snoozes and mutes; what the user asks of a
    notification is a command ``execute`` carries out. ``instead``: what shows questions while
    notifications cannot (None: the tray)."""
    alerts = AlertSink(config, store, execute=execute, instead=instead, health=health)
    preferences.listen(alerts.set_preferences)  # handed the current value before start
    alerts.start()
    return alerts
