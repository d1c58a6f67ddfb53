"""Going to a session and answering from the desktop, for real: a click on the notification
(dunst's default action) makes the xterm of the tmux client that shows pi's pane the active
window; where it cannot (nobody attached), the window opens and the log says what to do instead;
the window's option button answers a real pi's question (pi 1.6 in tmux)."""

from __future__ import annotations

import subprocess
import threading
from pathlib import Path
from typing import Any

from ..app_process import AppProcess
from ..conftest import wait_for
from ..live.pi_harness import Tmux, need, scripted_model, start_pi
from .conftest import require
from .services import Dunst, Monitor, stop
from .test_goto_focus import active, attached_xterm, fake_pi_in_tmux, openbox  # noqa: F401  (openbox: a fixture)


def windows_of_class(name: str) -> list[str]:
    out = subprocess.run(["xdotool", "search", "--class", name], capture_output=True, text=True, timeout=10)
    return out.stdout.split()


def test_a_click_on_the_notification_goes_to_the_session(
    tmp_path: Path,
    desktop: dict[str, str],
    openbox: None,  # noqa: F811
    dunst: Dunst,
    monitor: Monitor,
) -> None:
    require("xterm", "tmux")
    server = Tmux()
    terms: list[subprocess.Popen[bytes]] = []
    try:
        sessions, pane = fake_pi_in_tmux(tmp_path, server)
        client_win, other_win = attached_xterm(desktop, server, terms)
        from .desktops import activate_window

        assert activate_window(other_win) and active() == other_win
        with AppProcess("run", "--no-tray", "-v", "--sessions-dir", str(sessions)) as app:
            (n,) = wait_for(lambda: monitor.notifies(), 20, "the notification")
            assert n["actions"][:2] == ["default", "Go to session"] and "goto" not in n["actions"]
            assert "show" in n["actions"] and "snooze" in n["actions"]
            wait_for(lambda: dunst.displayed() == 1, 10, "the bubble")
            dunst.ctl("action", "0")  # a click on the bubble: its default action
            wait_for(
                lambda: [x for x in monitor.of("ActionInvoked") if x[1] == "default"], 10, "ActionInvoked"
            )
            wait_for(lambda: active() == client_win, 20, "the tmux client's xterm active")
            app.log_has("goto: focused")
            assert windows_of_class("pi-notifier") == []  # focused: no window needed
            assert app.stop() == 0
    finally:
        for t in terms:
            stop(t)
        server.kill()


def test_when_it_cannot_go_there_the_window_says_what_to_do(
    tmp_path: Path, desktop: dict[str, str], dunst: Dunst, monitor: Monitor, private_dirs: Path
) -> None:
    """Nobody attached to pi's tmux session: a click on the notification brings the window (here:
    a subscribed stand-in) to the question, its status line saying how to attach. The window's
    snapshots say where the pi runs (its tmux pane)."""
    require("tmux")
    from notifier import control
    from notifier.control import request

    server = Tmux()
    try:
        sessions, pane = fake_pi_in_tmux(tmp_path, server)
        with AppProcess("run", "-v", "--sessions-dir", str(sessions)) as app:
            wait_for(lambda: request({"cmd": "ping"}), 20, "the app's control channel")
            messages: list[dict[str, Any]] = []

            def feed() -> None:  # what an open window gets
                for message in control.subscribe({"cmd": "subscribe"}):
                    messages.append(message)

            threading.Thread(target=feed, daemon=True).start()
            located = wait_for(
                lambda: [q["location"] for m in messages for q in m.get("window", {}).get("questions", []) if q.get("location")],
                20,
                "the location in a window snapshot (looked up off the UI thread)",
            )[0]
            assert located["tmux"]["pane"] == pane
            (n,) = wait_for(lambda: monitor.notifies(), 20, "the notification")
            wait_for(lambda: dunst.displayed() == 1, 10, "the bubble")
            dunst.ctl("action", "0")  # a click: go to the session
            said = wait_for(lambda: [m for m in messages if "said" in m], 20, "the window told")[0]
            assert said["said"].startswith("Cannot go to the session: the tmux session is not attached")
            assert f"-L {server.name}" in said["said"] or server.name in said["said"]
            assert "attach -t work:" in said["said"] and "pi --session" not in said["said"]  # a pi holds it
            (question,) = [q for m in messages for q in m.get("window", {}).get("questions", [])][:1]
            assert said["focus"] == question["key"]  # opened at that question
            app.log_has("goto: the tmux session is not attached to a terminal")
            assert app.stop() == 0
    finally:
        server.kill()


def test_the_window_answers_a_real_pi_question(tmp_path: Path, desktop: dict[str, str]) -> None:
    """pi 1.6 asks with its `question` tool in tmux; the window (over its own scan, no app) shows
    the options as buttons; a click answers through the same path as `pi-notifier answer`."""
    require("tkinter", "tmux")
    from tkinter import ttk

    from notifier.app import LocalSource
    from notifier.config import Config
    from notifier.window.window import Window

    version = need("1.6.0")
    server = Tmux()
    window = None
    with scripted_model("question") as port:
        try:
            pi = start_pi(tmp_path, version, port, version.example("question.ts"), server=server)
            pi.ask("Enter to select")
            config = Config()
            config.values["sessions_dirs"] = [str(pi.sessions)]
            window = Window(LocalSource(config))

            def buttons() -> dict[str, object]:
                window.root.update()
                widgets = list(window.answer_bar.winfo_children())
                widgets += [c for w in widgets for c in w.winfo_children()]  # the text field's row
                found: dict[str, object] = {str(w.cget("text")): w for w in widgets if w.winfo_class() == "TButton"}
                return found if "SQLite" in found else {}

            found = wait_for(buttons, 30, "the option buttons")
            assert "Send" in found  # and a text field for a free answer
            sqlite = found["SQLite"]
            assert isinstance(sqlite, ttk.Button)
            sqlite.invoke()

            def said() -> str:
                window.root.update()
                text = str(window.status.cget("text"))
                return text if text and not text.startswith("Answering") else ""

            outcome = wait_for(said, 40, "the answer's outcome")  # (named after its project: another may be selected)
            assert outcome.endswith(": Answered: User selected: 2. SQLite"), outcome
            file = next(pi.sessions.rglob("*.jsonl"))
            assert "User selected: 2. SQLite" in file.read_text()
            wait_for(lambda: (window.root.update(), not window.tree.get_children())[1], 20, "the question gone")
        finally:
            if window is not None:
                window.close()
            server.kill()


def dock_panel(height: int) -> tuple[Any, Any]:
    """A panel along the top edge, as a desktop's: a dock window reserving ``height`` px
    (``_NET_WM_STRUT_PARTIAL``); the window manager takes it out of the work area. Returns the
    display (close it to remove the panel) and the window."""
    from Xlib import Xatom, display

    d = display.Display()
    screen = d.screen()
    win = screen.root.create_window(0, 0, screen.width_in_pixels, height, 0, screen.root_depth)
    atom = d.intern_atom
    win.change_property(atom("_NET_WM_WINDOW_TYPE"), Xatom.ATOM, 32, [atom("_NET_WM_WINDOW_TYPE_DOCK")])
    strut = [0, 0, height, 0, 0, 0, 0, 0, 0, screen.width_in_pixels - 1, 0, 0]
    win.change_property(atom("_NET_WM_STRUT_PARTIAL"), Xatom.CARDINAL, 32, strut)
    win.change_property(atom("_NET_WM_STRUT"), Xatom.CARDINAL, 32, strut[:4])
    win.map()
    d.sync()
    return d, win


def test_the_window_opens_inside_the_work_area_with_nothing_clipped(
    desktop: dict[str, str],
    openbox: None,  # noqa: F811
) -> None:
    """Under a panel (a dock reserving the top 40 px): the window is placed below it, and each
    column is as wide as its widest cell ("ask_user_question", "1 s (abandoned)")."""
    require("tkinter")
    from notifier.window.window import COLUMNS, Window, placement, work_area

    from .test_tray import FakeSource, snapshot_data

    panel, dock = dock_panel(40)
    window = None
    try:
        def strut_seen() -> Any:
            area = work_area()
            if area and area[1] >= 40:
                return area
            # a dock mapped while the window manager was still starting: map it again
            dock.unmap()
            dock.map()
            panel.sync()
            return None

        area = wait_for(strut_seen, 20, "the panel's strut in the work area")
        window = Window(FakeSource(snapshot_data()))
        wait_for(lambda: (window.root.update(), window.tree.get_children())[1], 10, "rows")
        wait_for(lambda: (window.root.update(), window.root.winfo_rooty() > 0)[1], 10, "the window mapped")
        x, y, w, h = area
        # asked for a place inside the work area (openbox would also move it out from under a
        # panel; other window managers honour the position asked for)
        size, ax, ay = placement(window.root).replace("x", "+", 1).split("+", 1)[1].split("+")
        assert int(ax) >= x and int(ay) >= y and int(ay) + int(size) <= y + h
        assert window.root.winfo_rooty() >= y and window.root.winfo_rootx() >= x
        assert window.root.winfo_rooty() + window.root.winfo_height() <= y + h
        for n, col in enumerate(COLUMNS):
            width = int(window.tree.column(col, "width"))
            for iid in window.tree.get_children():
                cell = str(window.tree.item(iid, "values")[n])
                assert window.list._font.measure(cell) < width, (col, cell, width)
    finally:
        if window is not None:
            window.root.destroy()
        panel.close()
