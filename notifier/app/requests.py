"""The control channel's handler: a request is parsed once into a :mod:`~notifier.core.commands`
``Command`` (a malformed one is answered ``{"ok": false, "error": …}``), carried out by the app,
and answered. Also the replies to the questions a client may ask (health, status)."""

from __future__ import annotations

import os
import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from notifier.app.window_process import has_display
from notifier.config import Config
from notifier.control.connection import Connection
from notifier.core import commands
from notifier.core.bar import summary
from notifier.core.commands import Command, Status
from notifier.core.formats import status_obj
from notifier.core.quiet import quiet_hours_note, quiet_hours_obj, tomorrow_morning
from notifier.core.text import clean
from notifier.ui.state import UiState

if TYPE_CHECKING:
    from notifier.app.runtime import App

Reply = dict[str, Any]
Execute = Callable[[Command, Connection], "Reply | None"]


def handle(execute: Execute, request: dict[str, Any], conn: Connection) -> Reply | None:
    """One request (on an ipc worker thread) → the reply (None: ``conn`` is kept, a subscription)."""
    now = time.time()
    try:
        command = commands.parse(request, now, morning=tomorrow_morning(now))
    except commands.CommandError as exc:
        name = request.get("cmd")
        detail = f" {clean(name, 40)}" if str(exc) == "unknown command" and isinstance(name, str) else ""
        return {"ok": False, "error": clean(exc, 200) + detail}
    return execute(command, conn)


def health_reply(app: App) -> Reply:
    engine = app.engine
    return {
        "ok": True,
        "pid": os.getpid(),
        "ready": engine is not None and engine.ready_event.is_set(),
        "engine_restarts": engine.restarts if engine is not None else 0,
        "problems": app.health.report(),
        "display": has_display(),
        "tray": app.tray is not None,
        "store": "persistent" if app.store.persistent else "in memory",
    }


def status_reply(config: Config, command: Status, state: UiState) -> Reply:
    """The status, if the app watches the folders, with the settings, the client asks about
    (``{"ok": false}`` otherwise: the client reads the sessions itself)."""
    liveness = command.liveness or config["liveness"]
    same = sorted(command.roots) == sorted(config["sessions_dirs"])
    same = same and liveness == config["liveness"]
    same = same and sorted(command.question_tools) == sorted(config["question_tools"])
    if not same:
        return {"ok": False}
    now = time.time()
    if command.brief:  # a status bar, every second: the summary only, not every session
        quiet_now = quiet_hours_note(config["quiet_hours"], now)
        return {"ok": True, "summary": summary(state.snapshot, now, state.snoozed_until(now), quiet_now)}
    quiet = quiet_hours_obj(config["quiet_hours"], now)  # (the app follows its config file)
    return {"ok": True, "status": {**status_obj(state.snapshot), **quiet}}
