"""``pi-notifier run``: the app (tray, notifications, control channel), or a headless watcher
(``--no-tray``, ``--json``). A second app hands over to the first one and exits 0."""

from __future__ import annotations

import argparse
import os
import sys
import time

from notifier import APP_NAME
from notifier.cli.common import window_said
from notifier.system.config import Config


def cmd_run(args: argparse.Namespace, config: Config) -> int:
    from notifier.app.runtime import App, InstanceLock, install_signals
    from notifier.app.tray import make_tray
    from notifier.system import paths

    tray = not args.no_tray
    if tray:
        lock = InstanceLock(os.path.join(paths.runtime_dir(), "app.lock"))
        if not lock.acquire():
            return _hand_over()
    app = App(config, json_out=args.json, tray=tray, notify=not args.no_notify)
    if tray:
        app.lock = lock
        app.tray = make_tray(config, app.act, app.snapshot)
    install_signals(app.stop_event)
    try:
        app.start()
        if tray:
            app.serve()
        return app.run_loop()
    finally:
        app.shutdown()


def _hand_over() -> int:
    """Another pi-notifier is the app: ask it to open its window, say what really happened, leave."""
    from notifier.system import ipc

    deadline = time.monotonic() + 5
    while time.monotonic() < deadline:
        reply = ipc.request({"cmd": "show", "focus": None, "wait": 2.0})
        if reply is not None and reply.get("ok"):  # None: not up yet; an error: try again
            sys.stderr.write(f"{APP_NAME} is already running; {window_said(reply)}\n")
            return 0
        time.sleep(0.1)  # the other one is still starting: its channel opens in a moment
    sys.stderr.write(f"{APP_NAME} is already running (pid file lock held) but does not answer\n")
    return 0
