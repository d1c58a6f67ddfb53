"""``pi-notifier autostart install | remove | status``: start with the desktop session."""

from __future__ import annotations

import argparse
import sys

from notifier import APP_NAME
from notifier.config.load import Config
from notifier.core.text import clean
from notifier.system import autostart


def cmd_autostart(args: argparse.Namespace, config: Config) -> int:
    action = {"install": autostart.install, "remove": autostart.remove, "status": autostart.status}[
        args.action
    ]
    try:
        sys.stdout.write(action() + "\n")
    except OSError as exc:
        sys.stderr.write(f"{APP_NAME}: autostart {args.action} failed: {clean(exc, 200)}\n")
        return 1
    return 0
