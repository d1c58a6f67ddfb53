"""Outside programs and the process tree: run a program (argument list, no shell, a timeout: the
one way here to run one and wait for it) and a process's chain of parents. Nothing here
raises for an odd system but :class:`CannotRun`, where it is asked for."""

from __future__ import annotations

import logging
import subprocess
from collections.abc import Sequence

from notifier.core.text import clean

# psutil is imported where it is used: status loads this module and needs psutil only for a pi.

log = logging.getLogger(__name__)

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
        log.debug("%s failed: %s", clean(cmd[0]), exc)
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
