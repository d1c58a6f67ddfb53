"""`answer` on a third-party question tool's dialog, for real: rpiv-ask-user-question (npm
`@juicesharp/rpiv-ask-user-question`, not written here) in pi 1.6.0. It draws its own layout,
which pi-notifier has no key map for; its dialog is read as a list (the question's text, then
numbered rows, "❯" on the highlighted one) and answered key by key, and what the tool recorded is
the option chosen. A form of several questions in that layout ends in a review step (its tab bar
names it): each question answered in turn, the review read back, then its Submit row confirmed.
Its help line is drawn under the dialog's bottom rule: a multi-select question ("Space to toggle")
is ticked, then submitted on its own "Submit" row; its "Type something." row, an input that opens
as it is highlighted, takes a typed answer.

Also TianZuo555's pi-ask-user (`ask_user`, from its repository's packages/pi-ask-user): rows with
check boxes ("› [ ] label — description") and "Space select · Enter submit": Space on the chosen
row, its box read back ticked, then Enter.

The package is looked for in $PI_NOTIFIER_RPIV_DIR (an npm prefix: `npm install --prefix DIR
@juicesharp/rpiv-ask-user-question`), else `.cache/rpiv`; pi-ask-user in $PI_NOTIFIER_PI_ASK_USER_DIR
(the package's folder); rwese's pi-question (a `question` tool of another shape than pi's: "> ● 1.
label" rows) in $PI_NOTIFIER_PI_QUESTION_DIR (its `extensions` folder); without them the tests skip,
saying so. ebbe-brandstrup's pi-ask-user-questions (`ask_user_question` forms: a title, "Which …?
[single-select]", "❯ ○ label" rows; its record names the option's value) in
$PI_NOTIFIER_ASK_USER_QUESTIONS_DIR (the repository's folder)."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest

from notifier.companion import hello_of
from notifier.system.paths import list_sockets

from ..conftest import ROOT, wait_for
from .pi_harness import EXTENSION, Tmux, need, scripted_model, start_pi
from .test_goto_answer import pending, run

PREFIX = Path(os.environ.get("PI_NOTIFIER_RPIV_DIR") or ROOT / ".cache" / "rpiv")
RPIV = PREFIX / "node_modules" / "@juicesharp" / "rpiv-ask-user-question" / "index.ts"
PI_QUESTION = Path(os.environ.get("PI_NOTIFIER_PI_QUESTION_DIR") or ROOT / ".cache" / "pi-question") / "index.ts"
FORMS = Path(os.environ.get("PI_NOTIFIER_ASK_USER_QUESTIONS_DIR") or ROOT / ".cache" / "pi-ask-user-questions") / "index.ts"
ASK_USER = Path(os.environ.get("PI_NOTIFIER_PI_ASK_USER_DIR") or ROOT / ".cache" / "pi-ask-user") / "index.ts"


def opts(*labels: str) -> list[dict[str, str]]:
    return [{"label": x, "description": f"about {x.lower()}"} for x in labels]


ONE = {"questions": [{"question": "Which task are we planning now?", "header": "Task", "options": opts("Bug fix", "New feature", "Refactor")}]}
TWO = {
    "questions": [
        {"question": "Which task are we planning now?", "header": "Task", "options": opts("Bug fix", "Refactor")},
        {"question": "Which release gets it?", "header": "Release", "options": opts("Next", "Later")[1:] + opts("Soon")},
    ]
}


def results(text: str) -> list[dict[str, Any]]:
    entries = [json.loads(x) for x in text.splitlines() if x.strip()]
    return [e["message"] for e in entries if (e.get("message") or {}).get("role") == "toolResult"]


@pytest.mark.skipif(not RPIV.exists(), reason=f"rpiv-ask-user-question is not installed in {PREFIX} (set PI_NOTIFIER_RPIV_DIR)")
def test_a_third_party_list_is_answered_key_by_key(tmp_path: Path, tmux_server: Tmux) -> None:
    v = need("1.6.0")
    with scripted_model("ask_user_question", ONE) as port:
        pi = start_pi(tmp_path, v, port, RPIV, server=tmux_server)
        d = ["--sessions-dir", str(pi.sessions)]
        pi.prompt("Ask me which task")
        wait_for(lambda: pending(pi) and "❯ 1. Bug fix" in pi.screen(), 30, "the tool's dialog")
        done = run("answer", "--call", pending(pi)[0]["tool_call_id"], "Refactor", *d)
        assert done.returncode == 0, done.stderr
        (result,) = wait_for(lambda: results(pi.session_text()), 20, "the tool's result")
        assert result["details"]["answers"][0]["answer"] == "Refactor"
        assert done.stdout == f"answered: {result['content'][0]['text']}\n"


@pytest.mark.skipif(not RPIV.exists(), reason=f"rpiv-ask-user-question is not installed in {PREFIX} (set PI_NOTIFIER_RPIV_DIR)")
def test_a_form_that_ends_in_a_review_is_answered_then_submitted_there(tmp_path: Path, tmux_server: Tmux) -> None:
    """`answer CALL 2 1` on rpiv's form of two questions ("□ Task  □ Release  ✓ Submit", "Enter to
    select"): each question answered as a list, then its review read ("● Task / → Refactor", ...)
    and Enter on "Submit answers" only once it shows those answers; the tool records them."""
    v = need("1.6.0")
    with scripted_model("ask_user_question", TWO) as port:
        pi = start_pi(tmp_path, v, port, RPIV, server=tmux_server)
        d = ["--sessions-dir", str(pi.sessions)]
        pi.prompt("Ask me which task")
        wait_for(lambda: pending(pi) and "❯ 1. Bug fix" in pi.screen(), 30, "the tool's dialog")
        done = run("answer", "--call", pending(pi)[0]["tool_call_id"], "2", "1", *d)
        assert done.returncode == 0, done.stderr + pi.screen()
        (result,) = wait_for(lambda: results(pi.session_text()), 20, "the tool's result")
        assert [a["answer"] for a in result["details"]["answers"]] == ["Refactor", "Later"], result
        assert done.stdout == f"answered: {result['content'][0]['text']}\n"


@pytest.mark.skipif(not RPIV.exists(), reason=f"rpiv-ask-user-question is not installed in {PREFIX} (set PI_NOTIFIER_RPIV_DIR)")
def test_a_form_not_at_its_first_question_is_refused_before_any_key(tmp_path: Path, tmux_server: Tmux) -> None:
    v = need("1.6.0")
    with scripted_model("ask_user_question", TWO) as port:
        pi = start_pi(tmp_path, v, port, RPIV, server=tmux_server)
        d = ["--sessions-dir", str(pi.sessions)]
        pi.prompt("Ask me which task")
        wait_for(lambda: pending(pi) and "❯ 1. Bug fix" in pi.screen(), 30, "the tool's dialog")
        pi.keys("Enter")  # (the user answers the first question in the terminal)
        wait_for(lambda: "❯ 1. Later" in pi.screen(), 20, "the form's second question")
        before = pi.screen()
        r = run("answer", "1", "1", *d)
        assert r.returncode == 1 and r.stderr.count("\n") == 1, r.stderr
        assert r.stderr.rstrip().endswith("nothing was typed") and "does not show this question" in r.stderr
        assert pi.screen() == before and results(pi.session_text()) == []


MULTI = {"questions": [{"question": "Which tasks are we planning now?", "header": "Tasks", "multiSelect": True,
                        "options": opts("Bug fix", "New feature", "Refactor")}]}  # fmt: skip


@pytest.mark.skipif(not RPIV.exists(), reason=f"rpiv-ask-user-question is not installed in {PREFIX} (set PI_NOTIFIER_RPIV_DIR)")
def test_a_multi_select_list_is_ticked_then_submitted_on_its_own_submit_row(tmp_path: Path, tmux_server: Tmux) -> None:
    """`answer CALL 1 3` on rpiv's multi-select question ("❯ 1. [ ] Bug fix" rows, then "Type
    something." and "Submit"; its help, under the dialog's bottom rule, says "Space to toggle", and
    its Enter ticks a row too): rows 1 and 3 ticked with Space, every box read back, then down past
    the free-text row (its input opens as it is highlighted) to "Submit", and Enter there."""
    v = need("1.6.0")
    with scripted_model("ask_user_question", MULTI) as port:
        pi = start_pi(tmp_path, v, port, RPIV, server=tmux_server)
        d = ["--sessions-dir", str(pi.sessions)]
        pi.prompt("Ask me which tasks")
        wait_for(lambda: pending(pi) and "❯ 1. [ ] Bug fix" in pi.screen(), 30, "the tool's dialog")
        done = run("answer", "--call", pending(pi)[0]["tool_call_id"], "1", "3", *d)
        assert done.returncode == 0, done.stderr + pi.screen()
        (result,) = wait_for(lambda: results(pi.session_text()), 20, "the tool's result")
        assert result["details"]["answers"][0]["selected"] == ["Bug fix", "Refactor"], result
        assert done.stdout == f"answered: {result['content'][0]['text']}\n"


@pytest.mark.skipif(not RPIV.exists(), reason=f"rpiv-ask-user-question is not installed in {PREFIX} (set PI_NOTIFIER_RPIV_DIR)")
@pytest.mark.parametrize("args", [ONE, MULTI], ids=["single", "multi"])
def test_a_typed_answer_goes_into_a_free_text_row_that_opens_as_it_is_highlighted(
    tmp_path: Path, tmux_server: Tmux, args: dict[str, Any]
) -> None:
    """`answer CALL --text TEXT` on rpiv's question (single- or multi-select): down to "Type
    something.", whose input opens as it is highlighted (the help under the dialog's rule then
    says "Shift+Enter for newline"), so no key opens it; the text pasted, read back in that row,
    then Enter; the tool records the text as a custom answer."""
    v = need("1.6.0")
    with scripted_model("ask_user_question", args) as port:
        pi = start_pi(tmp_path, v, port, RPIV, server=tmux_server)
        d = ["--sessions-dir", str(pi.sessions)]
        pi.prompt("Ask me which task")
        wait_for(lambda: pending(pi) and "❯ 1. " in pi.screen() and "Type something." in pi.screen(), 30, "the dialog")
        done = run("answer", "--call", pending(pi)[0]["tool_call_id"], "--text", "Docs first, then the fix", *d)
        assert done.returncode == 0, done.stderr + pi.screen()
        (result,) = wait_for(lambda: results(pi.session_text()), 20, "the tool's result")
        (answer,) = result["details"]["answers"]
        assert (answer["kind"], answer["answer"]) == ("custom", "Docs first, then the fix"), result


@pytest.mark.skipif(not ASK_USER.exists(), reason=f"pi-ask-user is not in {ASK_USER.parent} (set PI_NOTIFIER_PI_ASK_USER_DIR)")
def test_a_third_party_list_of_check_boxes_is_ticked_then_submitted(tmp_path: Path, tmux_server: Tmux) -> None:
    v = need("1.6.0")
    args = {"questions": [{"question": q["question"], "options": q["options"]} for q in ONE["questions"]]}
    with scripted_model("ask_user", args) as port:
        pi = start_pi(tmp_path, v, port, ASK_USER, server=tmux_server)
        d = ["--sessions-dir", str(pi.sessions)]
        pi.prompt("Ask me which task")
        wait_for(lambda: pending(pi) and "[ ] Bug fix" in pi.screen(), 30, "the tool's dialog")
        done = run("answer", "--call", pending(pi)[0]["tool_call_id"], "3", *d)
        assert done.returncode == 0, done.stderr
        (result,) = wait_for(lambda: results(pi.session_text()), 20, "the tool's result")
        assert result["details"]["answers"][0]["choice"]["label"] == "Refactor"


@pytest.mark.skipif(not PI_QUESTION.exists(), reason=f"pi-question is not in {PI_QUESTION.parent} (set PI_NOTIFIER_PI_QUESTION_DIR)")
@pytest.mark.parametrize("companion", [False, True])
def test_a_question_tool_of_another_shape_is_read_as_a_list(tmp_path: Path, tmux_server: Tmux, companion: bool) -> None:
    """(With the companion extension, the same list is read off the screen it mirrors, and the keys
    go to that dialog's id.)"""
    v = need("1.6.0")
    labels = ("Bug fix", "New feature", "Refactor")
    args = {"questions": [{"questionTopic": "Task", "prompt": "Which task are we planning now?", "type": "single",
                           "options": [{"value": x.lower(), "label": x} for x in labels]}]}  # fmt: skip
    with scripted_model("question", args) as port:
        pi = start_pi(tmp_path, v, port, PI_QUESTION, *([EXTENSION] if companion else []), server=tmux_server)
        d = ["--sessions-dir", str(pi.sessions)]
        if companion:
            wait_for(lambda: list_sockets(), 20, "the companion's socket")
        pi.prompt("Ask me which task")
        wait_for(lambda: pending(pi) and "● 1. Bug fix" in pi.screen(), 30, "the tool's dialog")
        if companion:
            (sock,) = list_sockets()
            assert [(x.kind, x.remote) for x in hello_of(sock, 2.0).dialogs] == [("custom", "keys")]
        done = run("answer", "--call", pending(pi)[0]["tool_call_id"], "New feature", *d)
        assert done.returncode == 0, done.stderr
        (result,) = wait_for(lambda: results(pi.session_text()), 20, "the tool's result")
        assert result["details"]["answers"][0]["label"] == "New feature"


@pytest.mark.skipif(not FORMS.exists(), reason=f"pi-ask-user-questions is not in {FORMS.parent} (set PI_NOTIFIER_ASK_USER_QUESTIONS_DIR)")
def test_a_form_of_one_radio_question_is_read_as_a_list(tmp_path: Path, tmux_server: Tmux) -> None:
    v = need("1.6.0")
    args = {"title": "Planning", "questions": [{"id": "task", "type": "radio", "prompt": "Which task are we planning now?",
            "options": [{"value": v_, "label": x} for v_, x in (("fix", "Bug fix"), ("feat", "New feature"), ("ref", "Refactor"))]}]}  # fmt: skip
    with scripted_model("ask_user_question", args) as port:
        pi = start_pi(tmp_path, v, port, FORMS, server=tmux_server)
        d = ["--sessions-dir", str(pi.sessions)]
        pi.prompt("Ask me which task")
        wait_for(lambda: pending(pi) and "❯ ○ Bug fix" in pi.screen(), 30, "the tool's dialog")
        done = run("answer", "--call", pending(pi)[0]["tool_call_id"], "Refactor", *d)
        assert done.returncode == 0, done.stderr
        (result,) = wait_for(lambda: results(pi.session_text()), 20, "the tool's result")
        assert result["details"]["answers"][0]["value"] == "ref"


@pytest.mark.skipif(not FORMS.exists(), reason=f"pi-ask-user-questions is not in {FORMS.parent} (set PI_NOTIFIER_ASK_USER_QUESTIONS_DIR)")
def test_a_form_of_one_checkbox_question_is_ticked_then_submitted(tmp_path: Path, tmux_server: Tmux) -> None:
    """`answer CALL 1 3` on a multi-select list ("☐ label" rows, "Space toggle • Enter submit"):
    rows 1 and 3 ticked, every box read back, then Enter; the tool records those two values."""
    v = need("1.6.0")
    args = {"title": "Planning", "questions": [{"id": "tasks", "type": "checkbox", "prompt": "Which tasks are we planning now?",
            "options": [{"value": v_, "label": x} for v_, x in (("fix", "Bug fix"), ("feat", "New feature"), ("ref", "Refactor"))]}]}  # fmt: skip
    with scripted_model("ask_user_question", args) as port:
        pi = start_pi(tmp_path, v, port, FORMS, server=tmux_server)
        d = ["--sessions-dir", str(pi.sessions)]
        pi.prompt("Ask me which tasks")
        wait_for(lambda: pending(pi) and "☐ Bug fix" in pi.screen(), 30, "the tool's dialog")
        done = run("answer", "--call", pending(pi)[0]["tool_call_id"], "1", "3", *d)
        assert done.returncode == 0, done.stderr + pi.screen()
        (result,) = wait_for(lambda: results(pi.session_text()), 20, "the tool's result")
        assert sorted(result["details"]["answers"][0]["value"]) == ["fix", "ref"], result


@pytest.mark.skipif(not ASK_USER.exists(), reason=f"pi-ask-user is not in {ASK_USER.parent} (set PI_NOTIFIER_PI_ASK_USER_DIR)")
def test_a_typed_answer_goes_through_the_lists_free_text_row(tmp_path: Path, tmux_server: Tmux) -> None:
    """`answer --text TEXT` on a list with an "Other — type your own answer" row: to the row, Space
    (its help says Space selects) opens an input, the text pasted and read back, Enter saves it into
    the row, Enter submits; the tool records the text as a custom answer."""
    v = need("1.6.0")
    args = {"questions": [{"question": q["question"], "options": q["options"]} for q in ONE["questions"]]}
    with scripted_model("ask_user", args) as port:
        pi = start_pi(tmp_path, v, port, ASK_USER, server=tmux_server)
        d = ["--sessions-dir", str(pi.sessions)]
        pi.prompt("Ask me which task")
        wait_for(lambda: pending(pi) and "[ ] Bug fix" in pi.screen(), 30, "the tool's dialog")
        done = run("answer", "--call", pending(pi)[0]["tool_call_id"], "--text", "Docs first, then the fix", *d)
        assert done.returncode == 0, done.stderr + pi.screen()
        (result,) = wait_for(lambda: results(pi.session_text()), 20, "the tool's result")
        assert result["details"]["answers"][0]["choice"] == {"label": "Docs first, then the fix", "wasCustom": True}


@pytest.mark.skipif(not ASK_USER.exists(), reason=f"pi-ask-user is not in {ASK_USER.parent} (set PI_NOTIFIER_PI_ASK_USER_DIR)")
def test_a_form_of_two_questions_drawn_as_lists_is_answered_in_turn(tmp_path: Path, tmux_server: Tmux) -> None:
    """`answer CALL 2 1`: question 1 → option 2, question 2 → option 1, each read as a list when
    its tab shows ("Question 2 of 2"), Space then Enter ("Enter next/submit"); the last submits."""
    v = need("1.6.0")
    args = {"questions": [{"question": q["question"], "options": q["options"]} for q in TWO["questions"]]}
    with scripted_model("ask_user", args) as port:
        pi = start_pi(tmp_path, v, port, ASK_USER, server=tmux_server)
        d = ["--sessions-dir", str(pi.sessions)]
        pi.prompt("Ask me which task")
        wait_for(lambda: pending(pi) and "[ ] Bug fix" in pi.screen(), 30, "the tool's dialog")
        done = run("answer", "--call", pending(pi)[0]["tool_call_id"], "2", "1", *d)
        assert done.returncode == 0, done.stderr + pi.screen()
        (result,) = wait_for(lambda: results(pi.session_text()), 20, "the tool's result")
        assert [a["choice"]["label"] for a in result["details"]["answers"]] == ["Refactor", "Later"], result
