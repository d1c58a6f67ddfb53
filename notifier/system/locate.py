"""Where a live pi session is: its process, tty, tmux pane and terminal window.

A session is matched to the pi process that has it by the evidence that tells pis in one folder
apart, never by the folder alone (:mod:`notifier.core.owners`: start times against the session's
creation, readable ``--session`` arguments, the tmux pane showing its question exactly, a pid and
session file the companion extension announced). Where two pis remain, the session has no
location and :func:`locate_one` says why. Inside tmux pi's terminal window is
the one running a tmux client of its session (:mod:`notifier.system.tmux`); outside tmux it
belongs to one of pi's ancestors (:mod:`notifier.system.focus`). The pi processes themselves are
found by :mod:`notifier.system.processes`. The locations of ``status --json`` are filled in
here too (:func:`add_locations`). Checked with the real pi 0.73.1 and 1.6.0 in tmux under
Xvfb + openbox + xterm.

Every call to an outside program has an argument list and a timeout; nothing here raises for an
odd system: what cannot be found is ``None``.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from notifier.core.codec import parse_iso
from notifier.core.model import SessionView
from notifier.core.owners import Owners, Proc, Wanted, bind, shows
from notifier.core.text import clean
from notifier.system.processes import PiProcess, evidence, folder, folders_of, pi_processes
from notifier.system.tmux import TmuxPane, tmux_clients, tmux_pane_of

if TYPE_CHECKING:
    from notifier.system.window_manager import Window

# Lazy imports here: the desktop's window managers only where windows are asked for (``status``
# locates sessions without them).

log = logging.getLogger(__name__)


@dataclass(frozen=True, slots=True)
class Location:
    """Where a live pi is: its process and terminal, its tmux pane and terminal window."""

    pid: int
    tty: str | None
    tmux: TmuxPane | None = None
    window_id: int | None = None  # the X11 window of the terminal (a _NET_CLIENT_LIST window)
    env: dict[str, str] = field(default_factory=dict, compare=False)
    window: Window | None = None  # the terminal's window as the focus method knows it (sway: a con id)

    def obj(self) -> dict[str, Any]:
        """The JSON of ``status --json`` ("location") and ``goto --print``."""
        return {
            "pid": self.pid,
            "tty": self.tty,
            "tmux": self.tmux.obj() if self.tmux else None,
            "window_id": self.window_id,
            "window": self.window.obj() if self.window else None,
        }

    def describe(self) -> str:
        parts = [f"pid {self.pid}"]
        if self.tmux:
            parts.append(f"tmux {clean(self.tmux.session, 40)}:{self.tmux.window} {self.tmux.pane}")
        elif self.tty:
            parts.append(clean(self.tty))
        if self.window is not None and self.window.via != "x11":
            parts.append(self.window.describe())
        elif self.window_id:
            parts.append(f"window 0x{self.window_id:x}")
        return " · ".join(parts)


Windows = dict[str, dict[int, int]]  # focus method ("x11", "sway", …) → pid → its first window


def locate(proc: PiProcess, windows: Windows | None) -> Location:
    """Where ``proc`` is; ``windows``: :func:`list_windows`."""
    from notifier.system.window_manager import Window, window_for

    pane = tmux_pane_of(proc.env, proc.pid)
    owner = [proc.pid]  # (in tmux: the pid of the client showing its session, whose window it is)
    if pane is not None:
        clients = tmux_clients(pane.socket)
        owner = [c.pid for c in [c for c in clients if c.session == pane.session] or clients][:1]
    found = {via: wid for via, by_pid in (windows or {}).items() if (wid := window_for(owner, by_pid)) is not None}
    method = next((via for via in windows or () if via != "x11"), "x11")  # (the compositor's, where listed)
    window = Window(method, found[method]) if method in found else None
    return Location(proc.pid, proc.tty, pane, found.get("x11"), proc.env, window)


@dataclass(frozen=True, slots=True)
class Unmatched:
    """No single pi has the session: ``reason`` says why in one line (for the user); ``pids``:
    the pis it could be (two or more: the evidence cannot tell them apart; one: it may have this
    session or another, its dialog reading as another session's question), else ``()``."""

    reason: str
    pids: tuple[int, ...] = ()

    @property
    def ambiguous(self) -> bool:
        return bool(self.pids)


def match(
    wanted: Sequence[Wanted], procs: Sequence[PiProcess], announced: dict[int, str] | None = None
) -> tuple[dict[str, PiProcess], Owners]:
    """Which live pi process has each session (session file → process), and the whole pairing
    (for the sessions it cannot tell: ``Owners.ambiguous``; a session the evidence cannot
    give to one pi is not in the first, see :func:`locate_one` for why). ``announced``: pid → the
    session file that pi announced (the companion extension's hello), exact where given."""
    asking = {folder(w.cwd) for w in wanted if w.question and w.cwd}
    announced = announced or {}
    owners = bind(wanted, [
        e for p in procs
        for e in evidence(p.pid, p.cwd, p.started, p.argv, p.env.copy, asking, announced.get(p.pid))
    ])
    by_pid = {p.pid: p for p in procs}
    return {k: by_pid[o.pid] for k, o in owners.owners.items() if o.pid in by_pid}, owners


def list_windows(with_windows: bool = True) -> Windows | None:
    """The X11 windows by process and, where the focus method is another (the compositor's), its
    windows by process too (a backend that cannot list them is left out)."""
    if not with_windows:
        return None
    from notifier.system.window_manager import X11, Method, Missing, focus_method

    method = focus_method()
    methods = [Method(X11, os.environ.get("DISPLAY", ""))]
    if not isinstance(method, Missing) and method.via != "x11":
        methods.append(method)
    windows: Windows = {}
    for m in methods:
        try:
            windows[m.via] = m.windows()
        except Exception as exc:
            log.debug("cannot list the windows through %s: %s", m.name, exc)
    return windows


def locate_sessions(
    views: Sequence[SessionView | Wanted], with_windows: bool = True, procs: list[PiProcess] | None = None
) -> dict[str, Location]:
    """session file → where its live pi is (sessions without a live pi, or whose pi cannot be
    told from a neighbour's, are left out). ``procs``: the live pi processes, if the caller
    listed them already."""
    wanted = [v if isinstance(v, Wanted) else Wanted.of(v) for v in views]
    if not any(w.alive is not False and w.cwd for w in wanted):
        return {}
    if procs is None:
        procs = pi_processes()
    if not procs:
        return {}
    pairs = match(wanted, procs)[0]
    windows = list_windows(with_windows and bool(pairs))
    return {key: locate(proc, windows) for key, proc in pairs.items()}


def locate_one(
    view: SessionView,
    *,
    neighbours: Sequence[SessionView] = (),
    with_windows: bool = False,
    announced: dict[int, str] | None = None,
) -> Location | Unmatched:
    """Where the one pi that has this session is, or why there is none (one line, for the user).

    For ``answer`` and ``goto``: keys go only to a pi the evidence gives this session to. Two or
    more candidates: :class:`Unmatched` naming them, ``ambiguous`` True (nothing may be typed).
    ``neighbours``: the other sessions known (a snapshot's), so that a pi that has a session of
    its own is not taken for this one's (only those of the same folder are looked at).
    ``announced``: pid → session file, as the companion extension announced them (exact)."""
    w = Wanted.of(view)
    if w.alive is False:
        return Unmatched("no running pi has this session (its pi is gone)")
    procs = pi_processes() if w.cwd else []
    here = folder(w.cwd or "")
    others = [
        Wanted.of(n)
        for n in neighbours
        if n.ref.host is None and n.ref.cwd and folder(n.ref.cwd) == here and n.ref.key != w.key
    ]
    pairs, owners = match([w, *others], procs, announced)
    proc = pairs.get(w.key)
    if proc is None:
        return _unmatched(w, owners.ambiguous.get(w.key, ()), procs)
    seen = owners.owners[w.key]
    if seen.session is None and w.owner is None and seen.screen is not None and any(  # (by the weighing)
        o.question and o.alive is not False and shows(seen.screen, o.question, o.options) for o in others
    ):  # its dialog reads as another live session's question: a look at its pane cannot tell whose
        return Unmatched(
            f"the pi in {clean(w.cwd or '?', 120)} (pid {proc.pid}) shows a question that reads the same as"
            " another session's, and nothing tells which it is: nothing was typed; answer it in its terminal",
            (proc.pid,),
        )
    return locate(proc, list_windows(with_windows))


def _unmatched(w: Wanted, cands: Sequence[Proc], procs: Sequence[PiProcess]) -> Unmatched:
    """Why no single pi has session ``w`` (``cands``: the pis it could be), in one line."""
    shown = clean(w.cwd or "?", 120)
    if len(cands) >= 2:
        pids = tuple(sorted({p.pid for p in cands}))
        panes = sorted({p.pane for p in cands if p.pane})
        where = f", tmux panes {' and '.join(clean(x, 20) for x in panes)}" if panes else ""
        return Unmatched(
            f"{len(pids)} pi processes in {shown} could be this session's (pids "
            f"{' and '.join(map(str, pids))}{where}) and nothing tells which: nothing was typed; "
            "answer it in its terminal",
            pids,
        )
    if cands:  # (never "no running pi": resuming the session would start a second pi on a live one)
        return Unmatched(
            f"the pi in {shown} (pid {cands[0].pid}) may have this session or another one, and nothing tells"
            " which: nothing was typed; answer it in its terminal",
            (cands[0].pid,),
        )
    if w.cwd and any(folder(p.cwd) in {folder(w.cwd), os.path.realpath(w.cwd)} for p in procs):
        return Unmatched(
            f"no running pi has this session (the pi processes in {shown} are on other sessions)"
        )
    return Unmatched("no running pi has this session")


# ---- the locations of ``status --json`` and of the window's questions ----


def fill_locations(objs: list[dict[str, Any]], find: Callable[[], Mapping[str, Location]]) -> None:
    """Set ``"location"`` of each object (a session or question, by its ``"file"``) to where
    ``find`` says its pi is; ``null`` where not found. Locating is a bonus: a failure is logged."""
    found: Mapping[str, Location] = {}
    try:
        found = find()
    except Exception as exc:
        log.debug("cannot locate sessions: %s", exc)
    for o in objs:
        loc = found.get(o["file"]) if isinstance(o.get("file"), str) else None
        o["location"] = loc.obj() if loc is not None else None


def add_locations(status: dict[str, Any], look: bool = True) -> dict[str, Any]:
    """Fill ``"location"`` into each session of a ``status --json`` object (``null``: no live pi,
    unknown, or ``look`` False: liveness off, no process is looked at). Additive: nothing else
    changes but ``alive`` where the app left it unjudged (:func:`_locations`). Locating is a
    bonus: status works without it."""
    sessions = [s for s in status.get("sessions") or () if isinstance(s, dict)]
    here = [s for s in sessions if s.get("host") is None]
    fill_locations(here, lambda: _locations(here) if look else {})
    for s in sessions:
        if s.get("host") is not None:  # (a remote's pi runs on that machine, not here: contract §3)
            s["location"] = None
    return status


def _locations(sessions: list[dict[str, Any]]) -> dict[str, Location]:
    """Where the live pi of each of these ``status --json`` sessions runs; ``alive`` filled in
    where the app left it unjudged (it judges only where a question waits), as a scan of our own
    says it: a pi runs in the session's folder. Processes are listed only when some session could
    have a live pi, and only a session in a folder where a pi runs is matched: with thousands of
    sessions and a few pi processes (or none) this costs the process listing, not a pairing of
    every session."""
    unknown = _unjudged(sessions)
    if not unknown and not any(s.get("alive") is not False and s.get("cwd") for s in sessions):
        return {}
    procs = pi_processes()
    folders = _judge(unknown, procs)
    matched = [s for s in sessions if isinstance(s.get("file"), str) and _in_folders(s.get("cwd"), folders)]
    return locate_sessions([_wanted(s) for s in matched], procs=procs) if matched else {}


def judge_unjudged(sessions: list[dict[str, Any]]) -> None:
    """``alive`` of the ``status`` sessions the app left unjudged (it judges only where a
    question waits), as a scan of our own says it (processes are listed only if there are any)."""
    unknown = _unjudged(sessions)
    if unknown:
        _judge(unknown, pi_processes())


def _unjudged(sessions: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [s for s in sessions if s.get("alive") is None and s.get("host") is None]


def _judge(unknown: list[dict[str, Any]], procs: Sequence[PiProcess]) -> set[str]:
    """Alive where a pi runs in the session's folder; a turn whose pi is gone ``stopped``, as the
    board says. The folders where pis run."""
    folders = {folder(cwd) for p in procs for cwd in folders_of(p.cwd)}
    for s in unknown:
        s["alive"] = _in_folders(s.get("cwd"), folders)
        if s["alive"] is False and s.get("state") == "working":
            s["state"] = "stopped"
    return folders


def _in_folders(cwd: object, folders: set[str]) -> bool:
    return isinstance(cwd, str) and folder(cwd) in folders


def _wanted(s: dict[str, Any]) -> Wanted:
    """What the pairing needs of one ``status --json`` session: its file, folder, last change, the
    first question pending (text and labels) and whether it is alive."""
    updated = parse_iso(s.get("updated_at")) or 0.0
    pending = s.get("pending") or []
    first = pending[0] if pending and isinstance(pending[0], dict) else {}
    text = first.get("text") if isinstance(first.get("text"), str) else None
    labels = tuple(o for o in first.get("options") or () if isinstance(o, str))
    sid = s.get("id") if isinstance(s.get("id"), str) else None
    known = s.get("alive") if isinstance(s.get("alive"), bool) else None
    return Wanted(s["file"], s.get("cwd"), updated, known, text, labels, sid, busy=s.get("current_tool") is not None)
