"""The real pi 1.6.0 with the companion extension and a question tool that asks through pi's own
select (its recommended option drawn first, a row of its own added) or confirm: the option the
user saw, by its number among the question's options, is the one pi gets (the tool's result says
which), or nothing is sent."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from notifier.actions.answer import answer_line
from notifier.companion import with_open_dialogs
from notifier.config import Config
from notifier.core.codec import question_token
from notifier.sessions import engine_options, scan_once

from ..conftest import wait_for
from .pi_harness import EXTENSION, PiSession, needs, pi16, scripted_model

pytestmark = needs("1.6.0")

STAND_IN = Path(__file__).with_name("extensions") / "select_ask_stand_in.ts"


def _answer(pi: PiSession, choice: str) -> tuple[int, str]:
    """``choice`` for the one question waiting, as the window sends it (with its token)."""
    config = Config()
    config.values["sessions_dirs"] = [str(pi.sessions)]
    config.values["liveness"] = "off"
    opts = engine_options(config)

    def asked() -> Any:
        snap = with_open_dialogs(scan_once(opts), opts)
        found = [(v, q) for v in snap.sessions for q in v.pending]
        return (snap, *found[0]) if found else None

    snap, view, q = wait_for(asked, 20, "the question")
    return answer_line(config, snap, view.ref.key, q.tool_call_id, [choice], None, token=question_token(q))


def _options(*labels: str, recommended: str | None = None) -> list[dict[str, Any]]:
    return [{"label": o, "recommended": o == recommended} for o in labels]


@pytest.mark.parametrize(
    ("labels", "recommended", "choice", "chose"),
    [
        (("SQLite", "Postgres"), "Postgres", "#2", "Postgres"),
        (("Parser", "Lexer", "Both"), "Both", "#1", "Parser"),
    ],
)
def test_a_select_gets_the_option_the_user_saw(
    tmp_path: Path, labels: tuple[str, ...], recommended: str, choice: str, chose: str
) -> None:
    args = {"question": "Which one first?", "options": _options(*labels, recommended=recommended)}
    with scripted_model("ask_user", args) as port:
        pi = pi16(tmp_path, port, STAND_IN, EXTENSION)
        try:
            pi.prompt("Ask me")
            wait_for(lambda: "Which one first?" in pi.screen(), 30, "the select")
            code, said = _answer(pi, choice)
            assert code == 0, said
            assert wait_for(lambda: pi.tool_result("call_q"), 20, "the result") == f"User chose: {chose}"
        finally:
            pi.close()


def test_a_confirm_gets_the_yes_or_no_the_option_says(tmp_path: Path) -> None:
    args = {"question": "Delete the old data?", "confirm": True, "options": _options("No, keep it", "Yes, delete it")}
    with scripted_model("ask_user", args) as port:
        pi = pi16(tmp_path, port, STAND_IN, EXTENSION)
        try:
            pi.prompt("Ask me")
            wait_for(lambda: "Delete the old data?" in pi.screen(), 30, "the confirm")
            code, said = _answer(pi, "1")  # option 1: "No, keep it" (a confirm's first row is Yes)
            assert code == 0, said
            assert wait_for(lambda: pi.tool_result("call_q"), 20, "the result") == "User chose: No, keep it"
        finally:
            pi.close()


def test_a_second_dialog_of_one_call_is_not_answered_with_the_firsts_choice(tmp_path: Path) -> None:
    with scripted_model("deploy", {"app": "web"}) as port:
        pi = pi16(tmp_path, port, STAND_IN, EXTENSION)
        try:
            pi.prompt("Deploy it")
            wait_for(lambda: "Which region?" in pi.screen(), 30, "the first select")
            config = Config()
            config.values["sessions_dirs"] = [str(pi.sessions)]
            config.values["liveness"] = "off"
            opts = engine_options(config)
            snap = with_open_dialogs(scan_once(opts), opts)  # what the board holds: the first select
            ((view, q),) = [(v, q) for v in snap.sessions for q in v.pending]
            assert (q.text, q.options) == ("Which region?", ("eu", "us"))
            pi.keys("Enter")  # answered in the terminal: eu; the call opens the next
            wait_for(lambda: "Delete the production database first?" in pi.screen(), 20, "the second select")
            code, said = answer_line(config, snap, view.ref.key, q.tool_call_id, ["#1"], None, token=question_token(q))
            assert code == 1 and "nothing was typed" in said, said
            assert "Delete the production database first?" in pi.screen()  # still open, untouched
            pi.keys("Down", "Enter")
            assert wait_for(lambda: pi.tool_result("call_q"), 20, "the result") == "region eu, delete: no"
        finally:
            pi.close()
