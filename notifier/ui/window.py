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
from notifier.core.commands import ANSWERABLE_TOOLS, Answer, Clear, Command, Goto, Mute, Snooze
from notifier.core.text import clean
from notifier.core.text import duration as waited
from notifier.ui.view import details_text, is_gate, live, unsnooze, where_text

log = logging.getLogger(__name__)
TITLE = "pi-notifier — pending questions"
COLUMNS = ("project", "session", "tool", "waited", "where")
HEADINGS = ("Project", "Session", "Tool", "Waiting", "Where")
COLUMN_MAX = {"project": 220, "session": 220, "tool": 200, "waited": 200, "where": 240}
ASK_TIMEOUT_S = 60.0  # an answer is confirmed from the session file within its own deadline
MAX_BUTTONS = 8  # options shown as buttons (the details pane lists them all)


class Source(Protocol):
    """Where the window gets its data and sends its commands."""

    def start(self, push: Callable[[dict[str, Any]], None]) -> None: ...

    def command(self, command: Command) -> None: ...

    def close(self) -> None: ...

    # Optional: ``ask(command)`` carries out a Goto or Answer and returns the reply
    # (``{"ok", "said"}``; None: nobody answered); blocking, called off the Tk thread.


class Window:
    def __init__(self, source: Source, focus: list[str] | None = None, root: Any = None) -> None:
        import tkinter as tk
        from tkinter import font as tkfont
        from tkinter import ttk

        self.tk = tk
        self.source = source
        self.inbox: queue.Queue[dict[str, Any]] = queue.Queue()
        self.data: dict[str, Any] = {"questions": []}
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
        self._answer_key: list[str] | None = None
        self._answer_widgets: list[Any] = []

        panes = ttk.PanedWindow(self.root, orient="horizontal")
        panes.pack(fill="both", expand=True, padx=10)
        left = ttk.Frame(panes)
        self.tree = ttk.Treeview(left, columns=COLUMNS, show="headings", selectmode="browse", height=14)
        for col, label in zip(COLUMNS, HEADINGS, strict=True):
            self.tree.heading(col, text=label)
            self.tree.column(col, width=self._heading_font.measure(label) + 24, stretch=False, anchor="w")
        self.tree.column(COLUMNS[-1], stretch=True)
        self.tree.tag_configure("abandoned", foreground="#8a6d1d")
        self.tree.tag_configure("snoozed", foreground="#6b6b6b")
        scroll_x = ttk.Scrollbar(left, orient="horizontal", command=self.tree.xview)
        self.tree.configure(xscrollcommand=scroll_x.set)
        scroll_x.pack(side="bottom", fill="x")
        self.tree.pack(fill="both", expand=True)
        panes.add(left, weight=1)
        right = ttk.Frame(panes)
        self.details = tk.Text(
            right, wrap="word", height=14, relief="flat", padx=8, pady=6, font=("TkDefaultFont", 10)
        )
        self.details.tag_configure("title", font=("TkDefaultFont", 12, "bold"))
        self._details_font = tkfont.Font(root=self.root, font=self.details.cget("font"))
        self.details.tag_configure("path", foreground="#1d4f8a")
        self.details.tag_bind("path", "<Enter>", lambda e: self._path_event(e, copy=False))
        self.details.tag_bind("path", "<Button-1>", lambda e: self._path_event(e, copy=True))
        self.details.pack(fill="both", expand=True)
        self.details.configure(state="disabled")
        self.details.bind("<Configure>", lambda e: self._show_selected(keep_scroll=True))
        self._paths: dict[str, str] = {}  # details line prefix ("Folder:", "Session:") → full path
        panes.add(right, weight=1)

        self.goto_button = ttk.Button(buttons, text="Go to session", underline=0, command=self.goto)
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
            self.goto_button,
            self.copy_button,
            self.snooze_button,
            self.project_button,
            self.mute_button,
            self.clear_button,
        ):
            b.pack(side="left", padx=(0, 6))
        self.goto_button.configure(default="active")
        ttk.Button(buttons, text="Close", command=self.close).pack(side="right")

        self.tree.bind("<<TreeviewSelect>>", lambda e: self._show_selected())
        self.tree.bind("<Return>", lambda e: self.goto())
        self.tree.bind("<Double-1>", lambda e: self.goto())
        self.root.bind("<Control-c>", lambda e: self.copy_resume())
        self.root.bind("<Alt-g>", lambda e: self.goto())
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
        """Give the list the width its columns need (up to 60 % of the window), once the panes
        have a size."""
        width = self._panes.winfo_width()
        if width > 100:
            need = sum(int(self.tree.column(c, "width")) for c in COLUMNS) + 4
            self._panes.sashpos(0, max(int(width * 0.4), min(need, int(width * 0.65))))  # type: ignore[no-untyped-call]
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
                    self.say(msg["said"])
                if msg.get("answered") is not None:  # an answer came back: a fresh answer bar
                    self._answer_key = None
                    self._update_answers(self.selected())
                if msg.get("gone"):
                    self.say("pi-notifier stopped: this list no longer updates")
        except queue.Empty:
            pass
        self.root.after(100, self._pump)

    def say(self, text: str) -> None:
        self.status.configure(text=clean(text, 600))

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
            self.tree.insert("", "end", iid=iid, values=self._values(q), tags=self._tags(q))
        if self._size_columns():
            self._place_sash()
        live_n = sum(1 for q in questions if not q["abandoned"])
        gone = len(questions) - live_n
        text = (
            "No questions waiting" if not live_n else f"{live_n} question{'s' if live_n != 1 else ''} waiting"
        )
        if gone:
            text += f" · {gone} abandoned"
        until = data.get("snoozed_until")
        if until and until > time.time():
            text += f" · all snoozed for {waited(until - time.time())}"
        self.heading.configure(text=text)
        if want and "\x1f".join(want) in self.rows:
            self.select("\x1f".join(want))
            self.focus_key = None
        elif questions:
            self.select(self.tree.get_children()[0])
        else:
            self._show_selected()

    @staticmethod
    def _tags(q: dict[str, Any]) -> tuple[str, ...]:
        if q["abandoned"]:
            return ("abandoned",)
        return ("snoozed",) if q.get("snoozed_until") else ()

    def _values(self, q: dict[str, Any]) -> tuple[str, ...]:
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

    def _size_columns(self) -> bool:
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

    def _chars(self) -> int:
        """How many characters a line of the details pane holds (0 before it has a size)."""
        width = self.details.winfo_width()
        return (width - 24) // max(1, self._details_font.measure("0")) if width > 50 else 0

    def _show_selected(self, keep_scroll: bool = False) -> None:
        q = self.selected()
        text = (
            details_text(q, time.time(), self._chars())
            if q
            else "Nothing is waiting for you. Questions appear here the moment a pi session asks."
        )
        if self.details_text() == text:
            self._update_buttons(q)
            return
        top = self.details.yview()[0]
        self.details.configure(state="normal")
        self.details.delete("1.0", "end")
        self.details.insert("1.0", text)
        self._paths = {}
        if q:
            self.details.tag_add("title", "1.0", "1.end")
            for prefix, path in (("Folder:  ", q.get("cwd")), ("Session: ", q.get("file"))):
                at = self.details.search(prefix, "1.0", stopindex="end")
                if at and path:
                    line = at.split(".")[0]
                    self.details.tag_add("path", f"{line}.{len(prefix)}", f"{line}.end")
                    self._paths[line] = clean(path)
        self.details.configure(state="disabled")
        if keep_scroll:
            self.details.yview_moveto(top)
        self._update_buttons(q)

    def _path_event(self, event: Any, copy: bool) -> None:
        """Hover over a (shortened) path: the whole path in the status line; a click copies it."""
        line = self.details.index(f"@{event.x},{event.y}").split(".")[0]
        path = self._paths.get(line)
        if not path:
            return
        if copy:
            self.root.clipboard_clear()
            self.root.clipboard_append(path)
            self.say(f"Copied: {path}")
        else:
            self.say(path)

    def details_text(self) -> str:
        return str(self.details.get("1.0", "end-1c"))

    def _update_buttons(self, q: dict[str, Any] | None) -> None:
        for b in (self.snooze_button, self.project_button, self.mute_button):
            b.state(["!disabled"] if q else ["disabled"])
        self.goto_button.state(["!disabled"] if q and not q.get("offline") else ["disabled"])
        self.copy_button.state(["!disabled"] if q and not live(q) else ["disabled"])
        self.clear_button.state(["!disabled"] if q and q["abandoned"] else ["disabled"])
        self.snooze_button.configure(text="Unsnooze" if q and unsnooze(q) else "Snooze session 15 min")
        self._update_answers(q)

    def _update_answers(self, q: dict[str, Any] | None) -> None:
        """What answers the selected question from here, through the same path as ``pi-notifier
        answer``: an option button (one click answers), check boxes and "Answer" for a
        multi-select, one choice per question of a form, a text field for free text. A dialog that
        gates something (or any confirm) has "No" first and as the default; its whole text is in the
        details pane above. What cannot be answered from here says so (go to the session)."""
        key = q["key"] if q and not q["abandoned"] and not q.get("offline") else None
        if key == self._answer_key:
            return
        self._answer_key = key
        for child in self.answer_bar.winfo_children():
            child.destroy()
        self._answer_widgets = []
        if q is None or key is None:
            return
        if q.get("kind") == "dialog":
            self._dialog_answers(q)
        else:
            self._question_answers(q)

    def _label(self, text: str) -> None:
        from tkinter import ttk

        ttk.Label(self.answer_bar, text=text).pack(side="left", padx=(0, 6))

    def _button(self, parent: Any, text: str, command: Callable[[], None], **pack: Any) -> Any:
        from tkinter import ttk

        button = ttk.Button(parent, text=clean(text, 40), command=command)
        button.pack(side="left", padx=(0, 6), **pack)
        self._answer_widgets.append(button)
        return button

    def _text_field(self, parent: Any, q: dict[str, Any], label: str) -> None:
        from tkinter import ttk

        ttk.Label(parent, text=label).pack(side="left", padx=(0, 6))
        entry = ttk.Entry(parent, width=36)
        entry.pack(side="left", padx=(0, 6))
        entry.bind("<Return>", lambda e: self._send_text(q, entry.get()))
        self._answer_widgets.append(entry)
        self._button(parent, "Send", lambda: self._send_text(q, entry.get()))

    def _send_text(self, q: dict[str, Any], text: str) -> None:
        if not text.strip():
            self.say("Type the answer first")
            return
        self.answer(q, (), text)

    def _dialog_answers(self, q: dict[str, Any]) -> None:
        kind = q.get("dialog")
        options = [o["label"] for o in q["items"][0]["options"]] if q["items"] else []
        if kind == "confirm":
            choices = [("Yes", "yes"), ("No", "no")]
        else:
            choices = [(label, str(n)) for n, label in enumerate(options, 1)]
        if kind in ("select", "confirm") and choices:
            self._label("Answer:")
            gate = is_gate(q)
            if gate:
                choices = [c for c in choices if c[0] == "No"] + [c for c in choices if c[0] != "No"]
            for label, choice in choices[:MAX_BUTTONS]:
                button = self._button(self.answer_bar, label, self._answers(q, choice))
                if gate and label == "No":
                    button.configure(default="active")
        elif kind == "input":
            self._text_field(self.answer_bar, q, "Answer:")
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
                self._label("Pick:")
                picked: list[Any] = []
                for label in labels[:MAX_BUTTONS]:
                    var = self.tk.BooleanVar(master=self.root, value=False)
                    box = ttk.Checkbutton(self.answer_bar, text=clean(label, 40), variable=var)
                    box.pack(side="left", padx=(0, 6))
                    self._answer_widgets.append(box)
                    picked.append(var)

                def chosen() -> None:
                    choices = tuple(str(n) for n, v in enumerate(picked, 1) if v.get())
                    if not choices:
                        self.say("Pick at least one answer first")
                        return
                    self.answer(q, choices, None)

                self._button(self.answer_bar, "Answer", chosen)
            elif labels:
                self._label("Answer:")
                for n, label in enumerate(labels[:MAX_BUTTONS], 1):
                    self._button(self.answer_bar, label, self._answers(q, str(n)))
            row = ttk.Frame(self.answer_bar)
            row.pack(side="left", padx=(12, 0))
            self._text_field(row, q, "Other:" if labels else "Answer:")
            return
        # a form of several questions: one answer each, in order
        if any(it.get("multi") or not it["options"] for it in items):
            self._label(
                "A form with multi-select or free-text questions: answer it in the terminal (Go to session)."
            )
            return
        self._label("Answers, in order:")
        combos: list[Any] = []
        for item in items:
            values = [clean(o["label"], 40) for o in item["options"]]
            combo = ttk.Combobox(
                self.answer_bar,
                values=values,
                state="readonly",
                width=min(24, max(len(v) for v in values) + 2),
            )
            combo.pack(side="left", padx=(0, 6))
            self._answer_widgets.append(combo)
            combos.append(combo)

        def form() -> None:
            if any(c.current() < 0 for c in combos):
                self.say("Choose an answer for every question first")
                return
            self.answer(q, tuple(str(c.current() + 1) for c in combos), None)

        self._button(self.answer_bar, "Answer all", form)

    def _answers(self, q: dict[str, Any], choice: str) -> Callable[[], None]:
        """A button's action: answer ``q`` with ``choice``."""
        return lambda: self.answer(q, (choice,), None)

    def answer(self, q: dict[str, Any], choices: tuple[str, ...], text: str | None) -> None:
        """Answer ``q`` as ``pi-notifier answer`` does (off the Tk thread); the outcome, or why
        not, in the status line."""
        command = Answer(q["key"][0], q["key"][1], choices, text)
        for w in self._answer_widgets:
            try:
                w.state(["disabled"])
            except self.tk.TclError:
                pass
        self.say("Answering…")
        self._ask(command, "Not answered")

    def _ask(self, command: Command, failed: str) -> None:
        def go() -> None:
            ask = getattr(self.source, "ask", None)
            if ask is None:
                self.source.command(command)
                reply: dict[str, Any] | None = {"ok": True, "said": "sent"}
            else:
                reply = ask(command)
            if reply is None:
                said = f"{failed}: pi-notifier does not answer"
            elif reply.get("ok"):
                said = str(reply.get("said") or "done")
                said = said[:1].upper() + said[1:]
            else:
                said = f"{failed}: {reply.get('said') or reply.get('error') or 'no reason given'}"
            reply_msg: dict[str, Any] = {"said": said}
            if isinstance(command, Answer):
                reply_msg["answered"] = bool(reply and reply.get("ok"))
            self.inbox.put(reply_msg)

        threading.Thread(target=go, name="pi-notifier-window-act", daemon=True).start()

    # ---- actions ----

    def goto(self) -> None:
        """Go to the selected question's session (its terminal, its tmux pane)."""
        q = self.selected()
        if not q or q.get("offline"):
            return
        self.say(f"Going to {clean(q['project'], 60)}…")
        self._ask(Goto(q["key"][0], q["key"][1]), "Cannot go to the session")

    def copy_resume(self) -> None:
        q = self.selected()
        if not q:
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


def work_area() -> tuple[int, int, int, int] | None:
    """The desktop's work area (x, y, width, height: the screen without its panels), from the
    window manager's ``_NET_WORKAREA`` for the current desktop; None where none says."""
    from notifier.system.x11 import open_display

    disp = open_display()
    if disp is None:
        return None
    try:
        from Xlib import X

        root = disp.screen().root
        prop = root.get_full_property(disp.intern_atom("_NET_WORKAREA"), X.AnyPropertyType)
        if prop is None or len(prop.value) < 4:
            return None
        current = root.get_full_property(disp.intern_atom("_NET_CURRENT_DESKTOP"), X.AnyPropertyType)
        n = int(current.value[0]) if current is not None and len(current.value) else 0
        values = [int(v) for v in prop.value]
        at = n * 4 if len(values) >= n * 4 + 4 else 0
        x, y, w, h = values[at : at + 4]
        return (x, y, w, h) if w > 0 and h > 0 else None
    except Exception as exc:
        log.debug("no work area: %s", clean(exc, 200))
        return None
    finally:
        disp.close()


def placement(root: Any) -> str:
    """The window's geometry: a comfortable size, centred in the work area (never under a panel)."""
    area = work_area() or (0, 0, int(root.winfo_screenwidth()), int(root.winfo_screenheight()))
    x, y, w, h = area
    width = max(min(1100, int(w * 0.9)), min(640, w))
    height = max(min(620, int(h * 0.8)), min(360, h))
    return f"{width}x{height}+{x + max(0, (w - width) // 2)}+{y + max(0, (h - height) // 3)}"


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

    def ask(self, command: Command) -> dict[str, Any] | None:
        """A Goto or Answer carried out by the app; its reply (None: the app did not answer)."""
        from notifier.system import ipc

        return ipc.request(commands.to_obj(command), timeout=ASK_TIMEOUT_S)

    def close(self) -> None:
        self._stop.set()
