"""The real pi CLI (0.73.1, in its terminal UI under tmux) against a scripted model on loopback,
while `pi-notifier run --json` watches: the question is seen, answered, asked again, and
abandoned when pi is killed. .ci/run installs pi into .cache/pi; elsewhere set PI_NOTIFIER_PI_BIN."""

from __future__ import annotations

import json
from pathlib import Path

from ..app_process import AppProcess
from ..conftest import cli, wait_for
from ..writer import append, ask, header, user
from .pi_harness import PI073, needs, start_pi

pytestmark = needs("0.73.1")


def test_real_pi_asks_is_answered_and_is_abandoned_when_killed(tmp_path: Path, model: int) -> None:
    project = (tmp_path / "project").resolve()
    sessions = tmp_path / "agent" / "sessions"
    # An old question of a pi that died long ago: the app reads the process table at start-up,
    # before this test's pi exists (what an app started at login sees). That stale read must not
    # make the new pi's first question "abandoned".
    gone_project = tmp_path / "gone"
    append(sessions / "--gone--" / "old.jsonl", header(str(gone_project)), user(), ask("old", "Long ago?"))
    with AppProcess("run", "--json", "--no-tray", "--no-notify", "--sessions-dir", str(sessions)) as app:
        app.wait("ready")
        assert app.of("needs_input") == []  # the old question was abandoned at start-up
        pi = start_pi(tmp_path, PI073, model, PI073.example("question.ts"))
        try:
            pi.prompt("Ask me which database to use")
            (asked,) = app.wait("needs_input", timeout=30)
            assert asked["question"]["text"] == "Which database should we use?"
            assert asked["question"]["options"] == ["PostgreSQL", "SQLite"]
            assert asked["session"]["cwd"] == str(project)
            # the real pi process is recognised: alive, the question pending (not abandoned)
            status = json.loads(cli("status", "--json", "--sessions-dir", str(sessions)).stdout)
            mine = next(s for s in status["sessions"] if s["cwd"] == str(project))
            assert status["pending"] == 1 and mine["alive"] is True and mine["abandoned"] == []
            assert app.of("abandoned") == []  # (the stale start-up list used to abandon it at once)
            wait_for(lambda: "Enter to select" in pi.screen(), 20, "the dialog")
            pi.keys("Down", "Enter")
            (resolved,) = app.wait("resolved", timeout=30)
            assert resolved["outcome"] == "answered" and resolved["answer"] == "User selected: 2. SQLite"
            pi.prompt("Ask again please")
            again = app.wait("needs_input", 2, timeout=30)[1]
            assert again["question"]["tool_call_id"] != asked["question"]["tool_call_id"]
            assert app.of("abandoned") == []
        finally:
            pi.close()  # the terminal closes: pi dies with the question open
        (gone,) = app.wait("abandoned", timeout=30)
        assert gone["question"]["tool_call_id"] == again["question"]["tool_call_id"]
        assert [e["question"]["tool_call_id"] for e in app.of("needs_input")] == [
            asked["question"]["tool_call_id"],
            again["question"]["tool_call_id"],
        ]
