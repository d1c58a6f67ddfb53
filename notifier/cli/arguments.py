"""Every command's arguments (docs/contract.md): one argparse parser, built for the command that
runs, or with every command (``--help``, or a name that is no command: "invalid choice" lists
them all)."""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Callable
from typing import Any, NoReturn

from notifier import APP_NAME, __version__
from notifier.core.text import clean


class _Parser(argparse.ArgumentParser):
    def __init__(self, *args: Any, **kwargs: Any) -> None:
        kwargs.setdefault("formatter_class", _Formatter)
        super().__init__(*args, **kwargs)

    def error(self, message: str) -> NoReturn:
        # (argparse quotes the arguments it names as typed: an escape sequence would reach the terminal)
        sys.stderr.write(f"{APP_NAME}: {clean(message, 600)} (see '{self.prog} --help')\n")
        raise SystemExit(2)


def _columns() -> int:
    """``shutil.get_terminal_size().columns``, without importing shutil (and with it zlib, bz2 and
    lzma) for each parser that argparse's help formatter is made for."""
    try:
        columns = int(os.environ["COLUMNS"])
    except (KeyError, ValueError):
        columns = 0
    if columns <= 0:
        try:
            columns = os.get_terminal_size(sys.__stdout__.fileno()).columns  # type: ignore[union-attr]
        except (AttributeError, ValueError, OSError):
            columns = 0
    return columns or 80


class _Formatter(argparse.HelpFormatter):
    def __init__(self, prog: str, **kwargs: Any) -> None:
        if kwargs.get("width") is None:
            kwargs["width"] = _columns() - 2  # as argparse's own default
        super().__init__(prog, **kwargs)


def _common(p: argparse.ArgumentParser, watch: bool = True) -> None:
    p.add_argument("--config", metavar="FILE", help="configuration file (default: the per-user config.toml)")
    p.add_argument("-v", "--verbose", action="store_true", help="log more detail")
    if watch:
        p.add_argument(
            "--sessions-dir",
            metavar="DIR",
            action="append",
            dest="sessions_dirs",
            help="pi sessions folder to watch (repeatable; replaces the default)",
        )
        p.add_argument(
            "--liveness",
            choices=("auto", "off"),
            help="mark questions of pi processes that died as abandoned",
        )
        p.add_argument(
            "--question-tool",
            metavar="NAME",
            action="append",
            dest="question_tools",
            help="treat tool NAME as a question tool too; a glob pattern such as 'mcp__*__ask*' (quoted)"
            " matches names (repeatable)",
        )


def _run(p: argparse.ArgumentParser) -> None:
    _common(p)
    p.add_argument("--no-tray", action="store_true", help="no tray icon (headless)")
    p.add_argument("--no-notify", action="store_true", help="no desktop notifications")
    p.add_argument("--json", action="store_true", help="print one JSON event per line on stdout")
    p.add_argument(
        "--stop-on-eof",
        action="store_true",
        help="stop when standard input is closed (how a remote link ends its run --json)",
    )


def _status(p: argparse.ArgumentParser) -> None:
    _common(p)
    output = p.add_mutually_exclusive_group()  # (one output: --json, --tmux or --bar)
    output.add_argument("--json", action="store_true", help="print one JSON object")
    p.add_argument("--all", action="store_true", help="list every session, not only recent ones")
    output.add_argument(
        "--tmux", action="store_true", help="a tmux status-line segment: 'π 2' while questions wait, else nothing"
    )
    output.add_argument(
        "--bar", action="store_true", help="one JSON line for waybar / polybar / i3blocks (text, tooltip, class)"
    )


def _show(p: argparse.ArgumentParser) -> None:
    _common(p)
    p.add_argument("--focus", nargs=2, metavar=("FILE", "CALL_ID"), help="select this question")
    p.add_argument("--attach", action="store_true", help=argparse.SUPPRESS)


def _history(p: argparse.ArgumentParser) -> None:
    _common(p, watch=False)
    p.add_argument("--json", action="store_true", help="print one JSON object")
    p.add_argument("--since", metavar="DAYS", help="only the last DAYS days (7, 0.5, 30d)")


def _autostart(p: argparse.ArgumentParser) -> None:
    _common(p, watch=False)
    p.add_argument("action", choices=("install", "remove", "status"))


def _quit(p: argparse.ArgumentParser) -> None:
    _common(p, watch=False)


def _goto(p: argparse.ArgumentParser) -> None:
    _common(p)
    p.add_argument(
        "session",
        nargs="?",
        metavar="SESSION",
        help="a project or session name, a short id (see status), an id or unique id prefix, a session"
        " file, or next (the default: the longest-waiting question)",
    )
    p.add_argument("--print", action="store_true", help="only print where it is (JSON), change nothing")


def _answer(p: argparse.ArgumentParser) -> None:
    _common(p)
    p.add_argument("words", nargs="*", metavar="[SESSION] CHOICE", help="the session, then the answer")
    p.add_argument("--call", metavar="TOOL_CALL_ID", help="the question's tool call (default: the oldest)")
    p.add_argument(
        "--token",
        metavar="TOKEN",
        help="only the question with this token (status --json): refused when what waits is not what was shown",
    )
    p.add_argument("--text", metavar="TEXT", help="type this free-text answer instead of choosing")
    p.add_argument(
        "--timeout", type=float, default=15.0, metavar="S", help="how long to wait for pi to record it"
    )


def _pi_extension(p: argparse.ArgumentParser) -> None:
    _common(p, watch=False)
    p.add_argument("action", choices=("install", "remove", "status"))
    p.add_argument("--json", action="store_true", help="status: print one JSON object")


def _snooze(p: argparse.ArgumentParser) -> None:
    _common(p)
    p.add_argument(
        "words",
        nargs="*",
        metavar="[WHAT] [DURATION]",
        help="WHAT: all (default), a project or a SESSION; DURATION: 15m (default), 1h, 2h30m, 1d,"
        " tomorrow (08:00), or off to resume",
    )


def _mute(p: argparse.ArgumentParser) -> None:
    _common(p)
    p.add_argument("what", metavar="WHAT", help="a project, or a SESSION (its project)")


def _unmute(p: argparse.ArgumentParser) -> None:
    _common(p)
    p.add_argument("what", metavar="WHAT", help="a muted project, a SESSION (its project), or all")


def _demo(p: argparse.ArgumentParser) -> None:
    _common(p, watch=False)
    p.add_argument("--no-tray", action="store_true", help=argparse.SUPPRESS)


_ANSWER_DESCRIPTION = (
    "CHOICE is a 1-based option number or an exact option label (several for a multi-select "
    "question, or one per question of a form). With two or more words the first is taken as "
    "SESSION when it names a session (a project or session name, a short id, an id or id prefix, a file, "
    "or next)."
)

# Each command, in the order --help lists them: its help, its description, its arguments.
COMMANDS: dict[str, tuple[str, str | None, Callable[[argparse.ArgumentParser], None]]] = {
    "run": ("tray + notifications, watching the sessions folder (the default command)", None, _run),
    "status": ("print every session and its pending questions, then exit", None, _status),
    "doctor": ("what works here: sessions folder, watcher limits, tray, notifications", None, _common),
    "show": ("open the pending-questions window", None, _show),
    "quit": ("stop the running app (the tray app; headless runs are left alone)", None, _quit),
    "history": ("questions asked, how long each waited, how it ended", None, _history),
    "autostart": ("start pi-notifier with your desktop session", None, _autostart),
    "config": ("print the effective configuration and where each value came from", None, _common),
    "goto": ("bring you to the terminal / tmux pane of a waiting pi", None, _goto),
    "answer": (
        "answer a waiting pi from here (keys into its tmux pane, checked on screen first)",
        _ANSWER_DESCRIPTION,
        _answer,
    ),
    "snooze": ("hold back notifications for a while: all, a project or a session", None, _snooze),
    "mute": ("no notifications from a project until unmute", None, _mute),
    "unmute": ("notifications from a muted project again", None, _unmute),
    "pi-extension": ("the optional companion pi extension (exact dialogs, answers)", None, _pi_extension),
    "demo": ("replay a recorded pi session so you can see the notification, icon and window", None, _demo),
}


def build_parser(command: str | None = None) -> argparse.ArgumentParser:
    """The parser of every command; given a ``command``, only that one (the others would never
    parse anything: argv names this one, so no "invalid choice" can list them)."""
    parser = _Parser(
        prog=APP_NAME, description="Tells you the moment a pi coding agent session waits for your answer."
    )
    parser.add_argument("--version", action="version", version=f"{APP_NAME} {__version__}")
    sub = parser.add_subparsers(dest="command", parser_class=_Parser, metavar="COMMAND")
    for name, (help_, description, arguments) in COMMANDS.items():
        if command is None or name == command:
            arguments(sub.add_parser(name, help=help_, description=description))
    return parser
