"""A headless run that notifies (``run --no-tray``), beside the app: one of them notifies each
question (:class:`notifier.instance.NotifyLock`).

When an app that watches the same folders claims notifying, the run stops notifying, leaves what
it showed on screen for the app to adopt, writes what it notified to the store the app reads
next, and lets the lock go. When that app lets the claim go (it quit, or it was killed: the pid
it names ended), the run notifies again, as the app does after a restart: it reads what was
notified, reminded and left on screen, and the user's snoozes and mutes, from the store again
(a question the app notified is not notified a second time: its bubble is adopted where the app
left it on screen, else put back; a question nobody notified yet is notified now). An app of
other folders leaves this run notifying.

Of two or more headless runs of the same folders, the one holding their
:class:`notifier.instance.PeerLock` notifies; the others follow it, and one of them takes
over when it ends, the same way."""

from __future__ import annotations

import sys
import threading
import time
from functools import partial
from typing import TYPE_CHECKING

from notifier import APP_NAME
from notifier.app import PreferencesOwner, open_store
from notifier.core.model import Transition
from notifier.engine import Batch, Engine
from notifier.instance import EndWatch, NotifyLock, PeerLock, Turn

if TYPE_CHECKING:
    from notifier.app import App
    from notifier.outputs.desktop import AlertSink
    from notifier.store import Store
    from notifier.watch import FileFollower

HANDED_OVER = "the app started and watches the same folders: it notifies from now on"
TAKEN_BACK = "the app that notified ended: this run notifies from now on"
PEER_SAID = "another headless run notifies the same folders (pid {pid}): this one does not"
PEER_ENDED = "the headless run that notified ended: this run notifies from now on"


class NotifyTurns:
    """Whose turn it is to notify, for a headless run: it switches ``app.alerts`` between a
    notifier of this run's and none as the lock's claim changes. The notifier is one of the
    engine's outputs while it is this run's turn (added and removed on the engine thread: no
    batch is missed or seen twice); this is none."""

    def __init__(self, app: App, lock: NotifyLock, peer: PeerLock) -> None:
        self.app = app
        self.lock = lock
        self.peer = peer
        self.roots = sorted(app.config["sessions_dirs"])
        self.store: Store = app.store  # where the notifier of the moment records what it shows
        self._lock = threading.Lock()  # switching (the follower, the end watch, the engine thread)
        self._wanted = False  # whose turn it is, as last decided: this run's
        self._taking = False  # a take-over is queued for the engine thread
        self._stopped = False
        self._follower: FileFollower | None = None
        self._watch: EndWatch | None = None
        self._peer: EndWatch | None = None  # the headless run that notifies these folders
        self._said = TAKEN_BACK

    # ---- following the lock ----

    def start(self) -> None:
        """Follow the lock's file (after ``app.start()``: the run notifies now if ``app.alerts``)."""
        from notifier.watch import FileFollower

        self._wanted = self.app.alerts is not None
        self._follower = FileFollower(self.lock.path, self.check, settle_s=0.05)
        self._follower.start()
        self.check()  # (an app that claimed it before this run followed the file)

    def stop(self) -> None:
        """Before the app shuts down (which stops the notifier of the moment)."""
        with self._lock:
            self._stopped = True
            watch, self._watch = self._watch, None
            peer, self._peer = self._peer, None
        if self._follower is not None:
            self._follower.stop()
        for each in (watch, peer):
            if each is not None:
                each.stop()

    def close(self) -> None:
        """After the app shut down: the store of a notifier made since is closed too."""
        if self.store is not self.app.store:
            self.store.close(timeout=0.5)

    def check(self) -> None:
        """The lock's file changed, or the app it named ended: whose turn it is now."""
        with self._lock:
            if self._stopped:
                return
            watch = self._watch
            turn = self.lock.turn(self.roots, ended=(watch.pid,) if watch is not None and watch.ended else ())
            if turn.app is not None and (self._watch is None or self._watch.pid != turn.app):
                if self._watch is not None:
                    self._watch.stop()
                self._watch = EndWatch(turn.app, self.check)  # (checked again when it ends)
            if turn.notify and not self._peer_free():
                turn = Turn(False, turn.app)  # another headless run notifies these folders
                self.lock.release()  # (so an app that starts does not wait for this run)
            if turn.notify:
                self._wanted = True
                engine = self.app.engine
                if self.app.alerts is None and not self._taking and engine is not None:
                    self._taking = True
                    engine.call(self._take_over)  # (there: no transition is missed or seen twice)
            elif turn.app is not None:  # an app of the same folders claims it
                self._wanted = False
                self._hand_over()
            # (else: an app that let its claim go still holds the lock; its end is waited for)
            if turn.app is not None:
                self.lock.release()  # (after the store was written: the app reads it next)

    def _peer_free(self) -> bool:
        """Whether this run holds its folders' :class:`PeerLock` (taken now if it is free); if
        another run holds it, that run's end is followed (checked again then)."""
        holder = self.peer.take()
        if holder is None:
            if self._peer is not None:
                self._peer.stop()
                self._peer, self._said = None, PEER_ENDED
            return True
        if holder and (self._peer is None or self._peer.pid != holder):
            if self._peer is not None:
                self._peer.stop()
            self._peer = EndWatch(holder, self.check)
        return False

    def _hand_over(self) -> None:
        alerts, self.app.alerts = self.app.alerts, None
        if alerts is None:
            return
        engine = self.app.engine
        if engine is not None:
            engine.call(partial(_removed, engine, alerts))
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
            self._taking = False
            app, engine = self.app, self.app.engine
            if self._stopped or not self._wanted or app.alerts is not None or engine is None:
                return []
            if app.stop_event.is_set():
                return []
            store = open_store(app.state_dir)  # (read again: what the app wrote since this run began)
            app.preferences = PreferencesOwner(store, time.time())  # as the app left them
            app.preferences.listen(app.redraw.set_preferences)
            alerts = app.new_notifier(store, app.preferences)
            self.store = store
            snapshot = engine.snapshot
            waiting = [
                Transition("needs_input", view.ref, q, q.asked_at, initial=True) for view, q in snapshot.pending
            ]
            alerts.publish(Batch(tuple(waiting), snapshot))  # (as the engine starts: its questions, then ready)
            if engine.ready_info is not None:
                alerts.ready(engine.ready_info, snapshot)
            engine.add_output(alerts)  # (every batch from the next on)
            app.alerts = alerts
            said, self._said = self._said, TAKEN_BACK
        _say(said)
        return []


def _removed(engine: Engine, alerts: AlertSink) -> list[Transition]:
    """On the engine thread: the notifier handed over gets no batch any more."""
    engine.remove_output(alerts)
    return []


def _say(line: str) -> None:
    sys.stderr.write(f"{APP_NAME}: {line}\n")
    sys.stderr.flush()
