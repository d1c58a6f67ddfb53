"""The UI thread: the tray and the window are drawn from here, never from the engine thread.

It is one of the engine's sinks: a new snapshot (or a preference, the health, the config) only
marks the UI as changed; this thread then builds one :class:`~notifier.ui.state.UiState`, draws the
tray and pushes to the window (coalesced). It also wakes by itself when the tray's ages or quiet
hours next read differently. A failure is the supervisor's: said once, drawn again at the next
change."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Sequence
from typing import Any

from notifier.app.window_process import WindowProcess
from notifier.config import Config
from notifier.core.model import Snapshot, Transition, TurnChange
from notifier.core.quiet import next_quiet_change, parse_quiet_hours
from notifier.engine import ReadyInfo
from notifier.system.supervisor import FailureLog, Supervisor
from notifier.ui.menu import next_redraw
from notifier.ui.state import UiState


class Redraw:
    def __init__(
        self,
        state: Callable[[], UiState],
        window: WindowProcess,
        tray: Callable[[], Any],
        config: Config,
        health: FailureLog,
        stop: threading.Event,
    ) -> None:
        """``tray()``: the icon now (None: none); ``config``: its quiet hours follow the file."""
        self.state = state
        self.window = window
        self.tray = tray
        self.config = config
        self._stop = stop
        self._dirty = threading.Event()
        run = Supervisor("tray and window", stop, health).run
        self._thread = threading.Thread(target=run, args=(self._loop,), name="pi-notifier-ui", daemon=True)

    def start(self) -> None:
        self._thread.start()

    def changed(self) -> None:
        """Something the tray or window shows changed (any thread): drawn soon, never waited for."""
        self._dirty.set()

    # The engine's sink protocol: each new snapshot is something changed.
    def ready(self, info: ReadyInfo, snapshot: Snapshot) -> None:
        self._dirty.set()

    def transitions(self, items: Sequence[Transition], snapshot: Snapshot) -> None:
        self._dirty.set()

    def turns(self, items: Sequence[TurnChange]) -> None:
        pass  # (finished turns are not this output's business)

    def _loop(self) -> None:
        wake_in: float | None = None  # until the tray next reads differently by itself (an age)
        while True:
            changed = self._dirty.wait(wake_in)  # (a delay: a wall clock set back changes no wait)
            self._dirty.clear()
            if self._stop.is_set():
                return
            wake_in = self.draw(window=changed)

    def draw(self, window: bool = True) -> float | None:
        """Draw the tray (and, ``window``: push to the window); returns how long until the tray's
        ages or quiet hours next read differently (None: not before the next change)."""
        state = self.state()
        if window:
            self.window.push(state.snapshot)
        tray = self.tray()
        if tray is None:
            return None
        quiet = self.config["quiet_hours"]
        tray.update(state, quiet)
        now = time.time()
        times = [next_redraw(state, now), next_quiet_change(parse_quiet_hours(quiet), now)]
        due = min((t for t in times if t is not None), default=None)
        return None if due is None else max(0.0, due - now)
