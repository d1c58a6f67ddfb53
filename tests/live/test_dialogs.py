"""Extension dialogs on the board (issue 11), with the real pi 1.6.0 in tmux and the scripted model:
a permission gate is a pending question of ``kind: "dialog"`` in ``run --json`` and ``status
--json``, answered exactly by ``pi-notifier answer``; a question tool's own dialog is not shown
twice and is answered through the channel; pis without the extension work as before."""

from __future__ import annotations

import json
import os
import signal
from datetime import datetime
from pathlib import Path
from typing import Any

import pytest

from notifier.companion import Closed, ExtensionDialog, Hello
from notifier.control import request

from ..app_process import AppProcess
from ..conftest import cli, wait_for
from .pi_harness import EXTENSION, GATE_COMMAND, PI16, Listener, PiSession, needs, pi16, scripted_model

pytestmark = needs("1.6.0")


def _at(event: dict[str, Any]) -> float:
    return datetime.fromisoformat(event["at"].replace("Z", "+00:00")).timestamp()


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
    obj: dict[str, Any] = json.loads(out.stdout)
    return obj


def pending(sessions: Path) -> list[dict[str, Any]]:
    return [q for s in status(sessions)["sessions"] for q in s["pending"]]


def doctor_line(label: str) -> str:
    (line,) = [x for x in cli("doctor").stdout.splitlines() if f"] {label}:" in x]
    return str(line)


def pane_pid(pi: PiSession) -> int:
    return int(pi.tmux("display-message", "-p", "-t", pi.pane_id, "#{pane_pid}"))


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
        (_, dialog), *_ = listener.of(ExtensionDialog)
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
        assert done.stdout.strip().splitlines()[-1] == "answered: No"
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
        wait_for(lambda: listener.of(ExtensionDialog), 10, "the question's own dialog")
        (shown,) = pending(sessions)
        assert shown["kind"] == "question"
        done = cli("answer", "--sessions-dir", str(sessions), "SQLite")
        assert done.returncode == 0, done.stderr
        assert done.stdout.strip().splitlines()[-1] == "answered: User selected: 2. SQLite"
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
        # doctor says this pi's gate is not shown (question.ts's own dialog is: a question tool)
        line = doctor_line("extension dialogs")
        assert line.startswith("[note]") and f"pi {pane_pid(pi)} in {pi.project} (permission-gate.ts?)" in line
        assert "pi-extension install" in line
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


# --- issue 21: every dialog a human waits on, and nothing else -----------------------------------


def test_a_timed_out_confirm_is_cancelled_and_an_answer_is_recorded(
    tmp_path: Path, model: int, listener: Listener, apps: list[AppProcess]
) -> None:
    """pi's timed-confirm example: a confirm that closes itself after 5 s is cancelled (timed out),
    by its timeout and by its abort signal alike; one answered in time records the answer."""
    pi = pi16(tmp_path, model, PI16.examples / "timed-confirm.ts", EXTENSION)
    sessions = pi.agent / "sessions"
    try:
        app = run_app(apps, sessions)
        for n, command in enumerate(["/timed", "/timed-signal"], 1):
            pi.prompt(command)

            def asked(n: int = n) -> bool:
                return len(dialogs_in(app, "needs_input")) == n

            def resolved(n: int = n) -> bool:
                return len(dialogs_in(app, "resolved")) == n

            wait_for(asked, 30, f"the {command} dialog")
            q = dialogs_in(app, "needs_input")[-1]["question"]
            assert q["dialog"] == "confirm" and q["options"] == ["Yes", "No"]
            assert "auto-cancel in 5 seconds" in q["text"]
            wait_for(resolved, 15, f"{command} to time out")
            done = dialogs_in(app, "resolved")[-1]
            assert (done["outcome"], done["answer"]) == ("cancelled", None)
            assert done["waited_s"] >= 4.5
            wait_for(lambda: "timed out" in pi.screen() or "auto-cancelled" in pi.screen(), 10, "pi's notice")
        pi.prompt("/timed")
        wait_for(lambda: len(dialogs_in(app, "needs_input")) == 3, 30, "the third dialog")
        answered = cli("answer", "--sessions-dir", str(sessions), "yes")
        assert answered.returncode == 0 and answered.stdout.strip().splitlines()[-1] == "answered: Yes", answered.stderr
        wait_for(lambda: len(dialogs_in(app, "resolved")) == 3, 10, "the answer")
        assert (dialogs_in(app, "resolved")[-1]["outcome"], dialogs_in(app, "resolved")[-1]["answer"]) == (
            "answered",
            "Yes",
        )
        wait_for(lambda: "Confirmed by user!" in pi.screen(), 10, "pi's notice")
        # Escape: pi returns false as for No, but nobody answered
        pi.prompt("/timed")
        wait_for(lambda: len(dialogs_in(app, "needs_input")) == 4, 30, "the fourth dialog")
        wait_for(lambda: "auto-cancel" in pi.screen(), 10, "the dialog on the screen")
        pi.keys("Escape")
        wait_for(lambda: len(dialogs_in(app, "resolved")) == 4, 10, "the Escape")
        escaped = dialogs_in(app, "resolved")[-1]
        assert (escaped["outcome"], escaped["answer"]) == ("cancelled", None) and escaped["waited_s"] < 4.5
        # and No is No
        pi.prompt("/timed")
        wait_for(lambda: len(dialogs_in(app, "needs_input")) == 5, 30, "the fifth dialog")
        assert cli("answer", "--sessions-dir", str(sessions), "no").stdout.strip().splitlines()[-1] == "answered: No"
        wait_for(lambda: len(dialogs_in(app, "resolved")) == 5, 10, "the No")
        assert (dialogs_in(app, "resolved")[-1]["outcome"], dialogs_in(app, "resolved")[-1]["answer"]) == (
            "answered",
            "No",
        )
    finally:
        pi.close()


@pytest.mark.parametrize(
    ("extensions", "title", "choice"),
    [
        # pi's project-trust example, the companion loaded after it (its handler never runs first)
        ((PI16.examples / "project-trust.ts", EXTENSION), "Project trust for:", "Trust this session"),
        ((EXTENSION,), "Trust project folder?", "Trust (this session only)"),  # pi's own prompt
    ],
    ids=["project-trust", "pi"],
)
def test_a_start_up_dialog_before_the_session_exists_is_on_the_board(
    tmp_path: Path,
    model: int,
    listener: Listener,
    apps: list[AppProcess],
    extensions: tuple[Path, ...],
    title: str,
    choice: str,
) -> None:
    """A trust prompt comes before session_start and before any session file. The pi is on the
    board by its process and folder, answered from here, and then works in its own session."""
    (tmp_path / "project" / ".pi").mkdir(parents=True)
    (tmp_path / "project" / ".pi" / "settings.json").write_text("{}")  # what makes pi ask for trust
    sessions = tmp_path / "agent" / "sessions"
    app = run_app(apps, sessions)
    pi = pi16(tmp_path, model, *extensions, ready=title)
    try:
        (event,) = wait_for(lambda: dialogs_in(app, "needs_input"), 20, "the trust dialog")
        q, session = event["question"], event["session"]
        assert q["dialog"] == "select" and q["text"].startswith(title) and choice in q["options"]
        assert session["file"].startswith("pid:") and session["cwd"] == str(pi.project)
        assert not list(sessions.rglob("*.jsonl"))  # pi waits before it has a session file
        (shown,) = wait_for(lambda: pending(sessions), 10, "the dialog in status")
        assert shown["text"] == q["text"]
        done = cli("answer", "--sessions-dir", str(sessions), choice)
        assert done.returncode == 0 and done.stdout.strip().splitlines()[-1] == f"answered: {choice}", done.stderr
        (resolved,) = app.wait("resolved")
        assert (resolved["outcome"], resolved["answer"]) == ("answered", choice)
        wait_for(lambda: "mock-model" in pi.screen(), 30, "pi's UI after the trust dialog")
        # the same pi, now in its session: on the board by its session file, the start-up entry gone
        pi.prompt("say: trusted")
        (row,) = wait_for(lambda: status(sessions)["sessions"], 30, "the session in status")
        assert row["file"].endswith(".jsonl") and row["cwd"] == str(pi.project) and row["pending"] == []
    finally:
        pi.close()


def test_loaders_are_not_questions_but_the_editor_after_one_is(
    tmp_path: Path, listener: Listener, apps: list[AppProcess]
) -> None:
    """qna's and handoff's BorderedLoader while they call the model (1.5 s here) is announced as a
    dialog that does not wait for a human: never on the board. handoff's editor after it is."""
    with scripted_model(text_delay=1.5) as port:
        pi = pi16(tmp_path, port, PI16.examples / "qna.ts", PI16.examples / "handoff.ts", EXTENSION)
        sessions = pi.agent / "sessions"
        try:
            app = run_app(apps, sessions)
            pi.prompt("say: Which database should we use?")
            wait_for(lambda: "Which database should we use?" in pi.session_text(), 30, "the reply")
            pi.prompt("/qna")
            wait_for(lambda: "Extracting questions using" in pi.screen(), 20, "qna's loader")
            (_, loader), *_ = wait_for(lambda: listener.of(ExtensionDialog), 5, "the loader announced")
            assert loader.kind == "custom" and loader.waits is False
            assert pending(sessions) == []
            wait_for(lambda: "Q: Which database" in (pi.editor() or ""), 20, "the questions in the editor")
            pi.keys("C-c")  # (clear the editor)
            pi.prompt("/handoff write the tests")
            wait_for(lambda: "Generating handoff prompt" in pi.screen(), 20, "handoff's loader")
            assert pending(sessions) == []
            (event,) = wait_for(lambda: dialogs_in(app, "needs_input"), 20, "the handoff editor")
            assert event["question"]["dialog"] == "editor" and "Edit handoff prompt" in event["question"]["text"]
            assert all(not d.waits for _, d in listener.of(ExtensionDialog) if d.kind == "custom")
            assert len(app.of("needs_input")) == 1  # neither loader was ever on the board
            pi.keys("Escape")
            (resolved,) = app.wait("resolved")
            assert resolved["outcome"] == "cancelled"
        finally:
            pi.close()


def test_a_gate_answered_no_records_no_and_a_killed_gates_session_is_stopped(
    tmp_path: Path, model: int, listener: Listener, apps: list[AppProcess]
) -> None:
    pi = pi16(tmp_path, model, PI16.examples / "permission-gate.ts", EXTENSION)
    sessions = pi.agent / "sessions"
    try:
        app = run_app(apps, sessions)
        pi.prompt(f"bash: {GATE_COMMAND}")
        wait_for(lambda: dialogs_in(app, "needs_input"), 30, "the gate")
        pi.keys("Down")
        pi.keys("Enter")  # "No", in the terminal
        (resolved,) = app.wait("resolved")
        assert (resolved["outcome"], resolved["answer"]) == ("answered", "No")
        assert wait_for(lambda: pi.tool_result("call_b"), 20, "the refusal") == "Blocked by user"
        history = wait_for(
            lambda: [
                q
                for q in json.loads(cli("history", "--json").stdout)["questions"]
                if q["question"]["tool"] == "bash" and q["session"]["file"] == resolved["session"]["file"]
            ],
            10,
            "the gate in history",
        )
        assert [(q["outcome"], q.get("answer")) for q in history] == [("answered", "No")]

        # the app too (status answers from it): it follows the companion, not the process table
        env = {k: v for k, v in os.environ.items() if k not in ("DISPLAY", "WAYLAND_DISPLAY")}
        tray_app = AppProcess("run", "--no-notify", "--sessions-dir", str(sessions), env=env)
        apps.append(tray_app)
        wait_for(lambda: request({"cmd": "ping"}), 20, "the app's control channel")
        pi.prompt(f"bash: {GATE_COMMAND} again")
        wait_for(lambda: len(dialogs_in(app, "needs_input")) == 2, 30, "the second gate")
        ((_, hello),) = listener.of(Hello)
        assert f"pi {hello.pid} in" not in doctor_line("extension dialogs")  # it has the companion
        wait_for(lambda: pending(sessions), 10, "the gate in the app's status")
        os.kill(hello.pid, signal.SIGKILL)
        wait_for(lambda: app.of("abandoned"), 15, "the gate abandoned")
        (row,) = wait_for(
            lambda: [r for r in status(sessions)["sessions"] if r["state"] != "needs_input"], 10, "the app's status"
        )
        assert (row["state"], row["alive"], row["pending"]) == ("stopped", False, [])
        tray_app.stop()
        (row,) = status(sessions)["sessions"]  # and the one-shot scan, from the process table
        assert (row["state"], row["alive"], row["pending"]) == ("stopped", False, [])
    finally:
        pi.close()
