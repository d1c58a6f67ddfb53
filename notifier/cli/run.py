"""``pi-notifier run``: the app (tray, notifications, control channel), or a headless watcher
(``--no-tray``, ``--json``). A second app hands over to the first one and exits 0."""

from __future__ import annotations

import argparse
import os

from notifier.system.config import Config


def cmd_run(args: argparse.Namespace, config: Config) -> int:
    from notifier.app.instance import hand_over
    from notifier.app.runtime import App, InstanceLock, install_signals
    from notifier.app.tray import make_tray
    from notifier.system import paths

    tray = not args.no_tray
    if tray:
        lock = InstanceLock(os.path.join(paths.runtime_dir(), "app.lock"))
        if not lock.acquire():
            return hand_over()
    app = App(config, json_out=args.json, tray=tray, notify=not args.no_notify)
    if tray:
        app.lock = lock
        app.tray = make_tray(config, app.execute, app.snapshot)
    install_signals(app.stop_event)
    try:
        app.start()
        if tray:
            app.serve()
        return app.run_loop()
    finally:
        app.shutdown()
