"""``pi-notifier run``: the app (tray, notifications, control channel), or a headless watcher
(``--no-tray``, ``--json``). A second app hands over to the first one and exits 0; ``run
--json`` beside the app streams the events (reading the sessions itself) and leaves the
notifications to the app, as ``run --no-tray`` beside it does."""

from __future__ import annotations

import argparse
import os
import sys
import threading

from notifier import APP_NAME
from notifier.config.load import Config
from notifier.core.text import clean


def cmd_run(args: argparse.Namespace, config: Config) -> int:
    from notifier.app.instance import InstanceLock, hand_over
    from notifier.app.runtime import App
    from notifier.app.signals import install_signals
    from notifier.app.tray_choice import make_tray
    from notifier.system import paths

    tray = not args.no_tray
    if tray:
        try:
            lock = InstanceLock(os.path.join(paths.runtime_dir(announce=True), "app.lock"))
            held = not lock.acquire()
        except OSError as exc:  # no folder of our own for it (said why): one line, no traceback
            sys.stderr.write(f"{APP_NAME}: cannot start the app: {clean(exc, 600)}\n")
            return 1
        if held:
            if not args.json:
                return hand_over()
            tray = False  # run --json beside the app: the stream is what was asked for; the app notifies
    notify = not args.no_notify
    if not tray and notify and app_watches_the_same(config):
        sys.stderr.write(
            f"{APP_NAME}: the app is running and watches the same folders: it notifies, this run does not\n"
        )
        notify = False
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
    try:
        app.start()
        if tray:
            app.serve()
        return app.run_loop()
    finally:
        app.shutdown()


def app_watches_the_same(config: Config) -> bool:
    """Whether the running app (if any) watches the folders this run watches: then it notifies
    each question, and a headless run beside it must not notify it a second time."""
    from notifier.control.client import request

    reply = request({"cmd": "ping"}, timeout=1.0)
    if not reply or not reply.get("ok"):
        return False
    roots = reply.get("roots")
    return isinstance(roots, list) and sorted(map(str, roots)) == sorted(config["sessions_dirs"])


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
