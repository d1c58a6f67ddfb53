"""The shape of a question decides whether and how it is answered from here, never its tool's
name (pure): answer buttons for any question with options, the usage checked by its shape, a
layout known by its help line whatever tool draws it, and the keys moved from wherever the
highlight is when the dialog is first read."""

from __future__ import annotations

import json
from dataclasses import dataclass, field

import pytest

from notifier.actions.answer import Seen, drive, finder
from notifier.actions.goto import Refused
from notifier.core.model import Option, Question, QuestionItem
from notifier.core.text import clean
from notifier.pi.keys import (
    Plan,
    Step,
    Unsupported,
    UsageError,
    check_screen,
    check_usage,
    plan_for,
    plan_list,
)
from notifier.pi.records import result_mismatch
from notifier.pi.screens import Rows

OPTIONS = ("Keep", "Delete", "Archive")


def asked(tool: str, *items: QuestionItem) -> Question:
    return Question("call_A", tool, items, 1.0)


def item(text: str = "Delete the branch?", options: tuple[str, ...] = OPTIONS, **kw: object) -> QuestionItem:
    return QuestionItem(text, options=tuple(Option(o) for o in options), **kw)  # type: ignore[arg-type]


THIRD_PARTY = ("ask_user", "clarify_prompt", "mcp__server__ask", "AskUserQuestion", "my_tool")


@pytest.mark.parametrize("tool", ("question", "questionnaire", "ask_user_question", *THIRD_PARTY))
def test_a_question_with_options_is_answerable_whatever_its_tool(tool: str) -> None:
    assert asked(tool, item()).answerable
    assert asked(tool, item(), item("And the tags?", ("Keep", "Drop"))).answerable  # a form, in turn
    assert asked(tool, item(multi=True)).answerable
    assert asked(tool, item()).answerable_by_text
    # no options: nothing to press (a typed answer where its dialog draws a free-text row)
    assert not asked(tool, item(options=())).answerable
    assert asked(tool, item(options=())).answerable_by_text
    assert not asked(tool, item(options=(), other=False)).answerable_by_text
    assert not asked(tool, item(), item("Why?", ())).answerable
    assert not asked(tool, item(other=False)).answerable_by_text
    assert not asked(tool, item(multi=True)).answerable_by_text
    assert not asked(tool, item(), item("Why?")).answerable_by_text
    # an extension's dialog is answered exactly, apart (a permission gate never from a bubble)
    gate = Question("c", tool, (item(),), 1.0, kind="dialog", dialog="select")
    assert not gate.answerable and not gate.answerable_by_text


@pytest.mark.parametrize("tool", ("question", "questionnaire", "ask_user_question", *THIRD_PARTY))
def test_usage_is_checked_by_the_shape_not_by_the_name(tool: str) -> None:
    check_usage(asked(tool, item()), ["2"], None)
    check_usage(asked(tool, item()), ["Archive"], None)
    check_usage(asked(tool, item()), None, "my own words\non two lines")  # (whether lines are kept: on screen)
    check_usage(asked(tool, item(multi=True)), ["1,3"], None)  # (a tool named "question" once refused this)
    check_usage(asked(tool, item(), item("And the tags?", ("Keep", "Drop"))), ["1", "Drop"], None)  # (and this)
    check_usage(asked(tool, item(required=False), item("And the tags?")), ["-", "2"], None)  # an optional one skipped
    check_usage(asked(tool, item(options=())), None, "a typed answer")  # (the screen shows whether it has an input)
    with pytest.raises(UsageError, match="no option is called"):
        check_usage(asked(tool, item()), ["Rename"], None)
    with pytest.raises(UsageError, match="no options to choose from"):
        check_usage(asked(tool, item(options=())), ["1"], None)
    with pytest.raises(UsageError, match="give one answer for each"):
        check_usage(asked(tool, item(), item("And the tags?")), ["1"], None)
    with pytest.raises(UsageError, match="takes one answer"):
        check_usage(asked(tool, item()), ["1", "2"], None)
    with pytest.raises(UsageError, match="not optional"):
        check_usage(asked(tool, item(), item("And the tags?")), ["-", "2"], None)
    with pytest.raises(Unsupported, match="one question only"):
        check_usage(asked(tool, item(), item("And the tags?")), None, "words")


# ---- a dialog drawn as pi's question tool draws it (a stand-in that takes the keys) ----


@dataclass
class QuestionDialog:
    """A stand-in of the layout of pi's ``question`` example: ``> N. label`` rows, a free-text
    row, its help line; Up / Down move the highlight, Enter records the highlighted option."""

    text: str
    labels: tuple[str, ...]
    cursor: int
    recorded: str | None = None
    sent: list[tuple[str, ...]] = field(default_factory=list)

    def screen(self) -> str:
        rule = "─" * 60
        texts = [*self.labels, "Type something."]
        rows = [f"{'> ' if i == self.cursor else '  '}{i + 1}. {t}" for i, t in enumerate(texts)]
        if self.recorded is not None:
            return "\n".join([f" question {self.text}", f" User selected: {self.recorded}", "", "/project"])
        body = [rule, f" {self.text}", "", *rows, "", " ↑↓ navigate • Enter to select • Esc to cancel", rule]
        return "\n".join([f" question {self.text}", *body, "/project", "mock-model"])

    def send(self, step: Step, seen: Seen) -> bool:
        assert seen.proof == self.screen()  # (a key goes onto the very look it was checked against)
        self.sent.append(step.keys)
        for key in step.keys:
            if key == "Up":
                self.cursor = max(0, self.cursor - 1)
            elif key == "Down":
                self.cursor = min(len(self.labels), self.cursor + 1)
            elif key == "Enter":
                self.recorded = f"{self.cursor + 1}. {([*self.labels, 'Type something.'])[self.cursor]}"
        return True

    def waits_alone(self) -> str | None:
        return None if self.recorded is None else "pi has recorded an end of this question"


def answered(tool: str, start: int, choice: str) -> tuple[QuestionDialog, list[tuple[str, ...]]]:
    q = asked(tool, item())
    pi = QuestionDialog(q.text, OPTIONS, start)
    found = finder(q, pi.screen())
    assert found is not None
    find, dialog = found
    assert dialog.variant == "question" and check_screen(dialog, q) is None
    steps = plan_for(dialog, q, [choice], None)

    def look() -> Seen:
        s = pi.screen()
        return Seen(find(s), s)

    drive(look, pi.send, q, steps, pi.waits_alone)
    return pi, pi.sent


@pytest.mark.parametrize("tool", ("question", "ask", "clarify_prompt"))
def test_a_known_layout_is_answered_from_wherever_its_highlight_starts(tool: str) -> None:
    # (the layout is known by its help line, whatever the tool is called)
    pi, sent = answered(tool, 1, "Keep")  # the highlight on row 2: up to row 1
    assert sent == [("Up",), ("Enter",)] and pi.recorded == "1. Keep"
    pi, sent = answered(tool, 1, "Delete")
    assert sent == [("Enter",)] and pi.recorded == "2. Delete"
    pi, sent = answered(tool, 3, "Delete")  # on the free-text row
    assert sent == [("Up",), ("Up",), ("Enter",)] and pi.recorded == "2. Delete"
    pi, sent = answered(tool, 0, "Archive")
    assert sent == [("Down",), ("Down",), ("Enter",)] and pi.recorded == "3. Archive"


def test_a_highlight_moved_after_the_first_look_still_stops_the_answer() -> None:
    q = asked("question", item())
    pi = QuestionDialog(q.text, OPTIONS, 1)
    found = finder(q, pi.screen())
    assert found is not None
    steps = plan_for(found[1], q, ["Archive"], None)
    pi.cursor = 0  # someone moved it between the plan and the first key
    with pytest.raises(Refused, match="nothing was typed"):
        drive(lambda: Seen(found[0](pi.screen()), pi.screen()), pi.send, q, steps, pi.waits_alone)
    assert pi.sent == [] and pi.recorded is None


# ---- what pi recorded, read back by the record's shape (not by which tool wrote it) ----

TASKS = ("Bug fix", "New feature", "Refactor")
ONE = asked("any_tool", QuestionItem("Which task?", options=tuple(Option(x, value=x[:3].lower()) for x in TASKS), key="t"))
FORM = asked(
    "any_tool",
    QuestionItem("Which task?", options=tuple(Option(x) for x in TASKS), key="t"),
    QuestionItem("Which release?", options=(Option("Next"), Option("Later")), key="r"),
)


def chose(q: Question, *choices: str) -> Plan:
    return plan_list(q, list(choices), None, Rows(tuple(o.label for o in q.first.options), 0), submits=True)


# (the answer's record as tools in the wild write it: {picked} and {other} stand for the chosen
# option's label and another's)
SHAPES = [
    {"answer": "{picked}", "wasCustom": False, "options": ["{other}", "{picked}"]},  # pi's question
    {"answers": [{"id": "t", "label": "{picked}", "wasCustom": False}]},  # pi's questionnaire
    {"answers": [{"question": "Which task?", "header": "Task", "answer": "{picked}"}]},  # rpiv
    {"answers": [{"questionId": "t", "choice": {"label": "{picked}", "wasCustom": False}}]},  # pi-ask-user
    {"answers": [{"questionId": "t", "selectedOptions": [{"value": "{picked}", "label": "{picked}"}], "otherText": None}]},
    {"status": "submitted", "answers": [{"questionId": "t", "selectedValues": ["{picked}"]}]},
    {"answers": {"Which task?": "{picked}"}},  # keyed by the question
    {"answers": ["{picked}"]},
]


def filled(shape: object, picked: str, other: str) -> object:
    return json.loads(json.dumps(shape).replace("{picked}", picked).replace("{other}", other))


@pytest.mark.parametrize("shape", SHAPES)
def test_the_record_is_read_by_its_shape(shape: dict[str, object]) -> None:
    done = chose(ONE, "Refactor")
    assert result_mismatch(ONE, done, "", filled(shape, "Refactor", "Bug fix")) is None
    assert result_mismatch(ONE, done, "", filled(shape, "ref", "Bug fix")) is None  # (its value)
    assert result_mismatch(ONE, done, "", filled(shape, "Bug fix", "Refactor"))  # another option
    assert result_mismatch(ONE, done, "", filled(shape, "Refactor cleanup", "Bug fix"))  # not it either
    assert result_mismatch(ONE, chose(ONE, "New feature"), "", filled(shape, "Refactor", "Bug fix"))


def test_a_form_record_names_each_answer_in_order_or_by_its_question() -> None:
    done = chose(FORM, "Refactor", "Later")
    assert result_mismatch(FORM, done, "", {"answers": [{"answer": "Refactor"}, {"answer": "Later"}]}) is None
    assert result_mismatch(FORM, done, "", {"answers": [{"answer": "Later"}, {"answer": "Refactor"}]})
    by_id = {"answers": [{"questionId": "r", "selectedValues": ["Later"]}, {"questionId": "t", "selectedValues": ["Refactor"]}]}
    assert result_mismatch(FORM, done, "", by_id) is None
    assert "1 answers" in (result_mismatch(FORM, done, "", {"answers": [{"answer": "Refactor"}]}) or "")


def test_a_typed_text_is_recorded_as_typed() -> None:
    typed = plan_list(ONE, None, "Docs first", Rows((*TASKS, "Other"), 0, other=3), submits=True)
    for details in (
        {"answer": "Docs first", "wasCustom": True},
        {"answers": [{"label": "Docs first", "wasCustom": True, "index": 4}]},
        {"answers": [{"questionId": "t", "selectedValues": [], "customText": "Docs first"}]},
        {"answers": [{"choice": {"label": "Docs first", "wasCustom": True}}]},
    ):
        assert result_mismatch(ONE, typed, "", details) is None, details
        assert result_mismatch(ONE, typed, "", json.loads(json.dumps(details).replace("Docs first", "Docs"))), details
    assert result_mismatch(ONE, typed, "", {"answer": "Refactor", "wasCustom": False})
    assert result_mismatch(ONE, typed, "", {"answers": [{"label": "Docs first", "wasCustom": False}]})
    # a record that does not say, read as text
    assert result_mismatch(ONE, typed, "User wrote: Docs first", {"version": 1}) is None
    assert result_mismatch(ONE, typed, "User wrote: Docs", {"version": 1})


def test_two_options_of_one_name_are_told_apart_by_number_only() -> None:
    twins = asked("any_tool", QuestionItem("Keep which copy?", options=(Option("Keep"), Option("Keep"), Option("Drop"))))
    done = plan_list(twins, ["#2"], None, Rows(("Keep", "Keep", "Drop"), 0))
    assert result_mismatch(twins, done, "", {"answers": [{"label": "Keep", "index": 2}]}) is None
    assert result_mismatch(twins, done, "", {"answers": [{"label": "Keep", "index": 1}]})
    assert result_mismatch(twins, done, "", {"answer": "Keep"})  # which one cannot be told


@pytest.mark.parametrize(
    ("labels", "pick", "text", "ok"),
    [
        (("Keep", "Keep", "Drop"), 2, "User selected: 2. Keep", True),  # pi's question tool
        (("Keep", "Keep", "Drop"), 1, "User selected: 1. Keep", True),
        (("Keep", "Keep", "Drop"), 1, "User selected: 2. Keep", False),  # the other Keep
        (("Keep", "Keep", "Drop"), 2, "User selected: Keep", False),  # which one cannot be told
        (("Keep", "Keep", "Drop"), 2, "User selected: 1. Keep, 2. Keep", False),  # both numbers
        (("Keep", "Keep", "Drop"), 2, "User selected: 12. Keep", False),
        (("A", "B", "A", "A"), 4, "User selected: 4) A", True),
        (("A", "B", "A", "A"), 3, "User selected: 4) A", False),
        (("1. Keep", "Keep", "Keep"), 3, "User selected: 3. Keep", True),
    ],
)
def test_a_shared_name_is_told_apart_by_the_number_the_text_gives_it(
    labels: tuple[str, ...], pick: int, text: str, ok: bool
) -> None:
    """pi's question tool records the label alone in its details and "N. label" in its text: an
    option that shares its name with another is told apart by that number, and only by it."""
    twins = asked("question", QuestionItem("Keep which copy? 1. Keep", options=tuple(Option(o) for o in labels)))
    done = plan_list(twins, [f"#{pick}"], None, Rows(labels, 0))
    details = {"question": "Keep which copy? 1. Keep", "options": list(labels), "answer": labels[pick - 1], "wasCustom": False}
    assert (result_mismatch(twins, done, text, details) is None) is ok
    # the question's own words never give the number: "1. Keep" in its text is not an answer
    assert result_mismatch(twins, done, "Keep which copy? 1. Keep", details) is not None


def test_a_record_with_no_answer_in_its_details_is_read_as_text() -> None:
    done = chose(ONE, "Refactor")
    assert result_mismatch(ONE, done, "User selected: Refactor", {"version": 2, "question": "Which task?"}) is None
    assert result_mismatch(ONE, done, "User selected: Bug fix", {"version": 2})


# ---- a form whose later question opens with its highlight on another row ----


@dataclass
class ListForm:
    """A stand-in of a form drawn one question at a time as a numbered list (the layout class of
    several third-party tools): ``❯`` on the highlighted row, "Enter next/submit"; each question
    opens with its highlight where ``opens`` says (a tool that remembers or recommends a row)."""

    items: tuple[QuestionItem, ...]
    opens: tuple[int, ...]
    at: int = 0
    cursor: int = 0
    answers: list[str] = field(default_factory=list)
    sent: list[tuple[str, ...]] = field(default_factory=list)

    def __post_init__(self) -> None:
        self.cursor = self.opens[0]

    def screen(self) -> str:
        if self.at >= len(self.items):
            return "\n".join([" Answers: " + ", ".join(self.answers), "", "/project"])
        it = self.items[self.at]
        rows = [f" {'❯' if i == self.cursor else ' '} {i + 1}. {o.label}" for i, o in enumerate(it.options)]
        return "\n".join(["─" * 50, f" {it.text}", "", *rows, "", " ↑↓ move • Enter next/submit", "─" * 50, "/project"])

    def send(self, step: Step, seen: Seen) -> bool:
        assert seen.proof == self.screen()
        self.sent.append(step.keys)
        n = len(self.items[self.at].options)
        for key in step.keys:
            if key in ("Up", "Down"):
                self.cursor = max(0, min(n - 1, self.cursor + (1 if key == "Down" else -1)))
            elif key == "Enter":
                self.answers.append(self.items[self.at].options[self.cursor].label)
                self.at += 1
                self.cursor = self.opens[self.at] if self.at < len(self.items) else 0
        return True

    def waits_alone(self) -> str | None:
        return None if self.at < len(self.items) else "pi has recorded an end of this question"


@pytest.mark.parametrize("opens", [(0, 0), (2, 1), (1, 2), (0, 1)])
def test_each_question_of_a_form_is_answered_from_where_its_highlight_opens(opens: tuple[int, ...]) -> None:
    form = (
        item("Which task?", ("Bug fix", "New feature", "Refactor")),
        item("Which release?", ("Now", "Next", "Later")),
    )
    q = asked("ask_user", *form)
    pi = ListForm(form, opens)
    found = finder(q, pi.screen())
    assert found is not None and found[1].variant == "list"
    steps = plan_for(found[1], q, ["3", "1"], None)
    drive(lambda: Seen(found[0](pi.screen()), pi.screen()), pi.send, q, steps, pi.waits_alone)
    assert pi.answers == ["Refactor", "Now"]
    assert pi.sent.count(("Enter",)) == 2  # (Enter only on the chosen rows)


def test_a_label_written_over_lines_is_recorded_under_its_own_name() -> None:
    """A tool's option label holding a line break is read as one line (every string is cleaned);
    pi's record keeps the break, and it names that option all the same, not another one."""
    labels = ("first line\nsecond line of it", "plain", "third")
    question = asked("question", QuestionItem("Which?", options=tuple(Option(clean(o)) for o in labels)))
    done = plan_list(question, ["1"], None, Rows(tuple(clean(o) for o in labels), 0))
    said = f"User selected: 1. {labels[0]}"
    assert result_mismatch(question, done, said, {"answer": labels[0], "wasCustom": False}) is None
    assert result_mismatch(question, done, said, {"answers": [{"label": labels[0], "index": 1}]}) is None
    assert result_mismatch(question, done, "User selected: 2. plain", {"answer": "plain", "wasCustom": False})
