"""Liveness against the real process table: a process named `pi` running in the session's folder
keeps its question pending; when it is killed the question is abandoned (file unchanged)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

from notifier.pi.processes import running_pi

from ..app_process import AppProcess
from .writer import append, ask, header, user


def start_fake_pi(tmp_path: Path, cwd: Path) -> subprocess.Popen[bytes]:
    sleep = shutil.which("sleep")
    assert sleep
    fake = tmp_path / "bin" / "pi"
    fake.parent.mkdir(exist_ok=True)
    os.symlink(sleep, fake)  # the kernel names the process after the link: "pi"
    return subprocess.Popen([str(fake), "300"], cwd=cwd)


def test_running_pi_is_found_by_name_and_folder(tmp_path: Path) -> None:
    project = tmp_path / "project"
    project.mkdir()
    proc = start_fake_pi(tmp_path, project)
    try:
        procs = running_pi()
        assert procs is not None
        mine = [p for p in procs if p.cwd == str(project.resolve())]
        assert mine and abs(mine[0].started - time.time()) < 60
    finally:
        proc.kill()
        proc.wait()


def test_killed_pi_abandons_its_question(tmp_path: Path) -> None:
    project = (tmp_path / "project").resolve()
    project.mkdir()
    sessions = tmp_path / "sessions"
    f = sessions / "--project--" / "s.jsonl"
    pi = start_fake_pi(tmp_path, project)
    try:
        with AppProcess("run", "--no-tray", "--json", "--no-notify", "--sessions-dir", str(sessions)) as app:
            app.wait("ready")
            append(f, header(str(project)), user(), ask("q1", "Still there?"))
            app.wait("needs_input")
            status = subprocess.run(
                [sys.executable, "-m", "notifier", "status", "--json", "--sessions-dir", str(sessions)],
                capture_output=True,
                text=True,
                timeout=30,
                check=True,
            )
            (session,) = json.loads(status.stdout)["sessions"]
            assert (
                session["alive"] is True
                and session["state"] == "needs_input"
                and len(session["pending"]) == 1
            )
            assert app.of("abandoned") == []
            pi.kill()
            pi.wait()
            (gone,) = app.wait("abandoned", timeout=15)
            assert gone["question"]["text"] == "Still there?" and "initial" not in gone
            assert f.read_bytes().count(b"\n") == 3  # nothing was written: only liveness can tell
    finally:
        if pi.poll() is None:
            pi.kill()
