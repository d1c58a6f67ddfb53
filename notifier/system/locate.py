"""Where a live pi session is: its process, tty, tmux pane and terminal window.

Facts used (checked with the real pi 0.73.1 and 1.6.0 in tmux under Xvfb + openbox + xterm): pi's
environment holds ``TMUX`` ("socket,server pid,session index") and ``TMUX_PANE``; inside tmux
pi's ancestor is the tmux server, and its terminal window is the one running a tmux *client*
(``list-clients``); outside tmux the terminal window belongs to one of pi's ancestors. A window
is matched by its ``_NET_WM_PID`` among the window manager's ``_NET_CLIENT_LIST``.
``WINDOWID`` is not trusted (tmux copies it into panes, so it can name a long-gone window).

Every call to an outside program has an argument list and a timeout; nothing here raises for an
odd system: what cannot be found is ``None``.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from notifier.core.model import SessionView
from notifier.core.text import clean

if TYPE_CHECKING:
    import subprocess

log = logging.getLogger(__name__)

TIMEOUT_S = 5.0
START_SLACK_S = 2.0
_ENV_KEYS = (
    "TMUX",
    "TMUX_PANE",
    "TERM_PROGRAM",
    "KITTY_WINDOW_ID",
    "KITTY_LISTEN_ON",
    "WEZTERM_PANE",
    "WEZTERM_UNIX_SOCKET",
    "PI_CODING_AGENT_DIR",
)


@dataclass(frozen=True)
class TmuxPane:
    socket: str
    session: str
    window: str  # the window index, as tmux prints it
    window_id: str  # "@N"
    pane: str  # "%N"
    attached: int = 0  # clients attached to the session

    def obj(self) -> dict[str, Any]:
        return {"socket": self.socket, "session": self.session, "window": self.window, "pane": self.pane}


@dataclass(frozen=True)
class TmuxClient:
    tty: str
    pid: int
    session: str
    activity: int


@dataclass(frozen=True)
class Location:
    pid: int
    tty: str | None
    tmux: TmuxPane | None = None
    window_id: int | None = None  # the X11 window of the terminal (a _NET_CLIENT_LIST window)
    client: TmuxClient | None = None  # the tmux client whose terminal is ``window_id``
    env: dict[str, str] = field(default_factory=dict, compare=False)

    def obj(self) -> dict[str, Any]:
        """The JSON of ``status --json`` ("location") and ``goto --print``."""
        return {
            "pid": self.pid,
            "tty": self.tty,
            "tmux": self.tmux.obj() if self.tmux else None,
            "window_id": self.window_id,
        }

    def describe(self) -> str:
        parts = [f"pid {self.pid}"]
        if self.tmux:
            parts.append(f"tmux {clean(self.tmux.session, 40)}:{self.tmux.window} {self.tmux.pane}")
        elif self.tty:
            parts.append(clean(self.tty))
        if self.window_id:
            parts.append(f"window 0x{self.window_id:x}")
        return " · ".join(parts)


@dataclass(frozen=True)
class PiProcess:
    pid: int
    cwd: str
    started: float
    tty: str | None
    env: dict[str, str]


def run(cmd: Sequence[str], timeout: float = TIMEOUT_S) -> subprocess.CompletedProcess[str] | None:
    """Run a program (argument list, no shell) and return its result; ``None`` if it cannot run."""
    import subprocess  # here: `status` with no pi running never runs a program

    try:
        return subprocess.run(
            list(cmd), capture_output=True, text=True, timeout=timeout, stdin=subprocess.DEVNULL
        )
    except (OSError, subprocess.SubprocessError) as exc:
        log.debug("%s failed: %s", clean(cmd[0]), clean(exc, 200))
        return None


# ---- processes ----


def pi_processes() -> list[PiProcess]:
    """Every running pi process we may look at (our own user's)."""
    try:
        import psutil
    except ImportError:
        return []
    from notifier.system.processes import looks_like_pi

    found = []
    me = os.getuid() if hasattr(os, "getuid") else None
    for proc in psutil.process_iter(["name", "cmdline", "create_time", "uids"]):
        info = proc.info
        try:
            if not looks_like_pi(info.get("name") or "", info.get("cmdline") or []):
                continue
            if me is not None and info.get("uids") is not None and info["uids"].real != me:
                continue
            cwd = proc.cwd()
            try:
                environ = proc.environ()
            except (psutil.Error, OSError):
                environ = {}
            tty = proc.terminal()
        except (psutil.Error, OSError):
            continue
        env = {k: environ[k] for k in _ENV_KEYS if k in environ}
        found.append(PiProcess(proc.pid, cwd, float(info.get("create_time") or 0.0), tty, env))
    return found


def ancestors(pid: int) -> list[int]:
    """``pid`` and its parents up to init."""
    try:
        import psutil

        chain = [pid]
        for parent in psutil.Process(pid).parents():
            chain.append(parent.pid)
        return chain
    except Exception:
        return [pid]


# ---- tmux ----


def tmux_cmd(socket: str, *args: str) -> list[str]:
    return ["tmux", "-S", socket, *args]


def tmux(socket: str, *args: str) -> str | None:
    result = run(tmux_cmd(socket, *args))
    if result is None or result.returncode != 0:
        return None
    return result.stdout


def tmux_pane_of(proc: PiProcess) -> TmuxPane | None:
    """The tmux pane pi runs in, checked against the server (a stale TMUX_PANE is not believed)."""
    value, pane = proc.env.get("TMUX"), proc.env.get("TMUX_PANE")
    if not value or not pane:
        return None
    socket = value.split(",")[0]
    fmt = "#{session_name}\t#{window_index}\t#{window_id}\t#{pane_id}\t#{pane_pid}\t#{session_attached}"
    out = tmux(socket, "display-message", "-p", "-t", pane, fmt)
    if not out:
        return None
    parts = out.rstrip("\n").split("\t")
    if len(parts) != 6 or parts[3] != pane:
        return None
    try:
        pane_pid = int(parts[4])
        attached = int(parts[5] or 0)
    except ValueError:
        return None
    if pane_pid not in ancestors(proc.pid):
        return None  # that pane now runs something else
    return TmuxPane(socket, parts[0], parts[1], parts[2], parts[3], attached)


def tmux_clients(socket: str) -> list[TmuxClient]:
    """The server's clients, most recently active first."""
    out = tmux(
        socket, "list-clients", "-F", "#{client_tty}\t#{client_pid}\t#{client_session}\t#{client_activity}"
    )
    clients = []
    for line in (out or "").splitlines():
        parts = line.split("\t")
        if len(parts) != 4:
            continue
        try:
            clients.append(TmuxClient(parts[0], int(parts[1]), parts[2], int(parts[3] or 0)))
        except ValueError:
            continue
    clients.sort(key=lambda c: c.activity, reverse=True)
    return clients


def capture(pane: TmuxPane) -> str | None:
    """The visible text of the pane (no escapes)."""
    return tmux(pane.socket, "capture-pane", "-p", "-t", pane.pane)


# ---- X11 ----


def _display() -> Any:
    if not os.environ.get("DISPLAY"):
        return None
    try:
        from Xlib import display

        return display.Display()
    except Exception as exc:
        log.debug("cannot open the X display: %s", clean(exc, 200))
        return None


def x_windows_by_pid(disp: Any) -> dict[int, int]:
    """pid → top-level window (the window manager's client list; without one, the root's children)."""
    from Xlib import X

    root = disp.screen().root
    net_pid = disp.intern_atom("_NET_WM_PID")
    client_list = root.get_full_property(disp.intern_atom("_NET_CLIENT_LIST"), X.AnyPropertyType)
    windows = (
        list(client_list.value) if client_list is not None else [c.id for c in root.query_tree().children]
    )
    found: dict[int, int] = {}
    for wid in windows:
        try:
            prop = disp.create_resource_object("window", wid).get_full_property(net_pid, X.AnyPropertyType)
        except Exception:
            continue
        if prop is not None and len(prop.value):
            found.setdefault(int(prop.value[0]), int(wid))
    return found


def window_for(pids: Iterable[int], windows: dict[int, int]) -> int | None:
    """The window of the first of ``pids`` (or of an ancestor of it) that has one."""
    for pid in pids:
        for p in ancestors(pid):
            if p in windows:
                return windows[p]
    return None


def active_window(disp: Any) -> int | None:
    from Xlib import X

    prop = disp.screen().root.get_full_property(disp.intern_atom("_NET_ACTIVE_WINDOW"), X.AnyPropertyType)
    if prop is None or not len(prop.value):
        return None
    return int(prop.value[0]) or None


# ---- putting it together ----


def locate(proc: PiProcess, windows: dict[int, int] | None) -> Location:
    pane = tmux_pane_of(proc)
    client = None
    window_id = None
    if pane is not None:
        clients = tmux_clients(pane.socket)
        ours = [c for c in clients if c.session == pane.session]
        client = (ours or clients or [None])[0]
        if windows and client is not None:
            window_id = window_for([client.pid], windows)
    elif windows:
        window_id = window_for([proc.pid], windows)
    return Location(proc.pid, proc.tty, pane, window_id, client, proc.env)


def _shows(pane: TmuxPane | None, text: str) -> bool:
    if pane is None or not text:
        return False
    screen = capture(pane) or ""
    flat = " ".join(clean(screen).split()).casefold()
    return " ".join(clean(text).split()).casefold()[:40] in flat


@dataclass(frozen=True)
class Wanted:
    """What matching needs of a session (from a SessionView, or from ``status --json``)."""

    key: str
    cwd: str | None
    updated_at: float
    alive: bool | None
    question: str | None = None  # the pending question's text, if any

    @classmethod
    def of(cls, view: SessionView) -> Wanted:
        q = view.pending[0].text if view.pending else None
        return cls(view.ref.key, view.ref.cwd, view.updated_at, view.alive, q)


def match(wanted: Sequence[Wanted], procs: Sequence[PiProcess]) -> dict[str, PiProcess]:
    """Which live pi process writes each session (session file → process).

    A candidate runs in the session's folder and was started before the session's last write.
    Several candidates: the one whose tmux pane shows the session's pending question, else the
    most recently started. A process is given to one session only, the most recently written.
    """
    by_cwd: dict[str, list[PiProcess]] = {}
    for p in procs:
        for cwd in {p.cwd, os.path.realpath(p.cwd)}:
            by_cwd.setdefault(cwd.rstrip("/") or "/", []).append(p)
    result: dict[str, PiProcess] = {}
    taken: set[int] = set()
    for w in sorted(wanted, key=lambda w: -w.updated_at):
        if w.alive is False or not w.cwd:
            continue
        cwd = w.cwd.rstrip("/") or "/"
        cands = [p for p in by_cwd.get(cwd, []) if p.started <= w.updated_at + START_SLACK_S]
        cands = [p for p in cands if p.pid not in taken]
        if not cands:
            continue
        if len(cands) > 1 and w.question:
            showing = [p for p in cands if _shows(tmux_pane_of(p), w.question)]
            cands = showing or cands
        chosen = max(cands, key=lambda p: p.started)
        result[w.key] = chosen
        taken.add(chosen.pid)
    return result


def locate_sessions(views: Sequence[SessionView | Wanted], with_windows: bool = True) -> dict[str, Location]:
    """session file → where its live pi is (sessions without a live pi are left out)."""
    wanted = [v if isinstance(v, Wanted) else Wanted.of(v) for v in views]
    if not any(w.alive is not False and w.cwd for w in wanted):
        return {}
    procs = pi_processes()
    if not procs:
        return {}
    pairs = match(wanted, procs)
    windows = None
    if with_windows and pairs:
        disp = _display()
        if disp is not None:
            try:
                windows = x_windows_by_pid(disp)
            except Exception as exc:
                log.debug("cannot list the X windows: %s", clean(exc, 200))
            finally:
                disp.close()
    return {key: locate(proc, windows) for key, proc in pairs.items()}


def add_locations(status: dict[str, Any]) -> dict[str, Any]:
    """Fill ``"location"`` into each session of a ``status --json`` object (``null``: no live pi
    or unknown). Additive: nothing else changes."""
    from datetime import datetime

    sessions = status.get("sessions")
    if not isinstance(sessions, list):
        return status
    wanted = []
    for s in sessions:
        if not isinstance(s, dict) or not isinstance(s.get("file"), str):
            continue
        try:
            updated = datetime.fromisoformat(str(s.get("updated_at")).replace("Z", "+00:00")).timestamp()
        except ValueError:
            updated = 0.0
        pending = s.get("pending") or []
        text = pending[0].get("text") if pending and isinstance(pending[0], dict) else None
        alive = s.get("alive")
        wanted.append(
            Wanted(s["file"], s.get("cwd"), updated, alive if isinstance(alive, bool) else None, text)
        )
    try:
        found = locate_sessions(wanted)
    except Exception as exc:  # locating is a bonus: status still works
        log.debug("cannot locate sessions: %s", clean(exc, 200))
        found = {}
    for s in sessions:
        if isinstance(s, dict):
            loc = found.get(s.get("file"))  # type: ignore[arg-type]
            s["location"] = loc.obj() if loc is not None else None
    return status
