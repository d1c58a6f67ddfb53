"""Processes: running outside programs (:func:`run`: the one way here to run one and wait for it)
and a process's parents, and finding the running pi processes.

Every program runs from an argument list, without a shell, with a timeout; nothing here raises
for an odd system but :class:`CannotRun`, where it is asked for.

A pi process is ``pi`` / ``omp`` itself, or a node process running pi's CLI
(``node …/pi-coding-agent/dist/cli.js``, ``node /usr/local/bin/pi``).

What tells two pis in one folder apart (:mod:`notifier.core.owners`) is read here too: the start
time to the tick (Linux: ``/proc/PID/stat`` against ``CLOCK_BOOTTIME``; psutil's own is up to a
second early, its boot time being whole seconds), pi's arguments where its process title has not
overwritten them (pi 0.73.1 and 1.6.0 set it: ``/proc/PID/cmdline`` then reads ``pi`` and NULs),
and, for the folders asked about, its tmux pane's text.
"""

from __future__ import annotations

import functools
import logging
import os
import subprocess
import time
from collections.abc import Callable, Collection, Iterator, Mapping, Sequence
from dataclasses import dataclass
from importlib.util import find_spec
from typing import Any, TypeVar

from notifier.core.owners import SAME_PROCESS_S, Proc
from notifier.core.text import clean, number
from notifier.system.log import LogOnce

# Lazy imports here: psutil only once /proc says a pi may run (status's path: without a pi it is
# never imported, tests/processes/test_locate.py); termios is POSIX only; tmux (which runs its
# programs through this module) only for a pi whose pane is looked at.

log = logging.getLogger(__name__)
_NAMES = frozenset({"pi", "omp", "pi.exe", "omp.exe"})
_MARKERS = ("pi-coding-agent", "oh-my-pi")
_once = LogOnce(log)  # the process table is read every few seconds: say a problem once
T = TypeVar("T")


# ---- outside programs and the process tree ----

TIMEOUT_S = 5.0


class CannotRun(Exception):
    """The program could not be started or did not finish in time (the message says which)."""


def run_or_raise(
    cmd: Sequence[str], timeout: float = TIMEOUT_S, input: str | None = None, new_session: bool = False
) -> subprocess.CompletedProcess[str]:
    """Run a program (argument list, no shell) and return its result: ``input`` on its standard
    input (else none), its output and errors as text. The one decoding: UTF-8, bytes that are not
    UTF-8 kept as lone surrogates both ways (PEP 383: a name goes back byte for byte, and
    :func:`notifier.core.text.clean` shows them as U+FFFD). ``new_session``: without our
    controlling terminal (ssh cannot ask for a password there). Raises :class:`CannotRun`."""
    try:
        return subprocess.run(
            list(cmd),
            capture_output=True,
            encoding="utf-8",
            errors="surrogateescape",
            timeout=timeout,
            input=input,
            stdin=subprocess.DEVNULL if input is None else None,
            start_new_session=new_session,
        )
    except subprocess.TimeoutExpired:
        raise CannotRun(f"no answer within {timeout:g} s") from None
    except (OSError, ValueError, subprocess.SubprocessError) as exc:  # (ValueError: a NUL in an argument)
        raise CannotRun(clean(exc, 200)) from None


def run(
    cmd: Sequence[str], timeout: float = TIMEOUT_S, input: str | None = None
) -> subprocess.CompletedProcess[str] | None:
    """:func:`run_or_raise`, but ``None`` if the program cannot run (said at debug level)."""
    try:
        return run_or_raise(cmd, timeout, input)
    except CannotRun as exc:
        log.debug("%s failed: %s", cmd[0], exc)
        return None


def ancestors(pid: int) -> list[int]:
    """``pid`` and its parents up to init (just ``[pid]`` when they cannot be read)."""
    try:
        import psutil

        return [pid, *(parent.pid for parent in psutil.Process(pid).parents())]
    except Exception:
        return [pid]


# ---- pi processes ----


def _pi_at(cmdline: list[str]) -> int | None:
    """Which of the first three arguments is the pi program, if one is."""
    is_pi = (os.path.basename(arg) in _NAMES or any(m in arg for m in _MARKERS) for arg in cmdline[:3])
    return next((i for i, yes in enumerate(is_pi) if yes), None)


def looks_like_pi(name: str, cmdline: list[str]) -> bool:
    return name in _NAMES or _pi_at(cmdline) is not None


def pi_args(cmdline: list[str]) -> tuple[str, ...] | None:
    """pi's own arguments (after the pi program), or ``None`` where they cannot be read: pi set
    its process title over them (``pi`` then NULs), or the program is not among the first three."""
    at = _pi_at(cmdline)
    rest = cmdline[at + 1 :] if at is not None else []
    if at is None or (rest and not any(rest)):
        return None  # (not pi, or a process title padded with NULs)
    return tuple(rest)


_boot: list[float] = []  # the wall-clock time of boot, as last computed


def boot_time() -> float:
    """When the machine booted (epoch seconds, to the microsecond): the same figure every time
    unless the wall clock moved by more than 0.1 s (so one process's start time is stable)."""
    now = time.time() - time.clock_gettime(time.CLOCK_BOOTTIME)
    if not _boot or abs(_boot[0] - now) > 0.1:
        _boot[:] = [now]
    return _boot[0]


def start_time(pid: int, fallback: float, proc_dir: str = "/proc") -> float:
    """When process ``pid`` started (epoch seconds), to the clock tick where Linux says so
    (``fallback``: psutil's figure, used elsewhere)."""
    try:
        with open(f"{proc_dir}/{pid}/stat", "rb") as f:
            stat = f.read()
        ticks = int(stat.rsplit(b")", 1)[1].split()[19])
        return boot_time() + ticks / os.sysconf("SC_CLK_TCK")
    except (OSError, ValueError, IndexError, AttributeError):
        return fallback


def still_running(pid: int, started: float, proc_dir: str = "/proc") -> bool:
    """Whether process ``pid`` is the one that started at ``started`` and still runs (a pid
    reused by another process has another start time). A read of one small file."""
    return abs(start_time(pid, -1e9, proc_dir) - started) < SAME_PROCESS_S


def look_at_terminal(path: str, look: Callable[[int], T]) -> T | None:
    """``look(fd)`` of the terminal at ``path``, opened without becoming our controlling terminal
    (never read) and closed at once; ``None`` where it cannot be opened or looked at."""
    import termios  # (POSIX only)

    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOCTTY | os.O_NONBLOCK)
    except OSError:
        return None
    try:
        return look(fd)
    except (OSError, termios.error):
        return None
    finally:
        os.close(fd)


def raw_terminal(pid: int, proc_dir: str = "/proc") -> bool | None:
    """Whether process ``pid``'s terminal (its standard input) is in raw mode, as pi's TUI puts
    it; ``pi -p`` leaves it cooked, or has none. ``None``: cannot be told (not a terminal of ours
    to look at)."""
    import termios

    def raw(fd: int) -> bool:
        return os.isatty(fd) and not termios.tcgetattr(fd)[3] & (termios.ICANON | termios.ECHO)

    return look_at_terminal(f"{proc_dir}/{pid}/fd/0", raw)


def folder(path: str) -> str:
    """A folder as sessions and processes are compared by it: without a trailing slash."""
    return path.rstrip("/") or "/"


def folders_of(cwd: str) -> list[str]:
    """A process's folder as written and, where it differs, resolved (a pi started in a link)."""
    return list(dict.fromkeys([cwd, os.path.realpath(cwd)]))  # (realpath: as far as it resolves, never raised)


def evidence(
    pid: int, cwd: str, started: float, argv: tuple[str, ...] | None, environ: Callable[[], Mapping[str, str]],
    asking: Collection[str], session: str | None = None, raw: bool | None = None,
) -> list[Proc]:
    """What tells this pi apart from its neighbours (:class:`Proc`, one per folder it is seen in):
    its tmux pane is captured only where a session of its folder asks something (``asking``,
    folders as :func:`folder` writes them): only a question can be seen on screen."""
    from notifier.system.tmux import capture, tmux_pane_of

    cwds = folders_of(cwd)
    screen = pane = None
    if asking and any(folder(c) in asking for c in cwds):
        try:
            found = tmux_pane_of(environ(), pid)
        except Exception:  # (psutil's errors: a process gone meanwhile, or not ours to read)
            found = None
        if found is not None:
            screen, pane = capture(found), found.pane
    return [Proc(c, started, pid, argv, screen, session, pane, raw) for c in cwds]


def _psutil() -> Any:
    try:
        import psutil
    except ImportError:
        _once("", "psutil", "psutil is not installed: cannot tell whether pi is still running")
        return None
    return psutil


def _scan(psutil: Any, pids: list[int] | None, where: bool) -> Iterator[tuple[PiProcess, Any]]:
    """The pi processes (among ``pids``, else all), each with psutil's process; ``where``: only
    our own user's, with their terminal and the environment that says where they run. A process
    gone meanwhile (or not ours to read) is left out; what fails for the whole table is raised."""
    me = os.getuid() if where and hasattr(os, "getuid") else None
    attrs = ["name", "cmdline", "create_time", "uids"]
    for proc in psutil.process_iter(attrs) if pids is None else _of(psutil, pids, attrs):
        info = proc.info
        cmdline = info.get("cmdline") or []
        if not looks_like_pi(info.get("name") or "", cmdline):
            continue
        try:
            if me is not None and info.get("uids") is not None and info["uids"].real != me:
                continue
            cwd = proc.cwd()
            env = _environ(proc) if where else {}
            tty = proc.terminal() if where else None
        except (psutil.Error, OSError):
            continue
        started = start_time(proc.pid, float(info.get("create_time") or 0.0))
        yield PiProcess(proc.pid, cwd, started, tty, env, pi_args(cmdline)), proc


def _environ(proc: Any) -> dict[str, str]:
    """What of a process's environment says where it runs (:data:`_ENV_KEYS`); none if unreadable."""
    try:
        environ = proc.environ()
    except Exception:  # (psutil's errors: a process gone meanwhile, or not ours to read)
        return {}
    return {k: environ[k] for k in _ENV_KEYS if k in environ}


def running_pi(folders: Collection[str] = ()) -> list[Proc] | None:
    """Every pi process we can see, or ``None`` if the process table cannot be read at all. The
    tmux pane of each pi running in one of ``folders`` is captured too (liveness asks for the
    folders where a question is pending: the screen tells two pis there apart).

    Where ``/proc`` tells which processes may be pi (:func:`maybe_pi`), only those are asked of
    psutil; none there (no pi runs): psutil is not even imported, which takes longer than
    reading ``/proc`` (``status`` then answers that much sooner)."""
    pids = maybe_pi()
    if pids == [] and find_spec("psutil") is not None:
        return []
    psutil = _psutil()
    if psutil is None:
        return None
    found: list[Proc] = []
    asking = {folder(f) for f in folders}
    try:
        for p, proc in _scan(psutil, pids, where=False):
            env = functools.partial(_environ, proc)  # (read only where its pane is looked at)
            found += evidence(p.pid, p.cwd, p.started, p.argv, env, asking, raw=raw_terminal(p.pid))
    except Exception as exc:  # psutil can fail in odd sandboxes; liveness then stays unknown
        _once("", "read", "cannot read the process list (%s): liveness is unknown", exc)
        return None
    return found


# ---- pi processes with where they run (to find a session's pi: notifier.system.locate) ----


_ENV_KEYS = ("TMUX", "TMUX_PANE", "TERM_PROGRAM", "KITTY_WINDOW_ID", "KITTY_LISTEN_ON", "WEZTERM_PANE",
             "WEZTERM_UNIX_SOCKET", "PI_CODING_AGENT_DIR", "PI_CODING_AGENT_SESSION_DIR", "HOME")


@dataclass(frozen=True, slots=True)
class PiProcess:
    """A running pi: its process, folder, start time, terminal and the environment that says
    where it runs (:data:`_ENV_KEYS`)."""

    pid: int
    cwd: str
    started: float
    tty: str | None
    env: dict[str, str]
    argv: tuple[str, ...] | None = None  # pi's arguments, None: unreadable (see pi_args)


def maybe_pi(proc_dir: str = "/proc") -> list[int] | None:
    """The processes that may be pi, read straight from Linux's ``/proc`` (a superset of what
    :func:`pi_processes` finds: psutil's name of a process is its ``comm`` or the name of its
    first argument); ``None`` where that cannot be told (no ``/proc``, a process we may not
    read): then every process is looked at."""
    try:
        pids = [int(n) for n in os.listdir(proc_dir) if number(n) is not None]
    except OSError:
        return None
    if not pids:
        return None
    def read(path: str, enough: int) -> bytes:
        """The file, or at least its first ``enough`` NUL-separated fields."""
        with open(path, "rb", buffering=0) as fh:  # (each read one system call)
            data = fh.read(4096)
            while data.count(b"\0") < enough and (more := fh.read(1 << 16)):
                data += more
            return data

    found = []
    for pid in pids:
        try:
            args = read(f"{proc_dir}/{pid}/cmdline", 3).split(b"\0")
            comm = read(f"{proc_dir}/{pid}/comm", 0).rstrip(b"\n")
        except (FileNotFoundError, ProcessLookupError):
            continue  # gone meanwhile
        except OSError:
            return None
        if looks_like_pi(os.fsdecode(comm), [os.fsdecode(a) for a in args[:3]]):
            found.append(pid)
    return found


def pi_processes(pids: list[int] | None = None) -> list[PiProcess]:
    """Every running pi process we may look at (our own user's); ``pids``: only among these
    (default: those ``/proc`` says may be pi, :func:`maybe_pi`)."""
    pids = maybe_pi() if pids is None else pids
    if pids == []:
        return []
    psutil = _psutil()
    return [p for p, _ in _scan(psutil, pids, where=True)] if psutil is not None else []


def _of(psutil: Any, pids: list[int], attrs: list[str]) -> Iterator[Any]:
    """psutil's processes of ``pids`` (those gone meanwhile left out), each with ``info`` as
    ``process_iter(attrs)`` sets it."""
    for pid in pids:
        try:
            proc = psutil.Process(pid)
            proc.info = proc.as_dict(attrs)
        except psutil.Error:
            continue
        yield proc
