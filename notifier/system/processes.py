"""Find running pi processes (the one impure module of pi/: it reads the process table).

A pi process is ``pi`` / ``omp`` itself, or a node process running pi's CLI
(``node …/pi-coding-agent/dist/cli.js``, ``node /usr/local/bin/pi``).
"""

from __future__ import annotations

import logging
import os

from notifier.core.board import Proc
from notifier.core.text import clean
from notifier.system.logonce import LogOnce

log = logging.getLogger(__name__)
_NAMES = frozenset({"pi", "omp", "pi.exe", "omp.exe"})
_MARKERS = ("pi-coding-agent", "oh-my-pi")
_once = LogOnce(log)  # the process table is read every few seconds: say a problem once


def looks_like_pi(name: str, cmdline: list[str]) -> bool:
    if name in _NAMES:
        return True
    for arg in cmdline[:3]:
        base = os.path.basename(arg)
        if base in _NAMES or any(m in arg for m in _MARKERS):
            return True
    return False


def running_pi() -> list[Proc] | None:
    """Every pi process we can see, or ``None`` if the process table cannot be read at all."""
    try:
        import psutil
    except ImportError:
        _once("", "psutil", "psutil is not installed: cannot tell whether pi is still running")
        return None
    found: list[Proc] = []
    try:
        for proc in psutil.process_iter(["name", "cmdline", "create_time"]):
            info = proc.info
            try:
                if not looks_like_pi(info.get("name") or "", info.get("cmdline") or []):
                    continue
                cwd = proc.cwd()
            except (psutil.Error, OSError):
                continue
            found.append(Proc(cwd, float(info.get("create_time") or 0.0)))
            try:
                real = os.path.realpath(cwd)
                if real != cwd:
                    found.append(Proc(real, float(info.get("create_time") or 0.0)))
            except OSError:
                pass
    except Exception as exc:  # psutil can fail in odd sandboxes; liveness then stays unknown
        _once("", "read", "cannot read the process list (%s): liveness is unknown", clean(exc, 200))
        return None
    return found
