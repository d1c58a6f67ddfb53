"""``pi-notifier goto``: bring the user to the terminal (and tmux pane) of a waiting pi; and
``goto``, ``answer`` and ``doctor`` on a remote session (SESSION given as ``HOST:SPEC``), through
the same ssh as the remote's stream, by pi-notifier on that machine.

tmux: select the pane's window and pane, and switch the most recently active client to it (one
already showing that session first). Then the terminal's window is focused through the focus
method here (:mod:`notifier.system.window_manager`): the compositor's interface (sway IPC: a command,
so an X11 terminal under XWayland is focused too, whatever ``focus_on_window_activation`` says),
else X11 EWMH (the ``_NET_ACTIVE_WINDOW`` client message), checked to have become focused.
kitty / wezterm outside tmux: their remote control too, where pi's environment names it. Where
nothing could focus it, what is missing and what to do instead (exit code 1: never "done" when
nothing was focused).
Whether the user is already looking at a session is :mod:`notifier.system.focus`.
"""

from __future__ import annotations

import logging
import os
import shutil
import subprocess
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from notifier.companion import announced_sessions
from notifier.config import Config
from notifier.core import codec, commands
from notifier.core.model import Question, SessionView, Snapshot
from notifier.core.owners import Wanted
from notifier.core.text import Arg, Unsafe, Word, clean, join, remote_words
from notifier.remote import Remote, remote_from_config, ssh_argv
from notifier.system import processes
from notifier.system.locate import Location, Unmatched, fill_locations, locate_one, locate_sessions
from notifier.system.processes import run
from notifier.system.tmux import TmuxClient, TmuxPane, invoking_client, tmux, tmux_clients
from notifier.system.window_manager import Missing, Window, focus_method, has_display, window_for
from notifier.window.view import resume_or_why

log = logging.getLogger(__name__)


class Refused(Exception):
    """Cannot be done; the message says what to do instead (exit code 1)."""


class BadSession(ValueError):
    """SESSION names no session, or several (exit code 2)."""


class Ambiguous(BadSession):
    """SESSION names several sessions (the message names them, on one line)."""


@dataclass(frozen=True)
class Target:
    view: SessionView
    question: Question | None
    location: Location | None


def pick(snapshot: Snapshot, spec: str | None) -> tuple[SessionView, Question | None]:
    """SESSION → its view (and its longest-waiting question); omitted or ``next``: the
    longest-waiting live question of all. SESSION is a session file (anywhere: the caller adds
    the session of a file outside the watched folders to ``snapshot``), an id, a short id, a
    unique id prefix, or a session or project name (:mod:`notifier.core.commands`). Raises
    :class:`BadSession` for a name that fits no session, :class:`Ambiguous` for several;
    :class:`Refused` when, omitted or ``next``, no question waits."""
    if spec is None or spec == commands.NEXT:
        if not snapshot.pending:
            left = len(snapshot.abandoned)
            raise Refused(
                "no pi session is waiting for an answer"
                + (f" ({left} abandoned: their pi stopped; 'goto SESSION' says how to resume one)" if left else "")
            )
        return min(snapshot.pending, key=lambda sq: sq[1].asked_at)
    if not spec.strip():
        raise BadSession("SESSION is empty: give a session file, id, short id or project name")
    real = os.path.realpath(os.path.expanduser(spec))
    views = [v for v in snapshot.sessions if os.path.realpath(v.ref.key) == real]
    views = views or commands.matches(snapshot.sessions, spec)
    if not views:
        raise BadSession(
            f"no session has the file, id, short id or project name {clean(spec, 80)!r}"
            " (pi-notifier status lists them)"
        )
    if len(views) > 1:
        raise Ambiguous(commands.candidates_line(spec, views))
    return views[0], min(views[0].pending, key=lambda q: q.asked_at, default=None)


def resume_advice(view: SessionView) -> str:
    """"resume it with: COMMAND", or why no command is offered (one line for the user)."""
    line, why = resume_or_why(view.ref.cwd, view.ref.file, view.ref.host)
    return f"resume it with: {line}" if line is not None else str(why)


def attach_hint(pane: TmuxPane) -> str:
    """"run: tmux attach -t SESSION:WINDOW", or why no command is offered (a session name with
    control characters); for a message that says tmux has no client to show the pane."""
    default = os.path.join(os.environ.get("TMUX_TMPDIR", "/tmp"), f"tmux-{os.getuid()}", "default")
    sock: list[Word] = (
        [] if pane.socket == default else ["-S", Arg("the tmux socket path", pane.socket)]
    )
    target = Arg("the tmux session or window name", f"{pane.session}:{pane.window}")
    try:
        return "run: " + join(["tmux", *sock, "attach", "-t", target])
    except Unsafe as exc:
        return f"attach to it yourself (no command is offered: {exc})"


def target(snapshot: Snapshot, spec: str | None) -> Target:
    """The session, its question and where its pi is. Raises :class:`Refused` when two pis could
    be the one that has it (the evidence cannot tell them apart)."""
    view, question = pick(snapshot, spec)
    found = locate_one(view, neighbours=snapshot.sessions, with_windows=True, announced=announced_sessions())
    if isinstance(found, Unmatched) and found.ambiguous:
        raise Refused(found.reason)
    return Target(view, question, found if isinstance(found, Location) else None)


# ---- tmux ----


def select_pane(pane: TmuxPane, here: str | None = None) -> TmuxClient:
    """Make ``pane`` the pane a client shows; the client it chose (``here``: the tty of the
    client this command runs in, chosen first). Raises :class:`Refused`."""
    if tmux(pane.socket, "select-window", "-t", pane.window_id) is None or (
        tmux(pane.socket, "select-pane", "-t", pane.pane) is None
    ):
        raise Refused(f"tmux could not select pane {clean(pane.pane)}: it may have closed")
    clients = tmux_clients(pane.socket)
    if not clients:
        raise Refused(f"the tmux session is not attached to a terminal; {attach_hint(pane)}")
    ours = [c for c in clients if c.tty == here] or [c for c in clients if c.session == pane.session]
    client = (ours or clients)[0]
    if tmux(pane.socket, "switch-client", "-c", client.tty, "-t", pane.pane) is None:
        raise Refused(f"tmux could not switch its client to the pane; {attach_hint(pane)}")
    return client


def _terminal_remote(loc: Location) -> bool:
    """kitty / wezterm remote control, where pi's environment names a window or pane."""
    env = loc.env
    if env.get("KITTY_WINDOW_ID") and env.get("KITTY_LISTEN_ON"):
        argv = ["kitty", "@", "--to", env["KITTY_LISTEN_ON"], "focus-window", "--match", f"id:{env['KITTY_WINDOW_ID']}"]
    elif env.get("WEZTERM_PANE"):
        argv = ["wezterm", "cli", "activate-pane", "--pane-id", env["WEZTERM_PANE"]]
    else:
        return False
    r = run(argv)
    return r is not None and r.returncode == 0


def focus(view: SessionView, loc: Location | None) -> str:
    """Bring the user to ``loc``. Returns what was done; raises :class:`Refused` with what is
    missing and what to do instead (the tmux pane is selected first either way)."""
    if loc is None:
        raise Refused(f"no running pi has this session; {resume_advice(view)}")
    owner = [loc.pid]
    if loc.tmux is not None:
        here = invoking_client(loc.tmux.socket, os.environ)  # (run inside this tmux: where the user is)
        client = select_pane(loc.tmux, here)
        if here is not None and client.tty == here:
            # run from that client (a key binding, a shell in it): its terminal is the one in use
            return f"switched this tmux client to {loc.describe()}"
        owner = [client.pid]  # the terminal to focus is the tmux client's
    method = focus_method()
    missing = method.reason if isinstance(method, Missing) else None
    if not isinstance(method, Missing):
        try:
            wid = window_for(owner, method.windows())
        except Exception as exc:
            wid, missing = None, f"{method.name} did not answer ({clean(exc, 120)})"
        if wid is not None:
            if not method.activate(wid):
                raise Refused(
                    f"{method.name} did not focus the terminal ({Window(method.via, wid).describe()});"
                    " switch to it yourself"
                )
            if loc.tmux is None:
                _terminal_remote(loc)  # kitty / wezterm: their own tab or pane inside that window
            return f"focused {loc.describe()} through {method.name}"
        if missing is None:
            missing = method.limits or f"{method.name} lists no window of pid {owner[0]} or of its parents"
    if loc.tmux is None and _terminal_remote(loc):
        return f"focused {loc.describe()} through its terminal's remote control"
    if loc.tmux is not None:
        where = f"selected tmux pane {clean(loc.tmux.pane)}, but its terminal"
    else:
        where = f"the terminal of pi (pid {loc.pid}, {clean(loc.tty or 'no tty')})"
    raise Refused(f"{where} was not focused: {missing}; switch to it yourself")


def window_locations(window: dict[str, Any]) -> dict[str, Any]:
    """Fill ``"location"`` into the pending questions of a window object (``view.window_obj``),
    for the details pane's "Where:" line. For the UI to call when it opens or refreshes."""
    questions = [q for q in window.get("questions", []) if not q.get("abandoned") and not q.get("host")]
    wanted = [Wanted(q["file"], q.get("cwd"), q["asked_at"], True, None) for q in questions]
    fill_locations(questions, lambda: locate_sessions(wanted, with_windows=False))
    return window


def go(config: Any, snapshot: Snapshot, session: str | None) -> tuple[int, str]:
    """``goto`` for the tray, the window and notification actions, on a snapshot they already
    have: (0 focused, 1 not possible, 2 no such session; one line to show — what was done, or
    what to do instead). A remote session (``@host:file``) opens ``ssh -t … tmux attach`` in a
    new terminal where one is found, else says the command."""
    remote = remote_target(config, session)
    if remote is not None:
        try:
            argv = goto_argv(*remote)
        except RemoteRefused as exc:
            return 1, clean(exc)
        # (built from checked names, so shown as it is: clean() would collapse its spaces)
        command = join(argv)
        if has_display() and open_in_terminal(argv):
            return 0, f"opened in a new terminal: {command}"
        return 1, f"no terminal to open here; run: {command}"
    try:
        t = target(snapshot, session)
        return 0, focus(t.view, t.location)
    except BadSession as exc:
        return 2, clean(exc)
    except Refused as exc:
        return 1, clean(exc)
    except Exception as exc:  # a tmux or X11 failure nobody foresaw: said, never raised into the UI
        log.warning("goto failed: %s", repr(exc))
        return 1, f"could not go to the session ({clean(exc, 160)}); switch to it yourself"


# ---- a remote session, through ssh ----

SSH_TIMEOUT_S = 15.0
PRINT_LIMIT = 1 << 20  # bytes of the remote's 'goto --print' line (a location object: a few hundred)


def configured(config: Config) -> list[Remote]:
    return [remote_from_config(item) for item in config["remotes"]]


def remote_target(config: Config, spec: str | None) -> tuple[Remote, str] | None:
    """``devbox:SPEC`` (or a key ``@devbox:FILE`` from the window) names a session on a remote."""
    host, _, rest = (spec or "").removeprefix("@").partition(":")
    if not rest:
        return None
    return next(((remote, rest) for remote in configured(config) if remote.name == host), None)


class RemoteRefused(Exception):
    """Cannot be done on the remote; the message says why (exit code 1)."""


def _ssh(remote: Remote, words: list[str], timeout: float) -> subprocess.CompletedProcess[str]:
    """``words`` run by the remote's ssh; :class:`RemoteRefused` when it cannot be reached."""
    if remote.ssh is None:
        raise RemoteRefused(f"remote {remote.name} is a command, not ssh: go to that machine to do this")
    try:
        return processes.run_or_raise(ssh_argv(remote, words), timeout)
    except processes.CannotRun as exc:
        raise RemoteRefused(f"cannot reach {clean(remote.name)}: {exc}") from None


def goto_argv(remote: Remote, spec: str) -> list[str]:
    """``ssh -t HOST tmux -S SOCKET attach -t SESSION:WINDOW`` for the remote session's tmux pane
    (asked of the remote's own ``pi-notifier goto --print`` through the same ssh; the socket of
    the tmux server it runs in, which need not be the remote user's default), as an argv: the words
    after HOST are quoted once for the remote shell (ssh joins them with spaces for it). The
    remote's names are checked first: one that cannot be shown in a command (control
    characters…) is :class:`RemoteRefused`, with the reason."""
    done = _ssh(remote, ["pi-notifier", "goto", spec, "--print"], SSH_TIMEOUT_S)
    try:
        where = codec.loads(done.stdout.strip().splitlines()[-1], max_bytes=PRINT_LIMIT)
    except (ValueError, IndexError):
        where = None
    tm = where.get("tmux") if isinstance(where, dict) else None
    if not isinstance(tm, dict) or not isinstance(tm.get("session"), str):
        reason = clean(done.stderr, 300) or "it does not run in tmux there"
        raise RemoteRefused(f"{clean(remote.name)}: {reason}")
    window = tm.get("window")
    has_window = isinstance(window, (str, int)) and not isinstance(window, bool)
    target = f"{tm['session']}:{window}" if has_window else tm["session"]
    socket = tm.get("socket")
    sock: list[Word] = ["-S", Arg("its tmux socket path", socket)] if isinstance(socket, str) and socket else []
    try:
        there = remote_words(["tmux", *sock, "attach", "-t", Arg("its tmux session or window name", target)])
        argv = ["ssh", "-t", *remote.ssh_options, remote.ssh or "", *there]
        join(argv)  # (every local word can be shown too: options and destination)
    except Unsafe as exc:
        raise RemoteRefused(
            f"{clean(remote.name)}: its pi runs in tmux, but no command to attach to it is offered: {exc}"
        ) from None
    return argv


def open_in_terminal(argv: Sequence[str]) -> bool:
    """Run ``argv`` in a new terminal window where one is known (best effort; no shell here)."""
    for term, flag in (("x-terminal-emulator", "-e"), ("xterm", "-e"), ("gnome-terminal", "--")):
        path = shutil.which(term)
        if path:
            try:
                subprocess.Popen([path, flag, *argv], stdin=subprocess.DEVNULL, start_new_session=True)
                return True
            except OSError:
                continue
    return False


def answer_remote(
    remote: Remote, spec: str, choices: Sequence[str], timeout: float, **flags: str | None
) -> tuple[int, str, str]:
    """Runs ``pi-notifier answer --FLAG=VALUE… -- SPEC CHOICE…`` on the remote (``flags``: call,
    token, text; ``None``: not given): (exit code, stdout, stderr). Each value is joined to its
    option and the words follow ``--``: a text, a choice or a name that starts with "-" is read
    as itself, never as an option (every argparse reads that order the same)."""
    given = [f"--{flag}={value}" for flag, value in flags.items() if value is not None]
    argv = ["pi-notifier", "answer", *given, f"--timeout={timeout:g}", "--", spec, *choices]
    done = _ssh(remote, argv, timeout + SSH_TIMEOUT_S)
    code = done.returncode if done.returncode in (0, 1, 2) else 1
    return code, done.stdout, done.stderr


# ---- doctor ----


def check_remote(remote: Remote, timeout: float = SSH_TIMEOUT_S) -> tuple[bool, str]:
    """Is it reachable, with pi-notifier there, and which version (one line)."""
    command = remote.command  # (a command remote: its program, the words before "run", asked for its version)
    program = command[: command.index("run")] if "run" in command else command[:1]
    argv = ssh_argv(remote, ["pi-notifier", "--version"]) if remote.ssh else [*program, "--version"]
    try:
        done = processes.run_or_raise(argv, timeout, new_session=bool(remote.ssh))
    except processes.CannotRun as exc:
        return False, str(exc)
    out = clean(done.stdout, 120)
    if done.returncode == 0 and out:
        return True, out
    err = clean(done.stderr, 200)
    if done.returncode == 127 or "not found" in err:
        return False, "reachable, but pi-notifier is not installed there (or not on its PATH)"
    return False, err or f"exit code {done.returncode}"
