"""``pi-notifier quit``: end the running app (the tray app, one per user, however it was
started: a terminal, ``make run``, autostart) as its tray menu's Quit does: a ``quit`` request
on its control channel; then wait until its process has exited.

Headless runs (``run --no-tray``, ``run --json``) serve no control channel and are left alone:
they end with whoever started them (Ctrl-C or SIGTERM; ``--stop-on-eof``: their input closing,
which is how the runs the app starts on remote machines end with it)."""

from __future__ import annotations

import argparse
import os
import select
import time
from typing import Any

import psutil

from notifier import APP_NAME
from notifier.cli.parser import fail, out
from notifier.config import Config
from notifier.control import request
from notifier.core.text import clean
from notifier.instance import APP_LOCK, HAND_OVER_S, InstanceLock
from notifier.system import paths

EXIT_WAIT_S = 10.0  # how long quit waits for the app's process to end (its shutdown takes < 2 s)
NONE_SAID = f"no {APP_NAME} app is running: nothing to quit"


def cmd_quit(args: argparse.Namespace, config: Config) -> int:
    reply = _ping()
    if reply is None:
        out(NONE_SAID, "\n")
        return 0
    pid = reply.get("pid")
    if not reply.get("ok") or isinstance(pid, bool) or not isinstance(pid, int) or pid <= 0:
        why = clean(reply.get("error"), 100) or "its reply names no process"
        lock = _app_lock()  # (a frozen app: its tray menu does not answer either)
        if pid := lock.holder() if lock is not None else 0:
            return fail(1, f"the running app (pid {pid}) does not answer ({why}); stop it with: kill {pid}")
        return fail(1, f"the running app does not answer ({why}); quit it from its tray menu")
    ended, said = _ask_to_quit(pid)
    if not ended:
        why = f" (it said: {clean(said.get('error'), 100)})" if said and not said.get("ok") else ""
        return fail(1, f"the app (pid {pid}) was asked to quit but still runs after {EXIT_WAIT_S:g} s{why};"
                    f" stop it with: kill {pid}")
    out(f"the app (pid {pid}) has quit\n")
    return 0


def _ask_to_quit(pid: int) -> tuple[bool, dict[str, Any] | None]:
    """Ask the app to quit: whether its process ``pid`` then ended within ``EXIT_WAIT_S``, and
    what it said (its reply may be lost as it closes its channel: its end is the answer). The
    process is followed from before it is asked: by a pidfd (Linux 5.3 and later; woken by the
    kernel, a zombie not reaped yet counts as ended), elsewhere by a look every 0.05 s."""
    try:
        pidfd: int | None = os.pidfd_open(pid)  # type: ignore[attr-defined,unused-ignore]
    except ProcessLookupError:
        return True, None
    except (AttributeError, OSError):
        pidfd = None
    said = request({"cmd": "quit"})
    if pidfd is not None:
        try:
            return bool(select.select([pidfd], [], [], EXIT_WAIT_S)[0]), said
        finally:
            os.close(pidfd)
    deadline = time.monotonic() + EXIT_WAIT_S
    while psutil.pid_exists(pid):
        if time.monotonic() >= deadline:
            return False, said
        time.sleep(0.05)
    return True, said


def _ping() -> dict[str, Any] | None:
    """The running app's answer to a ping (None: no app runs). An app that holds the one-app lock
    while its channel does not answer yet (it is starting) is asked again, for a few seconds."""
    deadline = time.monotonic() + HAND_OVER_S
    while True:
        reply = request({"cmd": "ping"})
        if reply is not None and reply.get("ok"):
            return reply
        if reply is None and not _lock_held():
            return None
        if time.monotonic() >= deadline:
            return reply or {"ok": False, "error": "an app holds the lock, but its control channel is closed"}
        time.sleep(0.1)  # (its channel opens in a moment)


def _lock_held() -> bool:
    lock = _app_lock()
    return lock is not None and lock.held()


def _app_lock() -> InstanceLock | None:
    try:
        folder = paths.runtime_dir()
    except OSError:  # no runtime folder of our own: no app could have made its lock there
        return None
    return InstanceLock(os.path.join(folder, APP_LOCK))
