"""The window's answer bar: what answers the selected question from here, through the same path as
``pi-notifier answer``: an option button (one click answers), check boxes and "Answer" for a
multi-select, one choice per question of a form, a text field for free text. A dialog that gates
something (or any confirm) has "No" first and as the default; its whole text is in the details pane
above. What cannot be answered from here says so (go to the session)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from notifier.core.commands import ANSWERABLE_TOOLS
from notifier.core.text import clean
from notifier.resources import DEMO_SESSION_ID
from notifier.ui.view import is_gate

# Lazy imports here: tkinter is optional (python3-tk); only the window process imports it.

MAX_BUTTONS = 8  # options shown as buttons (the details pane lists them all)

# answer(q, choices, text): carries the answer out (and says so)
AnswerFn = Callable[[dict[str, Any], tuple[str, ...], "str | None"], None]


class AnswerBar:
    def __init__(self, frame: Any, root: Any, answer: AnswerFn, say: Callable[[str], None]) -> None:
        self.frame = frame
        self.root = root
        self.answer = answer
        self.say = say
        self.key: list[str] | None = None  # whose answers are shown
        self.widgets: list[Any] = []

    def disable(self) -> None:
        """While an answer is on its way: nothing more to click."""
        import tkinter as tk

        for w in self.widgets:
            try:
                w.state(["disabled"])
            except tk.TclError:
                pass

    def forget(self) -> None:
        """An answer came back: the next ``update`` builds the bar afresh."""
        self.key = None

    def update(self, q: dict[str, Any] | None) -> None:
        """The answers of ``q`` (kept as they are while the same live question stays selected)."""
        key = q["key"] if q and not q["abandoned"] and not q.get("offline") else None
        if key == self.key:
            return
        self.key = key
        for child in self.frame.winfo_children():
            child.destroy()
        self.widgets = []
        if q is None or key is None:
            return
        if q.get("session_id") == DEMO_SESSION_ID:
            self._label("The demo's recorded question: no pi runs it, so it answers itself (answer real ones here).")
        elif q.get("kind") == "dialog":
            self._dialog_answers(q)
        else:
            self._question_answers(q)

    def _label(self, text: str) -> None:
        from tkinter import ttk

        ttk.Label(self.frame, text=text).pack(side="left", padx=(0, 6))

    def _button(self, parent: Any, text: str, command: Callable[[], None], **pack: Any) -> Any:
        from tkinter import ttk

        button = ttk.Button(parent, text=clean(text, 40), command=command)
        button.pack(side="left", padx=(0, 6), **pack)
        self.widgets.append(button)
        return button

    def _text_field(self, parent: Any, q: dict[str, Any], label: str) -> None:
        from tkinter import ttk

        ttk.Label(parent, text=label).pack(side="left", padx=(0, 6))
        entry = ttk.Entry(parent, width=36)
        entry.pack(side="left", padx=(0, 6))
        entry.bind("<Return>", lambda e: self._send_text(q, entry.get()))
        self.widgets.append(entry)
        self._button(parent, "Send", lambda: self._send_text(q, entry.get()))

    def _send_text(self, q: dict[str, Any], text: str) -> None:
        if not text.strip():
            self.say("Type the answer first")
            return
        self.answer(q, (), text)

    def _answers(self, q: dict[str, Any], choice: str) -> Callable[[], None]:
        """A button's action: answer ``q`` with ``choice``."""
        return lambda: self.answer(q, (choice,), None)

    def _dialog_answers(self, q: dict[str, Any]) -> None:
        kind = q.get("dialog")
        options = [o["label"] for o in q["items"][0]["options"]] if q["items"] else []
        if kind == "confirm":
            choices = [("Yes", "yes"), ("No", "no")]
        else:
            choices = [(label, f"#{n}") for n, label in enumerate(options, 1)]
        if kind in ("select", "confirm") and choices:
            self._label("Answer:")
            gate = is_gate(q)
            if gate:
                choices = [c for c in choices if c[0] == "No"] + [c for c in choices if c[0] != "No"]
            for label, choice in choices[:MAX_BUTTONS]:
                button = self._button(self.frame, label, self._answers(q, choice))
                if gate and label == "No":
                    button.configure(default="active")
        elif kind == "input":
            self._text_field(self.frame, q, "Answer:")
        else:
            self._label("Answer this dialog in the terminal (Go to session).")

    def _question_answers(self, q: dict[str, Any]) -> None:
        from tkinter import ttk

        items = q["items"]
        if q.get("tool") not in ANSWERABLE_TOOLS:
            self._label(f"{clean(q['tool'], 40)} is answered in the terminal (Go to session).")
            return
        if len(items) == 1:
            item = items[0]
            labels = [o["label"] for o in item["options"]]
            if labels and item.get("multi"):
                self._multi(q, labels)
            elif labels:
                self._label("Answer:")
                for n, label in enumerate(labels[:MAX_BUTTONS], 1):
                    self._button(self.frame, label or f"({n})", self._answers(q, f"#{n}"))
            row = ttk.Frame(self.frame)
            row.pack(side="left", padx=(12, 0))
            self._text_field(row, q, "Other:" if labels else "Answer:")
            return
        # a form of several questions: one answer each, in order
        if any(it.get("multi") or not it["options"] for it in items):
            self._label(
                "A form with multi-select or free-text questions: answer it in the terminal (Go to session)."
            )
            return
        self._form(q, items)

    def _multi(self, q: dict[str, Any], labels: list[str]) -> None:
        import tkinter as tk
        from tkinter import ttk

        self._label("Pick:")
        picked: list[Any] = []
        for label in labels[:MAX_BUTTONS]:
            var = tk.BooleanVar(master=self.root, value=False)
            box = ttk.Checkbutton(self.frame, text=clean(label, 40), variable=var)
            box.pack(side="left", padx=(0, 6))
            self.widgets.append(box)
            picked.append(var)

        def chosen() -> None:
            choices = tuple(f"#{n}" for n, v in enumerate(picked, 1) if v.get())
            if not choices:
                self.say("Pick at least one answer first")
                return
            self.answer(q, choices, None)

        self._button(self.frame, "Answer", chosen)

    def _form(self, q: dict[str, Any], items: list[dict[str, Any]]) -> None:
        from tkinter import ttk

        self._label("Answers, in order:")
        combos: list[Any] = []
        for item in items:
            values = [clean(o["label"], 40) for o in item["options"]]
            combo = ttk.Combobox(
                self.frame,
                values=values,
                state="readonly",
                width=min(24, max(len(v) for v in values) + 2),
            )
            combo.pack(side="left", padx=(0, 6))
            self.widgets.append(combo)
            combos.append(combo)

        def form() -> None:
            if any(c.current() < 0 for c in combos):
                self.say("Choose an answer for every question first")
                return
            self.answer(q, tuple(f"#{c.current() + 1}" for c in combos), None)

        self._button(self.frame, "Answer all", form)
