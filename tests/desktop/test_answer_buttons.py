"""The window offers answer buttons by a question's shape, whatever its tool is called: a
third-party tool's question with options gets them (a click is an Answer bound to the call and
to the question as shown), one without options gets none."""

from __future__ import annotations

import time
from typing import Any

from notifier.core.board import Board
from notifier.core.codec import question_token
from notifier.core.commands import Answer, Command
from notifier.core.reducer import Header, ToolStart
from notifier.pi.parse import extract
from notifier.window.view import row_id, window_obj

from ..conftest import wait_for
from .conftest import require


class Source:
    """Feeds the window one window object; records the commands it sends and asks."""

    def __init__(self, data: dict[str, Any]) -> None:
        self.data = data
        self.commands: list[Command] = []

    def start(self, push: Any) -> None:
        push({"window": self.data})

    def command(self, command: Command) -> None:
        self.commands.append(command)

    def ask(self, command: Command) -> dict[str, Any]:
        self.commands.append(command)
        return {"ok": True, "said": "recorded"}

    def close(self) -> None:
        pass


def bar_widgets(window: Any, kind: str) -> list[Any]:
    """The answer bar's widgets of one Tk class (``TButton``…), the text field's row included."""
    window.root.update()
    found = list(window.answer_bar.winfo_children())
    found += [c for w in found for c in w.winfo_children()]
    return [w for w in found if w.winfo_class() == kind]


def press_button(window: Any, label: str) -> None:
    """Click the answer bar's one button that says ``label``."""
    (button,) = [w for w in bar_widgets(window, "TButton") if str(w.cget("text")) == label]
    button.invoke()
    window.root.update()


def test_a_third_party_question_with_options_gets_answer_buttons(desktop: dict[str, str]) -> None:
    require("tkinter")
    from notifier.window.window import Window

    now = time.time()
    b = Board(liveness=False)
    asks = {
        ("/s/clarify.jsonl", "c1", "clarify_prompt"): {"question": "Which database?", "options": ["SQLite", "Postgres"]},
        ("/s/mcp.jsonl", "c2", "mcp__team__ask"): {"prompt": "Ship it?", "choices": [{"label": "Yes"}, {"label": "No"}]},
        ("/s/bare.jsonl", "c3", "ask_user"): {"question": "What should the release be called?"},
        ("/s/chat.jsonl", "c4", "ask_human"): {"question": "May I deploy?", "options": ["Yes", "No"]},
    }
    questions = {}
    for (file, call, tool), args in asks.items():
        q = extract(tool, args, call, now - 5, elsewhere=tool == "ask_human")
        questions[call] = q
        b.local.apply(file, [Header(f"id-{call}", "/home/dev/shop"), ToolStart(now - 5, call, tool, q)], now)
    source = Source(window_obj(b.snapshot(now)))
    window = Window(source, focus=["/s/clarify.jsonl", "c1"])
    try:
        wait_for(lambda: (window.root.update(), window.tree.get_children())[1], 10, "rows")

        def bar(kind: str) -> dict[str, Any]:
            window.root.update()
            return {str(w.cget("text")): w for w in window.answer_bar.winfo_children() if w.winfo_class() == kind}

        def deep(kind: str) -> list[Any]:
            return bar_widgets(window, kind)

        def shown(file: str, call: str) -> None:
            window.select(row_id([file, call]))

        assert list(bar("TButton")) == ["SQLite", "Postgres"]
        bar("TButton")["Postgres"].invoke()
        sent = wait_for(lambda: [c for c in source.commands if isinstance(c, Answer)], 10, "the answer")
        assert sent[0].call == "c1" and sent[0].choices == ("#2",)
        assert sent[0].token == question_token(questions["c1"])  # (refused where what waits changed)

        shown("/s/mcp.jsonl", "c2")
        assert list(bar("TButton")) == ["Yes", "No"]
        shown("/s/bare.jsonl", "c3")  # no options: nothing to press, a text field for its free-text row
        assert list(bar("TButton")) == [] and "Answer:" in [str(w.cget("text")) for w in deep("TLabel")]
        shown("/s/chat.jsonl", "c4")  # answered where it was sent (a chat): neither
        assert list(bar("TButton")) == [] and not deep("TEntry")
        assert any("answered in the terminal" in text for text in bar("TLabel"))
    finally:
        window.root.destroy()


def test_a_multi_select_a_form_and_a_text_answer_are_sent_only_once_something_is_chosen(
    desktop: dict[str, str],
) -> None:
    """A multi-select question gets boxes and one Answer button, a form of several questions one
    list each and Answer all, a free-text answer a field and Send: pressed with nothing chosen
    or typed, each says so in the status line and sends nothing; then the answer as chosen."""
    require("tkinter")
    from notifier.core.model import Option, Question, QuestionItem
    from notifier.window.window import Window

    now = time.time()
    opts = (Option("red"), Option("green"), Option("blue"))
    asks = {
        "c1": (QuestionItem("Which colours?", options=opts, multi=True),),
        "c2": (QuestionItem("Size?", options=(Option("S"), Option("M"))), QuestionItem("Colour?", options=opts)),
    }
    b = Board(liveness=False)
    for call, items in asks.items():
        q = Question(call, "question" if len(items) == 1 else "questionnaire", items, now - 5)
        b.local.apply(f"/s/{call}.jsonl", [Header(f"id-{call}", "/home/dev/shop"), ToolStart(now - 5, call, q.tool, q)], now)
    source = Source(window_obj(b.snapshot(now)))
    window = Window(source, focus=["/s/c1.jsonl", "c1"])
    try:
        wait_for(lambda: (window.root.update(), window.tree.get_children())[1], 10, "rows")

        def widgets(kind: str) -> list[Any]:
            return bar_widgets(window, kind)

        def press(label: str) -> None:
            press_button(window, label)

        def answers() -> list[Answer]:
            return [c for c in source.commands if isinstance(c, Answer)]

        assert [str(w.cget("text")) for w in widgets("TCheckbutton")] == ["red", "green", "blue"]
        press("Answer")
        assert window.status.cget("text") == "Pick at least one answer first" and not answers()
        press("Send")
        assert window.status.cget("text") == "Type the answer first" and not answers()
        boxes = widgets("TCheckbutton")
        boxes[0].invoke()
        boxes[2].invoke()
        press("Answer")
        sent = wait_for(answers, 10, "the multi-select answer")
        assert (sent[0].call, sent[0].choices, sent[0].text) == ("c1", ("#1", "#3"), None)

        window.answers.forget()
        window.select(row_id(["/s/c1.jsonl", "c1"]))
        (entry,) = widgets("TEntry")
        entry.insert(0, "teal")
        press("Send")
        sent = wait_for(lambda: answers()[1:], 10, "the typed answer")
        assert (sent[0].choices, sent[0].text) == ((), "teal")

        window.select(row_id(["/s/c2.jsonl", "c2"]))
        size, colour = widgets("TCombobox")
        size.current(1)
        press("Answer all")
        assert window.status.cget("text") == "Choose an answer for every question first" and len(answers()) == 2
        colour.current(2)
        press("Answer all")
        sent = wait_for(lambda: answers()[2:], 10, "the form's answers")
        assert (sent[0].call, sent[0].choices) == ("c2", ("#2", "#3"))
    finally:
        window.root.destroy()


def test_a_refused_answer_leaves_the_bar_as_the_user_left_it(desktop: dict[str, str]) -> None:
    """An answer refused (pi shows something else, the question changed…) says why, and the boxes
    ticked and the text typed stay, usable, to send again; an answer accepted gets a fresh bar."""
    require("tkinter")
    from notifier.core.model import Option, Question, QuestionItem
    from notifier.window.window import Window

    now = time.time()
    opts = (Option("red"), Option("green"), Option("blue"))
    q = Question("c1", "question", (QuestionItem("Which colours?", options=opts, multi=True),), now - 5)
    b = Board(liveness=False)
    b.local.apply("/s/c1.jsonl", [Header("id-c1", "/home/dev/shop"), ToolStart(now - 5, "c1", q.tool, q)], now)
    replies: list[dict[str, Any]] = [{"ok": False, "said": "pi shows another question"}, {"ok": True, "said": "answered"}]

    class Refusing(Source):
        def ask(self, command: Command) -> dict[str, Any]:
            self.commands.append(command)
            return replies.pop(0)

    source = Refusing(window_obj(b.snapshot(now)))
    window = Window(source, focus=["/s/c1.jsonl", "c1"])
    try:
        wait_for(lambda: (window.root.update(), window.tree.get_children())[1], 10, "rows")

        def said() -> str:
            window.root.update()
            return str(window.status.cget("text"))

        boxes = bar_widgets(window, "TCheckbutton")
        boxes[0].invoke()
        boxes[2].invoke()
        (entry,) = bar_widgets(window, "TEntry")
        entry.insert(0, "teal")
        press_button(window, "Answer")
        wait_for(lambda: "Not answered: pi shows another question" in said(), 10, "the refusal said")
        boxes = bar_widgets(window, "TCheckbutton")
        assert [b.instate(["selected"]) for b in boxes] == [True, False, True]
        assert all(w.instate(["!disabled"]) for w in boxes + bar_widgets(window, "TButton") + bar_widgets(window, "TEntry"))
        assert bar_widgets(window, "TEntry")[0].get() == "teal"
        press_button(window, "Answer")
        wait_for(lambda: "Answered" in said(), 10, "the second answer")
        assert [c.choices for c in source.commands if isinstance(c, Answer)] == [("#1", "#3"), ("#1", "#3")]
        assert [b.instate(["selected"]) for b in bar_widgets(window, "TCheckbutton")] == [False, False, False]
    finally:
        window.root.destroy()


def test_a_question_asked_again_under_the_same_call_gets_a_fresh_bar(desktop: dict[str, str]) -> None:
    """A provider that numbers its calls per turn asks another question under the call id of the
    one shown: the bar is built afresh for it, so an answer goes with the question as shown now
    (a refused answer kept the old bar, and every retry was refused for the old token)."""
    require("tkinter")
    from notifier.core.model import Option, Question, QuestionItem
    from notifier.window.view import Shown
    from notifier.window.window import Window

    now = time.time()
    ref_file = "/s/c1.jsonl"

    def board(text: str) -> dict[str, Any]:
        q = Question("call_0", "question", (QuestionItem(text, options=(Option("Yes"), Option("No"))),), now - 5)
        b = Board(liveness=False)
        b.local.apply(ref_file, [Header("id-c1", "/home/dev/shop"), ToolStart(now - 5, "call_0", q.tool, q)], now)
        return window_obj(b.snapshot(now))

    first, second = board("Deploy to staging?"), board("Deploy to production?")
    pushed: list[Any] = []

    class Pushing(Source):
        def start(self, push: Any) -> None:
            pushed.append(push)
            push({"window": self.data})

    source = Pushing(first)
    window = Window(source, focus=[ref_file, "call_0"])
    try:
        wait_for(lambda: (window.root.update(), window.tree.get_children())[1], 10, "rows")
        assert [str(w.cget("text")) for w in bar_widgets(window, "TButton")][:2] == ["Yes", "No"]
        pushed[0]({"window": second})  # (the same call, another question)
        wait_for(lambda: (window.root.update(), "production" in window.pane.current())[1], 10, "the new question shown")
        press_button(window, "Yes")
        sent = wait_for(lambda: [c for c in source.commands if isinstance(c, Answer)], 10, "the answer")
        new = next(Shown.from_obj(o) for o in second["questions"])
        assert sent[0].token == new.token and new.token != next(Shown.from_obj(o) for o in first["questions"]).token
    finally:
        window.root.destroy()


def test_every_option_can_be_answered_and_each_reads_as_the_one_it_answers(desktop: dict[str, str]) -> None:
    """More options than buttons fit: one list of them all (a single choice) or one menu of
    boxes (a multi-select), each option reachable; options whose labels would read the same on
    their buttons say which they are."""
    require("tkinter")
    from notifier.core.model import Option, Question, QuestionItem
    from notifier.window.view import option_labels
    from notifier.window.window import MAX_BUTTONS, Window

    now = time.time()
    ports = tuple(Option(f"Port {8000 + n}") for n in range(1, MAX_BUTTONS + 3))
    long = "Use the PostgreSQL database on the staging server for all integration tests"
    alike = (Option(f"{long} (recommended)"), Option(f"{long} (fallback)"), Option("Keep"))
    asks = {
        "c1": QuestionItem("Which port?", options=ports),
        "c2": QuestionItem("Which ports?", options=ports, multi=True),
        "c3": QuestionItem("Which database?", options=alike),
        "c4": QuestionItem("Delete?", options=(Option("Delete all"), Option("Delete\u200b all"), Option("Keep"))),
    }
    b = Board(liveness=False)
    for call, item in asks.items():
        q = Question(call, "question", (item,), now - 5)
        b.local.apply(f"/s/{call}.jsonl", [Header(f"id-{call}", "/home/dev/shop"), ToolStart(now - 5, call, q.tool, q)], now)
    source = Source(window_obj(b.snapshot(now)))
    window = Window(source, focus=["/s/c1.jsonl", "c1"])
    try:
        wait_for(lambda: (window.root.update(), window.tree.get_children())[1], 10, "rows")

        def widgets(kind: str) -> list[Any]:
            window.root.update()
            return [w for w in window.answer_bar.winfo_children() if w.winfo_class() == kind]

        def press(label: str) -> None:
            (button,) = [w for w in widgets("TButton") if str(w.cget("text")) == label]
            button.invoke()
            window.root.update()

        def answers() -> list[Answer]:
            return [c for c in source.commands if isinstance(c, Answer)]

        (listed,) = widgets("TCombobox")
        assert list(listed.cget("values")) == [o.label for o in ports]
        listed.current(len(ports) - 1)
        press("Answer")
        sent = wait_for(answers, 10, "the answer")
        assert (sent[0].call, sent[0].choices) == ("c1", (f"#{len(ports)}",))

        window.select(row_id(["/s/c2.jsonl", "c2"]))
        (opener,) = widgets("TMenubutton")
        menu = window.root.nametowidget(opener.cget("menu"))
        assert [menu.entrycget(n, "label") for n in range(len(ports))] == [o.label for o in ports]
        menu.invoke(0)
        menu.invoke(len(ports) - 1)
        press("Answer")
        sent = wait_for(lambda: answers()[1:], 10, "the multi-select answer")
        assert (sent[0].call, sent[0].choices) == ("c2", ("#1", f"#{len(ports)}"))

        # labels too long for buttons beside the free-text field: one list, each entry distinct
        window.select(row_id(["/s/c3.jsonl", "c3"]))
        (listed,) = widgets("TCombobox")
        shown = list(listed.cget("values"))
        assert shown == option_labels([o.label for o in alike]) and len(set(shown)) == 3
        assert shown[1].endswith("(fallback)") and not [w for w in widgets("TButton") if "PostgreSQL" in str(w.cget("text"))]
        listed.current(1)
        press("Answer")
        sent = wait_for(lambda: answers()[2:], 10, "the look-alike's answer")
        assert (sent[0].call, sent[0].choices) == ("c3", ("#2",))

        # short labels alike but for what is not seen: buttons saying their numbers
        window.select(row_id(["/s/c4.jsonl", "c4"]))
        shown = [str(w.cget("text")) for w in widgets("TButton")]
        assert shown[:3] == ["1. Delete all", "2. Delete all", "Keep"]
        press("2. Delete all")
        sent = wait_for(lambda: answers()[3:], 10, "the look-alike's answer")
        assert (sent[0].call, sent[0].choices) == ("c4", ("#2",))
    finally:
        window.root.destroy()
