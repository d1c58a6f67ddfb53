"""``pi-notifier run``: the app (tray, notifications, control channel), or a headless watcher
(``--no-tray``, ``--json``). A second app hands over to the first one and exits 0; ``run
--json`` beside the app streams the events (reading the sessions itself) and leaves the
notifications to the app, as ``run --no-tray`` beside it does.

One of them notifies each question (:class:`notifier.instance.Notifying`): the app of those
folders, else one headless run of them. When an app of the same folders starts, a headless run
that notifies stops, leaves what it showed on screen for the app to adopt, writes what it
notified to the store the app reads next, and lets the lock go. When its turn comes again (that
app, or the headless run that notified, ended: quit or killed), it notifies again as the app
does after a restart: it reads what was notified, reminded and left on screen, and the user's
snoozes and mutes, from the store (a question notified already is not notified a second time:
its bubble is adopted where it was left, else put back). An app that does not notify
(``--no-notify``, ``notifications.backend = "none"``) claims nothing: a headless run beside it
notifies."""

from __future__ import annotations

import argparse
import contextlib
import os
import threading
import time
from functools import partial
from typing import TYPE_CHECKING

from notifier.cli.parser import fail, say
from notifier.config import Config
from notifier.core.text import clean
from notifier.system import paths

if TYPE_CHECKING:
    from notifier.app import App
    from notifier.core.model import Transition
    from notifier.engine import Engine
    from notifier.instance import Notifying
    from notifier.outputs.desktop import Notifier
    from notifier.store import Store
    from notifier.watch import FileFollower

HAND_OVER_SAID = "the app is running and watches the same folders: it notifies, this run does not"
PEER_SAID = "another headless run notifies the same folders (pid {pid}): this one does not"
HANDED_OVER = "the app started and watches the same folders: it notifies from now on"
TAKEN_BACK = "the app that notified ended: this run notifies from now on"
PEER_ENDED = "the headless run that notified ended: this run notifies from now on"


def cmd_run(args: argparse.Namespace, config: Config) -> int:
    from notifier.app import App
    from notifier.instance import APP_LOCK, InstanceLock, Notifying, hand_over

    tray = not args.no_tray
    try:
        folder = paths.runtime_dir(announce=True)
        lock = InstanceLock(os.path.join(folder, APP_LOCK))
        held = tray and not lock.acquire()
    except OSError as exc:  # no folder of our own for it (said why): one line, no traceback
        return fail(1, f"cannot start the app: {clean(exc, 600)}")
    if held:
        if not args.json:
            return hand_over()
        tray = False  # run --json beside the app: the stream is what was asked for; the app notifies
    wants = not args.no_notify and config["notifications.backend"] != "none"
    notifying = Notifying(folder, config["sessions_dirs"])
    try:
        notify = wants and _claims(notifying, tray, later=args.no_tray)
        app = App(config, json_out=args.json, notify=notify, lock=lock if tray else None)
    except OSError as exc:  # no runtime folder of our own at all (said why): one line, no traceback
        return fail(1, f"cannot start: {clean(exc, 600)}")
    # A headless run that notifies hands notifying to the app and takes it back; `run --json`
    # beside the app is its stream only: it leaves notifying to the app, also once that ends.
    turns = NotifyTurns(app, notifying) if not tray and wants and (notify or args.no_tray) else None
    app.successor = notifying.successor  # (a headless run's own stand-by ends before it shuts down)
    app.others_notify = lambda: notifying.app_runs() or notifying.headless() is not None
    try:
        return _serve(app, config, tray, turns, args.stop_on_eof)
    finally:
        notifying.release()


def _claims(notifying: Notifying, tray: bool, later: bool) -> bool:
    """Whether this run notifies as it starts: the app claims notifying (an app that does not
    notify claims nothing: a headless run does); a headless run does unless the app of its
    folders or another headless run of them does (``later``: it takes over when they end)."""
    if tray:
        if not notifying.claim():
            say("a headless run still notifies too; it did not hand over")
        return True
    holder = notifying.take()
    if holder is None and not notifying.app_runs():
        return True  # (it hands over to an app that starts: NotifyTurns)
    notifying.let_go()
    if notifying.app_runs():
        say(HAND_OVER_SAID + (" (until the app ends)" if later else ""))
    else:
        say(PEER_SAID.format(pid=holder or "?") + (" (until it ends)" if later else ""))
    return False


def _serve(app: App, config: Config, tray: bool, turns: NotifyTurns | None, eof_stops: bool) -> int:
    """Start ``app`` (its tray icon if ``tray``; ``turns``: a headless run's notifier of the
    moment; ``eof_stops``: :func:`stop_on_eof`), serve it until it stops, and shut it down."""
    from notifier.app import install_signals
    from notifier.outputs.tray import make_tray

    icon = make_tray(config, app.execute) if tray else None
    install_signals(app.stop_event)
    if eof_stops:
        stop_on_eof(app.stop_event)
    try:
        app.start(tray=icon, windows=tray)  # (only the tray app serves windows)
        if turns is not None:
            turns.start()
        if tray:
            app.serve()
        return app.run_loop()
    finally:
        if turns is not None:
            turns.stop()
        app.shutdown()
        if turns is not None:
            turns.close()


class NotifyTurns:
    """Whose turn it is to notify, for a headless run: it switches ``app.alerts`` between a
    notifier of this run's and none as its turn comes and goes. The notifier is one of the
    engine's outputs while it is this run's turn (added and removed on the engine thread: no
    batch is missed or seen twice); this is none."""

    def __init__(self, app: App, lock: Notifying) -> None:
        self.app = app
        self.lock = lock
        self.store: Store = app.store  # where the notifier of the moment records what it shows
        self._lock = threading.Lock()  # switching (the follower, the waiting thread, the engine thread)
        self._waiting = False  # a thread waits for this run's turn
        self._stopped = False
        self._follower: FileFollower | None = None

    # ---- following the lock ----

    def start(self) -> None:
        """Follow the app's lock file (after ``app.start()``: the run notifies now if ``app.alerts``)."""
        from notifier.watch import FileFollower

        try:
            self.lock.stand_by()  # (what notifies before this run and ends cleanly leaves its bubbles to it)
        except OSError as exc:  # (its runtime folder is not ours any more, say)
            say(f"cannot stand by for a turn ({clean(exc, 300)}): a notifier that ends closes its notifications")
        self._follower = FileFollower(self.lock.app_path, self.check, debounce_s=0.05)
        self._follower.start()
        if self.app.alerts is not None:
            self.check()  # (an app that claimed it before this run followed the file)
        else:
            self._wait()

    def stop(self) -> None:
        """Before the app shuts down (which stops the notifier of the moment)."""
        with self._lock:
            self._stopped = True
        self.lock.stand_down()  # (ending: another run that stands by is this one's successor)
        if self._follower is not None:
            self._follower.stop()

    def close(self, timeout: float = 0.5) -> None:
        """The store of a notifier made since the app started is closed (after the app shut down,
        or as the app takes over notifying)."""
        if self.store is not self.app.store:
            self.store.close(timeout=timeout)
            self.store = self.app.store

    def check(self) -> None:
        """The app's lock file changed: if an app of these folders started, hand notifying over."""
        with self._lock:
            if self._stopped or self._waiting or not self.lock.app_runs():
                return
            self._hand_over()
            self.lock.let_go()  # (after the store was written: the app reads it next)
            self._wait()

    def _wait(self) -> None:
        self._waiting = True
        threading.Thread(target=self._turn, name="pi-notifier turn", daemon=True).start()

    def _turn(self) -> None:
        """(Its own thread.) Wait for this run's turn, then notify (on the engine thread)."""
        try:
            while True:
                self.lock.wait()
                with self._lock:
                    if self._stopped:
                        self.lock.let_go()
                        return
                    if self.lock.app_runs():  # (an app that started meanwhile)
                        self.lock.let_go()
                        continue
                    self._waiting = False
                    if self.app.engine is not None:
                        self.app.engine.call(self._take_over)  # (there: nothing is missed or seen twice)
                    return
        except OSError as exc:  # (its runtime folder is not ours any more, say)
            say(f"cannot wait for a turn to notify ({clean(exc, 300)}): this run does not notify")

    def _hand_over(self) -> None:
        alerts, self.app.alerts = self.app.alerts, None
        if alerts is None:
            return
        engine = self.app.engine
        if engine is not None:
            engine.call(partial(_removed, engine, alerts))
        alerts.stop(close=False)  # (stopped for good: what it showed stays on screen)
        self.store.flush(2.0)
        self.close(timeout=2.0)
        say(HANDED_OVER)

    def _take_over(self) -> list[Transition]:
        """On the engine thread: a notifier of this run's, given what waits now (no transition:
        the board is as it was)."""
        from notifier.app import SilencesKeeper, open_store
        from notifier.core.model import Transition
        from notifier.engine import Batch

        with self._lock:
            app, engine = self.app, self.app.engine
            if self._stopped or self._waiting or app.alerts is not None or engine is None or app.stop_event.is_set():
                return []
            store = open_store(app.state_dir)  # (read again: what the app wrote since this run began)
            app.silences = SilencesKeeper(store, time.time())  # as the app left them
            app.silences.listen(app.redraw.set_silences)
            if app.push is not None:  # (it holds back what the desktop holds back)
                app.silences.listen(app.push.set_silences)
            alerts = app.new_notifier(store, app.silences)
            self.store = store
            snapshot = engine.snapshot
            pending = [
                Transition("needs_input", view.ref, q, q.asked_at, initial=True) for view, q in snapshot.pending
            ]
            alerts.publish(Batch(tuple(pending), snapshot))  # (as the engine starts: its questions, then ready)
            if engine.ready_info is not None:
                alerts.ready(engine.ready_info, snapshot)
            engine.add_output(alerts)  # (every batch from the next on)
            app.alerts = alerts
            if app.push is not None:  # (pushes too, from what the process before it pushed)
                app.push.take_turn(store)
        say(TAKEN_BACK if self.lock.after_app else PEER_ENDED)
        return []


def _removed(engine: Engine, alerts: Notifier) -> list[Transition]:
    """On the engine thread: the notifier handed over gets no batch any more."""
    engine.remove_output(alerts)
    return []


def stop_on_eof(stop: threading.Event) -> None:
    """Set ``stop`` when standard input is closed. A remote link starts ``run --json`` with a
    pipe it never writes to: when the link ends (or the machine that started it goes away), ssh
    closes it, and this run ends too instead of living on until it next writes."""

    def wait() -> None:
        with contextlib.suppress(OSError):
            while os.read(0, 1 << 16):
                pass  # (nothing is expected: whatever comes is dropped)
        stop.set()

    threading.Thread(target=wait, name="pi-notifier stdin", daemon=True).start()
