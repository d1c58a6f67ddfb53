"""``pi-notifier run``: the app (tray, notifications, control channel), or a headless watcher
(``--no-tray``, ``--json``). A second app hands over to the first one and exits 0."""

from __future__ import annotations

import argparse
import os
import sys
import threading

from notifier import APP_NAME
from notifier.core.text import clean
from notifier.system.config import Config


def cmd_run(args: argparse.Namespace, config: Config) -> int:
    from notifier.app.instance import hand_over
    from notifier.app.runtime import App, InstanceLock, install_signals
    from notifier.app.tray import make_tray
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
            return hand_over()
    try:
        app = App(config, json_out=args.json, tray=tray, notify=not args.no_notify)
    except OSError as exc:  # no runtime folder of our own at all (said why): one line, no traceback
        sys.stderr.write(f"{APP_NAME}: cannot start: {clean(exc, 600)}\n")
        return 1
    if tray:
        app.lock = lock
        app.tray = make_tray(config, app.execute, app.snapshot)
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
