"""Command line (docs/contract.md). Bad usage or config: one line on stderr, exit code 2, no traceback.

Start-up is part of the contract's speed (``status`` over thousands of sessions, docs/contract.md
§7): this module imports nothing at first. ``--version`` answers from here; a command imports
the parser (:mod:`notifier.cli.arguments`), the configuration and then its own module only."""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING

from notifier import APP_NAME, __version__

if TYPE_CHECKING:
    import argparse
    import logging
    from collections.abc import Callable, Sequence

    from notifier.config.load import Config


class OutputError(Exception):
    """The command's output cannot be written (a full disk, no standard output): one line on
    stderr, exit code 1."""


def effective_config(args: argparse.Namespace) -> Config:
    from notifier.config.load import OPTIONS, ConfigError, apply_command_line, load
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
    import logging

    from notifier.system.log import SECRETS

    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(logging.Formatter(f"{APP_NAME}: %(message)s", validate=False))  # (a constant: no check)
    handler.addFilter(SECRETS)  # push URLs' secrets are masked in every record, apprise's too
    root = logging.getLogger()
    root.handlers[:] = [handler]
    root.setLevel(logging.DEBUG if verbose else logging.INFO)
    if log_file:
        import os

        from notifier.core.text import clean
        from notifier.system import paths

        path = os.path.join(paths.state_dir(), f"{APP_NAME}.log")
        try:
            fh = _private_log(path)
            fh.setFormatter(logging.Formatter("%(asctime)s %(levelname)s %(name)s: %(message)s"))
            fh.addFilter(SECRETS)
            root.addHandler(fh)
        except OSError as exc:
            logging.getLogger("notifier").warning(
                "cannot write the log file %s (%s); logging to stderr only", clean(path), exc
            )
    logging.getLogger("watchdog").setLevel(logging.WARNING)
    logging.getLogger("PIL").setLevel(logging.WARNING)
    from notifier.compat.watchdog import quiet_stop_race

    quiet_stop_race()  # (a harmless record of watchdog's as a watch stops: notifier/compat/watchdog.py)


BACKUPS = 3


def _private_log(path: str) -> logging.Handler:
    import os
    from logging.handlers import RotatingFileHandler

    from notifier.system import paths

    class PrivateRotatingFileHandler(RotatingFileHandler):
        def doRollover(self) -> None:
            # The new file after each rotation: made 0600 before it is opened (delay=True, so the
            # rotation itself opens nothing; rotated copies keep their mode).
            super().doRollover()
            paths.private_file(self.baseFilename)

        def emit(self, record: logging.LogRecord) -> None:
            # The state folder deleted while running and made again (by the state store): a new
            # file there, not the unlinked one.
            stream = self.stream
            folder = os.path.dirname(self.baseFilename)
            if not os.path.exists(self.baseFilename) and os.path.isdir(folder):
                if stream is not None:
                    stream.close()
                    self.stream = None  # (opened again by the write)
                paths.private_file(self.baseFilename)  # (made 0600 first)
            super().emit(record)

    paths.private_file(path)
    for n in range(1, BACKUPS + 1):  # copies rotated by older versions
        if os.path.exists(f"{path}.{n}"):
            paths.private_file(f"{path}.{n}")
    # errors: a name that is not UTF-8 is logged with \udcXX escapes, never a logging error
    return PrivateRotatingFileHandler(
        path, maxBytes=1 << 20, backupCount=BACKUPS, encoding="utf-8", errors="backslashreplace", delay=True
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
    """The program (``argv``: the arguments, else the command line's)."""
    argv = list(sys.argv[1:] if argv is None else argv)
    if argv == ["--version"]:  # what argparse's "version" action prints, without building a parser
        sys.stdout.write(f"{APP_NAME} {__version__}\n")
        return 0
    from notifier.cli.arguments import COMMANDS, build_parser

    if not argv or argv[0].startswith("-") and argv[0] not in ("-h", "--help", "--version"):
        argv = ["run", *argv]
    parser = build_parser(argv[0] if argv[0] in COMMANDS else None)
    args, extra = parser.parse_known_args(argv)
    words = getattr(args, "words", None)
    if extra and isinstance(words, list) and not any(e.startswith("-") for e in extra):
        words += extra  # (words after an option: `answer SESSION --call ID CHOICE`, the contract's order)
    elif extra:
        parser.error("unrecognized arguments: " + " ".join(extra))
    _reconfigure_streams(bool(getattr(args, "json", False)))
    verbose = getattr(args, "verbose", False)
    setup_logging(verbose, log_file=args.command in ("run", "demo"))
    from notifier.config.load import ConfigError

    try:
        config = effective_config(args)
        if config["push.urls"]:
            from notifier.system.log import SECRETS

            SECRETS.add_urls(config["push.urls"])  # (before anything could log them)
        return _dispatch(args, config)
    except ConfigError as exc:
        sys.stderr.write(f"{APP_NAME}: {exc}\n")
        return 2
    except KeyboardInterrupt:
        return 130
    except OutputError as exc:
        _say(f"cannot write the output ({exc})")
        return _output_closed()  # (what is still buffered would fail again at exit)
    except BrokenPipeError:
        if not _reader_gone():
            raise  # (another pipe, a socket: not ours to hush)
        return _output_closed()


def _reader_gone() -> bool:
    """Whether standard output is a pipe whose reader went away (``status --json | head``: it
    has what it wanted)."""
    import select

    try:
        poll = select.poll()
        poll.register(sys.stdout.fileno(), 0)
        return any(mask & select.POLLERR for _, mask in poll.poll(0))
    except (OSError, ValueError, AttributeError):  # (no stdout at all: nothing to hush either)
        return False


def _output_closed() -> int:
    """The output's reader went away, or it cannot be written: no traceback, and nothing more to
    write at exit (what is still buffered goes nowhere). Exit code 1."""
    import os

    try:
        null = os.open(os.devnull, os.O_WRONLY)
        os.dup2(null, sys.stdout.fileno())
        os.close(null)
    except (OSError, ValueError, AttributeError):
        pass
    return 1


def _say(line: str) -> None:
    """One line on stderr, if there is a stderr."""
    try:
        if sys.stderr is not None:
            sys.stderr.write(f"{APP_NAME}: {line}\n")
    except (OSError, ValueError):
        pass


# What carries out each command (:data:`notifier.cli.arguments.COMMANDS`): a function ``(args,
# config) -> exit code``, named here in full so that a search finds it, and imported only when its
# command runs (each command's start-up pays for its own modules only).
HANDLERS = {
    "run": "notifier.cli.run:cmd_run",
    "status": "notifier.cli.status:cmd_status",
    "doctor": "notifier.cli.doctor:cmd_doctor",
    "show": "notifier.cli.show:cmd_show",
    "quit": "notifier.cli.quit:cmd_quit",
    "history": "notifier.cli.history:cmd_history",
    "autostart": "notifier.cli.autostart:cmd_autostart",
    "config": "notifier.cli.config:cmd_config",
    "goto": "notifier.cli.goto:cmd_goto",
    "answer": "notifier.cli.answer:cmd_answer",
    "snooze": "notifier.cli.snooze:cmd_snooze",
    "mute": "notifier.cli.mute:cmd_mute",
    "unmute": "notifier.cli.unmute:cmd_unmute",
    "pi-extension": "notifier.cli.pi_extension:cmd_pi_extension",
    "demo": "notifier.cli.demo:cmd_demo",
}


def handler(command: str) -> Callable[[argparse.Namespace, Config], int]:
    """The function of ``command`` (:data:`HANDLERS`), its module imported now."""
    import importlib

    module, _, name = HANDLERS[command].partition(":")
    found: Callable[[argparse.Namespace, Config], int] = getattr(importlib.import_module(module), name)
    return found


def _dispatch(args: argparse.Namespace, config: Config) -> int:
    if args.command not in HANDLERS:  # pragma: no cover - argparse rejects unknown commands
        from notifier.config.load import ConfigError
        from notifier.core.text import clean

        raise ConfigError(f"unknown command {clean(args.command)}")
    return int(handler(args.command)(args, config))


if __name__ == "__main__":
    raise SystemExit(main())
