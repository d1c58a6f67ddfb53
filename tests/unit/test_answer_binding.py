"""Every key `answer` types is bound to its question (pure: the driver with screens as pi's
`question` tool draws them, the session file's word and the carrier played by the test): before each
key the dialog on screen must be that question's, its text and its rows, and the file must have it
waiting alone; a dialog gone, or another question's, stops the answer once it stays so a frame's
time, and when it stops it says what it typed and whether a key may have gone elsewhere."""

from __future__ import annotations

import logging
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path

import pytest

from notifier.actions.answer import Seen, drive
from notifier.actions.goto import Refused
from notifier.core.codec import question_token
from notifier.core.model import Option, Question, QuestionItem
from notifier.pi.keys import Step, bound, plan
from notifier.pi.screens import find_dialog
from notifier.system.tmux import showing

A = Question("call_A", "question", (QuestionItem("Delete the branch?", options=(Option("Keep"), Option("Delete"))),), 1.0)
B_TEXT = "Delete the database?"


def screen(text: str = "Delete the branch?", cursor: int = 0, edit: bool = False) -> str:
    """What pi's example question tool draws (its render(), one line per row), pi's footer below."""
    rule = "─" * 60
    rows = [f"{'> ' if i == cursor else '  '}{i + 1}. {label}" for i, label in enumerate(["Keep", "Delete", "Type something."])]
    if edit:
        rows[-1] += " ✎"
    help_line = " Enter to submit • Esc to go back" if edit else " ↑↓ navigate • Enter to select • Esc to cancel"
    editor = ["", " Your answer:", " " + "─" * 40, "  ", " " + "─" * 40] if edit else []
    return "\n".join([" question Delete the branch?", rule, f" {text}", "", *rows, *editor, "", help_line, rule, "/project", "mock-model"])


class Pi:
    """The screens a look returns, one per look (the last repeats), what the carrier sent, and
    what the session file says before each key."""

    def __init__(self, screens: list[str], file: list[str | None] | None = None, refuse: int = 0) -> None:
        self.screens: Iterator[str] = iter(screens)
        self.last = screens[0]
        self.sent: list[tuple[str, ...]] = []
        self.file = iter(file or [])
        self.refuse = refuse  # the carrier finds the screen changed this many times first

    def look(self) -> Seen:
        self.last = next(self.screens, self.last)
        return Seen(find_dialog(self.last), self.last)

    def send(self, step: Step, seen: Seen) -> bool:
        assert seen.proof == self.last  # (a key goes onto the very look it was checked against)
        if self.refuse:
            self.refuse -= 1
            return False
        self.sent.append(step.keys)
        return True

    def waits_alone(self) -> str | None:
        return next(self.file, None)


def run(pi: Pi, choice: str = "2") -> list[tuple[str, ...]]:
    drive(pi.look, pi.send, A, plan("question", A, [choice]), pi.waits_alone)
    return pi.sent


def refused(pi: Pi, choice: str = "2") -> str:
    with pytest.raises(Refused) as err:
        drive(pi.look, pi.send, A, plan("question", A, [choice]), pi.waits_alone)
    return str(err.value)


def test_each_key_goes_onto_this_questions_dialog() -> None:
    # (pi draws the Down a look later: that look is looked again, not a reason to stop)
    assert run(Pi([screen(), screen(), screen(cursor=1)])) == [("Down",), ("Enter",)]


def test_a_look_alike_next_question_gets_no_key() -> None:
    # the user answered A just before the first key: B, with A's rows, is on screen
    said = refused(Pi([screen(B_TEXT)]))
    assert "does not show this question" in said and said.endswith("nothing was typed")
    # ... or between the two keys: the Enter is never sent, and the Down is said to have maybe gone
    pi = Pi([screen(), screen(B_TEXT, cursor=1)])
    said = refused(pi)
    assert pi.sent == [("Down",)]
    assert "typed for this question before: Down" in said and "may have gone to what pi shows now" in said


def test_a_dialog_gone_for_a_frame_is_pi_drawing_one_gone_for_longer_stops_the_answer() -> None:
    # a capture that catches pi halfway through a frame: the new frame's top drawn over the old
    # one, its help line not yet (no dialog read): the next look shows the key's effect, it goes on
    after = screen(cursor=1).splitlines()
    torn = "\n".join([*after[:6], *screen().splitlines()[6:]]).replace("Enter to select", "")
    assert find_dialog(torn) is None
    assert run(Pi([screen(), torn, screen(cursor=1)])) == [("Down",), ("Enter",)]
    # the dialog closed after the Down and stays closed: stopped, the Down said to have maybe gone
    pi = Pi([screen(), "$ "])
    said = refused(pi)
    assert pi.sent == [("Down",)] and "no longer on screen" in said and "may have gone" in said
    # another question's dialog stops it once it stays a frame's time
    pi = Pi([screen(), screen(B_TEXT)])
    assert "does not show this question" in refused(pi) and pi.sent == [("Down",)]
    # a frame half drawn: the dialog's rows and help line drawn, its question's text line not yet
    # (caught in a loaded run): read as no text of this question, looked at again, not a stop
    half = screen(cursor=1).replace("\n Delete the branch?\n", "\n \n", 1)
    assert (drawn := find_dialog(half)) is not None and "Delete the branch?" not in drawn.lines
    assert run(Pi([screen(), half, screen(cursor=1)])) == [("Down",), ("Enter",)]
    # the file has the last word before each key: the dialog seen again after pi recorded an
    # end of its question gets no key
    pi = Pi([screen(), "$ ", screen(cursor=1)], file=[None, "pi has recorded an end of this question"])
    assert "recorded an end" in refused(pi) and pi.sent == [("Down",)]


def test_an_end_recorded_while_the_key_shows_no_effect_stops_the_answer_at_once(
    caplog: pytest.LogCaptureFixture,
) -> None:
    # the user's Enter in the terminal lands with the Down: the screen keeps the dialog as it was
    # before the key (the user's choice not redrawn yet), the file has the question's end. That
    # is said at once, with the Down as maybe gone elsewhere, not after the step's timeout
    caplog.set_level(logging.DEBUG, "notifier.actions.answer")
    pi = Pi([screen()], file=[None, "pi has recorded an end of this question"])
    said = refused(pi)
    assert pi.sent == [("Down",)] and "recorded an end" in said and "may have gone to what pi shows now" in said
    # ``-v`` shows the dialog the driver last saw, whatever stopped it
    stop = [r.getMessage() for r in caplog.records if r.getMessage().startswith("stopped after Down")]
    assert len(stop) == 1 and "Delete the branch?" in stop[0]


def test_a_first_look_caught_mid_frame_is_looked_at_again(tmp_path: Path) -> None:
    """The whole tmux path (the first look, the keys, pi's record read back), its first capture
    taken while pi draws the dialog: looked at again, not refused as no dialog."""
    from notifier.actions.answer import Request, by_keys
    from notifier.config import Config
    from notifier.sessions import OneFileReader, engine_options
    from tests.writer import answer, append, ask, header, user

    f = tmp_path / "s.jsonl"
    append(f, header(), user(), ask("call_A", "Delete the branch?", options=["Keep", "Delete"]))
    options = engine_options(Config())
    reader = OneFileReader(str(f), options.catalog)
    reader.read()
    view = reader.view()
    assert view is not None
    torn = "\n".join(screen().splitlines()[:4])  # (its rows and help line not drawn yet)
    assert find_dialog(torn) is None
    screens = iter([torn, screen(), screen(), screen(cursor=1)])
    last = [torn]
    sent: list[tuple[str, ...]] = []

    def capture() -> str:
        last[0] = next(screens, last[0])
        return last[0]

    def send(step: Step, seen: Seen) -> bool:
        sent.append(step.keys)
        if step.keys == ("Enter",):
            append(f, answer("call_A", "User selected: 2. Delete", details={"answer": "Delete"}))
        return True

    req = Request(options, view, view.pending[0], ["2"], None, 5.0)
    done = by_keys(req, req.judge(), capture, send, "here")
    assert sent == [("Down",), ("Enter",)] and done.outcome == "answered"


def test_a_text_answer_is_refused_before_any_key_where_the_pane_cannot_show_its_input() -> None:
    """The input a text answer opens makes the dialog taller (here 4 rows and its text's): where
    neither the empty rows below pi's last line nor the rows above the dialog take that, the
    question's text would scroll away and no look could bind a key to it; a choice needs no room."""
    from notifier.pi.keys import no_room, plan_for

    def room(above: int, below: int, text: str | None = "DuckDB", width: int = 60) -> str | None:
        rows = ["chat"] * above + screen().replace("─" * 60, "─" * width).splitlines() + [""] * below
        pane = "".join(row + "\n" for row in rows)  # (as tmux captures a pane: a line each)
        found = find_dialog(pane)
        assert found is not None
        return no_room(found, plan_for(found, A, [] if text else ["2"], text), pane)

    top = find_dialog(screen())
    assert top is not None and top.top == 2  # (above its text: pi's tool line and the dialog's rule)
    assert room(3, 0) is None and room(2, 0) is not None  # 5 rows: 4, and the text's 1
    assert room(0, 3) is None and room(1, 2) is None and room(0, 2) is not None
    said = room(0, 0)
    assert said is not None and "too short" in said and "(5 more rows, 2 free)" in said
    assert room(0, 0, text=None) is None  # (a choice opens nothing)
    # a text wraps in the input: 120 characters take 3 lines at 60 columns, 2 at 120
    assert room(5, 0, "x" * 120) is None and room(4, 0, "x" * 120) is not None
    assert room(4, 0, "x" * 120, width=120) is None and room(3, 0, "x" * 120, width=120) is not None
    # a wide character takes two columns
    assert room(5, 0, "字" * 60) is None and room(4, 0, "字" * 60) is not None
    # words wrap whole: three words of 30 letters take 3 lines at 60 columns, not 2
    words = " ".join(c * 30 for c in "abc")
    assert room(5, 0, words) is None and room(4, 0, words) is not None
    # pi's editor shows 5 lines of a long text (30% of a taller pane's rows), scrolling the rest
    assert room(7, 0, "x" * 1000) is None and room(6, 0, "x" * 1000) is not None
    assert "(9 more rows, 2 free)" in (room(0, 0, "x" * 1000) or "")
    assert room(7, 0, "\n".join("x" * 10)) is None and room(6, 0, "\n".join("x" * 10)) is not None
    # ... and a paste of over 1000 characters (UTF-16 units) or 10 lines as a one-line marker
    assert room(3, 0, "x" * 1001) is None and room(2, 0, "x" * 1001) is not None
    assert room(3, 0, "\n".join("x" * 11)) is None and room(3, 0, "😀" * 501) is None


def test_the_file_must_have_the_question_waiting_alone_before_each_key() -> None:
    pi = Pi([screen(), screen(cursor=1)], file=[None, "pi has asked another question since ('Delete the database?')"])
    said = refused(pi)
    assert pi.sent == [("Down",)] and "asked another question" in said and "typed for this question: Down" in said
    pi = Pi([screen()], file=["pi has recorded an end of this question"])
    assert refused(pi).endswith("nothing was typed") and pi.sent == []


def test_a_screen_changed_under_the_carrier_is_looked_at_again() -> None:
    # the carrier found the screen changed by the time of the key (nothing sent): a fresh look decides
    pi = Pi([screen(), screen(B_TEXT)], refuse=1)
    assert refused(pi).endswith("nothing was typed") and pi.sent == []
    pi = Pi([screen(), screen(), screen(cursor=1)], refuse=1)
    assert run(pi) == [("Down",), ("Enter",)]
    # ... and that look caught pi mid-frame, its highlight drawn on no row yet: looked at again
    torn = screen().replace("> 1. Keep", "  1. Keep")
    assert run(Pi([screen(), torn, screen(), screen(cursor=1)], refuse=1)) == [("Down",), ("Enter",)]
    # a screen that keeps changing: given up, nothing typed
    assert "kept changing" in refused(Pi([screen()], refuse=5))


def test_a_cursor_moved_by_someone_else_stops_the_answer() -> None:
    said = refused(Pi([screen(cursor=1)]), "1")
    assert "highlighted row is '2. Delete'" in said and said.endswith("nothing was typed")


def test_bound_is_this_question_in_every_state_answering_puts_it_in() -> None:
    def dialog(s: str):  # type: ignore[no-untyped-def]
        found = find_dialog(s)
        assert found is not None
        return found

    assert bound(dialog(screen()), A, 0) is None
    assert bound(dialog(screen(edit=True, cursor=2)), A, 0) is None  # its editor open on "Type something."
    assert bound(dialog(screen(B_TEXT)), A, 0) == "the dialog on screen does not show this question"
    # A's text as a part of another question's is not A
    assert bound(dialog(screen("Delete the branch? And the tags?")), A, 0) is not None
    other_rows = screen().replace("2. Delete", "2. Remove")
    assert "options" in (bound(dialog(other_rows), A, 0) or "")


def test_the_tmux_condition_is_literal_text() -> None:
    """What binds a key to a look in tmux: each line as literal text (a regular expression and a
    tmux format with every special character escaped: never a format, a command or a pattern)."""
    screen = ["─" * 9, "> 2. Delete", "", " #(touch /tmp/x) a,b} {c} [d] (e)? f*+ ^$ | \\", "   ", "> 2. Delete", "─" * 9]
    cond = showing(screen, range(3, 7))
    assert "#(" not in cond.replace("##(", "")
    assert cond.count("#{C/r:") == 3  # (a blank line is not checked; each distinct line once)
    # where tmux finds each line: the first line that reads so (tmux counts lines from 1)
    assert ",4}" in cond and ",2}" in cond and ",1}" in cond and ",6}" not in cond
    assert r"\#}" in cond and "#," in cond and r"\[d\]" in cond and r"\(e\)\?" in cond and r"f\*\+" in cond
    # a no-break space a tool draws at a line's end (an empty input's cursor cell) is part of the
    # line, which tmux's [[:space:]] does not match; only the capture's padding is cut
    cond = showing(["> 4. [ ] \xa0  ", "  Submit   "], range(2))
    assert "4\\. \\[ \\] \xa0[[:space:]]*$" in cond and "Submit[[:space:]]*$" in cond


def test_a_desktop_answer_for_what_no_longer_waits_is_refused_before_anything() -> None:
    """A click carries the token of what its notification or window showed: once the question
    waiting under that call is not that (or nothing waits), nothing goes anywhere."""
    from notifier.actions.answer import answer_line
    from notifier.config import Config
    from notifier.core.model import SessionRef, SessionView, Snapshot

    view = SessionView(SessionRef("/s/a.jsonl", "sid", "/p", None), "needs_input", (A,), (), True, 1.0)
    shown = question_token(A)
    changed = Question("call_A", "question", (QuestionItem(B_TEXT, options=A.first.options),), 1.0)
    code, said = answer_line(Config(), Snapshot((view,)), "/s/a.jsonl", "call_A", ["2"], None, token=question_token(changed))
    assert code == 1 and "no longer the one shown" in said and "Delete the branch?" in said and shown in said
    # The model gave its next call the same id and the same question (some providers number their
    # calls per turn): the one shown was answered in the terminal, and this one is asked later.
    first = replace(A, asked_at=1_796_000_000.0)
    again = SessionView(view.ref, "needs_input", (replace(first, asked_at=first.asked_at + 4.2),), (), True, 5.2)
    code, said = answer_line(Config(), Snapshot((again,)), "/s/a.jsonl", "call_A", ["2"], None, token=question_token(first))
    assert code == 1 and "no longer the one shown" in said, said


def test_the_file_says_when_pi_has_moved_on(tmp_path: Path) -> None:
    """Before each key: the call must still be unanswered, with no question asked and no other tool
    started after it (pi has not moved on), read from the session file as the engine reads it."""
    import json

    from notifier.actions.answer import AnswerJudge
    from notifier.pi.parse import QuestionCatalog
    from notifier.sessions import EngineOptions

    def line(message: dict[str, object]) -> str:
        return json.dumps({"type": "message", "id": "x", "parentId": None, "timestamp": "2026-12-06T18:00:00.000Z", "message": message}) + "\n"

    def call(call_id: str, name: str, args: dict[str, object]) -> str:
        block = {"type": "toolCall", "id": call_id, "name": name, "arguments": args}
        return line({"role": "assistant", "content": [block], "stopReason": "toolUse", "timestamp": 1})

    ask: dict[str, object] = {"question": "Delete the branch?", "options": [{"label": "Keep"}, {"label": "Delete"}]}
    path = tmp_path / "s.jsonl"
    header = json.dumps({"type": "session", "version": 3, "id": "s", "timestamp": "2026-12-06T18:00:00.000Z", "cwd": "/"})
    options = EngineOptions(roots=[], catalog=QuestionCatalog())
    for later, said in [
        (call("call_B", "question", {**ask, "question": "Delete the database?"}), "asked another question since ('Delete the database?')"),
        (call("call_C", "bash", {"command": "ls"}), "started another tool call since (bash)"),
    ]:
        path.write_text(header + "\n" + call("call_A", "question", ask))
        session = AnswerJudge(options, str(path), "call_A")
        assert session.waits_alone() is None
        with path.open("a") as f:
            f.write(later)
        # (a later message also ends A for the engine: either reason refuses the key)
        assert (session.waits_alone() or "").endswith((said, "pi has recorded an end of this question"))
    path.write_text(header + "\n" + call("call_B", "question", ask))  # (call_A not waiting: nothing followed)
    with pytest.raises(Refused, match="no longer waiting"):
        AnswerJudge(options, str(path), "call_A")
    # Answered in the terminal, then the model gave its next call the same id and the same question
    # (some providers number calls per turn): that is another question, never typed into.
    result = {"role": "toolResult", "toolCallId": "call_A", "toolName": "question", "timestamp": 2,
              "content": [{"type": "text", "text": "User selected: 1. Keep"}]}  # fmt: skip
    path.write_text(header + "\n" + call("call_A", "question", ask))
    session = AnswerJudge(options, str(path), "call_A")
    assert session.waits_alone() is None
    with path.open("a") as f:
        f.write(line(result) + call("call_A", "question", ask))
    assert session.waits_alone() in ("pi has recorded an end of this question",
                                     "pi has asked another question since ('Delete the branch?')")
