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
from typing import Any

from notifier.system.processes import running_pi

from ..app_process import AppProcess
from ..conftest import wait_for
from ..writer import append, ask, header, user


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

        def mine() -> list[Any]:
            procs = running_pi()
            assert procs is not None
            return [p for p in procs if p.cwd == str(project.resolve())]

        # (until the child has run exec, the kernel still names it after the test's python)
        found = wait_for(mine, 10, "the fake pi in the process table")
        assert abs(found[0].started - time.time()) < 60
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


MOVABLE_PI = """
import os, sys
home = os.getcwd()
print("ready", flush=True)
for line in sys.stdin:
    os.chdir(home if line.strip() == "in" else sys.argv[1])
    print("moved", flush=True)
"""


def start_movable_pi(tmp_path: Path, cwd: Path) -> subprocess.Popen[str]:
    """A real process that looks like pi (``python …/bin/pi``) and can leave its folder and
    come back on request: what a process-table read that misses a running pi looks like."""
    script = tmp_path / "bin" / "pi"
    script.parent.mkdir(exist_ok=True)
    script.write_text(MOVABLE_PI)
    away = tmp_path / "away"
    away.mkdir(exist_ok=True)
    proc = subprocess.Popen(
        [sys.executable, str(script), str(away)],
        cwd=cwd,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    assert proc.stdout is not None and proc.stdout.readline().strip() == "ready"
    return proc


def move(pi: subprocess.Popen[str], where: str) -> None:
    assert pi.stdin is not None and pi.stdout is not None
    pi.stdin.write(where + "\n")
    pi.stdin.flush()
    assert pi.stdout.readline().strip() == "moved"


def test_pi_started_after_the_apps_last_process_check_is_not_called_abandoned(tmp_path: Path) -> None:
    """The normal case for an autostarted app: it read the process table (for an old question of
    a long-dead pi) before this pi started. The new pi's first question must be notified, not
    abandoned on that stale list; killing the pi then abandons it."""
    sessions = tmp_path / "sessions"
    old_project = (tmp_path / "old").resolve()
    old_project.mkdir()
    append(sessions / "--old--" / "o.jsonl", header(str(old_project)), user(), ask("q0", "Long gone?"))
    project = (tmp_path / "project").resolve()
    project.mkdir()
    f = sessions / "--project--" / "s.jsonl"
    with AppProcess("run", "--no-tray", "--json", "--no-notify", "-v", "--sessions-dir", str(sessions)) as app:
        app.wait("ready")
        # the start-up check read the table (q0 has no pi) before the new pi existed
        assert app.of("needs_input") == []
        pi = start_fake_pi(tmp_path, project)
        try:
            append(f, header(str(project)), user(), ask("q1", "Fresh question?"))
            (asked,) = app.wait("needs_input")
            assert asked["question"]["tool_call_id"] == "q1" and asked["initial"] is False
            # a process check after the question has run and found the pi alive
            app.log_has("--project--/s.jsonl call q1")  # -v: the transition is logged with its file and call id
            status = json.loads(
                subprocess.run(
                    [sys.executable, "-m", "notifier", "status", "--json", "--sessions-dir", str(sessions)],
                    capture_output=True,
                    text=True,
                    timeout=30,
                    check=True,
                ).stdout
            )
            mine = next(s for s in status["sessions"] if s["cwd"] == str(project))
            assert mine["alive"] is True and [q["tool_call_id"] for q in mine["pending"]] == ["q1"]
            assert mine["abandoned"] == []
            old = next(s for s in status["sessions"] if s["cwd"] == str(old_project))
            assert [q["tool_call_id"] for q in old["abandoned"]] == ["q0"] and old["pending"] == []
            pi.kill()
            pi.wait()
            (gone,) = app.wait("abandoned", timeout=20)
            assert gone["question"]["tool_call_id"] == "q1"
        finally:
            if pi.poll() is None:
                pi.kill()
                pi.wait()


def test_an_abandoned_question_whose_pi_is_seen_again_is_notified_again(tmp_path: Path) -> None:
    sessions = tmp_path / "sessions"
    project = (tmp_path / "project").resolve()
    project.mkdir()
    f = sessions / "--project--" / "s.jsonl"
    pi = start_movable_pi(tmp_path, project)
    try:
        with AppProcess("run", "--no-tray", "--json", "--no-notify", "--sessions-dir", str(sessions)) as app:
            app.wait("ready")
            append(f, header(str(project)), user(), ask("q1", "Still there?"))
            app.wait("needs_input")
            move(pi, "out")  # the process table no longer shows a pi in the project
            (gone,) = app.wait("abandoned", timeout=20)
            assert gone["question"]["tool_call_id"] == "q1"
            move(pi, "in")
            back = app.wait("needs_input", 2, timeout=30)[1]
            assert back["question"]["tool_call_id"] == "q1" and back["initial"] is False
            assert len(app.of("abandoned")) == 1
    finally:
        pi.kill()
        pi.wait()


def test_a_pi_started_after_an_earlier_question_is_alive_in_the_apps_snapshot_when_it_asks(tmp_path: Path) -> None:
    """The app read the process table for an earlier question (pi A); pi B starts after that
    read, then asks. The app's snapshot never says B's session is without a pi (``alive``
    false: the window's answer and "Go to session" would refuse), and says it is alive within
    a moment, with no other change in any session file to carry it."""
    from notifier.control import request

    from .test_lifecycle import headless_env

    sessions = tmp_path / "sessions"
    first, second = (tmp_path / "first").resolve(), (tmp_path / "second").resolve()
    first.mkdir()
    second.mkdir()
    a, b = sessions / "--first--" / "a.jsonl", sessions / "--second--" / "b.jsonl"
    ask_app = {"cmd": "status", "roots": [str(sessions)], "question_tools": []}

    def session(key: Path) -> dict[str, Any] | None:
        reply = request(ask_app)
        if not reply or not reply.get("ok"):
            return None
        return next((s for s in reply["status"]["sessions"] if s["file"] == str(key)), None)

    pi_a = start_fake_pi(tmp_path, first)
    pi_b: subprocess.Popen[bytes] | None = None
    app = AppProcess("run", "--no-notify", "--sessions-dir", str(sessions), env=headless_env())
    try:
        with app:
            wait_for(lambda: request({"cmd": "ping"}), 20, "the app's control channel")
            append(a, header(str(first)), user(), ask("q1", "First?"))
            wait_for(lambda: (s := session(a)) and s["alive"] is True, 20, "pi A judged alive (a process read)")
            pi_b = subprocess.Popen([str(tmp_path / "bin" / "pi"), "300"], cwd=second)
            wait_for(lambda: [p for p in running_pi() or [] if p.cwd == str(second)], 10, "pi B in the process table")
            append(b, header(str(second)), user(), ask("q2", "Second?"))
            seen: list[Any] = []

            def alive() -> bool:
                s = session(b)
                if s is not None and s["pending"]:
                    seen.append(s["alive"])
                return bool(seen) and seen[-1] is True

            wait_for(alive, 5, "pi B's session alive in the app's snapshot")
            assert False not in seen, seen
            assert (session(a) or {}).get("alive") is True
    finally:
        for pi in (pi_a, pi_b):
            if pi is not None:
                pi.kill()
                pi.wait()
