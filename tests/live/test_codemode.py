"""A question asked from inside another tool call (issue 29, 2c), with the real pi 1.6.0 in tmux:
the scripted model calls pi's built-in ``codemode`` tool with a script that calls the ``question``
tool (pi's example). While the script runs, the session file holds only the pending ``codemode``
call (raw JavaScript); the question's call is nested (pi lists it in the result's ``nestedCalls``
once the script ends). Only the companion extension sees the dialog live: it is that session's
question, with its text and options, attributed to the running codemode call, and it ends as the
user ended it."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from notifier.companion import Closed, ExtensionDialog, Hello

from ..app_process import AppProcess
from ..conftest import cli, wait_for
from .pi_harness import EXTENSION, PI16, Listener, PiSession, needs, pi16, scripted_model
from .test_dialogs import status

pytestmark = needs("1.6.0")

QUESTION = "Which database should we use?"
ARGS = {"question": QUESTION, "options": [{"label": "PostgreSQL"}, {"label": "SQLite"}]}
# The model's codemode input: raw JavaScript that asks, then returns what the user picked.
SCRIPT = f"const picked = await tools.question({json.dumps(ARGS)});\nreturn 'picked: ' + picked;"
CODEMODE = Path("builtin:codemode")  # pi's built-in extension, loaded by name past --no-extensions


@pytest.fixture
def codemode_model() -> Iterator[int]:
    with scripted_model("codemode", {"code": SCRIPT}) as port:
        yield port


def start(tmp_path: Path, port: int) -> PiSession:
    """pi 1.6.0 with codemode on (its documented setting), pi's question tool and the companion."""
    agent = tmp_path / "agent"
    agent.mkdir()
    (agent / "settings.json").write_text(json.dumps({"defaultTools": ["+codemode"]}))
    return pi16(tmp_path, port, CODEMODE, PI16.examples / "question.ts", EXTENSION)


def records(pi: PiSession) -> list[dict[str, Any]]:
    return [json.loads(line).get("message") or {} for line in pi.session_text().splitlines()]


def codemode_calls(pi: PiSession) -> list[str]:
    """The ids of the model's codemode calls in the session file."""
    return [
        c["id"]
        for m in records(pi)
        if m.get("role") == "assistant"
        for c in m.get("content", [])
        if c.get("type") == "toolCall" and c.get("name") == "codemode"
    ]


def result_of(pi: PiSession, call_id: str) -> dict[str, Any] | None:
    return next((m for m in records(pi) if m.get("role") == "toolResult" and m.get("toolCallId") == call_id), None)


def needs_input(app: AppProcess) -> list[dict[str, Any]]:
    return [e for e in app.of("needs_input") if e["question"].get("kind") == "dialog"]


def test_a_question_asked_from_a_codemode_script_is_that_sessions_question(
    tmp_path: Path, codemode_model: int, listener: Listener, apps: list[AppProcess]
) -> None:
    pi = start(tmp_path, codemode_model)
    sessions = pi.agent / "sessions"
    try:
        wait_for(lambda: listener.of(Hello), 10, "the extension's hello")
        app = AppProcess("run", "--json", "--no-tray", "--no-notify", "--sessions-dir", str(sessions))
        apps.append(app)
        app.wait("ready")

        # 1. answered in the terminal
        pi.prompt("Ask me which database to use")
        (event,) = wait_for(lambda: needs_input(app), 30, "the nested question in run --json")
        (_, dialog), *_ = listener.of(ExtensionDialog)
        (call,) = codemode_calls(pi)
        assert result_of(pi, call) is None  # the file: only the running codemode call
        # the dialog is the nested question call's, under the running codemode call
        assert dialog.tool == "question" and dialog.outer_tool_call_id == call
        assert dialog.tool_call_id and dialog.tool_call_id.startswith(f"{call}/")
        q = event["question"]
        assert q["text"] == QUESTION and q["options"] == ["PostgreSQL", "SQLite"]
        assert q["tool"] == "question" and q["tool_call_id"] == dialog.tool_call_id
        assert event["session"]["file"] == dialog.session_file

        # status --json: the session waits for this question, once
        (row,) = wait_for(lambda: [r for r in status(sessions)["sessions"] if r["pending"]], 10, "status")
        assert row["state"] == "needs_input"
        (shown,) = row["pending"]
        assert (shown["text"], shown["options"], shown["tool_call_id"]) == (
            QUESTION,
            ["PostgreSQL", "SQLite"],
            dialog.tool_call_id,
        )

        wait_for(lambda: "Enter to select" in pi.screen(), 20, "the dialog on pi's screen")
        # pi-notifier answer: no answer to it is recorded anywhere it could check before the script
        # ends, so it refuses, saying why, and types nothing (the dialog still shows PostgreSQL)
        for call_args in (["--call", dialog.tool_call_id or ""], []):
            refused = cli("answer", "--sessions-dir", str(sessions), *call_args, "SQLite")
            assert refused.returncode == 1 and "inside a running tool call" in refused.stderr, refused.stderr
        assert "> 1. PostgreSQL" in pi.screen() and result_of(pi, call) is None
        pi.keys("Down")
        pi.keys("Enter")
        (resolved,) = app.wait("resolved")
        assert resolved["question"]["tool_call_id"] == dialog.tool_call_id
        assert resolved["outcome"] == "answered"
        done = wait_for(lambda: result_of(pi, call), 20, "the codemode call's result")
        text = "".join(c.get("text", "") for c in done["content"])
        assert "picked: User selected: 2. SQLite" in text and done["isError"] is False
        nested = done["nestedCalls"]["calls"]
        assert [(c["id"], c["name"], c["status"]) for c in nested] == [(dialog.tool_call_id, "question", "ok")]
        assert wait_for(lambda: [r for r in status(sessions)["sessions"] if not r["pending"]], 10, "cleared")
        assert len(needs_input(app)) == 1  # not announced again, not left behind

        # 2. cancelled in the terminal (Escape): recorded cancelled, as the script saw it
        pi.prompt("Ask me again")
        wait_for(lambda: len(needs_input(app)) == 2, 30, "the second nested question")
        wait_for(lambda: "Enter to select" in pi.screen(), 20, "the second dialog on pi's screen")
        pi.keys("Escape")
        resolved2 = app.wait("resolved", 2)[1]
        assert resolved2["outcome"] == "cancelled" and resolved2["answer"] is None
        second = codemode_calls(pi)[1]
        wait_for(lambda: result_of(pi, second), 20, "the second codemode call's result")
        closed = [e for _, e in listener.of(Closed)]
        assert [e.how for e in closed] == ["answered", "cancelled"]
    finally:
        pi.close()
