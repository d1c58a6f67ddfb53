"""The invoking user's own pi-notifier files, listed before and after a test run.

conftest.py takes a listing when pytest starts (before any test moves HOME and the XDG folders)
and fails the run if the listing at the end differs in a way the tests could have caused: a test
that wrote into the real folders is caught by the run itself, not by the user finding a stranger's
question in `pi-notifier history`.

What the tests could have touched. Every test runs with HOME and the XDG folders in temporary
folders of its own; a test escapes them only by running code that finds the user's real folders
anyway (an environment copied too early, a HOME left out so the password database's is used). But
the user's own pi-notifier and pis, running beside the tests, write in those same folders: the app
its state, history and log, its lock and socket; a pi its companion socket. So a change in one of
the app's places counts against the run unless a process outside the run (neither pytest nor one
it started, nor one carrying the run's mark in its environment) holds that place open, at the
start or at the end of the run: a file or a socket in it, or its working folder there. Then what
changes in that place is that process's doing, except a file that names one of the run's own
temporary folders (every home, project and sessions folder a test makes lives in them), which
only the run can have written. A folder's own time is not compared: it changes whenever anything
inside it comes or goes, and what came or went is listed itself.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import NamedTuple

import psutil

APP = "pi-notifier"
FOLDER = (-1, -1)  # a folder's entry: that it is there, not its size or time
Listing = dict[str, tuple[int, int] | None]


class Change(NamedTuple):
    what: str  # created, changed or removed
    path: str

    def __str__(self) -> str:
        return f"{self.what}: {self.path}"


def places(env: Mapping[str, str]) -> list[Path]:
    """Every folder and file the app (or one of its commands) writes, for this environment."""
    home = Path(env.get("HOME") or os.path.expanduser("~"))

    def xdg(name: str, default: str) -> Path:
        value = env.get(name, "")
        return Path(value) if value.startswith("/") else home / default

    config, state = xdg("XDG_CONFIG_HOME", ".config"), xdg("XDG_STATE_HOME", ".local/state")
    data, cache = xdg("XDG_DATA_HOME", ".local/share"), xdg("XDG_CACHE_HOME", ".cache")
    found = [
        config / APP,
        state / APP,
        data / APP,
        cache / APP,
        config / "autostart" / f"{APP}.desktop",
        config / "systemd" / "user" / f"{APP}.service",
        data / "icons" / "hicolor" / "256x256" / "apps" / f"{APP}.png",
        Path(env.get("PI_CODING_AGENT_DIR") or home / ".pi" / "agent") / "extensions" / f"{APP}.ts",
    ]
    runtime = env.get("XDG_RUNTIME_DIR", "")
    if runtime.startswith("/"):
        found += [Path(runtime) / APP, Path(runtime) / f"{APP}-{os.getuid()}"]
    return found


def listing(roots: list[Path]) -> Listing:
    """(size, mtime in ns) of every file under ``roots``, FOLDER for a folder; None for a root not there."""
    out: Listing = {}
    for root in roots:
        if not root.exists() and not root.is_symlink():
            out[str(root)] = None
            continue
        for path in [root, *(sorted(root.rglob("*")) if root.is_dir() else [])]:
            try:
                st = path.lstat()
            except OSError:
                continue
            out[str(path)] = FOLDER if path.is_dir() and not path.is_symlink() else (st.st_size, st.st_mtime_ns)
    return out


def changes(before: Listing, after: Listing) -> list[Change]:
    found = []
    for path in sorted(set(before) | set(after)):
        old, new = before.get(path), after.get(path)
        if old != new:
            found.append(Change("created" if old is None else "removed" if new is None else "changed", path))
    return found


def _place(path: str, roots: Iterable[Path]) -> Path | None:
    """The root ``path`` is (or is in), by the real paths of both."""
    real = Path(os.path.realpath(path))
    for root in roots:
        top = Path(os.path.realpath(root))
        if real == top or top in real.parents:
            return root
    return None


def _opened(proc: psutil.Process) -> list[str]:
    """The files, unix sockets and working folder ``proc`` holds."""
    # (net_connections since psutil 6; connections before, which pyproject.toml still allows)
    sockets = proc.net_connections("unix") if hasattr(proc, "net_connections") else proc.connections("unix")
    found = [f.path for f in proc.open_files()] + [proc.cwd()]
    for sock in sockets:
        if isinstance(sock.laddr, str) and sock.laddr:
            found.append(sock.laddr)
    return found


def held(roots: list[Path], mark: tuple[str, str]) -> dict[Path, str]:
    """Each of ``roots`` that a process outside this run holds open, with which process: this
    run is this process, every process it started, and any carrying ``mark`` (a variable and its
    value) in its environment (a server a test started that has left the run's process tree)."""
    me = psutil.Process()
    ours = {me.pid, *(child.pid for child in me.children(recursive=True))}
    found: dict[Path, str] = {}
    for proc in psutil.process_iter():
        if proc.pid in ours:
            continue
        try:
            if proc.uids().real != os.getuid() or proc.environ().get(mark[0]) == mark[1]:
                continue
            for path in _opened(proc):
                root = _place(path, roots)
                if root is not None and root not in found:
                    found[root] = f"pid {proc.pid} ({proc.name()})"
        except (psutil.Error, OSError):
            continue
    return found


def names(path: str, marks: list[str]) -> bool:
    """Whether the file at ``path`` holds any of ``marks`` (the run's temporary folders)."""
    wanted = [os.fsencode(m) for m in marks]
    keep = max(map(len, wanted), default=0)
    tail = b""
    try:
        with open(path, "rb") as fh:
            while chunk := fh.read(1 << 20):
                window = tail + chunk
                if any(w in window for w in wanted):
                    return True
                tail = window[-keep:]
    except OSError:
        return False
    return False


def blamed(found: list[Change], roots: list[Path], busy: Mapping[Path, str], marks: list[str]) -> list[Change]:
    """The changes the run could have made: those in a place no process outside the run holds,
    and, in a place one does, a file that names one of the run's temporary folders (``marks``)."""
    return [
        change
        for change in found
        if _place(change.path, roots) not in busy or (change.what != "removed" and names(change.path, marks))
    ]
