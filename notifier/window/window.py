"""The pending-questions window (Tk), a process of its own (`pi-notifier show`): the list of
questions on the left (:class:`QuestionList`), everything about the selected one on the right
(:class:`DetailsPane`), its answers below (:class:`AnswerBar`, through the same path as
``pi-notifier answer``), and the actions. It reads window objects from a :class:`Source` (the
running app over the local channel, :class:`RemoteSource`, or an engine of its own) and turns each
into the typed view model (``view.py``) at its door. It opens in the desktop's work area."""

from __future__ import annotations

import contextlib
import functools
import logging
import queue
import threading
import time
from collections.abc import Callable, Sequence
from typing import Any, Protocol

from notifier import control
from notifier.control import request
from notifier.core import commands
from notifier.core.commands import Answer, Clear, Command, Goto, Mute, Snooze, Subscribe, short_id
from notifier.core.model import QuestionItem
from notifier.core.text import clean, duration
from notifier.resources import app_icon
from notifier.system.window_manager import on_display
from notifier.window.view import (
    OPTION_WIDTH,
    Shown,
    WindowView,
    details_text,
    heading_text,
    option_labels,
    row_id,
    where_text,
)

# Lazy imports here: tkinter is optional (python3-tk), Xlib is Linux only.

log = logging.getLogger(__name__)
ASK_TIMEOUT_S = 60.0  # an answer is confirmed from the session file within its own deadline


COLUMNS = ("project", "session", "tool", "waited", "where")
HEADINGS = ("Project", "Session", "Tool", "Waiting", "Where")
COLUMN_MAX = {"project": 220, "session": 220, "tool": 200, "waited": 200, "where": 240}


MAX_BUTTONS = 8  # options shown as buttons or boxes; more: one list of them all
BUTTONS_CHARS = 84  # … and as buttons only while their labels fit the bar beside the free-text field

# answer(q, choices, text): carries the answer out (and says so)
AnswerFn = Callable[[Shown, tuple[str, ...], "str | None"], None]
Given = tuple[tuple[str, ...], "str | None"]  # what the answer bar reads: choices, text


NOTHING = "Nothing is waiting for you. Questions appear here the moment a pi session asks."


# ---- where the data comes from ----


class Source(Protocol):
    """Where the window gets its data and sends its commands: :class:`RemoteSource`, or an engine
    of the window's own (``app.LocalSource``)."""

    def start(self, push: Callable[[dict[str, Any]], None]) -> None: ...

    def command(self, command: Command) -> None: ...

    def ask(self, command: Command) -> dict[str, Any] | None:
        """Carry out a Goto or Answer and return the reply (``{"ok", "said"}``; None: nobody
        answered); blocking, called off the Tk thread."""
        ...

    def close(self) -> None: ...


class RemoteSource:
    """The running app, over the local channel."""

    def __init__(self) -> None:
        self._stop = threading.Event()

    def start(self, push: Callable[[dict[str, Any]], None]) -> None:
        def listen() -> None:
            for msg in control.subscribe(commands.to_obj(Subscribe())):
                if self._stop.is_set():
                    return
                push(msg)
            push({"gone": True})

        threading.Thread(target=listen, name="pi-notifier-window-feed", daemon=True).start()

    def command(self, command: Command) -> None:
        threading.Thread(target=request, args=(commands.to_obj(command),), daemon=True).start()

    def ask(self, command: Command) -> dict[str, Any] | None:
        """A Goto or Answer carried out by the app; its reply (None: the app did not answer)."""
        return request(commands.to_obj(command), timeout=ASK_TIMEOUT_S)

    def close(self) -> None:
        self._stop.set()


# ---- where it opens ----


def work_area() -> tuple[int, int, int, int] | None:
    """The desktop's work area (x, y, width, height: the screen without its panels), from the
    window manager's ``_NET_WORKAREA`` for the current desktop; None where none says."""

    def read(disp: Any) -> tuple[int, int, int, int] | None:
        from Xlib import X

        root = disp.screen().root
        area, current = (
            root.get_full_property(disp.intern_atom(name), X.AnyPropertyType)
            for name in ("_NET_WORKAREA", "_NET_CURRENT_DESKTOP")
        )
        values = [int(v) for v in area.value] if area is not None else []
        n = int(current.value[0]) if current is not None and len(current.value) else 0
        at = n * 4 if len(values) >= n * 4 + 4 else 0
        x, y, w, h = values[at : at + 4]  # (ValueError: fewer than four)
        return (x, y, w, h) if w > 0 and h > 0 else None

    try:
        found: tuple[int, int, int, int] | None = on_display(read)
    except Exception as exc:  # (no display, no Xlib, no work area)
        log.debug("no work area: %s", exc)
        return None
    return found


def placement(root: Any) -> str:
    """The window's geometry: a comfortable size, centred in the work area (never under a panel)."""
    area = work_area() or (0, 0, int(root.winfo_screenwidth()), int(root.winfo_screenheight()))
    x, y, w, h = area
    width = max(min(1100, int(w * 0.9)), min(640, w))
    height = max(min(620, int(h * 0.8)), min(360, h))
    return f"{width}x{height}+{x + max(0, (w - width) // 2)}+{y + max(0, (h - height) // 3)}"


# ---- the window ----


TITLE = "pi-notifier — pending questions"


class Window:
    def __init__(self, source: Source, focus: list[str] | None = None, root: Any = None) -> None:
        import tkinter as tk
        from tkinter import ttk

        self.tk = tk
        self.source = source
        self.inbox: queue.Queue[dict[str, Any]] = queue.Queue()
        self.rows: dict[str, Shown] = {}
        self.focus_key = focus
        self.root = root or tk.Tk(className="pi-notifier")
        self.root.title(TITLE)
        self.root.geometry(placement(self.root))
        self.root.minsize(640, 360)
        self._set_icon()
        self.root.protocol("WM_DELETE_WINDOW", self.close)

        top = ttk.Frame(self.root, padding=(10, 8, 10, 4))
        top.pack(fill="x")
        self.heading = ttk.Label(top, text="Waiting for the first snapshot…", font=("TkDefaultFont", 11, "bold"))
        self.heading.pack(side="left")

        # the status line (what the last action did, or what to do instead): its own full row
        self.status = ttk.Label(self.root, text="", padding=(10, 0, 10, 8), anchor="w", justify="left")
        self.status.pack(side="bottom", fill="x")
        self.status.bind("<Configure>", lambda e: self.status.configure(wraplength=max(200, e.width - 20)))
        buttons = ttk.Frame(self.root, padding=(10, 6, 10, 4))
        buttons.pack(side="bottom", fill="x")
        self.answer_bar = ttk.Frame(self.root, padding=(10, 4, 10, 0))  # the selected question's answers
        self.answer_bar.pack(side="bottom", fill="x")
        self.answers = AnswerBar(self.answer_bar, self.answer, self.say)

        panes = ttk.PanedWindow(self.root, orient="horizontal")
        panes.pack(fill="both", expand=True, padx=10)
        left = ttk.Frame(panes)
        self.list = QuestionList(left)
        self.tree = self.list.tree
        panes.add(left, weight=1)
        right = ttk.Frame(panes)
        self.pane = DetailsPane(right, self.say)
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
        if path := app_icon():
            try:
                self.root.iconphoto(True, icon := self.tk.PhotoImage(file=path))
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
                    self.apply(WindowView.from_obj(msg["window"]))  # (typed once, here)
                if "focus" in msg:
                    self.raise_(msg.get("focus"))
                if "said" in msg:
                    self.say(msg["said"])
                if msg.get("answered"):  # answered: a fresh answer bar
                    self.answers.forget()
                    self.answers.update(self.selected())
                elif msg.get("answered") is not None:  # not answered: the bar as the user left it
                    self.answers.disable(False)
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

    def apply(self, data: WindowView) -> None:
        questions = data.questions
        want = self.focus_key or self.selected_key()
        self.rows = {row_id(q.key): q for q in questions}
        if self.list.fill(questions):
            self._place_sash()
        self.heading.configure(text=heading_text(questions, data.snoozed_until, time.time()))
        if self._select(want):
            return
        if questions:
            self.select(self.tree.get_children()[0])
        else:
            self._show_selected()

    def _select(self, key: list[str] | None) -> bool:
        """Select the question of ``key`` if it is listed (then no focus is wanted any more)."""
        if not key or row_id(key) not in self.rows:
            return False
        self.select(row_id(key))
        self.focus_key = None
        return True

    def select(self, iid: str) -> None:
        self.tree.selection_set(iid)
        self.tree.focus(iid)
        self.tree.see(iid)
        self._show_selected()

    def selected_key(self) -> list[str] | None:
        return q.key if (q := self.selected()) else None

    def selected(self) -> Shown | None:
        sel = self.tree.selection()
        return self.rows.get(sel[0]) if sel else None

    def _show_selected(self, keep_scroll: bool = False) -> None:
        q = self.selected()
        self.pane.show(q, keep_scroll)
        self._update_buttons(q)

    def _update_buttons(self, q: Shown | None) -> None:
        for button, usable in (
            (self.snooze_button, q),
            (self.project_button, q),
            (self.mute_button, q),
            (self.goto_button, q and not q.offline and not q.is_demo),
            (self.copy_button, q and not q.live and not q.is_demo),
            (self.clear_button, q and q.abandoned),
        ):
            button.state(["!disabled" if usable else "disabled"])
        self.snooze_button.configure(text="Unsnooze" if q and q.unsnooze() else "Snooze session 15 min")
        self.answers.update(q)

    # ---- actions ----

    def answer(self, q: Shown, choices: tuple[str, ...], text: str | None) -> None:
        """Answer ``q`` as ``pi-notifier answer`` does (off the Tk thread), as shown (its token:
        refused if what waits changed); the outcome, or why not, in the status line."""
        self.answers.disable()
        project = clean(q.project, 60)
        self.say(f"Answering {project}…")
        self._ask(Answer(q.session.key, q.question.tool_call_id, choices, text, q.token), "Not answered", project)

    def _ask(self, command: Command, failed: str, who: str = "") -> None:
        """Carry out a Goto or Answer through the source, off the Tk thread; what came of it goes
        to the status line (``failed`` starts the line when it failed; ``who``: the project it is
        about, named first, as another question may be selected by then). An Answer's bar is built
        afresh once it was answered, and usable again as the user left it when it was not."""

        def go() -> None:
            reply = self.source.ask(command) or {"said": "pi-notifier does not answer"}
            if reply.get("ok"):
                said = str(reply.get("said") or "done")
                said = said[:1].upper() + said[1:]
            else:
                said = f"{failed}: {reply.get('said') or reply.get('error') or 'no reason given'}"
            said = f"{who}: {said}" if who else said
            answered = {"answered": bool(reply.get("ok"))} if isinstance(command, Answer) else {}
            self.inbox.put({"said": said, **answered})

        threading.Thread(target=go, name="pi-notifier-window-act", daemon=True).start()

    def goto(self) -> None:
        """Go to the selected question's session (its terminal, its tmux pane)."""
        q = self.selected()
        if not q or q.offline:
            return
        self.say(f"Going to {clean(q.project, 60)}…")
        self._ask(Goto(q.session.key, q.question.tool_call_id), "Cannot go to the session")

    def copy_resume(self) -> None:
        """The selected session's resume command to the clipboard; where its names cannot be
        shown in a command (control characters…), the clipboard is left alone and the status
        line says why."""
        q = self.selected()
        if not q:
            return
        resume, refused = q.resume()
        if not resume:
            self.say(refused or "no resume command is offered for this session")
            return
        self.root.clipboard_clear()
        self.root.clipboard_append(resume)
        self.say("Resume command copied")

    def _command(self, make: Callable[[Shown], Command | None], said: str) -> None:
        """Send the command ``make`` makes of the selected question (if any); the status line
        says ``said`` of its project."""
        q = self.selected()
        command = make(q) if q else None
        if q and command is not None:
            self.source.command(command)
            self.say(said.format(clean(q.project, 40)))

    def snooze(self) -> None:
        q = self.selected()
        if q and q.unsnooze():
            self._command(Shown.unsnooze, "{}: notifications resumed")
        else:
            self._command(lambda q: Snooze(time.time() + 15 * 60, session=q.session.key), "{} snoozed for 15 min")

    def snooze_project(self) -> None:
        self._command(lambda q: Snooze(time.time() + 3600, project=q.project), "{} snoozed for 1 hour")

    def mute(self) -> None:
        self._command(lambda q: Mute(q.project, on=True), "{} muted (unmute it from the tray menu)")

    def clear(self) -> None:
        q = self.selected()
        if q and q.abandoned:
            self.source.command(Clear(q.session.file, q.question.tool_call_id))

    def raise_(self, focus: list[str] | None) -> None:
        if focus and not self._select(focus):
            self.focus_key = focus  # (selected when it is listed)
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


# ---- its parts ----


class QuestionList:
    def __init__(self, parent: Any) -> None:
        from tkinter import font as tkfont
        from tkinter import ttk

        self._font = tkfont.nametofont("TkDefaultFont")
        self._heading_font = tkfont.nametofont("TkHeadingFont")
        self.tree = ttk.Treeview(parent, columns=COLUMNS, show="headings", selectmode="browse", height=14)
        for col, label in zip(COLUMNS, HEADINGS, strict=True):
            self.tree.heading(col, text=label)
            self.tree.column(col, width=self._heading_font.measure(label) + 24, stretch=False, anchor="w")
        self.tree.column(COLUMNS[-1], stretch=True)
        self.tree.tag_configure("abandoned", foreground="#8a6d1d")
        self.tree.tag_configure("snoozed", foreground="#6b6b6b")
        scroll_x = ttk.Scrollbar(parent, orient="horizontal", command=self.tree.xview)
        self.tree.configure(xscrollcommand=scroll_x.set)
        scroll_x.pack(side="bottom", fill="x")
        self.tree.pack(fill="both", expand=True)

    def fill(self, questions: Sequence[Shown]) -> bool:
        """Show these questions (in order); True when a column's width changed."""
        self.tree.delete(*self.tree.get_children())
        for q in questions:
            self.tree.insert("", "end", iid=row_id(q.key), values=self.values(q), tags=self.tags(q))
        return self.size_columns()

    def refresh(self, rows: dict[str, Shown]) -> None:
        """The rows' cells again (how long each has waited)."""
        for iid, q in rows.items():
            if self.tree.exists(iid):
                self.tree.item(iid, values=self.values(q))

    def width_needed(self) -> int:
        return sum(int(self.tree.column(c, "width")) for c in COLUMNS) + 4

    @staticmethod
    def tags(q: Shown) -> tuple[str, ...]:
        return ("abandoned",) if q.abandoned else ("snoozed",) if q.snoozed_until else ()

    @staticmethod
    def values(q: Shown) -> tuple[str, ...]:
        now = time.time()
        state = " (abandoned)" if q.abandoned else " (offline)" if q.offline else ""
        if not state and q.snoozed_until and q.snoozed_until > now:
            state = " · snoozed"
        return (
            clean(q.project if q.session.host else q.folder, 40),
            clean(q.session.name, 30) or clean(short_id(q.session.id), 8) or "—",
            clean(q.tool, 30),
            duration(now - q.question.asked_at) + state,
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


class DetailsPane:
    def __init__(self, parent: Any, say: Callable[[str], None]) -> None:
        import tkinter as tk
        from tkinter import font as tkfont

        self.say = say
        self.text = tk.Text(parent, wrap="word", height=14, relief="flat", padx=8, pady=6, font=("TkDefaultFont", 10))
        self.text.tag_configure("title", font=("TkDefaultFont", 12, "bold"))
        self._font = tkfont.Font(root=parent, font=self.text.cget("font"))
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

    def show(self, q: Shown | None, keep_scroll: bool = False) -> None:
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
            for prefix, path in (("Folder:  ", q.session.cwd), ("Session: ", q.session.file)):
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
            self.text.clipboard_clear()
            self.text.clipboard_append(path)
            self.say(f"Copied: {path}")
        else:
            self.say(path)


class AnswerBar:
    def __init__(self, frame: Any, answer: AnswerFn, say: Callable[[str], None]) -> None:
        self.frame = frame
        self.answer = answer
        self.say = say
        self.key: list[str] | None = None  # whose answers are shown
        self.widgets: list[Any] = []

    def disable(self, disabled: bool = True) -> None:
        """While an answer is on its way: nothing more to click (``False``: it was refused, and
        what was chosen or typed stays, to send again or change)."""
        import tkinter as tk

        for w in self.widgets:
            with contextlib.suppress(tk.TclError):
                w.state(["disabled" if disabled else "!disabled"])

    def forget(self) -> None:
        """An answer came back: the next ``update`` builds the bar afresh."""
        self.key = None

    def update(self, q: Shown | None) -> None:
        """The answers of ``q`` (kept as they are while the same live question stays selected, as
        shown: a question asked again under the same call, its token changed, gets a fresh bar)."""
        key = [*q.key, q.token or ""] if q and not q.abandoned and not q.offline else None
        if key == self.key:
            return
        self.key = key
        for child in self.frame.winfo_children():
            child.destroy()
        self.widgets = []
        if q is None or key is None:
            return
        if q.is_demo:
            self._label("The demo's recorded question: no pi runs it, so it answers itself (answer real ones here).")
        elif q.question.kind == "dialog":
            self._dialog_answers(q)
        else:
            self._question_answers(q)

    def _label(self, text: str, parent: Any = None) -> None:
        from tkinter import ttk

        ttk.Label(parent or self.frame, text=text).pack(side="left", padx=(0, 6))

    def _add(self, widget: Any) -> Any:
        """``widget``, packed along the bar; disabled while an answer is on its way."""
        widget.pack(side="left", padx=(0, 6))
        self.widgets.append(widget)
        return widget

    def _button(self, parent: Any, text: str, command: Callable[[], None]) -> Any:
        from tkinter import ttk

        return self._add(ttk.Button(parent, text=clean(text, 40), command=command))

    def _submit(self, parent: Any, label: str, q: Shown, given: Callable[[], Given], missing: str) -> Callable[[], Any]:
        """A button that answers ``q`` with what ``given()`` reads off the bar (choices, text), or
        says ``missing`` when that is nothing. Returns its action."""

        def send() -> None:
            choices, text = given()
            if choices or (text or "").strip():
                self.answer(q, choices, text)
            else:
                self.say(missing)

        self._button(parent, label, send)
        return send

    def _text_field(self, parent: Any, q: Shown, label: str) -> None:
        from tkinter import ttk

        self._label(label, parent)
        entry = self._add(ttk.Entry(parent, width=36))
        send = self._submit(parent, "Send", q, lambda: ((), entry.get()), "Type the answer first")
        entry.bind("<Return>", lambda e: send())

    def _choices(self, q: Shown, choices: list[tuple[str, str]], default: str | None = None) -> None:
        """A button per (label, choice) answering ``q`` with that choice; ``default``'s is the default
        (a blank label: its place, which is the option's number in a list not sorted). More than
        :data:`MAX_BUTTONS`, or longer labels than fit the bar: one list of them all and an Answer
        button (never a button or the free-text field pushed out of sight)."""
        from tkinter import ttk

        self._label("Answer:")
        shown = option_labels([label or f"({n})" for n, (label, _) in enumerate(choices, 1)])
        if len(choices) > MAX_BUTTONS or sum(len(s) + 4 for s in shown) > BUTTONS_CHARS:
            width = min(OPTION_WIDTH, max(len(s) for s in shown) + 2)
            listed = self._add(ttk.Combobox(self.frame, values=shown, state="readonly", width=width))

            def chosen() -> Given:
                return ((choices[listed.current()][1],) if listed.current() >= 0 else ()), None

            self._submit(self.frame, "Answer", q, chosen, "Choose an answer first")
            return
        for said, (label, choice) in zip(shown, choices, strict=True):
            button = self._button(self.frame, said, functools.partial(self.answer, q, (choice,), None))
            if label == default:
                button.configure(default="active")

    def _dialog_answers(self, q: Shown) -> None:
        kind, items = q.question.dialog, q.question.items
        if kind == "input":
            self._text_field(self.frame, q, "Answer:")
            return
        choices = [("Yes", "yes"), ("No", "no")] if kind == "confirm" else []
        if kind == "select" and items:
            choices = [(o.label or f"({n})", f"#{n}") for n, o in enumerate(items[0].options, 1)]  # (its own number)
        if not choices:
            self._label("Answer this dialog in the terminal (Go to session).")
            return
        if q.gate:  # "No" first, and the default
            choices.sort(key=lambda c: c[0] != "No")
        self._choices(q, choices, "No" if q.gate else None)

    def _question_answers(self, q: Shown) -> None:
        from tkinter import ttk

        items = q.question.items
        if not q.question.answerable and not q.question.answerable_by_text:  # (by its shape, whatever the tool)
            self._label(f"{clean(q.tool, 40)} is answered in the terminal (Go to session).")
            return
        if len(items) == 1:
            item = items[0]
            labels = [o.label for o in item.options]
            if labels and item.multi:
                self._multi(q, labels)
            elif labels:
                self._choices(q, [(label, f"#{n}") for n, label in enumerate(labels, 1)])
            row = ttk.Frame(self.frame)
            row.pack(side="left", padx=(12, 0))
            self._text_field(row, q, "Other:" if labels else "Answer:")
            return
        # a form of several questions: one answer each, in order
        if any(it.multi or not it.options for it in items):
            self._label("A form with multi-select or free-text questions: answer it in the terminal (Go to session).")
            return
        self._form(q, items)

    def _multi(self, q: Shown, labels: list[str]) -> None:
        import tkinter as tk
        from tkinter import ttk

        self._label("Pick:")
        picked = [tk.BooleanVar(master=self.frame, value=False) for _ in labels]
        shown = option_labels(labels)
        if len(labels) > MAX_BUTTONS:  # (one menu of boxes for them all)
            menu_button = self._add(ttk.Menubutton(self.frame, text=f"{len(labels)} options…"))
            menu = tk.Menu(menu_button, tearoff=False)
            for said, var in zip(shown, picked, strict=True):
                menu.add_checkbutton(label=said, variable=var)
            menu_button["menu"] = menu
        else:
            for said, var in zip(shown, picked, strict=True):
                self._add(ttk.Checkbutton(self.frame, text=said, variable=var))

        def chosen() -> Given:
            return tuple(f"#{n}" for n, v in enumerate(picked, 1) if v.get()), None

        self._submit(self.frame, "Answer", q, chosen, "Pick at least one answer first")

    def _form(self, q: Shown, items: Sequence[QuestionItem]) -> None:
        from tkinter import ttk

        self._label("Answers, in order:")
        combos: list[Any] = []
        for item in items:
            values = option_labels([o.label for o in item.options])
            width = min(24, max(len(v) for v in values) + 2)
            combos.append(self._add(ttk.Combobox(self.frame, values=values, state="readonly", width=width)))

        def chosen() -> Given:
            picks = [c.current() for c in combos]
            return (tuple(f"#{p + 1}" for p in picks) if min(picks) >= 0 else ()), None

        self._submit(self.frame, "Answer all", q, chosen, "Choose an answer for every question first")
