"""An answer through the companion extension reaches the dialog pi shows now as the option the
user saw, or nothing is sent: a question tool's question asked through pi's select or confirm
(whose rows differ from the question's options), and one tool call opening several dialogs in
turn. Against a scripted extension socket (as tests/processes/test_companion.py), the real
scan, the real channel client and ``answer_line`` as the desktop calls it."""

from __future__ import annotations

import os
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from notifier.actions.answer import answer_line
from notifier.companion import with_open_dialogs
from notifier.config import Config
from notifier.core.codec import question_token
from notifier.core.model import Question
from notifier.sessions import engine_options, scan_once
from notifier.system import paths

from ..extension import ExtensionStandIn
from ..writer import header, line

NAME = "2026-01-01T00-00-01-000Z_00000000-0000-7000-8000-0000000000bb.jsonl"


def answers(ext: ExtensionStandIn) -> list[dict[str, Any]]:
    """The answers the extension received, as sent."""
    return [r["answer"] for r in ext.requests]


@pytest.fixture
def ext() -> Iterator[ExtensionStandIn]:
    e = ExtensionStandIn(os.path.join(paths.runtime_dir(), f"ext-{os.getpid()}-t.sock"))
    yield e
    e.close()


def call(call_id: str, tool: str, args: dict[str, Any]) -> bytes:
    content = [{"type": "toolCall", "id": call_id, "name": tool, "arguments": args}]
    msg = {"role": "assistant", "stopReason": "toolUse", "content": content}
    return line(
        {"type": "message", "id": "m1", "parentId": None, "timestamp": "2026-01-01T00:00:02.000Z", "message": msg}
    )


class Pi:
    """One session file with one tool call running, the board read as ``answer_line``'s callers
    read it (a scan, the dialogs open then)."""

    def __init__(self, tmp_path: Path, tool: str, args: dict[str, Any]) -> None:
        folder = tmp_path / "sessions" / "proj"
        folder.mkdir(parents=True)
        self.file = str(folder / NAME)
        Path(self.file).write_bytes(header(cwd=str(tmp_path)) + call("call_Q", tool, args))
        self.tool, self.args = tool, args
        self.config = Config()
        self.config.values["sessions_dirs"] = [str(tmp_path / "sessions")]
        self.config.values["liveness"] = "off"

    def dialog(self, kind: str, title: str, options: list[str] | None, id: str = "7") -> dict[str, Any]:
        return {
            "id": id, "kind": kind, "title": title, "options": options, "tool": self.tool, "tool_call_id": "call_Q",
            "tool_input": self.args, "session_file": self.file, "remote": "value", "at": time.time() * 1000,
        }  # fmt: skip

    def shown(self) -> tuple[Any, Question]:
        opts = engine_options(self.config)
        snap = with_open_dialogs(scan_once(opts), opts)
        (q,) = [q for v in snap.sessions for q in v.pending]
        return snap, q

    def answer(self, snap: Any, q: Question, choice: str) -> tuple[int, str]:
        return answer_line(self.config, snap, self.file, q.tool_call_id, [choice], None, token=question_token(q))


def asking(question: str, *labels: str, recommended: str | None = None) -> dict[str, Any]:
    return {"question": question, "options": [{"label": o, "recommended": o == recommended} for o in labels]}


# ---- a question tool's question asked through pi's select: the question's option, found by its label


@pytest.mark.parametrize(
    ("labels", "recommended", "rows", "choice", "sent"),
    [
        # the recommended option drawn first, with a note after its label
        (("SQLite", "Postgres"), "Postgres", ["Postgres (Recommended)", "SQLite"], "#2", "Postgres (Recommended)"),
        (("SQLite", "Postgres"), "Postgres", ["Postgres (Recommended)", "SQLite"], "#1", "SQLite"),
        (
            ("SQLite", "Postgres"),
            "Postgres",
            ["Postgres (Recommended)", "SQLite"],
            "Postgres",
            "Postgres (Recommended)",
        ),
        # another order, a row of the tool's own added
        (("A", "B", "C"), None, ["C", "A", "B", "Type something else"], "#1", "A"),
        (("A", "B", "C"), None, ["C", "A", "B", "Type something else"], "3", "C"),
        # a description after the label; a row that reads a label alone wins over a noted one
        (("Bug fix", "Refactor"), None, ["Other", "Refactor — clean up", "Bug fix"], "#2", "Refactor — clean up"),
        (("Go", "Go (fast)"), None, ["Go (fast)", "Go"], "#1", "Go"),
        (("Go", "Go (fast)"), None, ["Go (fast)", "Go"], "#2", "Go (fast)"),
    ],
)
def test_a_select_gets_the_row_of_the_option_the_user_saw(
    tmp_path: Path,
    ext: ExtensionStandIn,
    labels: tuple[str, ...],
    recommended: str | None,
    rows: list[str],
    choice: str,
    sent: str,
) -> None:
    pi = Pi(tmp_path, "ask_user", asking("Which one?", *labels, recommended=recommended))
    ext.dialogs = [pi.dialog("select", "Which one?", rows)]
    snap, q = pi.shown()
    assert (q.kind, q.options) == ("question", labels)  # the question, as the file asks it
    code, said = pi.answer(snap, q, choice)
    assert code == 0, said
    assert answers(ext) == [{"id": "7", "value": sent}]


@pytest.mark.parametrize(
    ("labels", "rows", "choice"),
    [
        (("Keep", "Keep", "Drop"), ["Keep", "Keep", "Drop"], "#2"),  # two rows read the option
        (("A", "B"), ["A", "Bee"], "#2"),  # no row reads it
        (("A", "B"), ["A"], "2"),
        (("A", "A (x)"), ["A (x)", "A (Recommended)"], "#1"),  # two rows read it with a note
        (("A", "A (x)"), ["A (x)", "A (Recommended)"], "#2"),  # its row reads as the other's too
    ],
)
def test_a_select_whose_row_cannot_be_told_gets_nothing(
    tmp_path: Path, ext: ExtensionStandIn, labels: tuple[str, ...], rows: list[str], choice: str
) -> None:
    pi = Pi(tmp_path, "ask_user", asking("Which one?", *labels))
    ext.dialogs = [pi.dialog("select", "Which one?", rows)]
    snap, q = pi.shown()
    code, said = pi.answer(snap, q, choice)
    assert code == 1 and "nothing was typed" in said, said
    assert answers(ext) == []


def test_the_twins_third_option_still_has_one_row(tmp_path: Path, ext: ExtensionStandIn) -> None:
    pi = Pi(tmp_path, "ask_user", asking("Which one?", "Keep", "Keep", "Drop"))
    ext.dialogs = [pi.dialog("select", "Which one?", ["Drop", "Keep", "Keep"])]
    snap, q = pi.shown()
    assert pi.answer(snap, q, "#3")[0] == 0
    assert answers(ext) == [{"id": "7", "value": "Drop"}]


# ---- a question tool's question asked through pi's confirm: its two options must be yes and no


@pytest.mark.parametrize(
    ("labels", "choice", "sent"),
    [
        (("No, keep the data", "Yes, delete it"), "1", False),
        (("No, keep the data", "Yes, delete it"), "#2", True),
        (("No, keep the data", "Yes, delete it"), "Yes, delete it", True),
        (("Yes", "No"), "1", True),
        (("yes - go ahead", "NO: stop"), "#2", False),
    ],
)
def test_a_confirm_gets_the_yes_or_no_the_option_says(
    tmp_path: Path, ext: ExtensionStandIn, labels: tuple[str, ...], choice: str, sent: bool
) -> None:
    pi = Pi(tmp_path, "ask_user", asking("Delete the old data?", *labels))
    ext.dialogs = [pi.dialog("confirm", "Delete the old data?", ["Yes", "No"])]
    snap, q = pi.shown()
    code, said = pi.answer(snap, q, choice)
    assert code == 0, said
    assert answers(ext) == [{"id": "7", "value": sent}]


@pytest.mark.parametrize(
    "labels",
    [
        ("Proceed", "Stop"),  # not yes and no
        ("Yes, now", "Yes, later"),  # both yes
        ("Yes", "No", "Maybe"),  # a third
        ("Yesterday", "No"),  # a word that starts like yes is not yes
    ],
)
def test_a_confirm_for_options_that_are_not_one_yes_and_one_no_gets_nothing(
    tmp_path: Path, ext: ExtensionStandIn, labels: tuple[str, ...]
) -> None:
    pi = Pi(tmp_path, "ask_user", asking("Go on?", *labels))
    ext.dialogs = [pi.dialog("confirm", "Go on?", ["Yes", "No"])]
    snap, q = pi.shown()
    for choice in ("1", "#2", labels[0]):
        code, said = pi.answer(snap, q, choice)
        assert code == 1 and "nothing was typed" in said, said
    assert answers(ext) == []


# ---- one tool call, several dialogs in turn: only the one shown is answered


def region(pi: Pi, **over: Any) -> dict[str, Any]:
    return {**pi.dialog("select", "Which region?", ["eu", "us"], id="1"), **over}


@pytest.mark.parametrize(
    "then",
    [
        {"title": "Delete the production database first?", "options": ["yes, delete it", "no"]},
        {"title": "Which region for the backups?"},  # the same options, another title
        {"options": ["us", "eu"]},  # the same title, the options in another order
        {"options": ["eu", "us", "ap"]},  # the same title, another option
        {"kind": "confirm", "options": ["Yes", "No"]},  # (another kind: not this dialog at all)
    ],
)
def test_a_second_dialog_of_the_same_call_is_never_answered_with_the_firsts_choice(
    tmp_path: Path, ext: ExtensionStandIn, then: dict[str, Any]
) -> None:
    pi = Pi(tmp_path, "deploy", {"app": "web"})
    ext.dialogs = [region(pi)]
    snap, q = pi.shown()  # what the board holds: the first dialog
    assert (q.kind, q.text, q.options) == ("dialog", "Which region?", ("eu", "us"))
    ext.dialogs = [region(pi, id="2", **then)]  # answered in the terminal; the call opened the next
    code, said = pi.answer(snap, q, "#1")
    assert code == 1 and "nothing was typed" in said, said
    assert answers(ext) == []


def test_the_dialog_shown_is_answered_while_it_is_open(tmp_path: Path, ext: ExtensionStandIn) -> None:
    pi = Pi(tmp_path, "deploy", {"app": "web"})
    ext.dialogs = [region(pi)]
    snap, q = pi.shown()
    assert pi.answer(snap, q, "#2") == (0, "answered: us")
    # the same question again in a dialog of its own (another id), opened later: asked again,
    # so an answer given to the first (its token) is not typed into it; once shown, it is answered
    ext.dialogs = [region(pi, id="2", at=q.asked_at * 1000 + 1500)]
    code, said = pi.answer(snap, q, "#1")
    assert code == 1 and "nothing was typed" in said, said
    snap, q = pi.shown()
    assert pi.answer(snap, q, "#1") == (0, "answered: eu")
    assert answers(ext) == [{"id": "1", "value": "us"}, {"id": "2", "value": "eu"}]
    # two dialogs of the call open that both read as the one shown: which pi takes is unknown
    ext.dialogs = [region(pi, id="3", at=q.asked_at * 1000), region(pi, id="4", at=q.asked_at * 1000)]
    code, said = pi.answer(snap, q, "#1")
    assert code == 1 and "nothing was typed" in said, said
    assert len(answers(ext)) == 2


def test_a_question_tools_next_dialog_is_not_its_question(tmp_path: Path, ext: ExtensionStandIn) -> None:
    """A question tool's own select that asks something else (its next question, a follow-up)
    is not the question shown, whatever its options."""
    pi = Pi(tmp_path, "ask_user", asking("Which database?", "SQLite", "Postgres"))
    for title in ("Which region?", "Why Postgres?", ""):
        ext.dialogs = [pi.dialog("select", title, ["SQLite", "Postgres"])]
        snap, q = pi.shown()
        code, said = pi.answer(snap, q, "#2")
        assert code == 1 and "nothing was typed" in said, said
    ext.dialogs = [pi.dialog("select", "Step 1 of 2\n\nWhich database?", ["SQLite", "Postgres"])]
    snap, q = pi.shown()
    assert pi.answer(snap, q, "#2") == (0, "answered: Postgres")
    assert answers(ext) == [{"id": "7", "value": "Postgres"}]


def test_a_form_or_a_multi_select_through_a_dialog_is_left_to_the_terminal(tmp_path: Path, ext: ExtensionStandIn) -> None:
    """One select's one value cannot be a form's answers or several picks: nothing is sent."""
    form = {"questions": [{"question": "Which database?", "options": [{"label": "SQLite"}]}, {"question": "Why?"}]}
    multi = {**asking("Which database?", "SQLite", "Postgres"), "multiSelect": True}
    for n, args in enumerate((form, multi)):
        pi = Pi(tmp_path / str(n), "ask_user", args)
        ext.dialogs = [pi.dialog("select", "Which database?", ["SQLite", "Postgres"])]
        snap, q = pi.shown()
        code, said = pi.answer(snap, q, "#1")
        assert code == 1 and "answered in the terminal" in said, said
    assert answers(ext) == []
