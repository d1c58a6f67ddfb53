"""``pi-notifier goto``: bring the user to the terminal (and tmux pane) of a waiting pi.

tmux: select the pane's window and pane, and switch the most recently active client to it (one
already showing that session first). Then the terminal's window is focused through the focus
method here (:mod:`notifier.system.desktop`): the compositor's interface (sway IPC: a command,
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
from dataclasses import dataclass
from typing import Any

from notifier.companion import announced_sessions
from notifier.core import commands as session_spec
from notifier.core import text as shellcmd
from notifier.core.model import Question, SessionView, Snapshot
from notifier.core.owners import Wanted
from notifier.core.text import clean
from notifier.system.desktop import ACTIVATE_TIMEOUT_S as ACTIVATE_TIMEOUT_S
from notifier.system.desktop import Missing, Window, focus_method, has_display, window_for
from notifier.system.desktop import activate_window as activate_window
from notifier.system.locate import Location, Unmatched, locate_one, locate_sessions
from notifier.system.processes import run
from notifier.system.tmux import TmuxClient, TmuxPane, invoking_client, tmux, tmux_clients
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
    :class:`BadSession` for a name that fits no session, :class:`Ambiguous` for several."""
    if spec is None or spec == session_spec.NEXT:
        if not snapshot.pending:
            left = len(snapshot.abandoned)
            raise Refused(
                "no pi session is waiting for an answer"
                + (f" ({left} abandoned: their pi stopped; 'goto SESSION' says how to resume one)" if left else "")
            )
        view, first = min(snapshot.pending, key=lambda sq: sq[1].asked_at)
        return view, first
    if not spec.strip():
        raise BadSession("SESSION is empty: give a session file, id, short id or project name")
    real = os.path.realpath(os.path.expanduser(spec))
    views = [v for v in snapshot.sessions if os.path.realpath(v.ref.key) == real]
    if not views:
        views = session_spec.matches(snapshot.sessions, spec)
    if not views:
        raise BadSession(
            f"no session has the file, id, short id or project name {clean(spec, 80)!r}"
            " (pi-notifier status lists them)"
        )
    if len(views) > 1:
        raise Ambiguous(session_spec.candidates_line(spec, views))
    view = views[0]
    question = min(view.pending, key=lambda q: q.asked_at) if view.pending else None
    return view, question


def resume_advice(view: SessionView) -> str:
    """"resume it with: COMMAND", or why no command is offered (one line for the user)."""
    line, why = resume_or_why(view.ref.cwd, view.ref.file, view.ref.host)
    return f"resume it with: {line}" if line is not None else str(why)


def attach_hint(pane: TmuxPane) -> str:
    """"run: tmux attach -t SESSION:WINDOW", or why no command is offered (a session name with
    control characters); for a message that says tmux has no client to show the pane."""
    default = os.path.join(os.environ.get("TMUX_TMPDIR", "/tmp"), f"tmux-{os.getuid()}", "default")
    sock: list[shellcmd.Word] = (
        [] if pane.socket == default else ["-S", shellcmd.Arg("the tmux socket path", pane.socket)]
    )
    target = shellcmd.Arg("the tmux session or window name", f"{pane.session}:{pane.window}")
    try:
        return "run: " + shellcmd.join(["tmux", *sock, "attach", "-t", target])
    except shellcmd.Unsafe as exc:
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
        r = run(
            [
                "kitty",
                "@",
                "--to",
                env["KITTY_LISTEN_ON"],
                "focus-window",
                "--match",
                f"id:{env['KITTY_WINDOW_ID']}",
            ]
        )
        return r is not None and r.returncode == 0
    if env.get("WEZTERM_PANE"):
        cmd = ["wezterm", "cli", "activate-pane", "--pane-id", env["WEZTERM_PANE"]]
        r = run(cmd)
        return r is not None and r.returncode == 0
    return False


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
        raise Refused(
            f"selected tmux pane {clean(loc.tmux.pane)}, but its terminal was not focused: {missing};"
            " switch to it yourself"
        )
    raise Refused(
        f"the terminal of pi (pid {loc.pid}, {clean(loc.tty or 'no tty')}) was not focused: {missing};"
        " switch to it yourself"
    )


def window_locations(window: dict[str, Any]) -> dict[str, Any]:
    """Fill ``"location"`` into the pending questions of a window object (``view.window_obj``),
    for the details pane's "Where:" line. For the UI to call when it opens or refreshes."""
    questions = [q for q in window.get("questions", []) if not q.get("abandoned") and not q.get("host")]
    wanted = [Wanted(q["file"], q.get("cwd"), q["asked_at"], True, None) for q in questions]
    try:
        found = locate_sessions(wanted, with_windows=False)
    except Exception as exc:
        log.debug("cannot locate sessions: %s", clean(exc, 200))
        found = {}
    for q in questions:
        loc = found.get(q["file"])
        q["location"] = loc.obj() if loc is not None else None
    return window


def go(config: Any, snapshot: Snapshot, session: str | None) -> tuple[int, str]:
    """``goto`` for the tray, the window and notification actions, on a snapshot they already
    have: (0 focused, 1 not possible, 2 no such session; one line to show — what was done, or
    what to do instead). A remote session (``@host:file``) opens ``ssh -t … tmux attach`` in a
    new terminal where one is found, else says the command."""
    from notifier.actions import over_ssh

    remote = over_ssh.split(config, session)
    if remote is not None:
        try:
            argv = over_ssh.goto_argv(*remote)
        except over_ssh.RemoteRefused as exc:
            return 1, clean(exc)
        # (built from checked names, so shown as it is: clean() would collapse its spaces)
        command = shellcmd.join(argv)
        if has_display() and over_ssh.open_in_terminal(argv):
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
        log.warning("goto failed: %s", clean(repr(exc), 200))
        return 1, f"could not go to the session ({clean(exc, 160)}); switch to it yourself"

