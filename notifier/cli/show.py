"""``pi-notifier show``: the pending-questions window — the running app's own, or (none
answering) a window of its own over a local scan."""

from __future__ import annotations

import argparse
import os
import sys

from notifier import APP_NAME
from notifier.app.instance import window_said
from notifier.app.runtime import LocalSource
from notifier.app.window_process import window_display
from notifier.config.load import Config
from notifier.control import request
from notifier.core.text import clean
from notifier.ui.sources import RemoteSource
from notifier.ui.window import Window


def cmd_show(args: argparse.Namespace, config: Config) -> int:
    focus = list(args.focus) if args.focus else None
    if not args.attach:
        reply = request({"cmd": "show", "focus": focus})
        if reply is not None and reply.get("ok"):
            if reply.get("window") in ("no-display", "failed"):
                sys.stderr.write(f"{APP_NAME}: the running app says {window_said(reply)}\n")
                return 1
            return 0  # the running app opened (or raised) its window

    extra, said = window_display()
    if extra is None:
        sys.stderr.write(f"{APP_NAME}: cannot open the window: {said}\n")
        return 1
    os.environ.update(extra)  # (XWayland's display, where DISPLAY was unset: Tk reads it)
    try:
        window = Window(RemoteSource() if args.attach else LocalSource(config), focus)
    except Exception as exc:  # Tk cannot open the display
        sys.stderr.write(f"{APP_NAME}: cannot open the window: {clean(exc, 200)}\n")
        return 1
    window.run()
    return 0
