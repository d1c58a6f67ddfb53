"""Command line (docs/contract.md). Bad usage or config: one line on stderr, exit code 2, no traceback."""

from __future__ import annotations

import argparse
import importlib
import logging
import os
import sys
from collections.abc import Callable, Sequence
from typing import Any, NoReturn

from notifier import APP_NAME, __version__
from notifier.core.text import clean
from notifier.system.config import OPTIONS, Config, ConfigError, apply_command_line, load

log = logging.getLogger("notifier")


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> NoReturn:
        sys.stderr.write(f"{APP_NAME}: {message} (see '{self.prog} --help')\n")
        raise SystemExit(2)


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
            help="treat tool NAME as a question tool too (repeatable)",
        )


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(
        prog=APP_NAME, description="Tells you the moment a pi coding agent session waits for your answer."
    )
    parser.add_argument("--version", action="version", version=f"{APP_NAME} {__version__}")
    sub = parser.add_subparsers(dest="command", parser_class=_Parser, metavar="COMMAND")

    run = sub.add_parser(
        "run", help="tray + notifications, watching the sessions folder (the default command)"
    )
    _common(run)
    run.add_argument("--no-tray", action="store_true", help="no tray icon (headless)")
    run.add_argument("--no-notify", action="store_true", help="no desktop notifications")
    run.add_argument("--json", action="store_true", help="print one JSON event per line on stdout")

    status = sub.add_parser("status", help="print every session and its pending questions, then exit")
    _common(status)
    status.add_argument("--json", action="store_true", help="print one JSON object")
    status.add_argument("--all", action="store_true", help="list every session, not only recent ones")

    doctor = sub.add_parser(
        "doctor", help="what works here: sessions folder, watcher limits, tray, notifications"
    )
    _common(doctor)

    show = sub.add_parser("show", help="open the pending-questions window")
    _common(show)
    show.add_argument("--focus", nargs=2, metavar=("FILE", "CALL_ID"), help="select this question")
    show.add_argument("--attach", action="store_true", help=argparse.SUPPRESS)

    history = sub.add_parser("history", help="questions asked, how long each waited, how it ended")
    _common(history, watch=False)
    history.add_argument("--json", action="store_true", help="print one JSON object")
    history.add_argument("--since", type=float, metavar="DAYS", help="only the last DAYS days")

    auto = sub.add_parser("autostart", help="start pi-notifier with your desktop session")
    _common(auto, watch=False)
    auto.add_argument("action", choices=("install", "remove", "status"))

    cfg = sub.add_parser("config", help="print the effective configuration and where each value came from")
    _common(cfg)

    goto = sub.add_parser("goto", help="bring you to the terminal / tmux pane of a waiting pi")
    _common(goto)
    goto.add_argument(
        "session",
        nargs="?",
        metavar="SESSION",
        help="session file, id or unique id prefix (default: the longest-waiting question)",
    )
    goto.add_argument("--print", action="store_true", help="only print where it is (JSON), change nothing")

    answer = sub.add_parser(
        "answer",
        help="answer a waiting pi from here (keys into its tmux pane, checked on screen first)",
        description="CHOICE is a 1-based option number or an exact option label (several for a "
        "multi-select question, or one per question of a form). With two or more words the first "
        "is taken as SESSION when it names a session.",
    )
    _common(answer)
    answer.add_argument("words", nargs="*", metavar="[SESSION] CHOICE", help="the session, then the answer")
    answer.add_argument("--call", metavar="TOOL_CALL_ID", help="the question's tool call (default: the oldest)")
    answer.add_argument("--text", metavar="TEXT", help="type this free-text answer instead of choosing")
    answer.add_argument(
        "--timeout", type=float, default=15.0, metavar="S", help="how long to wait for pi to record it"
    )

    ext = sub.add_parser("pi-extension", help="the optional companion pi extension (exact dialogs, answers)")
    _common(ext, watch=False)
    ext.add_argument("action", choices=("install", "remove", "status"))
    ext.add_argument("--json", action="store_true", help="status: print one JSON object")

    demo = sub.add_parser(
        "demo", help="replay a recorded pi session so you can see the notification, icon and window"
    )
    _common(demo, watch=False)
    demo.add_argument("--no-tray", action="store_true", help=argparse.SUPPRESS)
    return parser


def effective_config(args: argparse.Namespace) -> Config:
    from notifier.system import paths

    explicit = getattr(args, "config", None)
    if explicit is not None and not explicit.strip():
        raise ConfigError("command line: '--config' must be a file path, not empty")
    config = load(explicit or paths.config_file(), explicit=bool(explicit))
    for key in OPTIONS:
        value = getattr(args, key, None)
        if value is not None:
            apply_command_line(config, key, value)
    if not config["sessions_dirs"]:
        config.values["sessions_dirs"] = [paths.default_sessions_dir()]
        config.sources["sessions_dirs"] = "pi's default"
    return config


def setup_logging(verbose: bool, log_file: bool = False) -> None:
    """One line per message on stderr; long-running commands also keep a rotating log file in
    the state folder (if it cannot be written, that is said once and the app carries on). The log
    holds question text and paths: it and its rotated copies are user-only (0600, folder 0700)."""
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(logging.Formatter(f"{APP_NAME}: %(message)s"))
    root = logging.getLogger()
    root.handlers[:] = [handler]
    root.setLevel(logging.DEBUG if verbose else logging.INFO)
    if log_file:
        from notifier.system import paths

        path = os.path.join(paths.state_dir(), f"{APP_NAME}.log")
        try:
            fh = _private_log(path)
            fh.setFormatter(logging.Formatter("%(asctime)s %(levelname)s %(name)s: %(message)s"))
            root.addHandler(fh)
        except OSError as exc:
            log.warning("cannot write the log file %s (%s); logging to stderr only", clean(path), exc)
    logging.getLogger("watchdog").setLevel(logging.WARNING)
    logging.getLogger("PIL").setLevel(logging.WARNING)


BACKUPS = 3


def _private_log(path: str) -> logging.Handler:
    from logging.handlers import RotatingFileHandler

    from notifier.system import paths

    class PrivateRotatingFileHandler(RotatingFileHandler):
        def _open(self) -> Any:
            # A new file after each rotation: created 0600 (rotated copies keep that mode).
            paths.private_file(self.baseFilename)
            return super()._open()

    paths.private_file(path)
    for n in range(1, BACKUPS + 1):  # copies rotated by older versions
        if os.path.exists(f"{path}.{n}"):
            paths.private_file(f"{path}.{n}")
    # errors: a name that is not UTF-8 is logged with \udcXX escapes, never a logging error
    return PrivateRotatingFileHandler(
        path, maxBytes=1 << 20, backupCount=BACKUPS, encoding="utf-8", errors="backslashreplace"
    )


def _reconfigure_streams(json_out: bool) -> None:
    """Text output never fails on a character the terminal's encoding lacks; JSON is UTF-8
    whatever the locale (RFC 8259), and :func:`notifier.sinks.jsonout.dumps` keeps it valid."""
    for stream, errors in ((sys.stdout, "replace"), (sys.stderr, "backslashreplace")):
        reconfigure = getattr(stream, "reconfigure", None)
        if reconfigure is None:
            continue
        try:
            if json_out and stream is sys.stdout:
                reconfigure(encoding="utf-8", errors="backslashreplace")
            else:
                reconfigure(errors=errors)
        except (ValueError, OSError):
            pass


def main(argv: Sequence[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    parser = build_parser()
    if not argv or argv[0].startswith("-") and argv[0] not in ("-h", "--help", "--version"):
        argv = ["run", *argv]
    args = parser.parse_args(argv)
    _reconfigure_streams(bool(getattr(args, "json", False)))
    setup_logging(getattr(args, "verbose", False), log_file=args.command in ("run", "demo"))
    try:
        config = effective_config(args)
        return _dispatch(args, config)
    except ConfigError as exc:
        sys.stderr.write(f"{APP_NAME}: {exc}\n")
        return 2
    except KeyboardInterrupt:
        return 130


# Each command is the function ``cmd_<module>(args, config) -> exit code`` of its own module,
# notifier/cli/<module>.py (the command's name with "_" for "-"), imported only when it runs.
COMMANDS = ("run", "status", "doctor", "show", "history", "autostart", "config", "demo", "goto", "answer",
            "pi-extension")  # fmt: skip


def _dispatch(args: argparse.Namespace, config: Config) -> int:
    if args.command not in COMMANDS:  # pragma: no cover - argparse rejects unknown commands
        raise ConfigError(f"unknown command {clean(args.command)}")
    module = args.command.replace("-", "_")
    handler: Callable[[argparse.Namespace, Config], int] = getattr(
        importlib.import_module(f"notifier.cli.{module}"), f"cmd_{module}"
    )
    return int(handler(args, config))


if __name__ == "__main__":
    raise SystemExit(main())
