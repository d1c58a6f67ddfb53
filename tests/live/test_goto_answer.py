"""`status --json` location, `goto` and `answer` against the real pi (0.73.1 and 1.6.0) in tmux:
the location names pi's pid and pane; goto selects the pane for the client that shows it (and
tells how to attach when no client does); answer answers pi's `question` and `questionnaire`
dialogs, which the session file then records, and refuses — typing nothing — once the question
is gone or when the dialog on screen was touched."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path
from typing import Any

import pytest

from ..conftest import cli, wait_for
from .pi_harness import PiSession, Tmux, need, start_pi


def no_x() -> dict[str, str]:
    """This test's environment (its own HOME and XDG folders) without a display."""
    return {k: v for k, v in os.environ.items() if k not in ("DISPLAY", "WAYLAND_DISPLAY")}


def run(*args: str) -> subprocess.CompletedProcess[str]:
    return cli(*args, env=no_x())


def status(pi: PiSession) -> dict[str, Any]:
    obj: dict[str, Any] = json.loads(run("status", "--json", "--sessions-dir", str(pi.sessions)).stdout)
    return obj


def pending(pi: PiSession) -> list[dict[str, Any]]:
    return [q for s in status(pi)["sessions"] for q in s["pending"]]


def still(pi: PiSession) -> list[str]:
    """The screen without pi 0.73's animated "Working..." line."""
    return [line for line in pi.screen().splitlines() if "Working" not in line]


@pytest.mark.parametrize("version", ["0.73.1", "1.6.0"])
def test_locate_goto_and_answer_question(
    tmp_path: Path, tmux_server: Tmux, model: int, version: str
) -> None:
    v = need(version)
    pi = start_pi(tmp_path, v, model, v.example("question.ts"), server=tmux_server)
    d = ["--sessions-dir", str(pi.sessions)]
    pi.ask("Enter to select")
    wait_for(lambda: pending(pi), 20, "the pending question in status")
    (session,) = status(pi)["sessions"]
    loc = session["location"]
    assert loc["tmux"]["pane"] == pi.pane() and loc["tmux"]["session"] == pi.name
    assert loc["tmux"]["socket"].endswith("/" + tmux_server.name) and loc["window_id"] is None
    assert loc["tty"].startswith("/dev/pts/")
    printed = run("goto", "--print", *d)
    assert printed.returncode == 0 and json.loads(printed.stdout) == loc

    # nobody is attached: goto says how to attach, and exits 1
    detached = run("goto", session["id"][:8], *d)
    assert detached.returncode == 1 and f"attach -t {pi.name}:" in detached.stderr
    assert detached.stderr.count("\n") == 1

    # bad usage: exit 2, one line, nothing typed
    before = still(pi)
    for bad in (["7"], ["Redis"], ["1", "2"], ["--text", "x", "1"], ["no-such-session", "--text", "x"]):
        r = run("answer", *bad, *d)
        assert r.returncode == 2 and r.stderr.count("\n") == 1 and "Traceback" not in r.stderr, bad
    assert run("goto", "zzzz", *d).returncode == 2
    assert still(pi) == before

    # the highlight was moved in the terminal before (to row 2): the keys go from where it is,
    # here Enter alone (the driver reads the highlight on its first look, and after every key)
    tmux_server("send-keys", "-t", pi.pane(), "Down")
    wait_for(lambda: "> 2. SQLite" in pi.screen(), 10, "the moved cursor")
    done = run("answer", session["id"], "SQLite", *d)
    assert done.returncode == 0, done.stderr
    # without --call it names the question it answered (and its token: status --json's)
    token = session["pending"][0]["token"]
    assert done.stdout.splitlines() == [
        f"question: Which database should we use? (call {session['pending'][0]['tool_call_id']}, token {token})",
        "answered: User selected: 2. SQLite",
    ]
    assert pending(pi) == []
    lines = [json.loads(x) for x in Path(session["file"]).read_text().splitlines()]
    results = [e["message"] for e in lines if (e.get("message") or {}).get("role") == "toolResult"]
    assert results[-1]["content"][0]["text"] == "User selected: 2. SQLite"

    # the question is gone: refused, and nothing lands in pi's editor
    wait_for(lambda: "Thanks" in pi.screen(), 20, "pi's reply")
    wait_for(lambda: "Thanks" in Path(session["file"]).read_text(), 20, "pi's reply in the file")
    file_before = Path(session["file"]).read_text()
    gone = run("answer", "--call", results[-1]["toolCallId"], "1", *d)
    assert gone.returncode == 1 and "not waiting" in gone.stderr
    assert run("answer", "1", *d).returncode == 1
    assert pi.editor() == "" and Path(session["file"]).read_text() == file_before
    assert run("goto", *d).returncode == 1  # nothing waits any more

    # a free-text answer
    pi.ask("Enter to select")
    text = run("answer", "--text", "DuckDB, please", *d)
    assert text.returncode == 0 and text.stdout.strip().splitlines()[-1] == "answered: User wrote: DuckDB, please"


def test_answer_questionnaire_form_pi16(tmp_path: Path, tmux_server: Tmux, questionnaire_model: int) -> None:
    v = need("1.6.0")
    pi = start_pi(tmp_path, v, questionnaire_model, v.example("questionnaire.ts"), server=tmux_server)
    d = ["--sessions-dir", str(pi.sessions)]
    pi.ask("Enter confirm")
    wait_for(lambda: pending(pi), 20, "the pending form in status")
    assert run("answer", "2", *d).returncode == 2  # two questions: two answers
    done = run("answer", "SQLite", "1", *d)
    assert done.returncode == 0, done.stderr
    assert "2. SQLite" in done.stdout and "1. Python" in done.stdout
    assert pending(pi) == []


def test_goto_selects_the_pane_for_the_attached_client(
    tmp_path: Path, tmux_server: Tmux, model: int
) -> None:
    v = need("0.73.1")
    pi = start_pi(tmp_path, v, model, v.example("question.ts"), server=tmux_server)
    pi.ask("Enter to select")
    # another window becomes current, and a client (a terminal: here a pane of another tmux
    # server) attaches to the session
    tmux_server("new-window", "-d", "-t", f"{pi.name}:1", "sleep", "3600", check=True)
    tmux_server("select-window", "-t", f"{pi.name}:1", check=True)
    outer = Tmux()
    try:
        env = {k: v for k, v in no_x().items() if k not in ("TMUX", "TMUX_PANE")}
        subprocess.run(
            ["tmux", "-L", outer.name, "new-session", "-d", "-s", "outer", "-x", "120", "-y", "35",
             "tmux", "-L", tmux_server.name, "attach", "-t", pi.name],
            env=env, check=True, timeout=20,
        )  # fmt: skip
        wait_for(lambda: tmux_server("list-clients").strip(), 20, "the client")
        current = [
            "list-panes",
            "-s",
            "-t",
            pi.name,
            "-F",
            "#{window_active}#{pane_active} #{window_index} #{pane_id}",
        ]

        def active() -> list[str]:
            return [line.split()[1:] for line in tmux_server(*current).splitlines() if line.startswith("11")][
                0
            ]

        assert active()[0] == "1"
        # GNOME on Wayland: nothing can focus the terminal; the pane is selected and goto says
        # what is missing (exit 1: never "done" when nothing was focused)
        gnome = dict(no_x(), WAYLAND_DISPLAY="wayland-0", XDG_CURRENT_DESKTOP="GNOME")
        r = cli("goto", "--sessions-dir", str(pi.sessions), env=gnome)
        assert r.returncode == 1
        assert r.stderr == (
            f"pi-notifier: selected tmux pane {pi.pane()}, but its terminal was not focused: GNOME Shell on"
            " Wayland offers no public interface to focus a window; switch to it yourself\n"
        )
        assert active() == ["0", pi.pane()]
        tmux_server("select-window", "-t", f"{pi.name}:1", check=True)
        r = run("goto", "--sessions-dir", str(pi.sessions))
        assert r.returncode == 1 and "no display here to raise a terminal on" in r.stderr, r.stderr
        assert active() == ["0", pi.pane()]
        client = tmux_server("list-clients", "-F", "#{client_tty}").strip()
        assert tmux_server("display-message", "-p", "-c", client, "#{pane_id}").strip() == pi.pane()
        wait_for(
            lambda: "Enter to select" in outer.capture("outer"), 10, "the dialog in the client's terminal"
        )
    finally:
        outer.kill()
