"""Key maps and screen checks for `answer` (pure), against the screens and keys of the real captures:
each tool's recorded answer keys are what the plan produces, each pending screen is recognised as
that question's untouched dialog, and no answered screen shows a dialog."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from notifier.core.model import Question
from notifier.pi.keymaps import Step, Unsupported, UsageError, check_screen, find_dialog, plan, resolve
from notifier.pi.questions import extract

from ..conftest import scenario

CASES = [
    ("question-answer", "question"),
    ("questionnaire-answer", "questionnaire"),
    ("pi-ask-answer", "pi-ask"),
    ("dreki-answer", "dreki"),
    ("legacy-0.73.1/question-answer", "question"),
    ("legacy-0.73.1/questionnaire-answer", "questionnaire"),
]


def pending_question(folder: Path, tool: str) -> Question:
    call = None
    for line in (folder / "A-pending.jsonl").read_text().splitlines():
        entry = json.loads(line)
        for block in (entry.get("message") or {}).get("content") or []:
            if isinstance(block, dict) and block.get("type") == "toolCall" and block.get("name") == tool:
                call = block
    assert call is not None
    return extract(tool, call["arguments"], call["id"], 0.0)


def keys(steps: list[Step]) -> list[str]:
    return [k for s in steps for k in s.keys]


@pytest.mark.parametrize(("name", "variant"), CASES)
def test_recorded_keys_and_screens(fixtures: Path, name: str, variant: str) -> None:
    sc = scenario(name)
    folder = fixtures / name
    question = pending_question(folder, sc["tool"])
    dialog = find_dialog((folder / "screen-A-pending.txt").read_text(), sc["tool"])
    assert dialog is not None and dialog.variant == variant
    assert check_screen(dialog, question) is None
    # the harness chose option 2 in every capture
    steps = plan(dialog.variant, question, ["2"])
    assert keys(steps) == [k for group in sc["answer_keys"] for k in group]
    assert keys(plan(dialog.variant, question, [question.options[1]])) == keys(steps)
    assert find_dialog((folder / "screen-B-answered.txt").read_text(), sc["tool"]) is None


def test_a_moved_cursor_or_another_question_is_refused(fixtures: Path) -> None:
    folder = fixtures / "question-answer"
    screen = (folder / "screen-A-pending.txt").read_text()
    question = pending_question(folder, "question")
    moved = screen.replace("> 1. PostgreSQL", "  1. PostgreSQL").replace("  2. SQLite", "> 2. SQLite")
    dialog = find_dialog(moved, "question")
    assert dialog is not None and "moved" in (check_screen(dialog, question) or "")
    other = screen.replace("Which database should the harness use?", "Delete the repository?")
    dialog = find_dialog(other, "question")
    assert dialog is not None and "does not show this question" in (check_screen(dialog, question) or "")
    # the help line is history when more was drawn below it
    assert find_dialog(screen + "\nmore\noutput\nbelow\nthe\ndialog\n", "question") is None
    # a tool's dialog is only recognised for that tool
    assert find_dialog(screen, "ask_user_question") is None


def q(args: object, tool: str) -> Question:
    return extract(tool, args, "c1", 0.0)


def test_choices_usage() -> None:
    single = q({"question": "Pick", "options": [{"label": "A"}, {"label": "B"}, {"label": "C"}]}, "question")
    assert (
        resolve(single.first, "3") == 2
        and resolve(single.first, "B") == 1
        and resolve(single.first, "c") == 2
    )
    for bad in (["4"], ["0"], ["Z"], ["1", "2"], ["1", "1"], []):
        with pytest.raises(UsageError):
            plan("question", single, bad)
    assert keys(plan("question", single, ["3"])) == ["Down", "Down", "Enter"]
    text = plan("question", single, text="hello\x1b[31m world\n")
    assert text[0].keys == ("Down",) * 3 + ("Enter",) and text[0].expect == "Your answer:"
    assert text[1].literal == "hello world" and text[2].keys == ("Enter",)
    with pytest.raises(Unsupported):
        plan("pi-ask", single, text="x")


def test_forms_and_multi_select() -> None:
    form = q(
        {
            "questions": [
                {
                    "id": "a",
                    "prompt": "First?",
                    "options": [{"value": "x", "label": "X"}, {"value": "y", "label": "Y"}],
                },
                {
                    "id": "b",
                    "prompt": "Second?",
                    "options": [{"value": "p", "label": "P"}, {"value": "q", "label": "Q"}],
                },
            ]
        },
        "questionnaire",
    )
    steps = plan("questionnaire", form, ["Y", "1"])
    assert [s.keys for s in steps] == [("Down", "Enter"), ("Enter",), ("Enter",)]
    assert [s.expect for s in steps] == ["Second?", "Ready to submit", None]
    with pytest.raises(UsageError):
        plan("questionnaire", form, ["1"])
    multi = q(
        {
            "questions": [
                {
                    "question": "Which?",
                    "header": "W",
                    "multiSelect": True,
                    "options": [{"label": "A"}, {"label": "B"}, {"label": "C"}],
                }
            ]
        },
        "ask_user_question",
    )
    assert keys(plan("pi-ask", multi, ["3", "1"])) == ["Space", "Down", "Down", "Space", "Enter", "Enter"]
    with pytest.raises(Unsupported):
        plan("question", multi, ["1", "2"])
