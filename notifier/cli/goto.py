"""``pi-notifier goto [SESSION] [--print]``: bring the user to the terminal / tmux pane of a
waiting pi (the work is :mod:`notifier.actions.goto`); ``pi-notifier show``: bring the user to the
pending-questions window — the running app's own, or (none answering) a window of its own over a
local scan."""

from __future__ import annotations

import argparse
import os

from notifier.actions import goto
from notifier.cli.parser import fail, out, sessions_of, waiting_remote
from notifier.config import Config
from notifier.core import text
from notifier.core.codec import dumps
from notifier.core.text import clean
from notifier.remote import Remote
from notifier.system.window_manager import has_display


def cmd_goto(args: argparse.Namespace, config: Config) -> int:
    """goto [SESSION] [--print]: 0 focused (or printed), 1 not possible (what to do instead), 2 bad usage."""
    remote = goto.remote_target(config, args.session)
    if remote is None and args.session in (None, "next"):  # (the question waiting longest: a remote's?)
        remote = waiting_remote(config)
    if remote is not None:  # devbox:SESSION — a session on a remote (docs/usage.md "Remote machines and pushes")
        return _goto_remote(*remote, only_print=args.print)
    snapshot = sessions_of(config, args.session)[1]
    try:
        target = goto.target(snapshot, args.session)
    except goto.BadSession as exc:
        return fail(2, exc)
    except goto.Refused as exc:
        return fail(1, exc)
    if args.print:
        out(dumps(target.location.obj() if target.location else None), "\n")
        if target.location is None:
            return fail(1, f"no running pi has this session; {goto.resume_advice(target.view)}")
        return 0
    try:
        done = goto.focus(target.view, target.location)
    except goto.Refused as exc:
        return fail(1, exc)
    out(clean(done), "\n")
    return 0


def _goto_remote(remote: Remote, spec: str, only_print: bool) -> int:
    """Prints ``ssh -t HOST tmux attach -t SESSION``, and opens it in a terminal unless
    ``only_print``. 0 printed (``only_print``) or opened, 1 not possible (no display or no
    terminal here: the line is there to run)."""
    try:
        argv = goto.goto_argv(remote, spec)
    except goto.RemoteRefused as exc:
        return fail(1, exc)
    out(text.join(argv), "\n")  # (built from checked names: nothing raw)
    if only_print:
        return 0
    if not has_display():
        return fail(1, "no display to open a terminal on; run the line above")
    if not goto.open_in_terminal(argv):
        return fail(1, "no terminal found to open (x-terminal-emulator, xterm, gnome-terminal); run the line above")
    return 0


def cmd_show(args: argparse.Namespace, config: Config) -> int:
    """show [--focus FILE CALL_ID]: 0 shown, 1 no window could open (one line why)."""
    from notifier.app import LocalSource, window_display
    from notifier.control import request
    from notifier.instance import window_said
    from notifier.window.window import RemoteSource, Window

    focus = list(args.focus) if args.focus else None
    if not args.attach:
        reply = request({"cmd": "show", "focus": focus})
        if reply is not None and reply.get("ok"):
            if reply.get("window") in ("no-display", "failed"):
                return fail(1, f"the running app says {window_said(reply)}")
            return 0  # the running app opened (or raised) its window

    extra, said = window_display()
    if extra is None:
        return fail(1, f"cannot open the window: {said}")
    os.environ.update(extra)  # (XWayland's display, where DISPLAY was unset: Tk reads it)
    try:
        window = Window(RemoteSource() if args.attach else LocalSource(config), focus)
    except Exception as exc:  # Tk cannot open the display
        return fail(1, f"cannot open the window: {clean(exc, 200)}")
    window.run()
    return 0
