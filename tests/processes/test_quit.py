"""``pi-notifier quit``: the running app (started from a terminal, or as ``autostart install``
says) ends, and quit returns only once its process has exited; headless runs are left running;
with no app it says so and exits 0. Where the app cannot be ended it says why, and exits 1
within its deadline. (Bad usage: tests/processes/test_cli.py.)"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import signal
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from notifier.cli import quit
from notifier.cli.parser import effective_config
from notifier.control import Connection, Server, request, socket_path
from notifier.instance import APP_LOCK, InstanceLock
from notifier.system import paths

from ..app_process import AppProcess
from ..conftest import cli, wait_for


def _ended(pid: int) -> bool:
    """Whether process ``pid`` has exited (gone, or a zombie its parent has not reaped yet)."""
    try:
        with open(f"/proc/{pid}/stat", encoding="ascii", errors="replace") as fh:
            return fh.read().rsplit(")", 1)[1].split()[0] in ("Z", "X")
    except FileNotFoundError:
        return True


def _ping() -> dict[str, Any] | None:
    reply = request({"cmd": "ping"})
    return reply if reply is not None and reply.get("ok") else None


def test_quit_ends_the_app_and_leaves_headless_runs_alone(tmp_path: Path) -> None:
    args = ("--liveness", "off", "--sessions-dir", str(tmp_path))
    with AppProcess("run", *args) as app, AppProcess("run", "--no-tray", "--json", *args) as side:
        side.wait("ready")
        assert wait_for(_ping, 20, "the app's control channel")["pid"] == app.proc.pid
        r = cli("quit")
        assert r.returncode == 0, r.stderr
        assert r.stdout == f"the app (pid {app.proc.pid}) has quit\n" and r.stderr == ""
        assert app.proc.poll() == 0  # exited before quit returned, cleanly
        assert not os.path.exists(socket_path()) and request({"cmd": "ping"}) is None
        assert not [line for line in app.stderr if "Traceback" in line]
        # a headless run serves no control channel: quit leaves it running, and says no app runs
        again = cli("quit")
        assert again.returncode == 0 and again.stdout == quit.NONE_SAID + "\n" and again.stderr == ""
        assert side.proc.poll() is None


def test_quit_with_no_app_running_says_so() -> None:
    r = cli("quit")
    assert (r.returncode, r.stdout, r.stderr) == (0, "no pi-notifier app is running: nothing to quit\n", "")


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="/proc and setsid: Linux")
def test_quit_ends_the_app_autostart_install_said_how_to_start() -> None:
    """``autostart install`` says the command that starts the app now (as the desktop session
    will); the app started by it, detached from any terminal, is ended by quit."""
    installed = cli("autostart", "install")
    assert installed.returncode == 0, installed.stderr
    if "installed (xdg)" not in installed.stdout:  # (a systemd user unit: never started by a test)
        pytest.skip("autostart uses systemd here")
    if not shutil.which("setsid"):
        pytest.skip("setsid (util-linux) is not installed")
    prefix = "start it now: "
    (line,) = [x[len(prefix):] for x in installed.stdout.splitlines() if x.startswith(prefix)]
    assert line.startswith("setsid -f ") and line.endswith(" run >/dev/null 2>&1"), line
    subprocess.run(line, shell=True, check=True, timeout=30)
    pid = wait_for(_ping, 30, "the app started as autostart install said")["pid"]
    try:
        r = cli("quit")
        assert r.returncode == 0 and r.stdout == f"the app (pid {pid}) has quit\n", r.stdout + r.stderr
        assert _ended(pid)
    finally:
        if not _ended(pid):
            os.kill(pid, signal.SIGKILL)
    assert "removed (xdg)" in cli("autostart", "remove").stdout


@pytest.fixture
def stubborn(tmp_path: Path) -> Iterator[int]:
    """An app's control channel whose app does not end when asked: it answers ping with the pid
    of a process that goes on running (the real app always ends; this is the case quit must not
    wait for forever). Yields that pid."""
    process = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(120)"])

    def handle(req: dict[str, Any], conn: Connection) -> dict[str, Any]:
        return {"ok": True, "pid": process.pid} if req.get("cmd") == "ping" else {"ok": True}

    server = Server(socket_path(), handle)
    server.start()
    try:
        yield process.pid
    finally:
        server.stop()
        process.kill()
        process.wait(10)


def _quit_here(capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    args = argparse.Namespace(command="quit", config=None, verbose=False)
    code = quit.cmd_quit(args, effective_config(args))
    out, err = capsys.readouterr()
    return code, out, err


def test_an_app_that_does_not_end_is_said_within_the_deadline(
    stubborn: int, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setattr(quit, "EXIT_WAIT_S", 0.3)
    code, out, err = _quit_here(capsys)
    assert (code, out) == (1, "")
    assert err == (
        f"pi-notifier: the app (pid {stubborn}) was asked to quit but still runs after 0.3 s;"
        f" stop it with: kill {stubborn}\n"
    )
    assert not _ended(stubborn)


def test_an_app_whose_channel_is_closed_is_not_called_absent(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """The one-app lock is held but nothing answers on the control channel (the app is starting,
    or could not open its channel): quit asks again for a while, then says so; exit 1."""
    monkeypatch.setattr(quit, "HAND_OVER_S", 0.3)
    lock = InstanceLock(os.path.join(paths.runtime_dir(), APP_LOCK))
    assert lock.acquire()
    try:
        code, out, err = _quit_here(capsys)
    finally:
        lock.release()
    assert (code, out) == (1, "")
    assert "an app holds the lock, but its control channel is closed" in err and err.count("\n") == 1
    assert _quit_here(capsys) == (0, quit.NONE_SAID + "\n", "")


def test_autostart_says_how_to_start_the_app_now_for_every_entry(tmp_path: Path) -> None:
    """Through the service manager where the entry has one; else detached from the terminal,
    so that closing it (SIGHUP, which ends the app) does not end the app."""
    from notifier.system import autostart

    exe = ["/opt/my apps/bin/pi-notifier"]
    start = {m: autostart.start_command(autostart.Target(m, tmp_path / "entry"), exe) for m in
             ("systemd", "launchagent", "startup", "xdg")}  # fmt: skip
    assert start["systemd"] == "systemctl --user start pi-notifier.service"
    assert start["launchagent"] == f"launchctl load {tmp_path / 'entry'}"
    assert start["startup"] == f'"{tmp_path / "entry"}"'
    if shutil.which("setsid"):
        assert start["xdg"] == "setsid -f '/opt/my apps/bin/pi-notifier' run >/dev/null 2>&1"
    else:
        assert start["xdg"].startswith("log in again, or run '/opt/my apps/bin/pi-notifier' run")


def test_a_frozen_app_is_named_and_a_snooze_it_was_sent_is_not_called_refused(tmp_path: Path) -> None:
    """An app that stops answering (here: stopped with SIGSTOP) still holds its lock: ``quit``
    names its pid and says how to end it (its tray menu is frozen too); a ``snooze`` sent to it
    is not said to be refused, since the app applies it once it runs again, as it then does."""
    args = ("--liveness", "off", "--sessions-dir", str(tmp_path))
    with AppProcess("run", *args) as app:
        wait_for(_ping, 20, "the app's control channel")
        os.kill(app.proc.pid, signal.SIGSTOP)
        try:
            stuck = cli("quit")
            sent = cli("snooze", "all", "1h", *args[2:])
        finally:
            os.kill(app.proc.pid, signal.SIGCONT)
        assert stuck.returncode == 1 and stuck.stdout == "", stuck.stdout
        assert stuck.stderr.strip().endswith(f"stop it with: kill {app.proc.pid}"), stuck.stderr
        assert f"(pid {app.proc.pid}) does not answer" in stuck.stderr and stuck.stderr.count("\n") == 1
        assert sent.returncode == 1 and "refused" not in sent.stderr, sent.stderr
        assert "did not confirm it" in sent.stderr and sent.stderr.count("\n") == 1, sent.stderr

        def snoozed() -> bool:
            said = cli("status", "--json", *args)
            return said.returncode == 0 and json.loads(said.stdout)["snoozed"]["all"] is not None

        wait_for(snoozed, 20, "the snooze applied once the app runs again")
        assert cli("quit").returncode == 0
