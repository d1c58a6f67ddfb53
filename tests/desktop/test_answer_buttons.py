"""The window offers answer buttons by a question's shape, whatever its tool is called: a
third-party tool's question with options gets them (a click is an Answer bound to the call and
to the question as shown), one without options gets none."""

from __future__ import annotations

import time
from typing import Any

from notifier.core.board import Board
from notifier.core.commands import Answer, Command
from notifier.core.model import question_token
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
            window.root.update()
            widgets = list(window.answer_bar.winfo_children())
            widgets += [c for w in widgets for c in w.winfo_children()]  # (the text field's row)
            return [w for w in widgets if w.winfo_class() == kind]

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
