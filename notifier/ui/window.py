"""The pending-questions window (Tk): the list on the left (``question_list``), everything about the
selected question on the right (``details``), its answers below (``answer_bar``), and the actions.
It runs in its own process (`pi-notifier show`) and reads snapshots from a source (``sources``): the
running app over the local channel, or an engine of its own. It opens in the work area (``placement``)."""

from __future__ import annotations

import queue
import threading
import time
from collections.abc import Callable
from typing import Any

from notifier.core.commands import Answer, Clear, Command, Goto, Mute, Snooze
from notifier.core.text import clean
from notifier.resources import DEMO_SESSION_ID, app_icon
from notifier.ui.answer_bar import AnswerBar
from notifier.ui.details import DetailsPane
from notifier.ui.placement import placement
from notifier.ui.question_list import QuestionList, heading_text, row_id
from notifier.ui.sources import Source, ask_reply
from notifier.ui.view import live, unsnooze

# Lazy imports here: tkinter is optional (python3-tk); only the window process imports it.

TITLE = "pi-notifier — pending questions"


class Window:
    def __init__(self, source: Source, focus: list[str] | None = None, root: Any = None) -> None:
        import tkinter as tk
        from tkinter import font as tkfont
        from tkinter import ttk

        self.tk = tk
        self.source = source
        self.inbox: queue.Queue[dict[str, Any]] = queue.Queue()
        self.rows: dict[str, dict[str, Any]] = {}
        self.focus_key = focus
        self.root = root or tk.Tk(className="pi-notifier")
        self.root.title(TITLE)
        self.root.geometry(placement(self.root))
        self.root.minsize(640, 360)
        self._set_icon()
        self.root.protocol("WM_DELETE_WINDOW", self.close)
        self._font = tkfont.nametofont("TkDefaultFont")
        self._heading_font = tkfont.nametofont("TkHeadingFont")

        top = ttk.Frame(self.root, padding=(10, 8, 10, 4))
        top.pack(fill="x")
        self.heading = ttk.Label(
            top, text="Waiting for the first snapshot…", font=("TkDefaultFont", 11, "bold")
        )
        self.heading.pack(side="left")

        # the status line (what the last action did, or what to do instead): its own full row
        self.status = ttk.Label(self.root, text="", padding=(10, 0, 10, 8), anchor="w", justify="left")
        self.status.pack(side="bottom", fill="x")
        self.status.bind("<Configure>", lambda e: self.status.configure(wraplength=max(200, e.width - 20)))
        buttons = ttk.Frame(self.root, padding=(10, 6, 10, 4))
        buttons.pack(side="bottom", fill="x")
        self.answer_bar = ttk.Frame(self.root, padding=(10, 4, 10, 0))  # the selected question's answers
        self.answer_bar.pack(side="bottom", fill="x")
        self.answers = AnswerBar(self.answer_bar, self.root, self.answer, self.say)

        panes = ttk.PanedWindow(self.root, orient="horizontal")
        panes.pack(fill="both", expand=True, padx=10)
        left = ttk.Frame(panes)
        self.list = QuestionList(left, self._font, self._heading_font)
        self.tree = self.list.tree
        panes.add(left, weight=1)
        right = ttk.Frame(panes)
        self.pane = DetailsPane(right, self.root, self.say)
        self.pane.text.bind("<Configure>", lambda e: self._show_selected(keep_scroll=True))
        panes.add(right, weight=1)

        def button(label: str, underline: int, command: Callable[[], None], key: str) -> ttk.Button:
            """A button along the bottom, also on Alt+``key``."""
            made = ttk.Button(buttons, text=label, underline=underline, command=command)
            made.pack(side="left", padx=(0, 6))
            self.root.bind(f"<Alt-{key}>", lambda e: command())
            return made

        self.goto_button = button("Go to session", 0, self.goto, "g")
        self.copy_button = button("Copy resume command", 0, self.copy_resume, "c")
        self.snooze_button = button("Snooze session 15 min", 0, self.snooze, "s")
        self.project_button = button("Snooze project 1 h", 8, self.snooze_project, "p")
        self.mute_button = button("Mute project", 0, self.mute, "m")
        self.clear_button = button("Clear", 1, self.clear, "l")
        self.goto_button.configure(default="active")
        ttk.Button(buttons, text="Close", command=self.close).pack(side="right")

        self.tree.bind("<<TreeviewSelect>>", lambda e: self._show_selected())
        self.tree.bind("<Return>", lambda e: self.goto())
        self.tree.bind("<Double-1>", lambda e: self.goto())
        self.root.bind("<Control-c>", lambda e: self.copy_resume())
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
        """Give the list the width its columns need (up to 60 % of the window), once the panes
        have a size."""
        width = self._panes.winfo_width()
        if width > 100:
            need = self.list.width_needed()
            self._panes.sashpos(0, max(int(width * 0.4), min(need, int(width * 0.65))))  # type: ignore[no-untyped-call]
        elif tries:
            self.root.after(30, lambda: self._place_sash(tries - 1))

    def _set_icon(self) -> None:
        path = app_icon()
        if path:
            try:
                icon = self.tk.PhotoImage(file=path)
                self.root.iconphoto(True, icon)
            except self.tk.TclError:
                return
            # Tk takes a copy of the image's data ("wm iconphoto"): it is deleted here, on Tk's
            # thread. Kept, it would be deleted whenever this object is collected, maybe on
            # another thread after the main loop ended ("main thread is not in main loop").
            del icon

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
                    self.say(msg["said"])
                if msg.get("answered") is not None:  # an answer came back: a fresh answer bar
                    self.answers.forget()
                    self.answers.update(self.selected())
                if msg.get("gone"):
                    self.say("pi-notifier stopped: this list no longer updates")
        except queue.Empty:
            pass
        self.root.after(100, self._pump)

    def say(self, text: str) -> None:
        self.status.configure(text=clean(text, 600))

    def _tick(self) -> None:
        self.list.refresh(self.rows)
        self._show_selected(keep_scroll=True)
        self.root.after(1000, self._tick)

    def apply(self, data: dict[str, Any]) -> None:
        questions = data.get("questions", [])
        selected = self.selected_key()
        want = self.focus_key or selected
        self.rows = {row_id(q["key"]): q for q in questions}
        if self.list.fill(questions):
            self._place_sash()
        self.heading.configure(text=heading_text(questions, data.get("snoozed_until"), time.time()))
        if want and row_id(want) in self.rows:
            self.select(row_id(want))
            self.focus_key = None
        elif questions:
            self.select(self.tree.get_children()[0])
        else:
            self._show_selected()

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
        self.pane.show(q, keep_scroll)
        self._update_buttons(q)

    def details_text(self) -> str:
        return self.pane.current()

    def _update_buttons(self, q: dict[str, Any] | None) -> None:
        for b in (self.snooze_button, self.project_button, self.mute_button):
            b.state(["!disabled"] if q else ["disabled"])
        demo = q is not None and q.get("session_id") == DEMO_SESSION_ID  # (no pi; its file goes with the demo)
        self.goto_button.state(["!disabled"] if q and not q.get("offline") and not demo else ["disabled"])
        self.copy_button.state(["!disabled"] if q and not live(q) and not demo else ["disabled"])
        self.clear_button.state(["!disabled"] if q and q["abandoned"] else ["disabled"])
        self.snooze_button.configure(text="Unsnooze" if q and unsnooze(q) else "Snooze session 15 min")
        self.answers.update(q)

    # ---- actions ----

    def answer(self, q: dict[str, Any], choices: tuple[str, ...], text: str | None) -> None:
        """Answer ``q`` as ``pi-notifier answer`` does (off the Tk thread); the outcome, or why
        not, in the status line."""
        command = Answer(q["key"][0], q["key"][1], choices, text, q.get("token"))  # (as shown: refused if changed)
        self.answers.disable()
        self.say("Answering…")
        self._ask(command, "Not answered")

    def _ask(self, command: Command, failed: str) -> None:
        """Carry out a Goto or Answer off the Tk thread; what came of it goes to the status line."""

        def go() -> None:
            self.inbox.put(ask_reply(self.source, command, failed))

        threading.Thread(target=go, name="pi-notifier-window-act", daemon=True).start()

    def goto(self) -> None:
        """Go to the selected question's session (its terminal, its tmux pane)."""
        q = self.selected()
        if not q or q.get("offline"):
            return
        self.say(f"Going to {clean(q['project'], 60)}…")
        self._ask(Goto(q["key"][0], q["key"][1]), "Cannot go to the session")

    def copy_resume(self) -> None:
        """The selected session's resume command to the clipboard; where its names cannot be
        shown in a command (control characters…), the clipboard is left alone and the status
        line says why."""
        q = self.selected()
        if not q:
            return
        if not q.get("resume"):
            self.say(str(q.get("resume_refused") or "no resume command is offered for this session"))
            return
        self.root.clipboard_clear()
        self.root.clipboard_append(q["resume"])
        self.say("Resume command copied")

    def snooze(self) -> None:
        q = self.selected()
        if not q:
            return
        lift = unsnooze(q)
        if lift is not None:
            self.source.command(lift)
            self.say(f"{clean(q['project'], 40)}: notifications resumed")
            return
        self.source.command(Snooze(time.time() + 15 * 60, session=q["key"][0]))
        self.say(f"{clean(q['project'], 40)} snoozed for 15 min")

    def snooze_project(self) -> None:
        q = self.selected()
        if q:
            self.source.command(Snooze(time.time() + 3600, project=q["project"]))
            self.say(f"{clean(q['project'], 40)} snoozed for 1 hour")

    def mute(self) -> None:
        q = self.selected()
        if q:
            self.source.command(Mute(q["project"], on=True))
            self.say(f"{clean(q['project'], 40)} muted (unmute it from the tray menu)")

    def clear(self) -> None:
        q = self.selected()
        if q and q["abandoned"]:
            self.source.command(Clear(q["file"], q["key"][1]))

    def raise_(self, focus: list[str] | None) -> None:
        if focus:
            self.focus_key = focus
            iid = row_id(focus)
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
