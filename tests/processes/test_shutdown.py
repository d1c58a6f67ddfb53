"""A signal ends the app in well under 2 s even when something on the way out would wait: the
engine stuck in a history write behind another process's database lock. Measured repeatedly."""

from __future__ import annotations

import os
import signal
import sqlite3
import time
from pathlib import Path

import pytest

from ..app_process import AppProcess
from ..conftest import ROOT, wait_for
from ..writer import append, ask, header, user

SHUTDOWN_LIMIT_S = 2.0


@pytest.mark.parametrize("mode", [["--no-tray", "--json"], ["--json"]])
def test_sigterm_is_bounded_while_a_write_waits_on_a_locked_store(tmp_path: Path, mode: list[str]) -> None:
    env = {
        k: v
        for k, v in os.environ.items()
        if k not in ("DISPLAY", "WAYLAND_DISPLAY", "DBUS_SESSION_BUS_ADDRESS")
    }
    db = Path(os.environ["XDG_STATE_HOME"]) / "pi-notifier" / "state.sqlite3"
    times = []
    for i in range(3):
        sessions = tmp_path / f"sessions{i}"
        with AppProcess("run", *mode, "--liveness", "off", "--sessions-dir", str(sessions), env=env) as app:
            app.wait("ready")
            wait_for(db.exists, 10, "the state store")
            other = sqlite3.connect(db, timeout=0.1, isolation_level=None)
            other.execute("BEGIN EXCLUSIVE")  # another process holds the store: writes wait for it
            try:
                append(sessions / "s.jsonl", header(), user(), ask("q1", "Blocked?"))
                app.wait("needs_input")  # the history write after it now waits on the lock
                began = time.monotonic()
                app.proc.send_signal(signal.SIGTERM)
                assert app.proc.wait(10) == 0
                times.append(time.monotonic() - began)
            finally:
                other.execute("ROLLBACK")
                other.close()
            assert not [x for x in app.stderr if "Traceback" in x]
    print("SIGTERM exit times with a locked store (s):", ", ".join(f"{t:.3f}" for t in times))
    assert max(times) < SHUTDOWN_LIMIT_S, times


def test_demo_keeps_its_state_apart_from_the_real_history() -> None:
    import json
    import subprocess
    import sys

    env = {k: v for k, v in os.environ.items() if k not in ("DISPLAY", "WAYLAND_DISPLAY", "DBUS_SESSION_BUS_ADDRESS")}
    state = Path(os.environ["XDG_STATE_HOME"]) / "pi-notifier"
    demo = subprocess.Popen(
        [sys.executable, "-m", "notifier", "demo", "--no-tray"],
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
        env=env,
        cwd=ROOT,
    )
    try:
        assert demo.stdout is not None
        line = ""
        while "asked a question" not in line:  # the demo's question was written and seen
            line = demo.stdout.readline()
            assert line, "the demo ended early"
        # no session bus here: it says so, never that a notification appeared
        assert "no notification server shows it here" in line and "a notification appeared" not in line, line
        demo.send_signal(signal.SIGTERM)
        assert demo.wait(10) == 0
    finally:
        if demo.poll() is None:
            demo.kill()
            demo.wait()
    assert not (state / "state.sqlite3").exists()
    out = subprocess.run(
        [sys.executable, "-m", "notifier", "history", "--json"], capture_output=True, text=True, timeout=30
    )
    assert json.loads(out.stdout)["questions"] == []


def test_the_demo_says_what_this_machine_shows_of_it() -> None:
    """Without a display or a session bus (a fresh server, ssh), the demo says there is no tray
    icon here (not that it was asked for none), offers no window nor `pi-notifier show` (the
    demo's question is in a folder of its own: no other command sees it), shows the question in
    the terminal instead, and does not promise a notification to withdraw."""
    import subprocess
    import sys

    env = {k: v for k, v in os.environ.items() if k not in ("DISPLAY", "WAYLAND_DISPLAY", "DBUS_SESSION_BUS_ADDRESS")}
    demo = subprocess.Popen(
        [sys.executable, "-m", "notifier", "demo"], stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True, env=env, cwd=ROOT
    )
    try:
        assert demo.stdout is not None
        lines = [demo.stdout.readline()]
        while "The answer arrives" not in lines[-1]:
            lines.append(demo.stdout.readline())
            assert lines[-1], f"the demo ended early: {lines}"
        said = "".join(lines)
        assert "no tray icon here" in said and "--no-tray" not in said, said
        assert "pi-notifier show" not in said and "Open the window" not in said, said
        assert "Which database should the demo project use?" in said and "PostgreSQL" in said, said
        assert "withdrawn" not in said, said
        demo.send_signal(signal.SIGTERM)
        assert demo.wait(10) == 0
    finally:
        if demo.poll() is None:
            demo.kill()
            demo.wait()
