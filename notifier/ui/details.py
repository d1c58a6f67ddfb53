"""The window's details pane: everything about the selected question (``view.details_text``), its
folder and session paths marked: hover shows the whole path, a click copies it."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

from notifier.core.text import clean
from notifier.ui.view import details_text

# Lazy imports here: tkinter is optional (python3-tk); only the window process imports it.

NOTHING = "Nothing is waiting for you. Questions appear here the moment a pi session asks."


class DetailsPane:
    def __init__(self, parent: Any, root: Any, say: Callable[[str], None]) -> None:
        import tkinter as tk
        from tkinter import font as tkfont

        self.root = root
        self.say = say
        self.text = tk.Text(
            parent, wrap="word", height=14, relief="flat", padx=8, pady=6, font=("TkDefaultFont", 10)
        )
        self.text.tag_configure("title", font=("TkDefaultFont", 12, "bold"))
        self._font = tkfont.Font(root=root, font=self.text.cget("font"))
        self.text.tag_configure("path", foreground="#1d4f8a")
        self.text.tag_bind("path", "<Enter>", lambda e: self._path_event(e, copy=False))
        self.text.tag_bind("path", "<Button-1>", lambda e: self._path_event(e, copy=True))
        self.text.pack(fill="both", expand=True)
        self.text.configure(state="disabled")
        self._paths: dict[str, str] = {}  # details line prefix ("Folder:", "Session:") → full path

    def _chars(self) -> int:
        """How many characters a line of the details pane holds (0 before it has a size)."""
        width = self.text.winfo_width()
        return (width - 24) // max(1, self._font.measure("0")) if width > 50 else 0

    def current(self) -> str:
        return str(self.text.get("1.0", "end-1c"))

    def show(self, q: dict[str, Any] | None, keep_scroll: bool = False) -> None:
        """Show ``q`` (or that nothing waits); nothing is redrawn when the text is the same."""
        text = details_text(q, time.time(), self._chars()) if q else NOTHING
        if self.current() == text:
            return
        top = self.text.yview()[0]
        self.text.configure(state="normal")
        self.text.delete("1.0", "end")
        self.text.insert("1.0", text)
        self._paths = {}
        if q:
            self.text.tag_add("title", "1.0", "1.end")
            for prefix, path in (("Folder:  ", q.get("cwd")), ("Session: ", q.get("file"))):
                at = self.text.search(prefix, "1.0", stopindex="end")
                if at and path:
                    line = at.split(".")[0]
                    self.text.tag_add("path", f"{line}.{len(prefix)}", f"{line}.end")
                    self._paths[line] = clean(path)
        self.text.configure(state="disabled")
        if keep_scroll:
            self.text.yview_moveto(top)

    def _path_event(self, event: Any, copy: bool) -> None:
        """Hover over a (shortened) path: the whole path in the status line; a click copies it."""
        line = self.text.index(f"@{event.x},{event.y}").split(".")[0]
        path = self._paths.get(line)
        if not path:
            return
        if copy:
            self.root.clipboard_clear()
            self.root.clipboard_append(path)
            self.say(f"Copied: {path}")
        else:
            self.say(path)
