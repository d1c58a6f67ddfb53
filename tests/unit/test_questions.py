"""Question extraction (question-tools.md §b) and outcome classification (§c)."""

from __future__ import annotations

import json

import pytest

from notifier.core.model import GENERIC_QUESTION, Question
from notifier.pi.outcomes import classify
from notifier.pi.parse import BUILTIN_QUESTION_TOOLS, QuestionCatalog, extract

from ..conftest import ROOT


def ex(args: object, tool: str = "ask_user") -> Question:
    return extract(tool, args, "c", 0.0)


def test_catalog_covers_every_question_tool_in_the_research() -> None:
    catalog_file = ROOT / "tests" / "data" / "question-tools.json"
    names = {t["tool_name"] for t in json.loads(catalog_file.read_text()) if t["category"] == "question"}
    assert names <= BUILTIN_QUESTION_TOOLS
    assert "draft_questions" not in BUILTIN_QUESTION_TOOLS and "pi_ask_agi" not in BUILTIN_QUESTION_TOOLS


def test_catalog_extra_and_ignore() -> None:
    c = QuestionCatalog(extra=["my_ask"], ignore=["ask"])
    assert "my_ask" in c and "question" in c and "ask" not in c and "Question" not in c


def test_pi_question_shape() -> None:
    q = ex(
        {
            "question": "Which color?",
            "options": [{"label": "Red"}, {"label": "Blue", "description": "the sea"}],
        },
        "question",
    )
    assert q.text == "Which color?" and q.options == ("Red", "Blue") and q.count == 1
    assert q.first.options[1].description == "the sea"


def test_questionnaire_prompt_label_header() -> None:
    q = ex(
        {
            "questions": [
                {
                    "id": "db",
                    "label": "Database",
                    "prompt": "Which DB?",
                    "options": [{"value": "pg", "label": "PostgreSQL"}],
                }
            ]
        },
        "questionnaire",
    )
    assert (q.text, q.header, q.options) == ("Which DB?", "Database", ("PostgreSQL",))


def test_claude_shape_multi_and_count() -> None:
    q = ex(
        {
            "questions": [
                {
                    "question": "Scope?",
                    "header": "Scope",
                    "multiSelect": True,
                    "options": [{"label": "A"}, {"label": "B"}],
                },
                {"question": "Priority?", "header": "Prio", "options": [{"label": "High"}]},
            ]
        },
        "ask_user_question",
    )
    assert q.count == 2 and q.first.multi and q.header == "Scope" and q.items[1].text == "Priority?"


def test_questions_as_json_string_and_plain_string_options() -> None:
    q = ex({"questions": json.dumps([{"question": "Pick", "options": '["x", "y"]'}])})
    assert q.text == "Pick" and q.options == ("x", "y")


def test_whole_arguments_as_json_string() -> None:
    assert ex(json.dumps({"question": "Hi?"})).text == "Hi?"


def test_aliases_title_choices_and_option_keys() -> None:
    q = ex(
        {
            "title": "Deploy now?",
            "prompt": "It is Friday",
            "choices": [{"title": "Yes"}, {"text": "No"}, "Later"],
        }
    )
    assert (
        q.text == "Deploy now?" and q.first.detail == "It is Friday" and q.options == ("Yes", "No", "Later")
    )


def test_single_object_questions_and_prompts_list() -> None:
    assert ex({"questions": {"question": "One?"}}).text == "One?"
    assert ex({"prompts": [{"title": "T?", "body": "b", "choices": [{"label": "ok"}]}]}, "ask").text == "T?"


def test_itc_steve_header_is_title() -> None:
    q = ex({"questions": [{"header": "Which framework?", "tab": "FW", "options": [{"label": "React"}]}]})
    assert q.text == "Which framework?" and q.header == "FW"


def test_recommended_marks() -> None:
    q = ex(
        {
            "question": "x",
            "recommended": 1,
            "options": [{"label": "a"}, {"label": "b"}, {"label": "c (Recommended)"}],
        }
    )
    assert [o.recommended for o in q.first.options] == [False, True, True]


def test_no_text_still_counts_with_generic_line() -> None:
    q = ex({}, "ask_user")
    assert q.text.startswith(GENERIC_QUESTION)
    assert ex(None, "ask_next_action").text.startswith("asks what to do next")
    assert ex("not json", "question").text.startswith(GENERIC_QUESTION)


def test_interview_path_and_plan_mode() -> None:
    assert ex({"questions": "form.json"}, "interview").text == "Interview form: form.json"
    q = ex({"title": "Refactor auth", "steps": [{"title": "a"}, {"title": "b"}]}, "plan_mode")
    assert q.text == "Refactor auth" and "Execute" in q.options


def test_confirm_type_is_yes_no() -> None:
    assert ex({"question": "Sure?", "type": "confirm"}).options == ("Yes", "No")


def test_text_is_sanitized_not_truncated() -> None:
    long = "word " * 500
    q = ex({"question": "\x1b[31mred\x1b[0m line\u2028two\x07 " + long, "options": ["<b>x</b>"]})
    assert q.text.startswith("red line two word")
    assert "\x1b" not in q.text and "\u2028" not in q.text and len(q.text) > 2000
    assert q.options == ("<b>x</b>",)  # markup is escaped by markup outputs, not here


@pytest.mark.parametrize(
    ("is_error", "text", "details", "expected"),
    [
        (False, "User selected: 1. Red", {"question": "q", "answer": "Red", "wasCustom": False}, "answered"),
        (False, "User cancelled the selection", {"answer": None}, "cancelled"),
        (False, "Error: UI not available (running in non-interactive mode)", {"answer": None}, "unavailable"),
        (False, "User cancelled the questionnaire", {"cancelled": True}, "cancelled"),
        (
            False,
            "Error: UI not available",
            {"questions": [], "answers": [], "cancelled": True},
            "unavailable",
        ),
        (False, "x", {"cancelled": False, "answers": []}, "answered"),
        (False, "Cancelled by user.", {"version": 1, "status": "dismissed", "answers": []}, "cancelled"),
        (False, "ok", {"status": "submitted"}, "answered"),
        (False, "", {"status": "aborted"}, "aborted"),
        (False, "", {"status": "unavailable"}, "unavailable"),
        (False, "", {"status": "invalid"}, "error"),
        (False, "", {"status": "timeout"}, "cancelled"),
        (True, "Skipped due to queued user message.", {}, "superseded"),
        (True, "Tool ask not found", {}, "unavailable"),
        (True, "Cannot read properties of undefined (reading 'cancelled')", {}, "unavailable"),
        (True, "Ask tool was cancelled by the user", {}, "cancelled"),
        (True, "Operation aborted", {}, "aborted"),
        (True, "boom", {}, "error"),
        (False, "", {"kind": "cancelled"}, "cancelled"),
        (False, "Dismissed by user.", {"dismissed": True}, "cancelled"),
        (False, "", {"cancelReason": "ui_unavailable", "cancelled": True}, "unavailable"),
        (False, "", {"response": None}, "cancelled"),
        (False, "(cancelled)", {"selectedOptions": []}, "cancelled"),
        (False, "Questions pending", {"questions": [1], "answers": [], "mode": "print"}, "unavailable"),
        (False, "Error: ask tool requires interactive mode", {}, "unavailable"),
        (False, "User answered: fine", None, "answered"),
    ],
)
def test_classify(is_error: bool, text: str, details: object, expected: str) -> None:
    assert classify(is_error, [{"type": "text", "text": text}], details) == expected
