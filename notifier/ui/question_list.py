"""The window's list of questions (a Tk tree view): its columns, each as wide as its widest cell, and
the marks of abandoned and snoozed questions."""

from __future__ import annotations

import time
from typing import Any

from notifier.core.text import clean
from notifier.core.text import duration as waited
from notifier.ui.view import where_text

# Lazy imports here: tkinter is optional (python3-tk); only the window process imports it.

COLUMNS = ("project", "session", "tool", "waited", "where")
HEADINGS = ("Project", "Session", "Tool", "Waiting", "Where")
COLUMN_MAX = {"project": 220, "session": 220, "tool": 200, "waited": 200, "where": 240}


def heading_text(questions: list[dict[str, Any]], snoozed_until: float | None, now: float) -> str:
    """The line above the list: how many questions wait, how many were abandoned, the snooze."""
    live_n = sum(1 for q in questions if not q["abandoned"])
    gone = len(questions) - live_n
    text = "No questions waiting" if not live_n else f"{live_n} question{'s' if live_n != 1 else ''} waiting"
    if gone:
        text += f" · {gone} abandoned"
    if snoozed_until and snoozed_until > now:
        text += f" · all snoozed for {waited(snoozed_until - now)}"
    return text


def row_id(key: list[str]) -> str:
    """A question's row in the tree: its key (session file, tool call) joined."""
    return "\x1f".join(key)


class QuestionList:
    def __init__(self, parent: Any, font: Any, heading_font: Any) -> None:
        from tkinter import ttk

        self._font = font
        self._heading_font = heading_font
        self.tree = ttk.Treeview(parent, columns=COLUMNS, show="headings", selectmode="browse", height=14)
        for col, label in zip(COLUMNS, HEADINGS, strict=True):
            self.tree.heading(col, text=label)
            self.tree.column(col, width=heading_font.measure(label) + 24, stretch=False, anchor="w")
        self.tree.column(COLUMNS[-1], stretch=True)
        self.tree.tag_configure("abandoned", foreground="#8a6d1d")
        self.tree.tag_configure("snoozed", foreground="#6b6b6b")
        scroll_x = ttk.Scrollbar(parent, orient="horizontal", command=self.tree.xview)
        self.tree.configure(xscrollcommand=scroll_x.set)
        scroll_x.pack(side="bottom", fill="x")
        self.tree.pack(fill="both", expand=True)

    def fill(self, questions: list[dict[str, Any]]) -> bool:
        """Show these questions (in order); True when a column's width changed."""
        self.tree.delete(*self.tree.get_children())
        for q in questions:
            self.tree.insert("", "end", iid=row_id(q["key"]), values=self.values(q), tags=self.tags(q))
        return self.size_columns()

    def refresh(self, rows: dict[str, dict[str, Any]]) -> None:
        """The rows' cells again (how long each has waited)."""
        for iid, q in rows.items():
            if self.tree.exists(iid):
                self.tree.item(iid, values=self.values(q))

    def width_needed(self) -> int:
        return sum(int(self.tree.column(c, "width")) for c in COLUMNS) + 4

    @staticmethod
    def tags(q: dict[str, Any]) -> tuple[str, ...]:
        if q["abandoned"]:
            return ("abandoned",)
        return ("snoozed",) if q.get("snoozed_until") else ()

    @staticmethod
    def values(q: dict[str, Any]) -> tuple[str, ...]:
        now = time.time()
        state = " (abandoned)" if q["abandoned"] else " (offline)" if q.get("offline") else ""
        if not state and q.get("snoozed_until") and q["snoozed_until"] > now:
            state = " · snoozed"
        return (
            clean(q["project"] if q.get("host") else q["folder"], 40),
            clean(q.get("session_name"), 30) or clean(q.get("short_id"), 8) or "—",
            clean(q["tool"], 30),
            waited(now - q["asked_at"]) + state,
            where_text(q) or "—",
        )

    def size_columns(self) -> bool:
        """Each column as wide as its widest cell (within limits), so nothing is clipped; True
        when a width changed."""
        changed = False
        for n, (col, label) in enumerate(zip(COLUMNS, HEADINGS, strict=True)):
            cells = [self.tree.item(i, "values")[n] for i in self.tree.get_children()]
            widest = max([self._font.measure(str(c)) for c in cells] + [self._heading_font.measure(label)])
            width = min(COLUMN_MAX[col], widest + 24)
            if int(self.tree.column(col, "width")) != width:
                self.tree.column(col, width=width, minwidth=40)
                changed = True
        return changed
