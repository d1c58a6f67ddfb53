"""The real pi CLI (0.73.1, in its terminal UI under tmux) against a scripted model on loopback,
while `pi-notifier run --json` watches: the question is seen, answered, asked again, and
abandoned when pi is killed. .ci/run installs pi into .cache/pi; elsewhere set PI_NOTIFIER_PI_BIN."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from ..app_process import AppProcess
from ..conftest import ROOT, cli, wait_for
from .writer import append, ask, header, user

PI = Path(os.environ.get("PI_NOTIFIER_PI_BIN") or ROOT / ".cache" / "pi" / "node_modules" / ".bin" / "pi")
QUESTION_EXT = (
    PI.resolve().parents[1] / "examples" / "extensions" / "question.ts"
    if PI.exists()
    else Path("/nonexistent")
)

pytestmark = pytest.mark.skipif(
    not (PI.exists() and QUESTION_EXT.exists() and shutil.which("node") and shutil.which("tmux")),
    reason="the real pi CLI (with node and tmux) is not installed here; .ci/run installs it",
)


@pytest.fixture
def model() -> Iterator[int]:
    proc = subprocess.Popen(
        [sys.executable, str(Path(__file__).with_name("mock_model.py"))], stdout=subprocess.PIPE, text=True
    )
    assert proc.stdout is not None
    port = int(proc.stdout.readline())
    yield port
    proc.terminate()
    proc.wait(5)


def tmux(*args: str) -> str:
    return subprocess.run(
        ["tmux", "-L", "pi-notifier-test", *args], capture_output=True, text=True, timeout=20
    ).stdout


def test_real_pi_asks_is_answered_and_is_abandoned_when_killed(tmp_path: Path, model: int) -> None:
    agent, project = tmp_path / "agent", (tmp_path / "project").resolve()
    agent.mkdir()
    project.mkdir()
    (agent / "models.json").write_text(
        json.dumps(
            {
                "providers": {
                    "mock": {
                        "baseUrl": f"http://127.0.0.1:{model}/v1",
                        "api": "openai-completions",
                        "apiKey": "x",
                        "compat": {"supportsDeveloperRole": False, "supportsReasoningEffort": False},
                        "models": [{"id": "mock-model", "reasoning": False}],
                    }
                }
            }
        )
    )
    session = f"pi-notifier-test-{os.getpid()}"
    command = (
        f"PI_CODING_AGENT_DIR={agent} {PI} --no-extensions -e {QUESTION_EXT} "
        "--provider mock --model mock-model"
    )
    sessions = agent / "sessions"
    # An old question of a pi that died long ago: the app reads the process table at start-up,
    # before this test's pi exists (what an app started at login sees). That stale read must not
    # make the new pi's first question "abandoned".
    gone_project = tmp_path / "gone"
    append(sessions / "--gone--" / "old.jsonl", header(str(gone_project)), user(), ask("old", "Long ago?"))
    with AppProcess("run", "--json", "--no-tray", "--no-notify", "--sessions-dir", str(sessions)) as app:
        app.wait("ready")
        assert app.of("needs_input") == []  # the old question was abandoned at start-up
        tmux("new-session", "-d", "-s", session, "-x", "120", "-y", "35", "-c", str(project), command)
        try:
            wait_for(
                lambda: "mock-model" in tmux("capture-pane", "-t", session, "-p"), 30, "pi's terminal UI"
            )
            tmux("send-keys", "-t", session, "Ask me which database to use", "Enter")
            (asked,) = app.wait("needs_input", timeout=30)
            assert asked["question"]["text"] == "Which database should we use?"
            assert asked["question"]["options"] == ["PostgreSQL", "SQLite"]
            assert asked["session"]["cwd"] == str(project)
            # the real pi process is recognised: alive, the question pending (not abandoned)
            status = json.loads(cli("status", "--json", "--sessions-dir", str(sessions)).stdout)
            mine = next(s for s in status["sessions"] if s["cwd"] == str(project))
            assert status["pending"] == 1 and mine["alive"] is True and mine["abandoned"] == []
            assert app.of("abandoned") == []  # (the stale start-up list used to abandon it at once)
            wait_for(lambda: "Enter to select" in tmux("capture-pane", "-t", session, "-p"), 20, "the dialog")
            tmux("send-keys", "-t", session, "Down", "Enter")
            (resolved,) = app.wait("resolved", timeout=30)
            assert resolved["outcome"] == "answered" and resolved["answer"] == "User selected: 2. SQLite"
            tmux("send-keys", "-t", session, "Ask again please", "Enter")
            again = app.wait("needs_input", 2, timeout=30)[1]
            assert again["question"]["tool_call_id"] != asked["question"]["tool_call_id"]
            assert app.of("abandoned") == []
        finally:
            tmux("kill-session", "-t", session)  # the terminal closes: pi dies with the question open
        (gone,) = app.wait("abandoned", timeout=30)
        assert gone["question"]["tool_call_id"] == again["question"]["tool_call_id"]
        assert [e["question"]["tool_call_id"] for e in app.of("needs_input")] == [
            asked["question"]["tool_call_id"],
            again["question"]["tool_call_id"],
        ]
