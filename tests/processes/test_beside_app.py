"""Beside the running app (a real `pi-notifier run`, no display): `run --json` streams instead of
handing over, a headless run leaves notifying to the app, snoozes and mutes from the command
line reach it and `status` says them, `alive` is the same from the app as from a scan, and the
status-bar segments are answered by the app; and a real tmux status line shows the count."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from notifier.control import request

from ..app_process import AppProcess
from ..conftest import ROOT, cli, wait_for
from ..writer import answer, append, ask, header, user
from .test_lifecycle import headless_env


def _app(sessions: Path, *more: str, notify: bool = False) -> AppProcess:
    quiet = () if notify else ("--no-notify",)
    app = AppProcess("run", *quiet, *more, "--sessions-dir", str(sessions), env=headless_env())
    wait_for(lambda: request({"cmd": "ping"}), 20, "the app's control channel")
    return app


def test_run_json_beside_the_app_streams_and_leaves_notifying_to_it(tmp_path: Path) -> None:
    """The app notifies here (no session bus: it would once one comes), so it claims notifying.
    (This test ran the app with --no-notify while such an app claimed it too, leaving the
    headless run beside it silent: nobody notified. Now an app that does not notify claims
    nothing, and a headless run beside it notifies: tests/desktop/test_hand_over.py.)"""
    append(tmp_path / "--p--" / "a.jsonl", header("/nowhere/blog"), user(), ask("q1", "Before?"))
    with _app(tmp_path, notify=True) as app:
        with AppProcess("run", "--json", "--liveness", "off", "--sessions-dir", str(tmp_path), env=headless_env()) as side:
            assert side.wait("needs_input")[0]["initial"] is True
            side.wait("ready")
            append(tmp_path / "--p--" / "b.jsonl", header("/nowhere/shop"), user(), ask("q2", "After?"))
            later = side.wait("needs_input", 2)[1]
            assert later["question"]["text"] == "After?" and later["initial"] is False
            assert side.proc.poll() is None  # (it used to hand over: nothing printed, exit 0)
        assert not [x for x in side.stderr if "already running" in x]
        with AppProcess("run", "--json", "--no-tray", "--sessions-dir", str(tmp_path), env=headless_env()) as headless:
            headless.wait("ready")
            headless.log_has("it notifies, this run does not")
        other = tmp_path / "other"
        with AppProcess("run", "--json", "--no-tray", "--sessions-dir", str(other), env=headless_env()) as elsewhere:
            elsewhere.wait("ready")  # another folder: nobody else notifies its questions
            assert not [x for x in elsewhere.stderr if "this run does not" in x]
        assert app.proc.poll() is None


def test_snooze_and_mute_reach_the_app_and_status_says_them(tmp_path: Path) -> None:
    append(tmp_path / "--p--" / "a.jsonl", header("/nowhere/blog"), user(), ask("q1", "Which?"))
    with _app(tmp_path, "--liveness", "off"):
        done = cli("snooze", "blog", "1h", "--liveness", "off", "--sessions-dir", str(tmp_path), env=headless_env())
        assert done.returncode == 0 and done.stdout.startswith("snoozed project blog for 1 h 00 min"), done
        assert "not running" not in done.stdout  # the app took it
        assert cli("mute", "blog", "--liveness", "off", "--sessions-dir", str(tmp_path), env=headless_env()).returncode == 0
        status = json.loads(cli("status", "--json", "--liveness", "off", "--sessions-dir", str(tmp_path), env=headless_env()).stdout)
        assert list(status["snoozed"]["projects"]) == ["blog"] and status["muted"] == ["blog"]
        text = cli("status", "--liveness", "off", "--sessions-dir", str(tmp_path), env=headless_env()).stdout
        assert "snoozed: project blog for 59 min" in text or "snoozed: project blog for 1 h 00 min" in text
        assert text.rstrip().endswith("muted: blog")
        assert cli("snooze", "all", "10m", "--liveness", "off", "--sessions-dir", str(tmp_path), env=headless_env()).returncode == 0
        bar = json.loads(cli("status", "--bar", "--liveness", "off", "--sessions-dir", str(tmp_path), env=headless_env()).stdout)
        assert bar["class"] == "snoozed" and bar["text"] == "π 1 z"
        assert cli("unmute", "all", "--liveness", "off", "--sessions-dir", str(tmp_path), env=headless_env()).stdout == "unmuted blog\n"
        assert cli("snooze", "off", "--liveness", "off", "--sessions-dir", str(tmp_path), env=headless_env()).returncode == 0
        after = json.loads(cli("status", "--json", "--liveness", "off", "--sessions-dir", str(tmp_path), env=headless_env()).stdout)
        assert after["snoozed"] == {"all": None, "sessions": {}, "projects": {}} and after["muted"] == []
    # Without the app: saved, and said so
    saved = cli("snooze", "blog", "5m", "--liveness", "off", "--sessions-dir", str(tmp_path), env=headless_env())
    assert saved.returncode == 0 and "pi-notifier is not running" in saved.stdout
    status = json.loads(cli("status", "--json", "--liveness", "off", "--sessions-dir", str(tmp_path), env=headless_env()).stdout)
    assert list(status["snoozed"]["projects"]) == ["blog"]


def test_alive_is_the_same_from_the_app_and_from_a_scan(tmp_path: Path) -> None:
    """The app judges liveness only where a question waits; `status --json` fills in the rest
    from the same process list, so `alive` is never null from the app and true from a scan."""
    here = tmp_path / "proj"
    here.mkdir()
    append(tmp_path / "s" / "--a--" / "a.jsonl", header(str(here)), user())  # asks nothing
    append(tmp_path / "s" / "--b--" / "b.jsonl", header("/nowhere/else"), user())
    fake_pi = subprocess.Popen(["bash", "-c", "exec -a pi sleep 60"], cwd=here)  # a "pi" in that folder
    try:
        args = ("status", "--json", "--sessions-dir", str(tmp_path / "s"))
        scan = json.loads(cli(*args, env=headless_env()).stdout)
        with _app(tmp_path / "s"):
            live = json.loads(cli(*args, env=headless_env()).stdout)
    finally:
        fake_pi.kill()
        fake_pi.wait()
    alive = {s["cwd"]: s["alive"] for s in scan["sessions"]}
    assert alive == {s["cwd"]: s["alive"] for s in live["sessions"]}
    assert alive[str(here)] is True and alive["/nowhere/else"] is False


def test_a_pi_that_ends_after_its_question_was_answered_is_not_alive_from_the_app(tmp_path: Path) -> None:
    """The app judged the session alive while its question waited; once answered, it no longer
    watches the processes there: the pi ending after that is seen by `status` as a scan sees it
    (the app's last judgement does not stay: `alive` true for as long as it runs)."""
    here = tmp_path / "proj"
    here.mkdir()
    session = tmp_path / "s" / "--a--" / "a.jsonl"
    fake_pi = subprocess.Popen(["bash", "-c", "exec -a pi sleep 60"], cwd=here)  # a "pi" in that folder
    args = ("status", "--json", "--sessions-dir", str(tmp_path / "s"))

    def status() -> dict[str, Any]:
        return json.loads(cli(*args, env=headless_env()).stdout)["sessions"][0]  # type: ignore[no-any-return]

    try:
        append(session, header(str(here)), user())
        with _app(tmp_path / "s"):
            append(session, ask("q1", "Ship it?"))
            wait_for(lambda: status()["pending"] != [] and status()["alive"] is True, 10, "asked, judged alive")
            append(session, answer("q1"))
            wait_for(lambda: status()["pending"] == [], 10, "answered")
            fake_pi.kill()
            fake_pi.wait()
            live = status()
            text = cli(*args[:1], *args[2:], env=headless_env()).stdout  # (status in words: the same object)
        scan = status()
    finally:
        fake_pi.kill()
        fake_pi.wait()
    assert (live["alive"], live["state"]) == (scan["alive"], scan["state"]) == (False, "stopped")
    assert "stopped" in text and "working" not in text, text


def test_status_bar_segments_come_from_the_app(tmp_path: Path) -> None:
    args = ("--liveness", "off", "--sessions-dir", str(tmp_path))
    brief = {"cmd": "status", "roots": [str(tmp_path)], "liveness": "off", "question_tools": [], "brief": True}
    with _app(tmp_path, "--liveness", "off"):
        assert cli("status", "--tmux", *args, env=headless_env()).stdout == ""
        append(tmp_path / "--p--" / "a.jsonl", header("/nowhere/blog"), user(), ask("q1", "Which?"))
        # What the bar prints is the app's own summary (one small reply, not every session):
        reply = wait_for(lambda: (r := request(brief)) and r["summary"]["pending"] == 1 and r, 20, "the app sees it")
        assert set(reply) == {"ok", "summary"} and reply["summary"]["questions"][0]["text"] == "Which?"
        assert cli("status", "--tmux", *args, env=headless_env()).stdout == "π 1\n"
        obj = json.loads(cli("status", "--bar", *args, env=headless_env()).stdout)
        assert obj["text"] == "π 1" and obj["class"] == "needs" and obj["tooltip"].startswith("blog ")
        assert obj["full_text"] == "π 1"


@pytest.mark.skipif(not shutil.which("tmux"), reason="tmux is not installed here (apt-get install tmux)")
def test_a_real_tmux_status_line_shows_the_count(tmp_path: Path) -> None:
    """`#(pi-notifier status --tmux)` in status-right, drawn by a real tmux client: the client
    runs in a pane of an outer tmux server, whose capture shows the inner status line."""
    sessions = tmp_path / "s"
    sessions.mkdir()
    inner, outer = str(tmp_path / "inner.sock"), str(tmp_path / "outer.sock")
    command = f"{sys.executable} -m notifier status --tmux --liveness off --sessions-dir {sessions}"
    env = dict(os.environ)
    env.pop("TMUX", None)

    def tmux(sock: str, *args: str) -> str:
        return subprocess.run(["tmux", "-S", sock, *args], capture_output=True, text=True, env=env, cwd=ROOT, timeout=20).stdout

    tmux(inner, "-f", "/dev/null", "new-session", "-d", "-s", "work", "-x", "80", "-y", "10")
    try:
        tmux(inner, "set", "-g", "status-interval", "1")
        tmux(inner, "set", "-g", "status-right", f"#({command})")
        attach = f"env -u TMUX tmux -S {inner} attach -t work"
        tmux(outer, "-f", "/dev/null", "new-session", "-d", "-s", "view", "-x", "80", "-y", "12", attach)

        def status_line() -> str:  # the inner client's last row: its status line
            rows = tmux(outer, "capture-pane", "-p", "-t", "view").rstrip("\n").splitlines()
            return rows[-1] if rows else ""

        wait_for(lambda: "[work]" in status_line(), 20, "the inner status line")
        assert "π" not in status_line()
        append(sessions / "--p--" / "a.jsonl", header("/nowhere/blog"), user(), ask("q1", "Which?"))
        wait_for(lambda: "π 1" in status_line(), 30, "π 1 in the tmux status line")
    finally:
        tmux(outer, "kill-server")
        tmux(inner, "kill-server")


@pytest.mark.skipif(not shutil.which("tmux"), reason="tmux is not installed here (apt-get install tmux)")
def test_the_documented_tmux_key_jumps_to_the_pane_waiting_longest(tmp_path: Path) -> None:
    """The README's `bind-key N run-shell 'pi-notifier goto next >/dev/null'`, pressed in a real
    tmux client (prefix, then N, typed into the client): its client moves to the pane of the pi
    whose question has waited longest, and nothing is left on the screen to dismiss (tmux shows
    what a run-shell printed, and "returned 1", in view mode): the client the key was pressed in
    is where the user is, with or without a display to raise its terminal on. The "pi" is a
    process named pi in that pane and folder."""
    project = tmp_path / "blog"
    project.mkdir()
    sessions = tmp_path / "s"
    inner, outer = str(tmp_path / "inner.sock"), str(tmp_path / "outer.sock")
    env = {k: v for k, v in os.environ.items() if k not in ("TMUX", "TMUX_PANE", "DISPLAY", "WAYLAND_DISPLAY")}

    def tmux(sock: str, *args: str) -> str:
        return subprocess.run(["tmux", "-S", sock, *args], capture_output=True, text=True, env=env, cwd=ROOT, timeout=20).stdout

    tmux(inner, "-f", "/dev/null", "new-session", "-d", "-s", "work", "-x", "80", "-y", "10")
    try:
        tmux(inner, "new-window", "-t", "work:1", "-c", str(project), "exec -a pi sleep 600")
        tmux(inner, "select-window", "-t", "work:0")
        goto = f"{sys.executable} -m notifier goto next --sessions-dir {sessions}"
        # (the README's binding; then a mark, set once run-shell ended and showed what it shows)
        tmux(inner, "bind-key", "N", "run-shell", f"{goto} >/dev/null", "\\;", "set", "-g", "@pi_done", "1")
        attach = f"env -u TMUX tmux -S {inner} attach -t work"
        tmux(outer, "-f", "/dev/null", "new-session", "-d", "-s", "view", "-x", "80", "-y", "12", attach)
        wait_for(lambda: tmux(inner, "list-clients", "-F", "#{client_tty}").strip(), 20, "an attached client")

        def shown() -> str:
            return tmux(inner, "list-clients", "-F", "#{window_index}").strip()

        assert shown() == "0"
        wait_for(lambda: subprocess.run(["pgrep", "-f", "^pi 600"], capture_output=True).returncode == 0, 10, "the pi")
        append(sessions / "--blog--" / "a.jsonl", header(str(project)), user(), ask("q1", "Which?"))
        tmux(outer, "send-keys", "-t", "view", "C-b", "N")
        wait_for(lambda: shown() == "1", 20, "the client on the waiting pi's window")
        wait_for(lambda: tmux(inner, "show", "-gv", "@pi_done").strip() == "1", 20, "the key's command done")
        modes = tmux(inner, "list-panes", "-s", "-t", "work", "-F", "#{pane_in_mode}").split()
        assert modes == ["0", "0"], modes  # (view mode: what the command printed, left to dismiss)
    finally:
        tmux(outer, "kill-server")
        tmux(inner, "kill-server")
