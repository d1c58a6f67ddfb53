"""The pending-questions window (Tk): the list on the left, everything about the selected question
on the right, and the actions. It runs in its own process (`pi-notifier show`) and reads
snapshots from a source: the running app over the local channel, or an engine of its own."""

from __future__ import annotations

import logging
import queue
import threading
import time
from collections.abc import Callable
from typing import Any, Protocol

from notifier.core import commands
from notifier.core.commands import Clear, Command, Mute, Snooze
from notifier.core.text import clean
from notifier.core.text import duration as waited
from notifier.ui.view import details_text, is_gate

log = logging.getLogger(__name__)
TITLE = "pi-notifier — pending questions"


class Source(Protocol):
    """Where the window gets its data and sends its commands."""

    def start(self, push: Callable[[dict[str, Any]], None]) -> None: ...

    def command(self, command: Command) -> None: ...

    def close(self) -> None: ...


class Window:
    def __init__(self, source: Source, focus: list[str] | None = None, root: Any = None) -> None:
        import tkinter as tk
        from tkinter import ttk

        self.tk = tk
        self.source = source
        self.inbox: queue.Queue[dict[str, Any]] = queue.Queue()
        self.data: dict[str, Any] = {"questions": []}
        self.rows: dict[str, dict[str, Any]] = {}
        self.focus_key = focus
        self.root = root or tk.Tk(className="pi-notifier")
        self.root.title(TITLE)
        width = min(960, int(self.root.winfo_screenwidth() * 0.8))
        height = min(540, int(self.root.winfo_screenheight() * 0.7))
        self.root.geometry(f"{width}x{height}")
        self.root.minsize(560, 320)
        self._set_icon()
        self.root.protocol("WM_DELETE_WINDOW", self.close)

        top = ttk.Frame(self.root, padding=(10, 8))
        top.pack(fill="x")
        self.heading = ttk.Label(
            top, text="Waiting for the first snapshot…", font=("TkDefaultFont", 11, "bold")
        )
        self.heading.pack(side="left")
        self.status = ttk.Label(top, text="")
        self.status.pack(side="right")

        panes = ttk.PanedWindow(self.root, orient="horizontal")
        panes.pack(fill="both", expand=True, padx=10)
        left = ttk.Frame(panes)
        columns = ("project", "session", "tool", "waited")
        self.tree = ttk.Treeview(left, columns=columns, show="headings", selectmode="browse", height=14)
        for col, label, width in (
            ("project", "Project", 120),
            ("session", "Session", 120),
            ("tool", "Tool", 100),
            ("waited", "Waiting", 80),
        ):
            self.tree.heading(col, text=label)
            self.tree.column(col, width=width, stretch=col != "waited", anchor="w")
        self.tree.tag_configure("abandoned", foreground="#8a6d1d")
        self.tree.pack(fill="both", expand=True)
        panes.add(left, weight=1)
        right = ttk.Frame(panes)
        self.details = tk.Text(
            right, wrap="word", height=14, relief="flat", padx=8, pady=6, font=("TkDefaultFont", 10)
        )
        self.details.tag_configure("title", font=("TkDefaultFont", 12, "bold"))
        self.details.pack(fill="both", expand=True)
        self.details.configure(state="disabled")
        panes.add(right, weight=1)

        self.answer_bar = ttk.Frame(self.root, padding=(10, 4, 10, 0))  # a dialog's answers
        self.answer_bar.pack(fill="x")
        self._answer_key: list[str] | None = None
        buttons = ttk.Frame(self.root, padding=(10, 8))
        buttons.pack(fill="x")
        self.copy_button = ttk.Button(
            buttons, text="Copy resume command", underline=0, command=self.copy_resume
        )
        self.snooze_button = ttk.Button(
            buttons, text="Snooze session 15 min", underline=0, command=self.snooze
        )
        self.project_button = ttk.Button(
            buttons, text="Snooze project 1 h", underline=8, command=self.snooze_project
        )
        self.mute_button = ttk.Button(buttons, text="Mute project", underline=0, command=self.mute)
        self.clear_button = ttk.Button(buttons, text="Clear", underline=1, command=self.clear)
        for b in (
            self.copy_button,
            self.snooze_button,
            self.project_button,
            self.mute_button,
            self.clear_button,
        ):
            b.pack(side="left", padx=(0, 6))
        ttk.Button(buttons, text="Close", command=self.close).pack(side="right")

        self.tree.bind("<<TreeviewSelect>>", lambda e: self._show_selected())
        self.root.bind("<Control-c>", lambda e: self.copy_resume())
        self.root.bind("<Alt-c>", lambda e: self.copy_resume())
        self.root.bind("<Alt-s>", lambda e: self.snooze())
        self.root.bind("<Alt-m>", lambda e: self.mute())
        self.root.bind("<Alt-p>", lambda e: self.snooze_project())
        self.root.bind("<Alt-l>", lambda e: self.clear())
        self.root.bind("<Delete>", lambda e: self.clear())
        self.root.bind("<Escape>", lambda e: self.close())
        self.tree.focus_set()
        self._update_buttons(None)
        self.source.start(self.inbox.put)
        self.root.after(50, self._pump)
        self._panes = panes
        self.root.after(30, self._place_sash)
        self.root.after(1000, self._tick)

    def _place_sash(self, tries: int = 40) -> None:
        """Give the list a bit less than half the width, once the panes have a size."""
        width = self._panes.winfo_width()
        if width > 100:
            self._panes.sashpos(0, int(width * 0.46))  # type: ignore[no-untyped-call]
        elif tries:
            self.root.after(30, lambda: self._place_sash(tries - 1))

    def _set_icon(self) -> None:
        from notifier.resources import app_icon

        path = app_icon()
        if path:
            try:
                self._icon = self.tk.PhotoImage(file=path)
                self.root.iconphoto(True, self._icon)
            except self.tk.TclError:
                pass

    # ---- data ----

    def _pump(self) -> None:
        try:
            while True:
                msg = self.inbox.get_nowait()
                if "window" in msg:
                    self.apply(msg["window"])
                if "focus" in msg:
                    self.raise_(msg.get("focus"))
                if "said" in msg:
                    self.status.configure(text=msg["said"])
                if msg.get("gone"):
                    self.status.configure(text="pi-notifier stopped: this list no longer updates")
        except queue.Empty:
            pass
        self.root.after(100, self._pump)

    def _tick(self) -> None:
        self._refresh_waited()
        self.root.after(1000, self._tick)

    def apply(self, data: dict[str, Any]) -> None:
        self.data = data
        questions = data.get("questions", [])
        selected = self.selected_key()
        want = self.focus_key or selected
        self.rows = {"\x1f".join(q["key"]): q for q in questions}
        self.tree.delete(*self.tree.get_children())
        for q in questions:
            iid = "\x1f".join(q["key"])
            self.tree.insert(
                "", "end", iid=iid, values=self._values(q), tags=("abandoned",) if q["abandoned"] else ()
            )
        live = sum(1 for q in questions if not q["abandoned"])
        gone = len(questions) - live
        text = "No questions waiting" if not live else f"{live} question{'s' if live != 1 else ''} waiting"
        if gone:
            text += f" · {gone} abandoned"
        self.heading.configure(text=text)
        if want and "\x1f".join(want) in self.rows:
            self.select("\x1f".join(want))
            self.focus_key = None
        elif questions:
            self.select(self.tree.get_children()[0])
        else:
            self._show_selected()

    def _values(self, q: dict[str, Any]) -> tuple[str, ...]:
        now = time.time()
        return (
            clean(q["folder"], 40),
            clean(q.get("session_name"), 30) or "—",
            clean(q["tool"], 30),
            waited(now - q["asked_at"]) + (" (abandoned)" if q["abandoned"] else ""),
        )

    def _refresh_waited(self) -> None:
        for iid, q in self.rows.items():
            if self.tree.exists(iid):
                self.tree.item(iid, values=self._values(q))
        self._show_selected(keep_scroll=True)

    def select(self, iid: str) -> None:
        self.tree.selection_set(iid)
        self.tree.focus(iid)
        self.tree.see(iid)
        self._show_selected()

    def selected_key(self) -> list[str] | None:
        sel = self.tree.selection()
        return sel[0].split("\x1f") if sel else None

    def selected(self) -> dict[str, Any] | None:
        sel = self.tree.selection()
        return self.rows.get(sel[0]) if sel else None

    def _show_selected(self, keep_scroll: bool = False) -> None:
        q = self.selected()
        text = (
            details_text(q, time.time())
            if q
            else "Nothing is waiting for you. Questions appear here the moment a pi session asks."
        )
        if self.details_text() == text:
            return
        top = self.details.yview()[0]
        self.details.configure(state="normal")
        self.details.delete("1.0", "end")
        self.details.insert("1.0", text)
        if q:
            self.details.tag_add("title", "1.0", "1.end")
        self.details.configure(state="disabled")
        if keep_scroll:
            self.details.yview_moveto(top)
        self._update_buttons(q)

    def details_text(self) -> str:
        return str(self.details.get("1.0", "end-1c"))

    def _update_buttons(self, q: dict[str, Any] | None) -> None:
        for b in (self.copy_button, self.snooze_button, self.project_button, self.mute_button):
            b.state(["!disabled"] if q else ["disabled"])
        self.clear_button.state(["!disabled"] if q and q["abandoned"] else ["disabled"])
        self._update_answers(q)

    def _update_answers(self, q: dict[str, Any] | None) -> None:
        """Answer buttons for an extension dialog, exactly through its pi's companion extension.
        A gate (or any confirm) has "No" first and as the default; its whole text is in the
        details pane above. An editor, or a question tool's dialog, is answered in the terminal."""
        from tkinter import ttk

        key = q["key"] if q and q.get("kind") == "dialog" and not q["abandoned"] else None
        if key == self._answer_key:
            return
        self._answer_key = key
        for child in self.answer_bar.winfo_children():
            child.destroy()
        if q is None or key is None:
            return
        kind = q.get("dialog")
        options = [o["label"] for o in q["items"][0]["options"]] if q["items"] else []
        if kind == "confirm":
            options = ["Yes", "No"]
        if kind in ("select", "confirm") and options:
            ttk.Label(self.answer_bar, text="Answer:").pack(side="left", padx=(0, 6))
            gate = is_gate(q)
            if gate and "No" in options:
                options = ["No"] + [o for o in options if o != "No"]
            for label in options[:8]:
                value: str | bool = (label == "Yes") if kind == "confirm" else label
                button = ttk.Button(
                    self.answer_bar,
                    text=clean(label, 40),
                    command=lambda v=value, k=key: self.answer(k, q.get("dialog"), v),
                )
                if gate and label == "No":
                    button.configure(default="active")
                button.pack(side="left", padx=(0, 6))
        elif kind == "input":
            entry = ttk.Entry(self.answer_bar, width=40)
            entry.pack(side="left", padx=(0, 6))
            ttk.Button(
                self.answer_bar, text="Send", command=lambda k=key: self.answer(k, "input", entry.get())
            ).pack(side="left")
        else:
            ttk.Label(self.answer_bar, text="Answer this dialog in the terminal.").pack(side="left")

    def answer(self, key: list[str], kind: Any, value: str | bool) -> None:
        """Give ``value`` to the open dialog ``key`` through its pi's extension (off the Tk thread)."""

        def go() -> None:
            self.inbox.put({"said": answer_open_dialog(key[0], key[1], kind, value)})

        self.status.configure(text="Answering…")
        threading.Thread(target=go, name="pi-notifier-answer", daemon=True).start()

    # ---- actions ----

    def copy_resume(self) -> None:
        q = self.selected()
        if not q:
            return
        self.root.clipboard_clear()
        self.root.clipboard_append(q["resume"])
        self.status.configure(text="Resume command copied")

    def snooze(self) -> None:
        q = self.selected()
        if q:
            self.source.command(Snooze(time.time() + 15 * 60, session=q["file"]))
            self.status.configure(text=f"{clean(q['project'], 40)} snoozed for 15 min")

    def snooze_project(self) -> None:
        q = self.selected()
        if q:
            self.source.command(Snooze(time.time() + 3600, project=q["project"]))
            self.status.configure(text=f"{clean(q['project'], 40)} snoozed for 1 hour")

    def mute(self) -> None:
        q = self.selected()
        if q:
            self.source.command(Mute(q["project"], on=True))
            self.status.configure(text=f"{clean(q['project'], 40)} muted (unmute it from the tray menu)")

    def clear(self) -> None:
        q = self.selected()
        if q and q["abandoned"]:
            self.source.command(Clear(q["file"], q["key"][1]))

    def raise_(self, focus: list[str] | None) -> None:
        if focus:
            self.focus_key = focus
            iid = "\x1f".join(focus)
            if iid in self.rows:
                self.select(iid)
                self.focus_key = None
        self.root.deiconify()
        self.root.lift()
        self.root.attributes("-topmost", True)
        self.root.after(200, lambda: self.root.attributes("-topmost", False))
        self.root.focus_force()

    def close(self) -> None:
        try:
            self.source.close()
        finally:
            self.root.destroy()

    def run(self) -> None:
        self.root.mainloop()


def answer_open_dialog(session_file: str, call: str, kind: Any, value: str | bool) -> str:
    """Answer the dialog still open for ``call`` in ``session_file``; what happened, in one line."""
    import os

    from notifier.companion.channel import all_open_dialogs, answer_dialog

    real = os.path.realpath(session_file)
    for sock, d in all_open_dialogs():
        if d.session_file and os.path.realpath(d.session_file) == real and d.kind == kind:
            if (d.tool_call_id or d.id) != call:
                continue
            if isinstance(value, str) and d.options:  # the label shown is the option, sanitized
                value = next((o for o in d.options if clean(o) == value), value)
            result = answer_dialog(sock, d.id, value)
            return (
                f"Answered: {clean(value, 60)}" if result.ok else f"Not answered: {clean(result.error, 120)}"
            )
    return "Not answered: the dialog is no longer open"


class RemoteSource:
    """The running app, over the local channel."""

    def __init__(self) -> None:
        self._stop = threading.Event()

    def start(self, push: Callable[[dict[str, Any]], None]) -> None:
        from notifier.system import ipc

        def listen() -> None:
            for msg in ipc.subscribe({"cmd": "subscribe"}):
                if self._stop.is_set():
                    return
                push(msg)
            push({"gone": True})

        threading.Thread(target=listen, name="pi-notifier-window-feed", daemon=True).start()

    def command(self, command: Command) -> None:
        from notifier.system import ipc

        threading.Thread(target=ipc.request, args=(commands.to_obj(command),), daemon=True).start()

    def close(self) -> None:
        self._stop.set()
