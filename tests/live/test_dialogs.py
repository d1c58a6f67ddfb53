"""Extension dialogs on the board (issue 11), with the real pi 1.6.0 in tmux and the scripted model:
a permission gate is a pending question of ``kind: "dialog"`` in ``run --json`` and ``status
--json``, answered exactly by ``pi-notifier answer``; a question tool's own dialog is not shown
twice and is answered through the channel; pis without the extension work as before."""

from __future__ import annotations

import json
import signal
from collections.abc import Iterator
from datetime import datetime
from pathlib import Path
from typing import Any

import pytest

from notifier.companion.protocol import Closed, Dialog

from ..app_process import AppProcess
from ..conftest import cli, wait_for
from .pi_harness import EXTENSION, GATE_COMMAND, PI16, Listener, needs, pi16

pytestmark = needs("1.6.0")


def _at(event: dict[str, Any]) -> float:
    return datetime.fromisoformat(event["at"].replace("Z", "+00:00")).timestamp()


@pytest.fixture
def apps() -> Iterator[list[AppProcess]]:
    started: list[AppProcess] = []
    yield started
    for app in started:
        app.stop()


def run_app(apps: list[AppProcess], sessions: Path) -> AppProcess:
    sessions.mkdir(parents=True, exist_ok=True)
    app = AppProcess("run", "--json", "--no-tray", "--no-notify", "--sessions-dir", str(sessions))
    apps.append(app)
    app.wait("ready")
    return app


def dialogs_in(app: AppProcess, kind: str) -> list[dict[str, Any]]:
    return [e for e in app.of(kind) if e["question"].get("kind") == "dialog"]


def status(sessions: Path) -> dict[str, Any]:
    out = cli("status", "--json", "--sessions-dir", str(sessions))
    assert out.returncode == 0, out.stderr
    return json.loads(out.stdout)


def pending(sessions: Path) -> list[dict[str, Any]]:
    return [q for s in status(sessions)["sessions"] for q in s["pending"]]


def test_gate_is_a_dialog_question_answered_exactly(
    tmp_path: Path,
    model: int,
    listener: Listener,
    apps: list[AppProcess],
    capsys: pytest.CaptureFixture[str],
) -> None:
    pi = pi16(tmp_path, model, PI16.examples / "permission-gate.ts", EXTENSION)
    sessions = pi.agent / "sessions"
    try:
        app = run_app(apps, sessions)
        pi.prompt(f"bash: {GATE_COMMAND}")
        (event,) = wait_for(lambda: dialogs_in(app, "needs_input"), 30, "the gate in run --json")
        (_, dialog), *_ = listener.of(Dialog)
        q = event["question"]
        assert q["kind"] == "dialog" and q["dialog"] == "select" and q["tool"] == "bash"
        assert GATE_COMMAND in q["text"] and q["options"] == ["Yes", "No"]
        assert q["tool_call_id"] == dialog.tool_call_id and q["count"] == 1
        assert list(q)[:6] == ["tool_call_id", "tool", "text", "header", "options", "count"]
        assert event["initial"] is False and event["session"]["file"] == dialog.session_file
        assert dialog.at is not None
        with capsys.disabled():
            print(
                f"\n[dialogs] gate: needs_input {1000 * (_at(event) - dialog.at):.1f} ms after pi opened it"
            )

        # status --json shows it too (pi asks; the session file says nothing of it)
        (shown,) = wait_for(lambda: pending(sessions), 10, "the dialog in status")
        assert shown["kind"] == "dialog" and shown["text"] == q["text"]

        # bad usage: exit 2, one line, nothing done; then "No" through the channel
        bad = cli("answer", "--sessions-dir", str(sessions), "Maybe")
        assert bad.returncode == 2 and bad.stderr.count("\n") == 1
        done = cli("answer", "--sessions-dir", str(sessions), "No")
        assert done.returncode == 0, done.stderr
        assert done.stdout.strip() == "answered: No"
        assert wait_for(lambda: pi.tool_result("call_b"), 20, "the tool result") == "Blocked by user"
        (resolved,) = app.wait("resolved")
        assert resolved["question"]["kind"] == "dialog" and resolved["outcome"] == "answered"
        assert pending(sessions) == []
        gone = cli("answer", "--sessions-dir", str(sessions), "--call", dialog.tool_call_id or "", "No")
        assert gone.returncode == 1 and gone.stderr.count("\n") == 1

        # answered in the terminal: resolved as well
        pi.prompt(f"bash: {GATE_COMMAND} again")
        wait_for(lambda: len(dialogs_in(app, "needs_input")) == 2, 30, "the second gate")
        pi.keys("Down")
        pi.keys("Enter")
        app.wait("resolved", 2)
        assert (
            dialogs_in(app, "resolved")[1]["question"]["tool_call_id"] != resolved["question"]["tool_call_id"]
        )
    finally:
        pi.close()


def test_dialog_seen_again_after_the_app_restarts_and_gone_with_its_pi(
    tmp_path: Path, model: int, listener: Listener, apps: list[AppProcess]
) -> None:
    pi = pi16(tmp_path, model, PI16.examples / "permission-gate.ts", EXTENSION)
    sessions = pi.agent / "sessions"
    closed = False
    try:
        app = run_app(apps, sessions)
        pi.prompt(f"bash: {GATE_COMMAND}")
        wait_for(lambda: dialogs_in(app, "needs_input"), 30, "the gate")
        app.proc.send_signal(signal.SIGKILL)
        app.proc.wait(5)
        # pi is not affected by the app going away: the gate is still open, and a new app sees it
        again = run_app(apps, sessions)
        (event,) = wait_for(lambda: dialogs_in(again, "needs_input"), 10, "the gate from hello")
        assert event["initial"] is True and GATE_COMMAND in event["question"]["text"]
        assert "Allow?" in pi.screen()
        pi.close()
        closed = True
        (gone,) = wait_for(lambda: [e for e in again.of("abandoned")], 15, "the dialog abandoned")
        assert gone["question"]["kind"] == "dialog"
        assert pending(sessions) == []
    finally:
        if not closed:
            pi.close()


def test_question_tool_dialog_is_the_question_answered_through_the_channel(
    tmp_path: Path, model: int, listener: Listener, apps: list[AppProcess]
) -> None:
    pi = pi16(tmp_path, model, PI16.examples / "question.ts", EXTENSION)
    sessions = pi.agent / "sessions"
    try:
        app = run_app(apps, sessions)
        pi.prompt("Ask me which database to use")
        (event,) = app.wait("needs_input")
        assert event["question"]["kind"] == "question" and "dialog" not in event["question"]
        wait_for(lambda: listener.of(Dialog), 10, "the question's own dialog")
        (shown,) = pending(sessions)
        assert shown["kind"] == "question"
        done = cli("answer", "--sessions-dir", str(sessions), "SQLite")
        assert done.returncode == 0, done.stderr
        assert done.stdout.strip() == "answered: User selected: 2. SQLite"
        assert [e.how for _, e in listener.of(Closed)] == ["remote"]  # through the channel, not tmux
        (resolved,) = app.wait("resolved")
        assert resolved["question"]["kind"] == "question"
        assert len(app.of("needs_input")) == 1  # never shown twice
    finally:
        pi.close()


def test_pi_without_the_extension_works_as_before(tmp_path: Path, model: int, apps: list[AppProcess]) -> None:
    pi = pi16(tmp_path, model, PI16.examples / "permission-gate.ts", PI16.examples / "question.ts")
    sessions = pi.agent / "sessions"
    try:
        app = run_app(apps, sessions)
        pi.prompt(f"bash: {GATE_COMMAND}")
        wait_for(lambda: "Allow?" in pi.screen(), 30, "the gate")
        assert pending(sessions) == []  # without the extension a gate is not seen
        pi.keys("Down")
        pi.keys("Enter")
        assert wait_for(lambda: pi.tool_result("call_b"), 20, "the tool result") == "Blocked by user"
        pi.prompt("Ask me which database to use")
        (event,) = app.wait("needs_input")
        assert event["question"]["kind"] == "question"
        wait_for(lambda: "Enter to select" in pi.screen(), 30, "the question")
        pi.keys("Down")
        pi.keys("Enter")
        (resolved,) = app.wait("resolved")
        assert resolved["outcome"] == "answered" and app.of("needs_input") == [event]
    finally:
        pi.close()


def test_two_pis_in_one_folder_keep_their_dialogs_apart(
    tmp_path: Path, model: int, listener: Listener, apps: list[AppProcess]
) -> None:
    one = pi16(tmp_path, model, PI16.examples / "permission-gate.ts", EXTENSION)
    two = pi16(tmp_path, model, PI16.examples / "permission-gate.ts", EXTENSION)
    sessions = one.agent / "sessions"
    try:
        app = run_app(apps, sessions)
        one.prompt(f"bash: {GATE_COMMAND} one")
        wait_for(lambda: dialogs_in(app, "needs_input"), 30, "the first gate")
        two.prompt(f"bash: {GATE_COMMAND} two")
        events = wait_for(
            lambda: len(dialogs_in(app, "needs_input")) == 2 and dialogs_in(app, "needs_input"), 30, "both"
        )
        files = {e["session"]["file"] for e in events}
        assert len(files) == 2
        second = next(e for e in events if " two" in e["question"]["text"])
        # answer the second pi's gate by its session: the first one still waits
        done = cli("answer", "--sessions-dir", str(sessions), second["session"]["file"], "No")
        assert done.returncode == 0, done.stderr
        (resolved,) = app.wait("resolved")
        assert resolved["session"]["file"] == second["session"]["file"]
        (left,) = pending(sessions)
        assert left["kind"] == "dialog" and " one" in left["text"]
        assert "Allow?" in one.screen()
        wait_for(lambda: "Allow?" not in two.screen(), 10, "the second gate to close")
        one.keys("Down")
        one.keys("Enter")
        app.wait("resolved", 2)
    finally:
        one.close()
        two.close()
