"""``pi-notifier goto``: bring the user to the terminal (and tmux pane) of a waiting pi.

tmux: select the pane's window and pane, and switch the most recently active client to it (one
already showing that session first). X11: activate the terminal window with the EWMH
``_NET_ACTIVE_WINDOW`` client message and check that it became active. kitty / wezterm outside
tmux: their remote control, where pi's environment names it. Elsewhere: say what to do instead.
Whether the user is already looking at a session is :mod:`notifier.system.focus`.
"""

from __future__ import annotations

import logging
import os
import time
from dataclasses import dataclass
from typing import Any

from notifier.core import session_spec, shellcmd
from notifier.core.model import Question, SessionView, Snapshot
from notifier.core.text import clean
from notifier.system.locate import Location, Wanted, locate_sessions
from notifier.system.programs import run
from notifier.system.tmux import TmuxClient, TmuxPane, tmux, tmux_clients
from notifier.system.x11 import active_window, open_display, window_for, x_windows_by_pid
from notifier.ui.view import resume_or_why

log = logging.getLogger(__name__)
ACTIVATE_TIMEOUT_S = 3.0


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
    unique id prefix, or a session or project name (:mod:`notifier.core.session_spec`). Raises
    :class:`BadSession` for a name that fits no session, :class:`Ambiguous` for several."""
    if spec is None or spec == session_spec.NEXT:
        if not snapshot.pending:
            raise Refused("no pi session is waiting for an answer")
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


def resume_hint(view: SessionView) -> str:
    """The command that resumes the session (``cd DIR && pi --session FILE``), to follow
    "resume it with: "; where a name cannot be shown in a command, what to do instead and why.
    Either way ``clean()`` leaves it as it is. :func:`resume_advice` is the whole clause."""
    line, why = resume_or_why(view.ref.cwd, view.ref.file, view.ref.host)
    return line if line is not None else f"pi in its folder, by hand ({why})"


def resume_advice(view: SessionView) -> str:
    """"resume it with: COMMAND", or why no command is offered (one line for the user)."""
    line, why = resume_or_why(view.ref.cwd, view.ref.file, view.ref.host)
    return f"resume it with: {line}" if line is not None else str(why)


def attach_hint(pane: TmuxPane) -> str:
    """"run: tmux attach -t SESSION:WINDOW", or why no command is offered (a session name with
    control characters); for a message that says tmux has no client to show the pane."""
    default = os.path.join(os.environ.get("TMUX_TMPDIR", "/tmp"), f"tmux-{os.getuid()}", "default")
    sock: list[shellcmd.Word] = [] if pane.socket == default else ["-S", shellcmd.Arg("the tmux socket path", pane.socket)]
    target = shellcmd.Arg("the tmux session or window name", f"{pane.session}:{pane.window}")
    try:
        return "run: " + shellcmd.join(["tmux", *sock, "attach", "-t", target])
    except shellcmd.Unsafe as exc:
        return f"attach to it yourself (no command is offered: {exc})"


def target(snapshot: Snapshot, spec: str | None) -> Target:
    view, question = pick(snapshot, spec)
    locations = locate_sessions([view])
    return Target(view, question, locations.get(view.ref.key))


# ---- tmux ----


def select_pane(pane: TmuxPane) -> TmuxClient:
    """Make ``pane`` the pane a client shows; the client it chose. Raises :class:`Refused`."""
    if tmux(pane.socket, "select-window", "-t", pane.window_id) is None or (
        tmux(pane.socket, "select-pane", "-t", pane.pane) is None
    ):
        raise Refused(f"tmux could not select pane {clean(pane.pane)}: it may have closed")
    clients = tmux_clients(pane.socket)
    if not clients:
        raise Refused(f"the tmux session is not attached to a terminal; {attach_hint(pane)}")
    ours = [c for c in clients if c.session == pane.session]
    client = (ours or clients)[0]
    if tmux(pane.socket, "switch-client", "-c", client.tty, "-t", pane.pane) is None:
        raise Refused(f"tmux could not switch its client to the pane; {attach_hint(pane)}")
    return client


# ---- X11 ----


def _ewmh_activate(d: Any, wid: int) -> None:
    from Xlib import X
    from Xlib.protocol import event

    root = d.screen().root
    window = d.create_resource_object("window", wid)
    mask = X.SubstructureRedirectMask | X.SubstructureNotifyMask

    def send(win: Any, atom: str, data: list[int]) -> None:
        msg = event.ClientMessage(
            window=win, client_type=d.intern_atom(atom), data=(32, data + [0] * (5 - len(data)))
        )
        root.send_event(msg, event_mask=mask)

    try:
        desktop = window.get_full_property(d.intern_atom("_NET_WM_DESKTOP"), X.AnyPropertyType)
        if desktop is not None and len(desktop.value) and int(desktop.value[0]) != 0xFFFFFFFF:
            send(root, "_NET_CURRENT_DESKTOP", [int(desktop.value[0]), X.CurrentTime])
    except Exception:
        pass
    send(window, "_NET_ACTIVE_WINDOW", [2, X.CurrentTime, active_window(d) or 0])  # 2 = a pager asks
    d.flush()


def activate_window(wid: int, timeout: float = ACTIVATE_TIMEOUT_S) -> bool:
    """Ask the window manager to raise and focus ``wid``; True once it is the active window."""
    disp = open_display()
    if disp is None:
        return False
    try:
        _ewmh_activate(disp, wid)
        deadline = time.monotonic() + timeout
        delay = 0.005
        while time.monotonic() < deadline:
            if active_window(disp) == wid:
                return True
            time.sleep(delay)
            delay = min(delay * 2, 0.1)
        return active_window(disp) == wid
    except Exception as exc:
        log.debug("activating window 0x%x failed: %s", wid, clean(exc, 200))
        return False
    finally:
        disp.close()


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
    """Bring the user to ``loc``. Returns what was done; raises :class:`Refused` with what to do instead."""
    if loc is None:
        raise Refused(f"no running pi has this session; {resume_advice(view)}")
    window = loc.window_id
    if loc.tmux is not None:
        client = select_pane(loc.tmux)
        disp = open_display()
        if disp is not None:
            try:
                window = window_for([client.pid], x_windows_by_pid(disp)) or window
            except Exception:
                pass
            finally:
                disp.close()
    if window is not None:
        if activate_window(window):
            return f"focused {loc.describe()}"
        raise Refused(
            f"the window manager did not focus the terminal window 0x{window:x}; switch to it yourself"
        )
    if _terminal_remote(loc):
        return f"focused {loc.describe()}"
    if loc.tmux is not None:
        if not os.environ.get("DISPLAY"):
            return f"selected {loc.describe()} (no X display here to raise its terminal)"
        raise Refused(
            f"selected tmux pane {clean(loc.tmux.pane)}, but its terminal window was not found; switch to it yourself"
        )
    raise Refused(
        f"the terminal of pi (pid {loc.pid}, {clean(loc.tty or 'no tty')}) was not found; switch to it yourself"
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


def run_goto(config: Any, session_file: str) -> tuple[bool, str]:
    """For the tray / window / notification action: go to that session. (ok, one line to show)."""
    from notifier.engine.options import engine_options
    from notifier.engine.scan import scan_once

    code, said = go(config, scan_once(engine_options(config)), session_file)
    return code == 0, said


def go(config: Any, snapshot: Snapshot, session: str | None) -> tuple[int, str]:
    """``goto`` for the tray, the window and notification actions, on a snapshot they already
    have: (0 focused, 1 not possible, 2 no such session; one line to show — what was done, or
    what to do instead). A remote session (``@host:file``) opens ``ssh -t … tmux attach`` in a
    new terminal where one is found, else says the command."""
    from notifier.app import remotes

    remote = remotes.split(config, session)
    if remote is not None:
        try:
            argv = remotes.goto_argv(*remote)
        except remotes.RemoteRefused as exc:
            return 1, clean(exc)
        # (built from checked names, so shown as it is: clean() would collapse its spaces)
        command = shellcmd.join(argv)
        shown = os.environ.get("DISPLAY") or os.environ.get("WAYLAND_DISPLAY")
        if shown and remotes.open_in_terminal(argv):
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


def print_obj(loc: Location | None) -> dict[str, object] | None:
    return loc.obj() if loc is not None else None
