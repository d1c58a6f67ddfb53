"""A headless run that notifies (``run --no-tray``), beside the app and other headless runs of the
same folders: one of them notifies each question (:class:`notifier.instance.Notifying`).

When an app of the same folders starts, the run stops notifying, leaves what it showed on screen
for the app to adopt, writes what it notified to the store the app reads next, and lets the lock
go. When its turn comes again (that app, or the headless run that notified, ended: quit or
killed), the run notifies again, as the app does after a restart: it reads what was notified,
reminded and left on screen, and the user's snoozes and mutes, from the store again (a question
notified already is not notified a second time: its bubble is adopted where it was left on
screen, else put back; a question nobody notified yet is notified now)."""

from __future__ import annotations

import sys
import threading
import time
from collections.abc import Sequence
from typing import TYPE_CHECKING

from notifier import APP_NAME
from notifier.app import PreferencesOwner, open_store
from notifier.core.model import Snapshot, Transition, TurnChange
from notifier.core.text import clean
from notifier.engine import ReadyInfo
from notifier.instance import Notifying

if TYPE_CHECKING:
    from notifier.app import App
    from notifier.store import Store
    from notifier.watch import FileFollower

HANDED_OVER = "the app started and watches the same folders: it notifies from now on"
TAKEN_BACK = "the app that notified ended: this run notifies from now on"
PEER_ENDED = "the headless run that notified ended: this run notifies from now on"


class NotifyTurns:
    """The sink that stands for the notifier in the engine of a headless run (``App.start(turns=…)``):
    it passes the engine's calls to ``app.alerts`` of the moment, and switches that between a
    notifier of this run's and none as its turn comes and goes."""

    def __init__(self, app: App, lock: Notifying) -> None:
        self.app = app
        self.lock = lock
        self.store: Store = app.store  # where the notifier of the moment records what it shows
        self._lock = threading.Lock()  # switching (the follower, the waiting thread, the engine thread)
        self._wanted = False  # whose turn it is, as last decided: this run's
        self._waiting = False  # a thread waits for this run's turn
        self._stopped = False
        self._follower: FileFollower | None = None

    # ---- the engine's sink (engine thread) ----

    def ready(self, info: ReadyInfo, snapshot: Snapshot) -> None:
        alerts = self.app.alerts
        if alerts is not None:
            alerts.ready(info, snapshot)

    def transitions(self, items: Sequence[Transition], snapshot: Snapshot) -> None:
        alerts = self.app.alerts
        if alerts is not None:
            alerts.transitions(items, snapshot)

    def turns(self, items: Sequence[TurnChange]) -> None:
        alerts = self.app.alerts
        if alerts is not None:
            alerts.turns(items)

    # ---- following the lock ----

    def start(self) -> None:
        """Follow the app's lock file (after ``app.start()``: the run notifies now if ``app.alerts``)."""
        from notifier.watch import FileFollower

        self._wanted = self.app.alerts is not None
        self._follower = FileFollower(self.lock.app_path, self.check, settle_s=0.05)
        self._follower.start()
        if self._wanted:
            self.check()  # (an app that claimed it before this run followed the file)
        else:
            self._wait()

    def stop(self) -> None:
        """Before the app shuts down (which stops the notifier of the moment)."""
        with self._lock:
            self._stopped = True
        if self._follower is not None:
            self._follower.stop()

    def close(self) -> None:
        """After the app shut down: the store of a notifier made since is closed too."""
        if self.store is not self.app.store:
            self.store.close(timeout=0.5)

    def check(self) -> None:
        """The app's lock file changed: if an app of these folders started, hand notifying over."""
        with self._lock:
            if self._stopped or self._waiting or not self.lock.app_runs():
                return
            self._wanted = False
            self._hand_over()
            self.lock.let_go()  # (after the store was written: the app reads it next)
            self._wait()

    def _wait(self) -> None:
        self._waiting = True
        threading.Thread(target=self._turn, name="pi-notifier turn", daemon=True).start()

    def _turn(self) -> None:
        """(Its own thread.) Wait for this run's turn, then notify (on the engine thread)."""
        while True:
            try:
                self.lock.wait()
            except OSError as exc:  # (its runtime folder is not ours any more, say)
                _say(f"cannot wait for a turn to notify ({clean(exc, 300)}): this run does not notify")
                return
            with self._lock:
                if self._stopped:
                    self.lock.let_go()
                    return
                if self.lock.app_runs():  # (an app that started meanwhile)
                    self.lock.let_go()
                    continue
                self._waiting, self._wanted = False, True
                engine = self.app.engine
                if engine is not None:
                    engine.call(self._take_over)  # (there: no transition is missed or seen twice)
                return

    def _hand_over(self) -> None:
        alerts, self.app.alerts = self.app.alerts, None
        if alerts is None:
            return
        alerts.stop(close=False)  # (stopped for good: what it showed stays on screen)
        self.store.flush(2.0)
        if self.store is not self.app.store:
            self.store.close(timeout=2.0)
            self.store = self.app.store
        _say(HANDED_OVER)

    def _take_over(self) -> list[Transition]:
        """On the engine thread: a notifier of this run's, given what waits now (no transition:
        the board is as it was)."""
        with self._lock:
            app, engine = self.app, self.app.engine
            if self._stopped or not self._wanted or app.alerts is not None or engine is None:
                return []
            if app.stop_event.is_set():
                return []
            store = open_store(app.state_dir)  # (read again: what the app wrote since this run began)
            app.preferences = PreferencesOwner(store, time.time())  # as the app left them
            alerts = app.new_notifier(store, app.preferences)
            self.store = store
            snapshot = engine.snapshot
            waiting = [
                Transition("needs_input", view.ref, q, q.asked_at, initial=True) for view, q in snapshot.pending
            ]
            alerts.transitions(waiting, snapshot)  # (as the engine starts: its questions, then ready)
            if engine.ready_info is not None:
                alerts.ready(engine.ready_info, snapshot)
            app.alerts = alerts
        _say(TAKEN_BACK if self.lock.after_app else PEER_ENDED)
        return []


def _say(line: str) -> None:
    sys.stderr.write(f"{APP_NAME}: {line}\n")
    sys.stderr.flush()
