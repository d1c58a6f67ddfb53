"""The first question of a pi not seen before, its terminal in raw mode (pi's TUI: it waits for
a human), against a real dunst: notified without waiting out the settle window. A pi whose
terminal is cooked (``pi -p``) still waits it."""

from __future__ import annotations

import os
import pty
import subprocess
import sys
import time
import tty
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from notifier.system.processes import running_pi

from ..conftest import wait_for
from ..writer import append, ask, header, user
from .services import Dunst, Monitor
from .test_notifications import _config, run_app

SETTLE_S = 3.0  # long, so that "at once" and "after the window" cannot be mistaken


@contextmanager
def fake_pi(tmp_path: Path, project: Path, raw: bool) -> Iterator[None]:
    """A process that looks like pi (``python …/bin/pi``) running in ``project`` on a terminal of
    its own, raw as pi's TUI sets it or cooked as ``pi -p`` leaves it."""
    script = tmp_path / "bin" / "pi"
    script.parent.mkdir(exist_ok=True)
    script.write_text("import time\ntime.sleep(300)\n")
    master, slave = pty.openpty()
    if raw:
        tty.setraw(slave)
    proc = subprocess.Popen([sys.executable, str(script)], stdin=slave, cwd=project, start_new_session=True)
    try:
        wait_for(lambda: [p for p in running_pi() or [] if p.pid == proc.pid], 10, "the pi in the process table")
        yield
    finally:
        proc.kill()
        proc.wait()
        os.close(master)
        os.close(slave)


def _first_question(tmp_path: Path, monitor: Monitor, raw: bool) -> float:
    """Seconds from the new session's first write (header and question at once, as pi writes
    it) to its Notify."""
    project = (tmp_path / "project").resolve()
    project.mkdir()
    sessions = tmp_path / "sessions"
    sessions.mkdir()
    config = _config(tmp_path, f"settle_ms = {int(SETTLE_S * 1000)}\n")
    # (liveness on, not off as run_app has it: the app reads the process table, as for a user)
    with fake_pi(tmp_path, project, raw), run_app(sessions, "--config", str(config), "--liveness", "auto") as app:
        app.wait("ready")
        written = time.monotonic()
        append(sessions / "--project--" / "s.jsonl", header(str(project)), user(), ask("q1", "First?"))
        wait_for(lambda: monitor.notifies(), 2 * SETTLE_S + 5, "the notification")
        return monitor.stamps("Notify")[0] - written


def test_the_first_question_of_a_pi_in_raw_mode_is_notified_at_once(
    tmp_path: Path, dunst: Dunst, monitor: Monitor
) -> None:
    took = _first_question(tmp_path, monitor, raw=True)
    print(f"first question notified {took * 1000:.0f} ms after it was written")
    assert took < SETTLE_S / 2, f"{took:.3f} s"


def test_the_first_question_of_a_pi_in_cooked_mode_waits_the_settle_window(
    tmp_path: Path, dunst: Dunst, monitor: Monitor
) -> None:
    took = _first_question(tmp_path, monitor, raw=False)
    assert took >= SETTLE_S - 0.1, f"{took:.3f} s"
