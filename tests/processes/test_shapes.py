"""A real `pi-notifier run --json` reports question tools nobody named (by their arguments'
shape) and tools matching a `--question-tool` pattern, ends them by their results, and raises
nothing for an ordinary call that talks of questions and options."""

from __future__ import annotations

from pathlib import Path

from ..app_process import AppProcess
from ..writer import answer, append, ask, header, user
from .test_lifecycle import headless_env

CLARIFY = {"question": "Which part should I refactor?", "options": ["Parser", "Lexer", "Both"]}
MCP = {"questions": [{"question": "Deploy now?", "header": "Deploy", "options": [{"label": "Yes"}, {"label": "Later"}]}]}
BASH = {"command": 'select db in "Yes" "No"; do echo "Which option? $db"; break; done'}


def test_run_json_reports_unknown_named_question_tools(tmp_path: Path) -> None:
    a = tmp_path / "--a--" / "a.jsonl"
    append(a, header("/nowhere/a"), user(), ask("c1", tool="clarify_prompt", args=CLARIFY))
    args = ("run", "--json", "--no-tray", "--liveness", "off", "--sessions-dir", str(tmp_path))
    with AppProcess(*args, "--question-tool", "team_*_confirm", env=headless_env()) as run:
        (first,) = run.wait("needs_input")
        q = first["question"]
        assert first["initial"] is True
        assert (q["tool"], q["text"], q["options"]) == ("clarify_prompt", CLARIFY["question"], CLARIFY["options"])
        run.wait("ready")
        b = tmp_path / "--b--" / "b.jsonl"
        append(b, header("/nowhere/b"), user(), ask("b1", tool="bash", args=BASH))
        append(b, answer("b1", "Which option? Yes", tool="bash", details={}))
        append(b, ask("m1", tool="mcp__server__ask", args=MCP))
        second = run.wait("needs_input", 2)[1]["question"]
        assert (second["tool"], second["text"], second["header"]) == ("mcp__server__ask", "Deploy now?", "Deploy")
        append(b, answer("m1", "User cancelled the question", tool="mcp__server__ask", details={"cancelled": True}))
        (ended,) = run.wait("resolved")
        assert (ended["question"]["tool_call_id"], ended["outcome"]) == ("m1", "cancelled")
        # a pattern of --question-tool takes a tool whose arguments have no question's shape
        append(b, ask("t1", tool="team_deploy_confirm", args={"summary": "3 services"}))
        third = run.wait("needs_input", 3)[2]["question"]
        assert (third["tool_call_id"], third["tool"]) == ("t1", "team_deploy_confirm")
        assert [e["question"]["tool_call_id"] for e in run.of("needs_input")] == ["c1", "m1", "t1"]  # (no bash)
