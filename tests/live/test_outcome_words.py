"""The real pi (its own `question` example, in its terminal UI under tmux) asked a question whose
options read like a cancel: picking "Kafka" (k-afk-a), "Show cancelled orders" or "Aborted jobs"
is recorded `answered` with that answer, and Esc is still `cancelled` (issue 29, item 1)."""

from __future__ import annotations

from pathlib import Path

import pytest

from ..app_process import AppProcess
from ..conftest import wait_for
from .pi_harness import VERSIONS, need, scripted_model, start_pi

OPTIONS = ["Kafka", "Show cancelled orders", "Aborted jobs"]
ARGS = {"question": "Which queue should the workers read?", "options": [{"label": o} for o in OPTIONS]}


@pytest.mark.parametrize("version", sorted(VERSIONS))
def test_answers_that_read_like_a_cancel_are_answers(tmp_path: Path, version: str) -> None:
    pi_version = need(version)
    sessions = tmp_path / "agent" / "sessions"
    sessions.mkdir(parents=True)
    with (
        scripted_model("question", ARGS) as port,
        AppProcess("run", "--json", "--no-tray", "--no-notify", "--sessions-dir", str(sessions)) as app,
    ):
        app.wait("ready")
        pi = start_pi(tmp_path, pi_version, port, pi_version.example("question.ts"))
        try:
            got = []
            for n, keys in enumerate((["Enter"], ["Down", "Enter"], ["Down", "Down", "Enter"], ["Escape"]), 1):
                pi.prompt("Ask me which queue to use" if n == 1 else f"Ask again please ({n})")
                asked = app.wait("needs_input", n, timeout=40)[-1]
                assert asked["question"]["options"] == OPTIONS
                wait_for(lambda: "Enter to select" in pi.screen(), 20, "the dialog")
                pi.keys(*keys)
                resolved = app.wait("resolved", n, timeout=30)[-1]
                assert resolved["question"]["tool_call_id"] == asked["question"]["tool_call_id"]
                got.append((resolved["outcome"], resolved["answer"]))
                wait_for(lambda: "Enter to select" not in pi.screen(), 20, "the dialog to close")
        finally:
            pi.close()
    assert got == [
        ("answered", "User selected: 1. Kafka"),
        ("answered", "User selected: 2. Show cancelled orders"),
        ("answered", "User selected: 3. Aborted jobs"),
        ("cancelled", None),
    ]
