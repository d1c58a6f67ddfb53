"""Outside programs and the process tree, as the locator needs them: run a program (argument list,
no shell, a timeout; ``None`` when it cannot run) and a process's chain of parents. Nothing here
raises for an odd system."""

from __future__ import annotations

import logging
from collections.abc import Sequence
from typing import TYPE_CHECKING

from notifier.core.text import clean

if TYPE_CHECKING:
    import subprocess

log = logging.getLogger(__name__)

TIMEOUT_S = 5.0


def run(
    cmd: Sequence[str], timeout: float = TIMEOUT_S, input: str | None = None
) -> subprocess.CompletedProcess[str] | None:
    """Run a program (argument list, no shell), ``input`` on its standard input, and return its
    result; ``None`` if it cannot run."""
    import subprocess  # here: `status` with no pi running never runs a program

    try:
        if input is not None:
            return subprocess.run(
                list(cmd), capture_output=True, encoding="utf-8", errors="surrogateescape", timeout=timeout, input=input
            )
        return subprocess.run(
            list(cmd), capture_output=True, text=True, timeout=timeout, stdin=subprocess.DEVNULL
        )
    except (OSError, subprocess.SubprocessError) as exc:
        log.debug("%s failed: %s", clean(cmd[0]), clean(exc, 200))
        return None


def ancestors(pid: int) -> list[int]:
    """``pid`` and its parents up to init (just ``[pid]`` when they cannot be read)."""
    try:
        import psutil

        chain = [pid]
        for parent in psutil.Process(pid).parents():
            chain.append(parent.pid)
        return chain
    except Exception:
        return [pid]
