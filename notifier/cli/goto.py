"""``pi-notifier goto [SESSION] [--print]``: bring the user to the terminal / tmux pane of a
waiting pi (the work is :mod:`notifier.actions.goto`)."""

from __future__ import annotations

import argparse
import re
import sys

from notifier.actions import goto, over_ssh
from notifier.cli.common import fail, with_outside_file
from notifier.config.load import Config
from notifier.core import shellcmd
from notifier.core.formats import dumps
from notifier.core.text import clean
from notifier.engine.options import engine_options
from notifier.engine.scan import scan_once
from notifier.remote import Remote
from notifier.system.desktop import has_display

# Inside JSON strings, what a terminal would act on or that reorders what is seen: C1 controls,
# DEL, bidi and other format characters, line separators (JSON escapes C0 itself).
_UNSHOWN = re.compile("[\x7f-\x9f\u00ad\u061c\u180e\u200b-\u200f\u2028-\u202e\u2060-\u206f\ufeff\ufff9-\ufffb]")


def terminal_json(obj: object) -> str:
    """``dumps(obj)`` for a terminal: the same JSON (``json.loads`` gives the same object), with
    the characters a terminal would act on written as ``\\uXXXX`` escapes (tmux names are
    anyone's: a window renamed by a program in it)."""
    return _UNSHOWN.sub(lambda m: f"\\u{ord(m.group()):04x}", dumps(obj))


def cmd_goto(args: argparse.Namespace, config: Config) -> int:
    """goto [SESSION] [--print]: 0 focused (or printed), 1 not possible (what to do instead), 2 bad usage."""
    remote = over_ssh.split(config, args.session)
    if remote is not None:  # devbox:SESSION — a session on a remote (docs/usage.md "Remote machines and pushes")
        return _goto_remote(*remote, only_print=args.print)
    options = engine_options(config)
    snapshot = with_outside_file(scan_once(options), options, args.session)
    try:
        target = goto.target(snapshot, args.session)
    except goto.BadSession as exc:
        return fail(2, exc)
    except goto.Refused as exc:
        return fail(1, exc)
    if args.print:
        sys.stdout.write(terminal_json(target.location.obj() if target.location else None) + "\n")
        if target.location is None:
            return fail(1, f"no running pi has this session; {goto.resume_advice(target.view)}")
        return 0
    try:
        done = goto.focus(target.view, target.location)
    except goto.Refused as exc:
        return fail(1, exc)
    sys.stdout.write(clean(done) + "\n")
    return 0


def _goto_remote(remote: Remote, spec: str, only_print: bool) -> int:
    """Prints ``ssh -t HOST tmux attach -t SESSION``; opens it in a terminal unless ``only_print``
    (and where a terminal and a display are found). 0 done, 1 not possible."""
    try:
        argv = over_ssh.goto_argv(remote, spec)
    except over_ssh.RemoteRefused as exc:
        return fail(1, exc)
    sys.stdout.write(shellcmd.join(argv) + "\n")  # (built from checked names: nothing raw)
    if not only_print and has_display():
        over_ssh.open_in_terminal(argv)
    return 0
