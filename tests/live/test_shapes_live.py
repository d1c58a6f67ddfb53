"""The real pi 1.6.0 with a question tool nobody named (a stand-in of a select-based clarify tool):
`pi-notifier run --json` sees it by its arguments' shape, with its text and options, and records
the answer given in pi's own dialog."""

from __future__ import annotations

from pathlib import Path

from ..app_process import AppProcess
from ..conftest import wait_for
from .pi_harness import needs, pi16, scripted_model

pytestmark = needs("1.6.0")

CLARIFY = Path(__file__).with_name("extensions") / "clarify_stand_in.ts"
ARGS = {"question": "Which part should I refactor first?", "options": ["Parser", "Lexer", "Both"]}


def test_real_pi_question_tool_with_an_unknown_name_is_seen_and_answered(tmp_path: Path) -> None:
    sessions = tmp_path / "agent" / "sessions"
    run = ("run", "--json", "--no-tray", "--no-notify", "--sessions-dir", str(sessions))
    with scripted_model("clarify_prompt", ARGS) as port, AppProcess(*run) as app:
        app.wait("ready")
        pi = pi16(tmp_path, port, CLARIFY)
        try:
            pi.prompt("Refactor something")
            (asked,) = app.wait("needs_input", timeout=30)
            q = asked["question"]
            assert (q["tool"], q["text"], q["options"]) == ("clarify_prompt", ARGS["question"], ARGS["options"])
            wait_for(lambda: "Which part should I refactor first?" in pi.screen(), 20, "the dialog")
            pi.keys("Down", "Enter")
            (resolved,) = app.wait("resolved", timeout=30)
            assert (resolved["outcome"], resolved["answer"]) == ("answered", "User chose: Lexer")
        finally:
            pi.close()
