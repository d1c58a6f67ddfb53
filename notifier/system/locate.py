"""Where a live pi session is: its process, tty, tmux pane and terminal window.

A session is matched to the pi process that writes it (same folder, started before the session's
last write, the pane showing its question when several fit). Inside tmux pi's terminal window is
the one running a tmux client of its session (:mod:`notifier.system.tmux`); outside tmux it
belongs to one of pi's ancestors (:mod:`notifier.system.x11`). The pi processes themselves are
found by :mod:`notifier.system.processes`. Checked with the real pi 0.73.1
and 1.6.0 in tmux under Xvfb + openbox + xterm.

Every call to an outside program has an argument list and a timeout; nothing here raises for an
odd system: what cannot be found is ``None``.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from typing import Any

from notifier.core.model import SessionView
from notifier.core.text import clean
from notifier.core.values import Value, field, value
from notifier.system import logs
from notifier.system.processes import PiProcess as PiProcess
from notifier.system.processes import maybe_pi as maybe_pi
from notifier.system.processes import pi_processes as pi_processes
from notifier.system.tmux import TmuxClient, TmuxPane, capture, tmux_clients, tmux_pane_of
from notifier.system.x11 import open_display, window_for, x_windows_by_pid

log = logs.get(__name__)

START_SLACK_S = 2.0


@value(frozen=True, init=False, repr=False, eq=False)
class Location(Value):
    """Where a live pi is: its process and terminal, its tmux pane and terminal window."""

    pid: int
    tty: str | None
    tmux: TmuxPane | None = None
    window_id: int | None = None  # the X11 window of the terminal (a _NET_CLIENT_LIST window)
    client: TmuxClient | None = None  # the tmux client whose terminal is ``window_id``
    env: dict[str, str] = field(default_factory=dict, compare=False)

    def __init__(
        self,
        pid: int,
        tty: str | None,
        tmux: TmuxPane | None = None,
        window_id: int | None = None,
        client: TmuxClient | None = None,
        env: dict[str, str] | None = None,  # (None: a new empty dict, as the field's default_factory)
    ) -> None:
        object.__setattr__(self, "pid", pid)
        object.__setattr__(self, "tty", tty)
        object.__setattr__(self, "tmux", tmux)
        object.__setattr__(self, "window_id", window_id)
        object.__setattr__(self, "client", client)
        object.__setattr__(self, "env", {} if env is None else env)

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


def locate(proc: PiProcess, windows: dict[int, int] | None) -> Location:
    pane = tmux_pane_of(proc.env, proc.pid)
    client: TmuxClient | None = None
    window_id = None
    if pane is not None:
        clients = tmux_clients(pane.socket)
        ours = [c for c in clients if c.session == pane.session]
        client = next(iter(ours or clients), None)
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


@value(frozen=True, init=False, repr=False, eq=False)
class Wanted(Value):
    """What matching needs of a session (from a SessionView, or from ``status --json``)."""

    key: str
    cwd: str | None
    updated_at: float
    alive: bool | None
    question: str | None = None  # the pending question's text, if any

    def __init__(self, key: str, cwd: str | None, updated_at: float, alive: bool | None, question: str | None = None) -> None:
        object.__setattr__(self, "key", key)
        object.__setattr__(self, "cwd", cwd)
        object.__setattr__(self, "updated_at", updated_at)
        object.__setattr__(self, "alive", alive)
        object.__setattr__(self, "question", question)

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
            showing = [p for p in cands if _shows(tmux_pane_of(p.env, p.pid), w.question)]
            cands = showing or cands
        chosen = max(cands, key=lambda p: p.started)
        result[w.key] = chosen
        taken.add(chosen.pid)
    return result


def locate_sessions(
    views: Sequence[SessionView | Wanted], with_windows: bool = True, procs: list[PiProcess] | None = None
) -> dict[str, Location]:
    """session file → where its live pi is (sessions without a live pi are left out).
    ``procs``: the live pi processes, if the caller listed them already."""
    wanted = [v if isinstance(v, Wanted) else Wanted.of(v) for v in views]
    if not any(w.alive is not False and w.cwd for w in wanted):
        return {}
    if procs is None:
        procs = pi_processes()
    if not procs:
        return {}
    pairs = match(wanted, procs)
    windows = None
    if with_windows and pairs:
        disp = open_display()
        if disp is not None:
            try:
                windows = x_windows_by_pid(disp)
            except Exception as exc:
                log.debug("cannot list the X windows: %s", clean(exc, 200))
            finally:
                disp.close()
    return {key: locate(proc, windows) for key, proc in pairs.items()}


Listed = tuple[list[PiProcess] | None, set[str]]  # (pi_folders)


def pi_folders(needed: bool = True) -> Listed:
    """The live pi processes and the folders they run in (as written and resolved, without a
    trailing slash); nothing is listed unless ``needed`` (no session could be matched)."""
    if not needed:
        return None, set()
    procs = pi_processes(maybe_pi() if os.path.isdir("/proc/self") else None)
    folders: set[str] = set()
    for p in procs or ():
        folders.update(cwd.rstrip("/") or "/" for cwd in (p.cwd, os.path.realpath(p.cwd)))
    return procs, folders


def in_folders(cwd: object, folders: set[str]) -> bool:
    """Whether a session in ``cwd`` can be matched: a pi runs in that folder (:func:`pi_folders`)."""
    return isinstance(cwd, str) and (cwd.rstrip("/") or "/") in folders


def may_match(session: dict[str, Any]) -> bool:
    """Whether a ``status --json`` session could have a live pi at all (worth listing processes)."""
    return session.get("alive") is not False and bool(session.get("cwd"))


def add_locations(status: dict[str, Any], listed: Listed | None = None) -> dict[str, Any]:
    """Fill ``"location"`` into each session of a ``status --json`` object (``null``: no live pi
    or unknown). Additive: nothing else changes. ``listed``: :func:`pi_folders`, if the caller
    listed them already.

    Only a session in a folder where a pi runs can be matched (:func:`match`), so the others
    are not even looked at: with thousands of sessions and a few pi processes (or none) this
    costs the process listing, not a parse of every session."""
    from datetime import datetime

    sessions = status.get("sessions")
    if not isinstance(sessions, list):
        return status
    found: dict[str, Location] = {}
    try:
        if listed is None:
            listed = pi_folders(any(isinstance(s, dict) and may_match(s) for s in sessions))
        procs, folders = listed
        wanted = []
        for s in sessions if folders else ():
            if not isinstance(s, dict) or not isinstance(s.get("file"), str):
                continue
            cwd = s.get("cwd")
            if not in_folders(cwd, folders):
                continue  # no pi runs there: it cannot be matched
            try:
                updated = datetime.fromisoformat(str(s.get("updated_at")).replace("Z", "+00:00")).timestamp()
            except ValueError:
                updated = 0.0
            pending = s.get("pending") or []
            text = pending[0].get("text") if pending and isinstance(pending[0], dict) else None
            alive = s.get("alive")
            wanted.append(Wanted(s["file"], cwd, updated, alive if isinstance(alive, bool) else None, text))
        if wanted:
            found = locate_sessions(wanted, procs=procs)
    except Exception as exc:  # locating is a bonus: status still works
        log.debug("cannot locate sessions: %s", clean(exc, 200))
        found = {}
    for s in sessions:
        if isinstance(s, dict):
            loc = found.get(s.get("file"))  # type: ignore[arg-type]
            s["location"] = loc.obj() if loc is not None else None
    return status
