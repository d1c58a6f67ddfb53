"""Key maps and screen checks for `answer` (pure), against the screens and keys of the real captures:
each tool's recorded answer keys are what the plan produces, each pending screen is recognised as
that question's untouched dialog, and no answered screen shows a dialog."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from notifier.actions.answer import tool_result
from notifier.core.model import Question
from notifier.pi.keys import LAYOUTS, Plan, Unsupported, UsageError, check_screen, drawn, plan, resolve, unready
from notifier.pi.parse import extract
from notifier.pi.records import result_mismatch
from notifier.pi.screens import find_dialog, rows

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


def keys(done: Plan) -> list[str]:
    return [k for s in done.steps for k in s.keys]


@pytest.mark.parametrize(("name", "variant"), CASES)
def test_recorded_keys_and_screens(fixtures: Path, name: str, variant: str) -> None:
    sc = scenario(name)
    folder = fixtures / name
    question = pending_question(folder, sc["tool"])
    dialog = find_dialog((folder / "screen-A-pending.txt").read_text())
    assert dialog is not None and dialog.variant == variant
    assert check_screen(dialog, question) is None
    assert unready(dialog, plan(dialog.variant, question, ["1"]).steps[0]) is None
    # the harness chose option 2 in every capture
    steps = plan(dialog.variant, question, ["2"])
    assert keys(steps) == [k for group in sc["answer_keys"] for k in group]
    assert keys(plan(dialog.variant, question, [question.options[1]])) == keys(steps)
    # what the tool recorded in the capture is the answer this plan gives
    recorded = tool_result(str(folder / "B-answered.jsonl"), question.tool_call_id)
    assert recorded is not None and result_mismatch(question, steps, *recorded) is None
    assert result_mismatch(question, plan(dialog.variant, question, ["1"]), *recorded)
    assert find_dialog((folder / "screen-B-answered.txt").read_text()) is None


def test_a_moved_cursor_or_another_question_is_refused(fixtures: Path) -> None:
    folder = fixtures / "question-answer"
    screen = (folder / "screen-A-pending.txt").read_text()
    question = pending_question(folder, "question")
    moved = screen.replace("> 1. PostgreSQL", "  1. PostgreSQL").replace("  2. SQLite", "> 2. SQLite")
    dialog = find_dialog(moved)
    assert dialog is not None and check_screen(dialog, question) is None
    first = plan("question", question, ["1"]).steps
    assert "highlighted row is '2. SQLite'" in (unready(dialog, first[0]) or "")
    # before the confirming key the highlighted row must be the chosen one
    assert unready(dialog, plan("question", question, ["2"]).steps[1]) is None
    assert "highlighted row is '2. SQLite', not '1. PostgreSQL'" in (unready(dialog, first[0]) or "")
    other = screen.replace("Which database should the harness use?", "Delete the repository?")
    dialog = find_dialog(other)
    assert dialog is not None and "does not show this question" in (check_screen(dialog, question) or "")
    fewer = screen.replace("  2. SQLite", "  2. MySQL")
    dialog = find_dialog(fewer)
    assert dialog is not None and "options" in (check_screen(dialog, question) or "")
    # the help line is history when more was drawn below it
    assert find_dialog(screen + "\nmore\noutput\nbelow\nthe\ndialog\n") is None
    # a layout is known by its help line, whatever the tool is called (a copy of pi's example)
    copy = replace(question, tool="ask_the_user")
    dialog = find_dialog(screen)
    assert dialog is not None and dialog.variant == "question" and check_screen(dialog, copy) is None


def q(args: object, tool: str) -> Question:
    return extract(tool, args, "c1", 0.0)


def question_screen(labels: list[str], cursor: int = 0, text: str = "Pick one") -> str:
    """What pi's example question tool draws (its render(), one line per row)."""
    rule = "─" * 80
    rows_ = [*labels, "Type something."]
    body = [f"{'> ' if i == cursor else '  '}{i + 1}. {label}" for i, label in enumerate(rows_)]
    return "\n".join([rule, f" {text}", "", *body, "", " ↑↓ navigate • Enter to select • Esc to cancel", rule])


def test_a_blank_option_is_a_row_as_pi_draws_it() -> None:
    labels = ["Cancel", "\u200b", "Delete everything", "Keep everything"]
    question = q({"question": "Pick one", "options": [{"label": x} for x in labels]}, "question")
    assert question.options == ("Cancel", "", "Delete everything", "Keep everything")
    dialog = find_dialog(question_screen(labels))
    assert dialog is not None and check_screen(dialog, question) is None
    assert rows(dialog).texts == drawn(LAYOUTS["question"], question.first).texts
    done = plan("question", question, ["Keep everything"])
    assert keys(done) == ["Down", "Down", "Down", "Enter"] and done.steps[3].cursor == 3
    # one key a step, each bound to the row it leaves
    assert [(s.cursor, s.cursor_text) for s in done.steps[:3]] == [(0, "1. Cancel"), (1, "2."), (2, "3. Delete everything")]
    assert resolve(question.first, "4") == 3
    # the tool's record is checked: "3. Delete everything" is not the answer given
    assert result_mismatch(question, done, "User selected: 3. Delete everything", {"answer": "Delete everything"})
    assert result_mismatch(question, done, "User selected: 4. Keep everything", {"answer": "Keep everything"}) is None


def test_a_number_that_is_another_rows_label_is_refused() -> None:
    item = q({"question": "N?", "options": [{"label": x} for x in ["3", "0", "1"]]}, "question").first
    for ambiguous in ("1", "3"):
        with pytest.raises(UsageError, match="ambiguous"):
            resolve(item, ambiguous)
    assert resolve(item, "#1") == 0 and resolve(item, "#3") == 2 and resolve(item, "0") == 1
    assert resolve(item, "2") == 1  # row 2's label is "0": no other row is called "2"
    same = q({"question": "N?", "options": [{"label": x} for x in ["1", "2"]]}, "question").first
    assert resolve(same, "1") == 0 and resolve(same, "2") == 1
    with pytest.raises(UsageError):
        resolve(same, "#3")


@given(st.lists(st.text(max_size=6), min_size=1, max_size=6), st.text(max_size=4))
def test_a_choice_resolves_to_the_row_it_names_or_is_refused(labels: list[str], choice: str) -> None:
    item = q({"question": "Q", "options": [{"label": x} for x in labels]}, "question").first
    shown = [o.label for o in item.options]
    try:
        i = resolve(item, choice)
    except UsageError:
        return
    by_number = choice.lstrip("#") == str(i + 1) and choice.lstrip("#").isdigit()
    by_label = shown[i] == choice or shown[i].casefold() == choice.casefold()
    assert by_number or by_label
    if not choice.startswith("#"):
        # a number is never taken when another row has that label, nor a label when that number is another row
        assert not any(j != i and (shown[j] == choice) for j in range(len(shown))) or by_number is False
        if choice.isascii() and choice.isdigit() and 1 <= int(choice) <= len(shown):
            assert int(choice) - 1 == i


@given(st.lists(st.text(alphabet=st.characters(blacklist_categories=("Cc", "Cs", "Zl", "Zp", "Cf")), max_size=12), min_size=1, max_size=6))
def test_the_rows_read_off_the_screen_are_the_rows_drawn(labels: list[str]) -> None:
    question = q({"question": "Pick one", "options": [{"label": x} for x in labels]}, "question")
    dialog = find_dialog(question_screen(labels))
    assert dialog is not None
    assert rows(dialog).texts == drawn(LAYOUTS["question"], question.first).texts
    assert rows(dialog).cursor == 0


def test_choices_usage() -> None:
    single = q({"question": "Pick", "options": [{"label": "A"}, {"label": "B"}, {"label": "C"}]}, "question")
    assert resolve(single.first, "3") == 2 and resolve(single.first, "B") == 1 and resolve(single.first, "c") == 2
    for bad in (["4"], ["0"], ["Z"], ["1", "2"], ["1", "1"], [], ["¹"], ["#²"], ["٣"]):
        with pytest.raises(UsageError):  # (digits other than ASCII are no option numbers: refused, no traceback)
            plan("question", single, bad)
    labelled = q({"question": "Pick", "options": [{"label": "²"}, {"label": "٣"}]}, "question")
    assert resolve(labelled.first, "²") == 0 and resolve(labelled.first, "٣") == 1  # (they are labels)
    assert keys(plan("question", single, ["3"])) == ["Down", "Down", "Enter"]
    # a text is pasted as it is (never cleaned, never split into keys); control characters are refused
    for raw in ("--text=-1", "--force", "- yes", "-t%0", "retry; then stop;", "a\\;", "x" * 20000, "two\nlines"):
        text = plan("question", single, text=raw).steps
        assert text[3].keys == ("Enter",) and text[3].expect == "Your answer:" and text[3].cursor == 3
        assert text[4].paste == raw and text[5].keys == ("Enter",)
    for bad_text in ("", "   ", "bell\x07", "esc\x1b[31m"):
        with pytest.raises(UsageError):
            plan("question", single, text=bad_text)


def pi_ask(*questions: dict[str, object]) -> Question:
    return q({"questions": list(questions)}, "ask_user_question")


def opts(*labels: str, recommended: str | None = None) -> list[dict[str, object]]:
    return [{"value": x.lower(), "label": x, **({"recommended": True} if x == recommended else {})} for x in labels]


def test_pi_ask_rows_put_the_recommended_first() -> None:
    question = pi_ask({"id": "db", "header": "DB", "question": "Which?", "options": opts("A", "B", "C", recommended="C")})
    assert question.options == ("C", "A", "B")
    assert drawn(LAYOUTS["pi-ask"], question.first).texts == ("C (Recommended)", "A", "B", "Other — add your own answer")
    done = plan("pi-ask", question, ["2"])  # the second row drawn: A
    assert keys(done) == ["Down", "Enter", "Enter"] and done.picks == {0: [1]}
    assert done.steps[1].expect == "Review your answers" and "Press Enter to submit" in done.steps[2].shows
    assert result_mismatch(question, done, "", {"status": "submitted", "answers": [{"questionId": "db", "selectedValues": ["a"]}]}) is None
    assert result_mismatch(question, done, "", {"status": "submitted", "answers": [{"questionId": "db", "selectedValues": ["c"]}]})


def test_pi_ask_forms_follow_show_when_and_skip_optional_questions() -> None:
    form = pi_ask(
        {"id": "db", "header": "DB", "question": "Which database?", "options": opts("Postgres", "SQLite")},
        {"id": "pool", "header": "Pool", "question": "Pool size?", "options": opts("Small", "Large"),
         "showWhen": {"questionId": "db", "equals": "postgres"}},
        {"id": "notes", "header": "Notes", "question": "Extras?", "options": opts("Docs", "Tests", "CI"),
         "multiSelect": True, "required": False},
    )
    # SQLite: the pool question is never asked, so two answers
    done = plan("pi-ask", form, ["SQLite", "2"])
    assert keys(done) == ["Down", "Enter", "Down", "Space", "Enter", "Enter"] and done.picks == {0: [1], 2: [1]}
    assert [s.expect for s in done.steps] == [None, "Extras?", None, None, "Review your answers", None]
    assert [s.item for s in done.steps] == [0, 0, 2, 2, 2, None]
    with pytest.raises(UsageError, match="too many"):
        plan("pi-ask", form, ["SQLite", "2", "1"])
    # pi-ask takes Enter on a multi-choice row as that row: such a question cannot be skipped by keys
    with pytest.raises(Unsupported, match="cannot skip"):
        plan("pi-ask", form, ["SQLite", "-"])
    # Postgres: three answers, the pool question included, several picks joined by commas
    done = plan("pi-ask", form, ["1", "Large", "1,3"])
    assert keys(done) == ["Enter", "Down", "Enter", "Space", "Down", "Down", "Space", "Enter", "Enter"]
    assert done.picks == {0: [0], 1: [1], 2: [0, 2]}
    assert set(done.steps[-1].shows) >= {"Postgres", "Large", "Docs, CI"}
    with pytest.raises(UsageError, match="too few"):
        plan("pi-ask", form, ["1", "Large"])
    with pytest.raises(UsageError, match="not optional"):
        plan("pi-ask", form, ["-", "1"])
    # an optional single-choice question is answered with Space then Enter (Enter alone skips it)
    optional = pi_ask({"id": "o", "header": "O", "question": "Maybe?", "options": opts("Yes", "No"), "required": False})
    assert keys(plan("pi-ask", optional, ["No"])) == ["Down", "Space", "Enter", "Enter"]
    skip = plan("pi-ask", optional, ["-"])
    assert keys(skip) == ["Enter", "Enter"] and skip.picks == {0: []}


def test_forms_and_multi_select() -> None:
    form = q(
        {
            "questions": [
                {"id": "a", "prompt": "First?", "options": [{"value": "x", "label": "X"}, {"value": "y", "label": "Y"}]},
                {"id": "b", "prompt": "Second?", "options": [{"value": "p", "label": "P"}, {"value": "q", "label": "Q"}]},
            ]
        },
        "questionnaire",
    )
    done = plan("questionnaire", form, ["Y", "1"])
    assert [s.keys for s in done.steps] == [("Down",), ("Enter",), ("Enter",), ("Enter",)]
    assert [s.expect for s in done.steps] == [None, "Second?", "Ready to submit", None]
    assert [s.item for s in done.steps] == [0, 0, 1, None]
    assert result_mismatch(form, done, "", {"answers": [{"index": 2}, {"index": 1}]}) is None
    assert result_mismatch(form, done, "", {"answers": [{"index": 1}, {"index": 1}]})
    with pytest.raises(UsageError):
        plan("questionnaire", form, ["1"])
    multi = pi_ask({"id": "w", "header": "W", "question": "Which?", "multiSelect": True, "options": opts("A", "B", "C")})
    assert keys(plan("pi-ask", multi, ["3", "1"])) == ["Space", "Down", "Down", "Space", "Enter", "Enter"]
    with pytest.raises(Unsupported):
        plan("question", multi, ["1", "2"])


def test_every_layout_is_data_for_the_one_driver() -> None:
    """A tool's facts (a review key, optional questions skipped, ticks before Enter, a free-text
    input that saves into the list) are fields of a Layout: the same driver plans them for rows
    read off any screen, by label, as for a tool's own dialog."""
    from notifier.pi.keys import LAYOUTS, Layout, plan_list, plan_rows
    from notifier.pi.screens import Rows

    form = pi_ask(
        {"id": "a", "header": "A", "question": "Which?", "options": opts("X", "Y", "Z"), "required": False},
    )
    labels = ("X", "Y", "Z")
    # the rows as read off a screen (highlight on the second row), found by label: Up from there
    read = Rows(labels, 1, (False,) * 3)
    dreki_like = Layout(toggle="Space", ticks=True, submits=True, confirms=False, review_key="r", review_alone=True,
                        review_says=("{label}",))  # fmt: skip
    done = plan_rows(dreki_like, form, ["X"], None, read)
    assert keys(done) == ["Up", "Space", "r", "Enter"] and done.steps[-1].shows == ("X",)
    assert [s.checked for s in done.steps[:2]] == [(), ()]  # (its boxes read back before each key)
    skipping = Layout(skips=True, toggle="Space", submits=True)
    assert keys(plan_rows(skipping, form, ["-"], None, read)) == ["Enter"]
    assert keys(plan_rows(skipping, form, ["Z"], None, read)) == ["Down", "Space", "Enter"]
    with pytest.raises(UsageError, match="no option"):  # (a layout that does not skip: "-" is no label)
        plan_rows(Layout(), form, ["-"], None, read)
    # a list read off the screen is the same driver with what its help line says
    assert plan_list(form, ["Z"], None, read, True, "Space", True) == plan_rows(
        Layout(toggle="Space", ticks=True, submits=True, saves=True), form, ["Z"], None, read, boxes=True
    )
    # the known layouts differ only by their data
    assert {name: layout.name for name, layout in LAYOUTS.items()} == {n: n for n in LAYOUTS}
    assert keys(plan("dreki", form, ["Y"])) == ["Down", "Space", "r", "Enter"]
    # a tab bar naming a review submits a form, never a question alone whose help does not say Enter submits
    multi = pi_ask({"id": "m", "header": "M", "question": "Which?", "options": opts("X", "Y", "Z"), "multiSelect": True})
    with pytest.raises(Unsupported, match="Enter submits"):
        plan_list(multi, ["1"], None, read, True, "Space", False, review=True)
    assert keys(plan_list(multi, ["1"], None, read, True, "Space", True, review=True)) == ["Up", "Space", "Enter"]
