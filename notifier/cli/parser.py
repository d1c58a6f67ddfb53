"""The command line (docs/contract.md): ``main``, every command's arguments (one argparse parser,
built for the command that runs, or with every command: ``--help``, or a name that is no command),
and what the commands share. Bad usage or config: one line on stderr through :func:`fail` (the
sanitizer's), exit code 2, no traceback.

Start-up is part of the contract's speed (``status`` over thousands of sessions, docs/contract.md
§7): a command imports the configuration and then its own module only (:data:`COMMANDS` names
each command's function; it is imported when its command runs)."""

from __future__ import annotations

import argparse
import contextlib
import os
import sys
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any, NamedTuple, NoReturn

from notifier import APP_NAME, __version__
from notifier.core.text import clean

if TYPE_CHECKING:
    import logging

    from notifier.config import Config
    from notifier.core.model import Snapshot
    from notifier.remote import Remote
    from notifier.sessions import EngineOptions


class OutputError(Exception):
    """The command's output cannot be written (a full disk, no standard output): one line on
    stderr, exit code 1."""


def say(message: object) -> None:
    """``message`` as one line on stderr (sanitized), if there is a stderr."""
    with contextlib.suppress(OSError, ValueError, AttributeError):  # (AttributeError: no stderr)
        sys.stderr.write(f"{APP_NAME}: {clean(message)}\n")


def out(*texts: str, flush: bool = False) -> None:
    """``texts`` to standard output (``flush``: then flushed). An output that cannot be written is
    :class:`OutputError`, one line; a reader that went away stays a BrokenPipeError (see main)."""
    try:
        for text in texts:
            sys.stdout.write(text)
        if flush:
            sys.stdout.flush()
    except BrokenPipeError:
        raise
    except AttributeError:  # (started with its output closed)
        raise OutputError("there is no standard output") from None
    except OSError as exc:
        raise OutputError(exc.strerror or str(exc)) from None


def fail(code: int, message: object) -> int:
    """:func:`say` ``message``; return the exit ``code``. Every one-line failure of a command goes
    through here: bad usage and config (2) and what could not be done (1)."""
    say(message)
    return code


def sessions_of(config: Config, spec: str | None, dialogs: bool = False) -> tuple[EngineOptions, Snapshot]:
    """The engine's options of ``config`` and a scan of its folders (``dialogs``: with the dialogs
    pi shows now), plus the session of ``spec`` when that is a session file outside the watched
    folders (a copied file, another ``--sessions-dir``): SESSION may be a file anywhere."""
    import dataclasses

    from notifier.sessions import EngineOptions, engine_options, scan_once

    options = engine_options(config)
    snapshot = scan_once(options)
    if dialogs:
        from notifier.companion import with_open_dialogs

        snapshot = with_open_dialogs(snapshot, options)
    path = os.path.realpath(os.path.expanduser(spec)) if spec and spec != "next" else ""
    session_file = path.endswith(".jsonl") and os.path.isfile(path)
    if not session_file or any(os.path.realpath(v.ref.key) == path for v in snapshot.sessions):
        return options, snapshot
    folder = EngineOptions([os.path.dirname(path)], options.catalog, options.liveness, options.max_line)
    extra = [v for v in scan_once(folder).sessions if os.path.realpath(v.ref.key) == path]
    return options, dataclasses.replace(snapshot, sessions=(*snapshot.sessions, *extra)) if extra else snapshot


def app_status(config: Config, brief: bool = False) -> dict[str, Any] | None:
    """The running app's status object (``brief``: its summary, asked for with a short timeout,
    fit for a 1-second refresh) when one answers for these folders and settings; else None."""
    from notifier.control import request

    ask = {"cmd": "status", "roots": config["sessions_dirs"], "liveness": config["liveness"],
           "question_tools": config["question_tools"], **({"brief": True} if brief else {})}
    live = request(ask, timeout=0.8) if brief else request(ask)
    found = live.get("summary" if brief else "status") if live and live.get("ok") else None
    return found if isinstance(found, dict) else None


def waiting_remote(config: Config, token: str | None = None) -> tuple[Remote, str] | None:
    """The remote and its session file when the question ``next`` means (the one waiting
    longest), or the one with ``token``, is a remote's: those only the running app knows. None:
    it is this machine's, or none waits, or no app answers, or no remote is configured."""
    from notifier.actions.goto import configured, remote_target
    from notifier.core.codec import parse_iso

    status = app_status(config) if configured(config) else None
    first: tuple[float, Any, Any] | None = None
    for s in status.get("sessions") or () if status else ():
        for q in (s.get("pending") or ()) if isinstance(s, dict) else ():
            at = parse_iso(q.get("asked_at")) if isinstance(q, dict) else None
            if at is not None and (token is None or q.get("token") == token) and (first is None or at < first[0]):
                first = (at, s.get("host"), s.get("file"))
    if first is None or not isinstance(first[1], str) or not isinstance(first[2], str):
        return None
    return remote_target(config, f"{first[1]}:{first[2]}")


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> NoReturn:
        # (argparse quotes the arguments it names as typed: an escape sequence would reach the terminal)
        raise SystemExit(fail(2, f"{clean(message, 600)} (see '{self.prog} --help')"))


Arg = tuple[tuple[str, ...], dict[str, Any]]  # add_argument's names and keywords


def _flag(name: str, help: str) -> Arg:
    return (name,), {"action": "store_true", "help": help}


JSON = _flag("--json", "print one JSON object")
_SESSIONS_OPTIONS: tuple[Arg, ...] = (
    (("--liveness",), {"choices": ("auto", "off"), "help": "mark questions of pi processes that died as abandoned"}),
    (("--question-tool",), {"metavar": "NAME", "action": "append", "dest": "question_tools",
                            "help": "treat tool NAME as a question tool too; a glob pattern such as"
                            " 'mcp__*__ask*' (quoted) matches names (repeatable)"}),
)
_WATCHING = frozenset({"run", "show"})  # the commands that watch the sessions folders (others read them once)


def _sessions_options(watches: bool) -> tuple[Arg, ...]:
    """The options of every command that reads the sessions folders (``watches``: it follows them)."""
    verb = "watch" if watches else "read"
    return (
        (("--sessions-dir",), {"metavar": "DIR", "action": "append", "dest": "sessions_dirs",
                               "help": f"pi sessions folder to {verb} (repeatable; replaces the default)"}),
        *_SESSIONS_OPTIONS,
    )


_SESSION = {"nargs": "?", "metavar": "SESSION", "help": "a project or session name, a short id (see status), an id"
            " or unique id prefix, a session file, or next (the default: the longest-waiting question)"}
_ANSWER_DESCRIPTION = (
    "CHOICE is a 1-based option number or an exact option label (several for a multi-select "
    "question, or one per question of a form). With two or more words the first is taken as "
    "SESSION when it names a session (a project or session name, a short id, an id or id prefix, a file, "
    "or next)."
)


class Subcommand(NamedTuple):
    """A command: its help, the function that carries it out (``(args, config) -> exit code``, a
    module of ``notifier.cli`` and its name, imported only when its command runs: each command's
    start-up pays for its own modules only), its own arguments (``one_of``: of which at most one
    is given), whether it reads the sessions folders (``reads_sessions``: it takes their options)
    and its description."""

    help: str
    handler: str
    arguments: tuple[Arg, ...] = ()
    one_of: tuple[Arg, ...] = ()
    reads_sessions: bool = True
    description: str | None = None


# Each command, in the order --help lists them.
COMMANDS: dict[str, Subcommand] = {
    "run": Subcommand("tray + notifications, watching the sessions folder (the default command)", "run:cmd_run", (
        _flag("--no-tray", "no tray icon (headless)"),
        _flag("--no-notify", "no desktop notifications"),
        _flag("--json", "print one JSON event per line on stdout"),
        _flag("--stop-on-eof", "stop when standard input is closed (how a remote link ends its run --json)"),
    )),
    "status": Subcommand(
        "print the sessions with a question or active in the last day (--all, --json: every session) and"
        " their pending questions, then exit", "status:cmd_status", (
        _flag("--all", "list every session, not only recent ones"),
    ), one_of=(
        JSON,
        _flag("--tmux", "a tmux status-line segment: 'π 2' while questions wait, else nothing"),
        _flag("--bar", "one JSON line for waybar / polybar / i3blocks (text, tooltip, class)"),
    )),
    "doctor": Subcommand("what works here: sessions folder, watcher limits, tray, notifications", "doctor:cmd_doctor"),
    "show": Subcommand("open the pending-questions window", "goto:cmd_show", (
        (("--focus",), {"nargs": 2, "metavar": ("FILE", "CALL_ID"), "help": "select this question"}),
        _flag("--attach", argparse.SUPPRESS),
    )),
    "quit": Subcommand(
        "stop the running app (the tray app; headless runs are left alone)", "quit:cmd_quit", reads_sessions=False
    ),
    "history": Subcommand("questions asked, how long each waited, how it ended", "history:cmd_history", (
        JSON,
        (("--since",), {"metavar": "DAYS", "help": "only the last DAYS days (7, 0.5, 30d)"}),
    ), reads_sessions=False),
    "autostart": Subcommand("start pi-notifier with your desktop session", "install:cmd_autostart", (
        (("action",), {"choices": ("install", "remove", "status")}),
    ), reads_sessions=False),
    "config": Subcommand("print the effective configuration and where each value came from", "parser:cmd_config"),
    "goto": Subcommand("bring you to the terminal / tmux pane of a waiting pi", "goto:cmd_goto", (
        (("session",), _SESSION),
        _flag("--print", "only print where it is (JSON), change nothing"),
    )),
    "answer": Subcommand(
        "answer a waiting pi from here (keys into its tmux pane, checked on screen first)", "answer:cmd_answer", (
            (("words",), {"nargs": "*", "metavar": "[SESSION] CHOICE", "help": "the session, then the answer"}),
            (("--call",), {"metavar": "TOOL_CALL_ID", "help": "the question's tool call (default: the oldest)"}),
            (("--token",), {"metavar": "TOKEN", "help": "only the question with this token (status --json):"
                            " refused when what waits is not what was shown"}),
            (("--text",), {"metavar": "TEXT", "help": "type this free-text answer instead of choosing"}),
            (("--timeout",), {"type": float, "default": 15.0, "metavar": "S",
                              "help": "how long to wait for pi to record it"}),
        ), description=_ANSWER_DESCRIPTION,
    ),
    "snooze": Subcommand("hold back notifications for a while: all, a project or a session", "snooze:cmd_snooze", (
        (("words",), {"nargs": "*", "metavar": "[WHAT] [DURATION]", "help": "WHAT: all (default), a project or a"
                      " SESSION; DURATION: 15m (default), 1h, 2h30m, 1d, tomorrow (08:00), or off to resume"}),
    )),
    "mute": Subcommand("no notifications from a project until unmute", "snooze:cmd_snooze", (
        (("what",), {"metavar": "WHAT", "help": "a project, or a SESSION (its project)"}),
    )),
    "unmute": Subcommand("notifications from a muted project again", "snooze:cmd_snooze", (
        (("what",), {"metavar": "WHAT", "help": "a muted project, a SESSION (its project), or all"}),
    )),
    "pi-extension": Subcommand(
        "the optional companion pi extension (exact dialogs, answers)", "install:cmd_pi_extension", (
            (("action",), {"choices": ("install", "remove", "status")}),
            _flag("--json", "status: print one JSON object"),
        ), reads_sessions=False,
    ),
    "demo": Subcommand("replay a recorded pi session so you can see the notification, icon and window",
                    "demo:cmd_demo", (_flag("--no-tray", argparse.SUPPRESS),), reads_sessions=False),
}


def _add_arguments(p: argparse.ArgumentParser, name: str, command: Subcommand) -> None:
    p.add_argument("--config", metavar="FILE", help="configuration file (default: the per-user config.toml)")
    p.add_argument("-v", "--verbose", action="store_true", help="log more detail")
    sessions = _sessions_options(name in _WATCHING) if command.reads_sessions else ()
    for names, options in (*sessions, *command.arguments):
        p.add_argument(*names, **options)
    if command.one_of:
        group = p.add_mutually_exclusive_group()
        for names, options in command.one_of:
            group.add_argument(*names, **options)


def build_parser(command: str | None = None) -> argparse.ArgumentParser:
    """The parser of every command; given a ``command``, only that one (the others would never
    parse anything: argv names this one, so no "invalid choice" can list them)."""
    parser = _Parser(
        prog=APP_NAME, description="Tells you the moment a pi coding agent session waits for your answer."
    )
    parser.add_argument("--version", action="version", version=f"{APP_NAME} {__version__}")
    sub = parser.add_subparsers(dest="command", parser_class=_Parser, metavar="COMMAND")
    for name, each in COMMANDS.items():
        if command is None or name == command:
            _add_arguments(sub.add_parser(name, help=each.help, description=each.description), name, each)
    return parser


def effective_config(args: argparse.Namespace) -> Config:
    from notifier.config import OPTIONS, ConfigError, load
    from notifier.system import paths

    explicit = args.config
    if explicit is not None and not explicit.strip():
        raise ConfigError("command line: '--config' must be a file path, not empty")
    config = load(explicit or paths.config_file(), explicit=bool(explicit))
    for key, (option, said) in OPTIONS.items():  # (checked as the key they set; a folder may be relative)
        value = getattr(args, key, None)
        if key == "sessions_dirs" and value is not None:
            value = [os.path.abspath(os.path.expanduser(v)) if v.strip() else v for v in value]
        if value is not None:
            config.set(key, value, "command line", shown=option, said=said)
    if not config["sessions_dirs"]:
        config.values["sessions_dirs"] = [paths.default_sessions_dir()]
        config.sources["sessions_dirs"] = "pi's default"
    for d in config["sessions_dirs"]:  # (one that does not exist yet is watched for)
        if os.path.exists(d) and not os.path.isdir(d):
            raise ConfigError(f"{config.sources['sessions_dirs']}: sessions folder {clean(d)} is a file, not a folder")
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
        from notifier.system import paths

        path = os.path.join(paths.state_dir(), f"{APP_NAME}.log")
        try:
            root.addHandler(fh := _private_log(path))
            fh.setFormatter(logging.Formatter("%(asctime)s %(levelname)s %(name)s: %(message)s"))
            fh.addFilter(SECRETS)
        except OSError as exc:
            logging.getLogger("notifier").warning(
                "cannot write the log file %s (%s); logging to stderr only", clean(path), exc
            )
    for quiet in ("watchdog", "PIL", *(() if verbose else ("apprise",))):  # (apprise: a line per push sent)
        logging.getLogger(quiet).setLevel(logging.WARNING)
    from notifier.compat import quiet_stop_race

    quiet_stop_race()  # (a harmless record of watchdog's as a watch stops: notifier/compat.py)


BACKUPS = 3


def _private_log(path: str) -> logging.Handler:
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
            # file there (made 0600 first), not the unlinked one.
            if not os.path.exists(self.baseFilename) and os.path.isdir(os.path.dirname(self.baseFilename)):
                if self.stream is not None:
                    self.stream.close()
                    self.stream = None  # (opened again by the write)
                paths.private_file(self.baseFilename)
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
    whatever the locale (RFC 8259), and :func:`notifier.outputs.jsonout.dumps` keeps it valid."""
    stdout = {"encoding": "utf-8", "errors": "backslashreplace"} if json_out else {"errors": "replace"}
    for stream, how in ((sys.stdout, stdout), (sys.stderr, {"errors": "backslashreplace"})):
        with contextlib.suppress(AttributeError, ValueError, OSError):
            stream.reconfigure(**how)  # type: ignore[union-attr]


def main(argv: Sequence[str] | None = None) -> int:
    """The program (``argv``: the arguments, else the command line's)."""
    argv = list(sys.argv[1:] if argv is None else argv)
    if argv == ["--version"]:  # what argparse's "version" action prints, without building a parser
        sys.stdout.write(f"{APP_NAME} {__version__}\n")
        return 0
    if not argv or argv[0].startswith("-") and argv[0] not in ("-h", "--help", "--version"):
        argv = ["run", *argv]
    parser = build_parser(argv[0] if argv[0] in COMMANDS else None)
    args, extra = parser.parse_known_args(argv)
    words = getattr(args, "words", None)
    at = extra.index("--") if "--" in extra else len(extra)
    before, after = extra[:at], extra[at + 1 :]
    if extra and isinstance(words, list) and not any(e.startswith("-") for e in before):
        # words after an option: `answer SESSION --call ID CHOICE` (the contract's order), and
        # after `--` words that start with a dash (`answer SESSION --call ID -- -x`)
        words += before + after
    elif extra:  # (said with the command's own help to see)
        raise SystemExit(fail(2, f"unrecognized arguments: {clean(' '.join(extra), 600)} (see '{parser.prog}"
                                 f"{' ' + args.command if args.command else ''} --help')"))
    _reconfigure_streams(bool(getattr(args, "json", False)))
    setup_logging(args.verbose, log_file=args.command in ("run", "demo"))
    from notifier.config import ConfigError

    try:
        config = effective_config(args)
        if config["push.urls"]:
            from notifier.system.log import SECRETS

            SECRETS.add_urls(config["push.urls"])  # (before anything could log them)
        return int(handler(args.command)(args, config))
    except ConfigError as exc:  # (bad usage or config: one line, exit 2)
        return fail(2, exc)
    except KeyboardInterrupt:
        return 130
    except OutputError as exc:
        say(f"cannot write the output ({exc})")
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
    try:
        null = os.open(os.devnull, os.O_WRONLY)
        os.dup2(null, sys.stdout.fileno())
        os.close(null)
    except (OSError, ValueError, AttributeError):
        pass
    return 1


Handler = Callable[[argparse.Namespace, "Config"], int]


def handler(command: str) -> Handler:
    """The function of ``command`` (:data:`COMMANDS`), its module imported now."""
    import importlib

    module, _, name = COMMANDS[command].handler.partition(":")
    found: Handler = getattr(importlib.import_module(f"notifier.cli.{module}"), name)
    return found


def cmd_config(args: argparse.Namespace, config: Config) -> int:
    """``pi-notifier config``: the effective configuration and where each value came from."""
    from notifier.config import config_text

    out(config_text(config), "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
