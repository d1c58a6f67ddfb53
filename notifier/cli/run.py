"""``pi-notifier run``: the app (tray, notifications, control channel), or a headless watcher
(``--no-tray``, ``--json``). A second app hands over to the first one and exits 0; ``run
--json`` beside the app streams the events (reading the sessions itself) and leaves the
notifications to the app, as ``run --no-tray`` beside it does. One of them notifies each
question, also when the app starts after a headless run that notifies: that run hands
notifying over to it (:class:`notifier.app.instance.NotifyLock`)."""

from __future__ import annotations

import argparse
import os
import sys
import threading
from typing import TYPE_CHECKING

from notifier import APP_NAME
from notifier.config.load import Config
from notifier.core.text import clean

if TYPE_CHECKING:
    from notifier.app.instance import NotifyLock
    from notifier.app.runtime import App
    from notifier.watch.config_file import FileFollower

HAND_OVER_SAID = "the app is running and watches the same folders: it notifies, this run does not"


def cmd_run(args: argparse.Namespace, config: Config) -> int:
    from notifier.app.instance import InstanceLock, NotifyLock, hand_over
    from notifier.app.runtime import App
    from notifier.app.signals import install_signals
    from notifier.app.tray_choice import make_tray
    from notifier.system import paths

    tray = not args.no_tray
    try:
        folder = paths.runtime_dir(announce=True)
        lock = InstanceLock(os.path.join(folder, "app.lock"))
        held = tray and not lock.acquire()
    except OSError as exc:  # no folder of our own for it (said why): one line, no traceback
        sys.stderr.write(f"{APP_NAME}: cannot start the app: {clean(exc, 600)}\n")
        return 1
    if held:
        if not args.json:
            return hand_over()
        tray = False  # run --json beside the app: the stream is what was asked for; the app notifies
    notify = not args.no_notify
    notifying = NotifyLock(os.path.join(folder, "notify.lock"))
    try:
        if tray:
            if not notifying.claim(config["sessions_dirs"]):
                sys.stderr.write(f"{APP_NAME}: a headless run still notifies too; it did not hand over\n")
        elif notify:
            notify = _headless_notifies(notifying, config)
    except OSError as exc:
        sys.stderr.write(f"{APP_NAME}: cannot start: {clean(exc, 600)}\n")
        return 1
    try:
        app = App(config, json_out=args.json, tray=tray, notify=notify)
    except OSError as exc:  # no runtime folder of our own at all (said why): one line, no traceback
        sys.stderr.write(f"{APP_NAME}: cannot start: {clean(exc, 600)}\n")
        return 1
    if tray:
        app.lock = lock
        app.tray = make_tray(config, app.execute, app.ui_state)
    install_signals(app.stop_event)
    if args.stop_on_eof:
        stop_on_eof(app.stop_event)
    follower = None
    try:
        app.start()
        if not tray and notify and notifying.fd is not None:
            follower = follow_the_app(notifying, config, app)
        if tray:
            app.serve()
        return app.run_loop()
    finally:
        if follower is not None:
            follower.stop()
        app.shutdown()
        notifying.release()


def _headless_notifies(notifying: NotifyLock, config: Config) -> bool:
    """Whether a headless run notifies: not while an app that watches the same folders runs
    (then it notifies each question, and this run must not a second time)."""
    shared = notifying.share()
    roots = notifying.claimant()
    if shared and roots is None:
        return True  # no app: this run notifies (and hands over to one that starts: follow_the_app)
    notifying.release()
    if roots is not None and sorted(roots) == sorted(config["sessions_dirs"]):
        sys.stderr.write(f"{APP_NAME}: {HAND_OVER_SAID}\n")
        return False
    return True  # an app of other folders: nobody else notifies these questions


def follow_the_app(notifying: NotifyLock, config: Config, app: App) -> FileFollower:
    """A headless run that notifies: when an app that watches the same folders starts (it claims
    ``notifying``), stop notifying, leave the bubbles on screen for it to adopt, write what was
    notified to the store it reads next, and let the lock go (an app of other folders gets it at
    once; this run notifies on)."""
    from notifier.watch.config_file import FileFollower

    once = threading.Lock()

    def changed() -> None:
        with once:
            roots = notifying.claimant()
            if roots is None or notifying.fd is None:
                return
            if sorted(roots) == sorted(config["sessions_dirs"]):
                if app.alerts is not None:  # (stopped for good: what it showed stays on screen)
                    app.alerts.stop(close=False)
                app.store.flush(2.0)
                sys.stderr.write(f"{APP_NAME}: the app started and watches the same folders: it notifies from now on\n")
                sys.stderr.flush()
            notifying.release()

    follower = FileFollower(notifying.path, changed, settle_s=0.05)
    follower.start()
    changed()  # (an app that claimed it before this run followed the file)
    return follower


def stop_on_eof(stop: threading.Event) -> None:
    """Set ``stop`` when standard input is closed. A remote link starts ``run --json`` with a
    pipe it never writes to: when the link ends (or the machine that started it goes away), ssh
    closes it, and this run ends too instead of living on until it next writes."""

    def wait() -> None:
        try:
            while os.read(0, 1 << 16):
                pass  # (nothing is expected: whatever comes is dropped)
        except OSError:
            pass
        stop.set()

    threading.Thread(target=wait, name="pi-notifier stdin", daemon=True).start()
