"""The real tray under Xvfb with trayer: docking, icon changes in screenshots, a real click, the
window's content through Tk, and a menu action fired from code."""

from __future__ import annotations

import io
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import psutil
import pytest
from PIL import Image

from notifier.core.board import DRAWN_S, Board
from notifier.core.commands import Clear, Command, Focus, Mute, Show, Snooze
from notifier.core.owners import Proc
from notifier.core.reducer import Header, ToolStart
from notifier.outputs.tray import COLORS, UiState, icon_image
from notifier.pi.parse import extract
from notifier.window.view import window_obj

from ..app_process import AppProcess
from ..conftest import cli, wait_for
from ..unit.test_redraw import own_pystray  # noqa: F401  (a fixture)
from ..writer import answer, append, ask, header, user
from .conftest import require
from .services import Dunst

TRAY = (520, 0, 640, 32)  # trayer: top edge, right aligned, 120×32 on the 640×480 screen
ICON_CLASS = ("pi-notifierSystemTrayIcon", "pi-notifier")  # pystray's xorg icon window (WM_CLASS)


def tray_area() -> Image.Image:
    png = subprocess.run(
        ["import", "-window", "root", "png:-"], capture_output=True, check=True, timeout=20
    ).stdout
    return Image.open(io.BytesIO(png)).convert("RGB").crop(TRAY)


def pixels(img: Image.Image) -> list[tuple[int, int, int]]:
    data = img.tobytes()
    return list(zip(data[0::3], data[1::3], data[2::3], strict=True))


def count(img: Image.Image, color: tuple[int, int, int, int], tol: int = 40) -> int:
    r0, g0, b0 = color[:3]
    return sum(1 for r, g, b in pixels(img) if abs(r - r0) < tol and abs(g - g0) < tol and abs(b - b0) < tol)


def bbox_of(img: Image.Image, color: tuple[int, int, int, int]) -> tuple[int, int]:
    xs, ys = [], []
    r0, g0, b0 = color[:3]
    for i, (r, g, b) in enumerate(pixels(img)):
        if abs(r - r0) < 40 and abs(g - g0) < 40 and abs(b - b0) < 40:
            xs.append(i % img.width)
            ys.append(i // img.width)
    return TRAY[0] + (min(xs) + max(xs)) // 2, TRAY[1] + (min(ys) + max(ys)) // 2


def windows_of_class(name: str) -> list[str]:
    """Windows of that class, but for the xorg tray icon's (its class is the app's name too)."""
    from Xlib import display

    out = subprocess.run(["xdotool", "search", "--class", name], capture_output=True, text=True, timeout=10)
    d = display.Display()
    try:
        found = []
        for wid in out.stdout.split():
            try:
                wm_class = d.create_resource_object("window", int(wid)).get_wm_class()
            except Exception:  # gone meanwhile
                continue
            if wm_class != ICON_CLASS:
                found.append(wid)
        return found
    finally:
        d.close()


def test_icon_docks_changes_and_a_click_opens_the_window(
    tmp_path: Path, dunst: Dunst, trayer: None, private_dirs: Path
) -> None:
    require("tkinter")
    sessions = tmp_path / "sessions"
    a = sessions / "--home-dev-shop--" / "a.jsonl"
    b = sessions / "--home-dev-api--" / "b.jsonl"
    before = tray_area()
    assert count(before, COLORS["idle"]) == 0 and count(before, COLORS["needs"]) == 0
    with AppProcess("run", "--liveness", "off", "--sessions-dir", str(sessions)) as app:
        docked = wait_for(
            lambda: (img := tray_area()) and count(img, COLORS["idle"]) > 100 and img, 20, "icon docked"
        )
        assert docked.tobytes() != before.tobytes()
        append(a, header("/home/dev/shop"), user(), ask("q1", "Which database?"))
        one = wait_for(
            lambda: (img := tray_area()) and count(img, COLORS["needs"]) > 100 and img,
            10,
            "needs-answer icon",
        )
        append(b, header("/home/dev/api"), user(), ask("q2", "Ship it?"))
        two = wait_for(
            lambda: (
                (img := tray_area())
                and count(img, COLORS["needs"]) > 100
                and img.tobytes() != one.tobytes()
                and img
            ),
            10,
            "badge 2",
        )
        one.save(tmp_path / "tray-1.png")
        two.save(tmp_path / "tray-2.png")
        append(a, answer("q1"))
        append(b, answer("q2"))
        wait_for(lambda: count(tray_area(), COLORS["needs"]) == 0, 10, "needs-answer gone after both answers")
        append(a, ask("q3", "One more?"))
        img = wait_for(
            lambda: (i := tray_area()) and count(i, COLORS["needs"]) > 100 and i, 10, "needs again"
        )
        x, y = bbox_of(img, COLORS["needs"])
        assert windows_of_class("pi-notifier") == []
        subprocess.run(["xdotool", "mousemove", str(x), str(y), "click", "1"], check=True, timeout=10)
        (window,) = wait_for(lambda: windows_of_class("pi-notifier"), 20, "the window after a left click")
        # closed (Escape), its process is waited for at once, not left a zombie until the next click
        (shown,) = [c for c in psutil.Process(app.proc.pid).children() if "--attach" in c.cmdline()]
        subprocess.run(["xdotool", "windowfocus", "--sync", window, "key", "Escape"], check=True, timeout=10)
        wait_for(lambda: not psutil.pid_exists(shown.pid), 20, "the closed window's process waited for")
        subprocess.run(["xdotool", "mousemove", str(x), str(y), "click", "1"], check=True, timeout=10)
        wait_for(lambda: windows_of_class("pi-notifier"), 20, "the window again after a second click")
        second = subprocess.run(
            [sys.executable, "-m", "notifier"], capture_output=True, text=True, timeout=30
        )
        assert second.returncode == 0 and "already running" in second.stderr
        assert app.stop() == 0
    wait_for(lambda: windows_of_class("pi-notifier") == [], 10, "window closed with the app")


class FakeSource:
    """Feeds the window one window object; records its commands. ``ask`` (goto / answer) goes
    through the app's real path (``snapshot``: what it runs on) or, without one, is recorded."""

    def __init__(self, data: dict[str, Any], snapshot: Any = None) -> None:
        self.data = data
        self.snapshot = snapshot
        self.commands: list[Command] = []

    def start(self, push: Any) -> None:
        push({"window": self.data})

    def command(self, command: Command) -> None:
        self.commands.append(command)

    def last(self) -> Command:
        """The window's latest command (a call, read anew each time: a check of one command
        says nothing of the next)."""
        return self.commands[-1]

    def ask(self, command: Command) -> dict[str, Any]:
        from notifier.actions.answer import answer_line
        from notifier.actions.goto import go
        from notifier.config import Config
        from notifier.core.commands import Answer, Goto

        self.commands.append(command)
        if self.snapshot is None:
            return {"ok": True, "said": "recorded"}
        if isinstance(command, Goto):
            code, said = go(Config(), self.snapshot, command.session)
        else:
            assert isinstance(command, Answer)
            code, said = answer_line(
                Config(), self.snapshot, command.session, command.call, list(command.choices), command.text, 5.0
            )
        return {"ok": code == 0, "said": said}

    def close(self) -> None:
        pass


def snapshot_data() -> dict[str, Any]:
    b = Board(liveness=True)
    args = {
        "questions": [
            {
                "question": "Pick a <b>database</b>?",
                "header": "DB",
                "multiSelect": True,
                "options": [
                    {"label": "SQLite", "recommended": True},
                    {"label": "Postgres", "description": "server"},
                ],
            },
            {"question": "And a cache?"},
        ]
    }
    now = time.time()
    b.local.apply(
        "/s/a.jsonl",
        [
            Header("id-a", "/home/dev/shop"),
            ToolStart(
                now - 90, "c1", "ask_user_question", extract("ask_user_question", args, "c1", now - 90)
            ),
        ],
        now,
    )
    b.local.apply(
        "/s/b.jsonl",
        [
            Header("id-b", "/home/dev/old"),
            ToolStart(
                now - 7200, "c2", "question", extract("question", {"question": "Gone?"}, "c2", now - 7200)
            ),
        ],
        now,
    )
    # (read once the questions had time to be drawn: the list can judge them)
    b.local.set_processes([Proc("/home/dev/shop", now - 1000)], now + DRAWN_S)
    return window_obj(b.snapshot(now))


def test_window_lists_questions_through_tk(desktop: dict[str, str]) -> None:
    require("tkinter")
    from notifier.window.window import TITLE, Window

    source = FakeSource(snapshot_data())
    window = Window(source, focus=["/s/b.jsonl", "c2"])
    try:
        wait_for(lambda: (window.root.update(), window.tree.get_children())[1], 10, "rows")
        assert window.root.title() == TITLE == "pi-notifier — pending questions"
        rows = [window.tree.item(i, "values") for i in window.tree.get_children()]
        assert rows[0][0] == "shop" and rows[0][2] == "ask_user_question" and rows[0][3] == "1 min"
        assert rows[1][0] == "old" and "abandoned" in rows[1][3]
        assert window.heading.cget("text") == "1 question waiting · 1 abandoned"
        assert window.selected_key() == ["/s/b.jsonl", "c2"]  # opened at the question it was asked for
        assert "disabled" not in window.clear_button.state()  # the abandoned one can be cleared
        window.clear()
        assert source.last() == Clear("/s/b.jsonl", "c2")
        window.tree.event_generate("<Up>")
        window.select(window.tree.get_children()[0])
        text = window.pane.current()
        assert "1. [DB] Pick a <b>database</b>?" in text and "2. And a cache?" in text
        assert (
            "• SQLite (recommended)" in text
            and "• Postgres — server" in text
            and "(several answers allowed)" in text
        )
        assert "Folder:  /home/dev/shop" in text
        # a live pi holds it: no resume command (that is for a session nobody runs)
        assert "pi --session" not in text and "disabled" in window.copy_button.state()
        assert "disabled" in window.clear_button.state()
        window.copy_resume()
        assert window.root.clipboard_get() == "cd /home/dev/shop && pi --session /s/a.jsonl"
        before = time.time()
        window.snooze()
        after = time.time()
        snooze = source.last()
        assert isinstance(snooze, Snooze) and snooze.session == "/s/a.jsonl" and snooze.project is None
        assert before + 900 <= snooze.until <= after + 900
        window.mute()
        assert source.last() == Mute("shop")
    finally:
        window.root.destroy()


def test_copy_resume_command_offers_only_what_parses_back(desktop: dict[str, str]) -> None:
    """A stopped session whose folder holds an escape sequence: nothing is copied, the status
    line says why. A remote one with shell syntax in its folder: the copied line parses back."""
    require("tkinter")
    import shlex

    from notifier.core.model import Question, QuestionItem, SessionRef, SessionView, remote_key
    from notifier.window.view import question_obj
    from notifier.window.window import Window

    now = time.time()
    q = Question("c", "question", (QuestionItem("Go?"),), now - 60)
    tricky = "/home/dev/it's $(touch PWNED)  x"
    evil = SessionRef("/s/evil.jsonl", "id-evil", "/tmp/x\x1b'\x1b';touch /tmp/PWNED;#", None)
    remote = SessionRef(remote_key("devbox", "/s/r.jsonl"), "id-r", tricky, None, "devbox")
    data = {
        "taken_at": now,
        "snoozed_until": 0.0,
        "working": 0,
        "questions": [
            question_obj(SessionView(evil, "needs_input", (), (q,), False, now), q, True),
            question_obj(SessionView(remote, "needs_input", (q,), (), None, now), q, False),
        ],
    }
    window = Window(FakeSource(data), focus=["/s/evil.jsonl", "c"])
    try:
        wait_for(lambda: (window.root.update(), window.tree.get_children())[1], 10, "rows")
        window.root.clipboard_clear()
        window.root.clipboard_append("before")
        assert window.selected_key() == ["/s/evil.jsonl", "c"]
        assert "disabled" not in window.copy_button.state()
        window.copy_resume()
        assert window.root.clipboard_get() == "before"
        why = "no resume command is offered: the folder of the session holds an escape character (U+001B)"
        assert window.status.cget("text") == why
        assert "\x1b" not in window.pane.current() and f"Resume:  {why}" in window.pane.current()
        (other,) = [i for i in window.tree.get_children() if i not in window.tree.selection()]
        window.select(other)
        assert window.selected_key() == [remote.key, "c"]
        window.copy_resume()
        ssh, flag, host, there = shlex.split(window.root.clipboard_get())
        assert (ssh, flag, host) == ("ssh", "-t", "devbox")
        assert shlex.split(there) == ["cd", tricky, "&&", "pi", "--session", "/s/r.jsonl"]
        assert window.status.cget("text") == "Resume command copied"
    finally:
        window.root.destroy()


def test_menu_action_fires_from_code(desktop: dict[str, str], monkeypatch: pytest.MonkeyPatch) -> None:
    """The same pystray objects the backend renders: find 'Snooze all → 1 hour' and fire it."""
    from notifier.outputs.tray import ICON_SIZE, Tray, tray_backend

    backend, _ = tray_backend("auto")
    assert backend is not None
    monkeypatch.delenv("PYSTRAY_BACKEND", raising=False)
    data = Board(liveness=False)
    data.local.apply(
        "/s/a.jsonl",
        [
            Header("i", "/home/dev/x"),
            ToolStart(1.0, "c", "question", extract("question", {"question": "Q?"}, "c", 1.0)),
        ],
        1.0,
    )
    fired: list[Command] = []
    tray = Tray(backend, fired.append)
    tray.update(UiState(data.snapshot(2.0)))  # (the state it is handed: it asks for none)
    assert "PYSTRAY_BACKEND" not in os.environ  # (the processes the app starts do not inherit it)
    items = list(tray.icon.menu.items)
    assert items[0].text.startswith("x — Q?")
    items[0](tray.icon)
    assert fired[-1] == Show(Focus("/s/a.jsonl", "c"))
    snooze = next(i for i in items if i.text == "Snooze all")
    hour = next(i for i in snooze.submenu.items if i.text == "1 hour")
    before = time.time()
    hour(tray.icon)
    after = time.time()
    snoozed = fired[-1]
    assert isinstance(snoozed, Snooze) and snoozed.session is None and snoozed.project is None
    assert before + 3600 <= snoozed.until <= after + 3600  # from the click
    tray.icon()  # the default action (left click): open the window
    assert fired[-1] == Show()
    tray.update(UiState(data.snapshot(2.0)))
    assert tray.icon.icon.tobytes() == icon_image("needs", 1, ICON_SIZE).tobytes()  # what the icon shows


@pytest.mark.usefixtures("own_pystray")
@pytest.mark.parametrize("backend", ["gtk", "appindicator"])
def test_an_age_tick_relabels_the_gtk_menu_built_and_a_new_question_builds_one(
    desktop: dict[str, str], monkeypatch: pytest.MonkeyPatch, backend: str
) -> None:
    """The GTK backends' menu (the Gtk.Menu pystray built, which the host shows), on a clock of
    the test's: the question's first minute sets the new labels on that menu (the same object:
    libappindicator keeps its dbusmenu, an open popup stays open); a new question builds a new
    one; a menu that does not match what it should read (changed behind the tray's back) is
    built again rather than half relabelled."""
    try:
        from gi.repository import GLib
    except ImportError:
        pytest.skip("the GTK backends need PyGObject (the gtk extra)")
    import types

    from notifier import compat
    from notifier.outputs import tray as tray_module
    from notifier.outputs.tray import Tray

    from ..unit.test_view_icons import board_with

    if not compat.checked():
        pytest.skip(f"pystray {compat.version()}: relabelled only on the versions checked")
    clock = [1_800_000_000.0]
    fake = types.SimpleNamespace(time=lambda: clock[0], monotonic=lambda: clock[0])
    monkeypatch.setattr(tray_module, "time", fake)
    monkeypatch.delenv("PYSTRAY_BACKEND", raising=False)
    asked = clock[0] - 58.0

    def drawn() -> Any:
        """The menu built, once GTK's loop has run what it was handed."""
        while GLib.MainContext.default().iteration(False):
            pass
        return tray.icon._menu_handle  # noqa: SLF001 (pystray's own: the menu the host is given)

    def labels(menu: Any) -> list[str]:
        return [c.get_child().get_text() for c in menu.get_children() if c.get_child() is not None]

    tray = Tray(backend, lambda command: None)
    assert tray.ages
    one = UiState(board_with(("s1", "/home/u/p", "Deploy?", asked)).snapshot(clock[0]))
    tray.update(one)
    tray.icon.update_menu()  # (as the loop starts: pystray builds the first menu)
    first = drawn()
    assert labels(first)[0] == "p — Deploy? (<1 min)"
    clock[0] = asked + 60.0  # its first minute
    tray.update(one)
    assert drawn() is first and labels(first)[0] == "p — Deploy? (1 min)"
    assert labels(first.get_children()[1].get_submenu()) == ["p — Deploy? (1 min)"]  # (Go to session)
    two = UiState(board_with(("s1", "/home/u/p", "Deploy?", asked), ("s2", "/home/u/q", "Ship?", clock[0])).snapshot(clock[0]))
    tray.update(two)
    second = drawn()
    assert second is not first and "q — Ship? (<1 min)" in labels(second)
    second.remove(second.get_children()[0])  # not what it should read any more
    clock[0] += 60.0
    tray.update(two)  # (labels alone, as the tray sees it)
    third = drawn()
    assert third is not second and labels(third)[:2] == ["q — Ship? (1 min)", "p — Deploy? (2 min)"]


def test_tray_alone_without_a_notification_server(tmp_path: Path, trayer: None) -> None:
    sessions = tmp_path / "sessions"
    f = sessions / "--home-dev-solo--" / "a.jsonl"
    append(f, header("/home/dev/solo"), user())
    with AppProcess("run", "--liveness", "off", "--sessions-dir", str(sessions)) as app:
        app.log_has("no notification server: ")
        app.log_has("the tray icon alone will show questions")
        wait_for(
            lambda: count(tray_area(), COLORS["working"]) + count(tray_area(), COLORS["idle"]) > 100,
            20,
            "icon docked",
        )
        append(f, ask("q1", "Only the tray?"))
        wait_for(lambda: count(tray_area(), COLORS["needs"]) > 100, 10, "needs-answer icon")
        assert app.stop() == 0
    assert not [line for line in app.stderr if "tray stopped" in line or "Traceback" in line]


def test_status_notifier_item_desktops_get_the_appindicator_tray(tmp_path: Path, dunst: Dunst) -> None:
    """KDE, GNOME with the AppIndicator extension: a real StatusNotifierItem host and watcher."""
    from .conftest import require
    from .services import name_has_owner, stop

    require("gtk-sni-tray-standalone", "import")
    env = dict(os.environ)
    log = tmp_path / "sni-host.log"

    def watcher() -> bool:
        return name_has_owner(env, "org.kde.StatusNotifierWatcher")

    def start() -> subprocess.Popen[bytes]:
        with open(log, "ab") as err:
            return subprocess.Popen(
                ["gtk-sni-tray-standalone", "--watcher", "--top", "--end"],
                env=env,
                stdout=subprocess.DEVNULL,
                stderr=err,
            )

    for _ in range(3):  # a host that quits while it starts (seen once in CI) is started again
        host = start()

        def up_or_quit(h: subprocess.Popen[bytes] = host) -> bool:
            return watcher() or h.poll() is not None

        wait_for(up_or_quit, 20, "the SNI watcher")
        if watcher():
            break
    try:
        assert watcher(), f"the SNI host kept quitting: {log.read_text(errors='replace')[-500:]}"
        sessions = tmp_path / "sessions"
        f = sessions / "--home-dev-kde--" / "a.jsonl"
        append(f, header("/home/dev/kde"), user())
        doctor = cli("doctor", "--sessions-dir", str(sessions)).stdout
        assert "tray host: gtk-sni-tray-standalone (StatusNotifierItem watcher)" in doctor
        try:
            import gi  # noqa: F401
        except ImportError:  # the xorg backend: it cannot show in a StatusNotifierItem host
            assert "[FAIL] tray: xorg" in doctor and "StatusNotifierItem watcher) only" in doctor
            return
        assert "[ok  ] tray: appindicator" in doctor
        with AppProcess("run", "--liveness", "off", "--sessions-dir", str(sessions)) as app:

            def registered() -> bool:
                out = subprocess.run(
                    [
                        "dbus-send",
                        "--session",
                        "--print-reply",
                        "--dest=org.kde.StatusNotifierWatcher",
                        "/StatusNotifierWatcher",
                        "org.freedesktop.DBus.Properties.Get",
                        "string:org.kde.StatusNotifierWatcher",
                        "string:RegisteredStatusNotifierItems",
                    ],
                    capture_output=True,
                    text=True,
                    env=env,
                    timeout=10,
                )
                return 'string ":' in out.stdout

            wait_for(registered, 20, "our item registered with the watcher")
            append(f, ask("q1", "Seen on SNI?"))
            top_bar = (560, 0, 640, 40)

            def red() -> int:
                png = subprocess.run(
                    ["import", "-window", "root", "png:-"], capture_output=True, check=True
                ).stdout
                return count(Image.open(io.BytesIO(png)).convert("RGB").crop(top_bar), COLORS["needs"])

            wait_for(lambda: red() > 50, 20, "the needs-answer icon in the SNI host")
            assert app.stop() == 0
    finally:
        stop(host)


def test_a_signal_right_at_start_stops_the_gtk_tray(tmp_path: Path, dunst: Dunst) -> None:
    """Stopping a GTK loop that has not started yet does nothing; the app used to hang when a
    signal arrived just before its tray loop began."""
    import signal

    from notifier.control import request


    for i in range(6):
        with AppProcess("run", "--liveness", "off", "--sessions-dir", str(tmp_path)) as app:
            wait_for(lambda: request({"cmd": "ping"}), 20, "app")
            app.proc.send_signal(signal.SIGTERM if i % 2 else signal.SIGINT)
            assert app.proc.wait(5) == 0, f"start {i} did not stop"


def test_window_answers_a_gate_with_no_first(desktop: dict[str, str]) -> None:
    """A permission gate (companion extension): its whole command in the details pane, "No"
    first and the default; a click answers through the channel (here: no pi, so it says so)."""
    require("tkinter")
    from tkinter import ttk

    from notifier.companion import dialog_from, question_of, ref_of
    from notifier.window.window import Window

    command = "rm -rf build \\\n  && echo done"
    gate = dialog_from(
        {
            "id": "ab-1",
            "kind": "select",
            "title": f"Dangerous command:\n\n  {command}\n\nAllow?",
            "options": ["Yes", "No"],
            "tool": "bash",
            "tool_call_id": "call_b1",
            "session_file": "/s/g.jsonl",
            "cwd": "/home/dev/shop",
            "at": time.time() * 1000,
            "remote": "value",
        }
    )
    b = Board(liveness=False)
    ref = ref_of(gate, ["/s"])
    assert ref is not None
    b.dialogs.open(("/nowhere.sock", "ab-1"), ref, question_of(gate, time.time()), time.time())
    snap = b.snapshot(time.time())
    window = Window(FakeSource(window_obj(snap), snap))
    try:
        wait_for(lambda: (window.root.update(), window.tree.get_children())[1], 10, "rows")
        assert "   rm -rf build \\\n   && echo done" in window.pane.current()
        buttons = [w for w in window.answer_bar.winfo_children() if w.winfo_class() == "TButton"]
        assert [w.cget("text") for w in buttons] == ["No", "Yes"]
        assert str(buttons[0].cget("default")) == "active"
        assert isinstance(buttons[0], ttk.Button)
        buttons[0].invoke()
        wait_for(
            lambda: (window.root.update(), "no longer open" in window.status.cget("text"))[1], 10, "the reply"
        )
    finally:
        window.root.destroy()


def test_the_demo_window_offers_no_answer_buttons(desktop: dict[str, str]) -> None:
    """No pi runs the demo's recorded session: buttons could only fail, so none are offered
    (answers, Go to session, Copy resume command); a real question gets them."""
    require("tkinter")
    from notifier.resources import DEMO_SESSION_ID
    from notifier.window.window import Window

    now = time.time()
    b = Board(liveness=False)
    question = {"question": "Which database?", "options": [{"label": "SQLite"}, {"label": "Postgres"}]}
    for file, sid, call in (("/s/demo.jsonl", DEMO_SESSION_ID, "c1"), ("/s/real.jsonl", "id-real", "c2")):
        b.local.apply(file, [Header(sid, "/home/dev/shop"), ToolStart(now - 5, call, "question", extract("question", question, call, now - 5))], now)
    window = Window(FakeSource(window_obj(b.snapshot(now))), focus=["/s/demo.jsonl", "c1"])
    try:
        wait_for(lambda: (window.root.update(), window.tree.get_children())[1], 10, "rows")

        def buttons() -> list[str]:
            window.root.update()
            return [w.cget("text") for w in window.answer_bar.winfo_children() if w.winfo_class() == "TButton"]

        labels = [w.cget("text") for w in window.answer_bar.winfo_children() if w.winfo_class() == "TLabel"]
        assert buttons() == [] and any("demo" in text for text in labels)
        # nor Go to session (no pi to go to) or Copy resume command (its file goes with the demo)
        assert window.goto_button.instate(["disabled"]) and window.copy_button.instate(["disabled"])
        real = next(i for i in window.tree.get_children() if i != window.tree.selection()[0])
        window.select(real)
        assert buttons() == ["SQLite", "Postgres"]
        assert window.goto_button.instate(["!disabled"])
    finally:
        window.root.destroy()


# ---- tray hosts: none, one that comes and goes, the xorg icon's size ----



def _config(tmp_path: Path, backend: str) -> str:
    cfg = tmp_path / "config.toml"
    cfg.write_text(f'settle_ms = 0\ntray.backend = "{backend}"\n')
    return str(cfg)


def xorg_icon() -> tuple[int, int, int, int] | None:
    """The xorg icon window: (width, height, parent window, pixels of the needs-answer red), or
    None when there is none (or it is not docked: its parent is the root)."""
    from Xlib import X, display

    d = display.Display()
    try:
        root = d.screen().root
        todo = list(root.query_tree().children)
        while todo:
            w = todo.pop()
            try:
                if w.get_wm_class() == ICON_CLASS:
                    g = w.get_geometry()
                    parent = w.query_tree().parent
                    if parent.id == root.id:
                        return None
                    raw = w.get_image(0, 0, g.width, g.height, X.ZPixmap, 0xFFFFFFFF).data
                    img = Image.frombytes("RGB", (g.width, g.height), raw, "raw", "BGRX")
                    return g.width, g.height, parent.id, count(img, COLORS["needs"])
                todo.extend(w.query_tree().children)
            except Exception:  # a window that went away while we looked
                continue
        return None
    finally:
        d.close()


def test_xorg_icon_keeps_its_size_through_50_changes(
    tmp_path: Path, dunst: Dunst, trayer: None, private_dirs: Path
) -> None:
    """pystray's xorg backend asked trayer to dock its window again at every change; trayer made
    a new socket each time and left the icon 1 px wide after a few. Docked once, it stays."""
    sessions = tmp_path / "sessions"
    f = sessions / "--home-dev-size--" / "a.jsonl"
    append(f, header("/home/dev/size"), user())
    seen: list[tuple[int, int, int]] = []
    with AppProcess(
        "run", "--liveness", "off", "--sessions-dir", str(sessions), "--config", _config(tmp_path, "xorg")
    ) as app:
        first = wait_for(xorg_icon, 20, "the xorg icon docked")
        for n in range(25):  # 50 changes: needs-answer, then answered
            append(f, ask(f"q{n}", f"Question {n}?"))
            seen.append(wait_for(lambda: (i := xorg_icon()) and i[3] > 50 and i, 10, f"red {n}")[:3])
            append(f, answer(f"q{n}"))
            seen.append(wait_for(lambda: (i := xorg_icon()) and i[3] == 0 and i, 10, f"not red {n}")[:3])
        assert app.stop() == 0
    assert len(seen) == 50
    assert {s[2] for s in seen} == {first[2]}, "the icon was docked again (a new socket in trayer)"
    assert min(s[0] for s in seen) >= 16 and min(s[1] for s in seen) >= 16, seen
    assert not [line for line in app.stderr if "Traceback" in line or "Failed to dock" in line]


@pytest.mark.parametrize("backend", ["xorg", "gtk"])
def test_no_tray_host_then_one_comes_and_goes(
    tmp_path: Path, desktop: dict[str, str], dunst: Dunst, private_dirs: Path, backend: str
) -> None:
    """No tray host: said once, no tracebacks, notifications go on. A host that starts gets the
    icon; one that goes is said once; the next one gets the icon again."""
    require("trayer", "import")
    if backend == "gtk":
        try:
            import gi  # noqa: F401
        except ImportError:
            pytest.skip("PyGObject is not installed here (the 'gtk' extra)")
    from .services import start_trayer, stop

    sessions = tmp_path / "sessions"
    f = sessions / "--home-dev-late--" / "a.jsonl"
    append(f, header("/home/dev/late"), user())
    with AppProcess(
        "run", "--liveness", "off", "--sessions-dir", str(sessions), "--config", _config(tmp_path, backend)
    ) as app:
        app.log_has("no tray host (no program owns the XEmbed tray selection")
        append(f, ask("q1", "Anyone there?"))
        wait_for(lambda: dunst.displayed() == 1, 10, "the notification, with no tray")
        for round_ in range(2):
            host = start_trayer(desktop)
            try:

                def appeared(r: int = round_) -> bool:
                    return len([x for x in app.stderr if "tray host appeared: trayer" in x]) == r + 1

                wait_for(appeared, 10, "the host said")
                wait_for(lambda: count(tray_area(), COLORS["needs"]) > 100, 20, f"icon in host {round_ + 1}")
            finally:
                stop(host)

            def gone(r: int = round_) -> bool:
                return len([x for x in app.stderr if "tray host gone: trayer" in x]) == r + 1

            wait_for(gone, 10, "the host's going said")
        append(sessions / "--home-dev-later--" / "b.jsonl", header("/home/dev/later"), user(), ask("q2", "Still?"))
        wait_for(lambda: dunst.displayed() == 2, 10, "notifications go on without a tray")
        assert app.stop() == 0
    said = [line for line in app.stderr if "no tray host" in line]
    assert len(said) == 1, app.stderr
    assert not [line for line in app.stderr if "Traceback" in line or "Failed to dock" in line], app.stderr


def test_xorg_tray_without_a_host_stops_at_once(tmp_path: Path, dunst: Dunst, private_dirs: Path) -> None:
    """Without PyGObject and without a tray host, pystray's xorg stop sometimes never ended its
    loop (about 1 start in 3): the app hung on SIGTERM until killed."""
    import signal

    from notifier.control import request

    cfg = _config(tmp_path, "xorg")
    for i in range(6):
        with AppProcess("run", "--liveness", "off", "--sessions-dir", str(tmp_path), "--config", cfg) as app:
            wait_for(lambda: request({"cmd": "ping"}), 20, "app")
            app.log_has("no tray host")
            app.proc.send_signal(signal.SIGTERM)
            assert app.proc.wait(5) == 0, f"start {i} did not stop"


def test_a_stuck_xorg_loop_ends_when_its_window_is_destroyed(tmp_path: Path, desktop: dict[str, str]) -> None:
    """The way out when pystray's stop does not end its xorg loop: the window destroyed over a
    connection of our own (notifier/compat.py)."""
    from notifier import compat

    script = tmp_path / "icon.py"
    script.write_text(
        "import os, sys\n"
        "os.environ['PYSTRAY_BACKEND'] = 'xorg'\n"
        "import pystray\n"
        "from PIL import Image\n"
        "from notifier import compat\n"
        "icon = pystray.Icon('pi-notifier', icon=Image.new('RGBA', (8, 8), (255, 0, 0, 255)))\n"
        "def setup(icon):\n"
        "    print(compat.window_id(icon), flush=True)\n"
        "icon.run(setup)\n"
        "print('ended', flush=True)\n"
    )
    proc = subprocess.Popen(
        [sys.executable, str(script)], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )
    try:
        assert proc.stdout is not None
        wid = int(proc.stdout.readline())
        assert compat.destroy_window(wid)
        out, err = proc.communicate(timeout=10)
        assert out.strip() == "ended" and proc.returncode == 0, err
        assert not compat.destroy_window(wid)  # gone: said, not raised
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait(5)


def test_host_follower_sees_trays_come_and_go(desktop: dict[str, str]) -> None:
    """The XEmbed selection (trayer) and the StatusNotifierWatcher name (claimed here on the real
    bus), each followed as it comes and goes, and named."""
    require("trayer")
    import threading

    from jeepney import DBusAddress, new_method_call
    from jeepney.io.blocking import open_dbus_connection

    from notifier.outputs.tray_hosts import WATCHER, HostFollower, Hosts, look
    from notifier.system.supervisor import Worker

    from .services import start_trayer, stop

    changes: list[Hosts] = []
    follower = HostFollower(changes.append)
    ending = threading.Event()
    worker = Worker("hosts-test", ending)  # (the app's outputs thread, where the follower is read)
    worker.start()
    try:
        assert follower.start() == Hosts() and changes == [Hosts()]
        follower.follow(worker)
        host = start_trayer(desktop)
        try:
            wait_for(lambda: follower.hosts.xembed == "trayer", 10, "trayer seen")
            assert look()[0].xembed == "trayer"
        finally:
            stop(host)
        wait_for(lambda: follower.hosts.xembed is None, 10, "trayer gone")
        bus = DBusAddress("/org/freedesktop/DBus", "org.freedesktop.DBus", "org.freedesktop.DBus")
        with open_dbus_connection(bus="SESSION") as conn:
            conn.send_and_get_reply(new_method_call(bus, "RequestName", "su", (WATCHER, 0)), timeout=5)
            me = os.path.basename(Path("/proc/self/cmdline").read_bytes().split(b"\0")[0].decode())
            wait_for(lambda: follower.hosts.sni == me, 10, "the watcher seen, named")
            assert look()[0] == Hosts(None, me)
            stopped = threading.Event()
            assert follower.wait(lambda h: h.sni == me, stopped)
        wait_for(lambda: follower.hosts.sni is None, 10, "the watcher gone with its connection")
        assert [c for c in changes if c != Hosts()] == [Hosts("trayer", None), Hosts(None, me)]
        stopped.set()
        follower.wake()
        assert not follower.wait(lambda h: h.sni == "never", stopped)
    finally:
        follower.close()
        ending.set()
        assert worker.sync(5)


def test_doctor_names_the_tray_host_it_found(tmp_path: Path, desktop: dict[str, str], private_dirs: Path) -> None:
    """OK only with a host that answered; none: a note that says what was asked."""
    require("trayer")
    from .services import start_trayer, stop

    def line() -> str:
        out = cli("doctor", "--sessions-dir", str(tmp_path)).stdout
        (tray,) = [x for x in out.splitlines() if "] tray: " in x]
        return str(tray)

    none = line()
    assert none.startswith("[note] tray: ") and none.endswith(
        "tray host: none (no program owns the XEmbed tray selection and no StatusNotifierWatcher is on"
        " the session bus): the icon appears when one starts"
    )
    host = start_trayer(desktop)
    try:
        found = line()
    finally:
        stop(host)
    assert found.startswith("[ok  ] tray: ") and found.endswith("; tray host: trayer (XEmbed system tray)")


def test_ages_in_the_menu_grow_while_the_question_waits(tmp_path: Path, dunst: Dunst) -> None:
    """Read over dbusmenu from a real StatusNotifierItem host: the question's age in the menu goes
    on growing with nothing else changing (no new line in any session file), by the minute."""
    import re

    from .conftest import require
    from .desktops import Desktop, menu_layout, sni_items
    from .services import name_has_owner, stop

    require("gtk-sni-tray-standalone")
    try:
        import gi  # noqa: F401
    except ImportError:
        pytest.skip("the appindicator tray needs PyGObject (the gtk extra)")
    env = dict(os.environ)

    class Bus(Desktop):  # the session bus of this test, as a Desktop calls it
        def __init__(self) -> None:  # (a Desktop's own bus and processes are not started)
            self.env = env

    bus = Bus()
    log = tmp_path / "sni-host.log"
    with open(log, "ab") as err:
        host = subprocess.Popen(
            ["gtk-sni-tray-standalone", "--watcher", "--top", "--end"], env=env, stdout=subprocess.DEVNULL, stderr=err
        )
    try:
        wait_for(
            lambda: name_has_owner(env, "org.kde.StatusNotifierWatcher") or host.poll() is not None, 20, "the SNI watcher"
        )
        assert host.poll() is None, log.read_text(errors="replace")[-500:]
        sessions = tmp_path / "sessions"
        f = sessions / "--home-dev-ages--" / "a.jsonl"
        append(f, header("/home/dev/ages"), user(), ask("q1", "Growing older?", at=time.time() - 50))
        with AppProcess("run", "--liveness", "off", "--no-notify", "--sessions-dir", str(sessions)) as app:
            (service,) = wait_for(lambda: sni_items(bus), 20, "our item registered")
            item = service + "/org/ayatana/NotificationItem/pi_notifier"  # (this watcher lists the bus name alone)

            def age() -> str | None:
                for _, label, _ in menu_layout(bus, item):
                    m = re.search(r"Growing older\? \((<1 min|\d+ min)\)$", label)
                    if m:
                        return m.group(1)
                return None

            assert wait_for(age, 20, "the question in the menu") == "<1 min"
            size = f.stat().st_size
            wait_for(lambda: age() == "1 min", 20, "its age growing in the menu")
            assert f.stat().st_size == size and app.proc.poll() is None
    finally:
        stop(host)


def test_xorg_icon_changes_from_other_threads_leave_the_loop_connection_alone(desktop: dict[str, str]) -> None:
    """pystray's xorg icon carries a change from another thread over the loop's own connection;
    python-xlib 0.33 can then leave the loop waiting for a reply for ever (the icon never drawn
    in a new tray, ~1 start in 8). With compat.calls_over_own_connection that thread never uses
    the loop's connection, and the change still reaches the loop."""
    import threading

    # the xorg backend itself: pystray may already have chosen another one in this process (gtk,
    # appindicator where PyGObject is installed), and PYSTRAY_BACKEND is read at its first import
    import pystray._xorg as xorg  # noqa: SLF001
    from Xlib import display

    from notifier import compat

    if not compat.checked():
        pytest.skip(f"pystray {compat.version()}: the workaround is not applied")
    icon = xorg.Icon("pi-notifier-t", icon=Image.new("RGB", (16, 16), "red"), title="first")
    used_by: set[str] = set()
    conn = icon._display  # noqa: SLF001
    for name in ("send_event", "flush"):
        real = getattr(conn, name)

        def record(*args: Any, _real: Any = real, **kwargs: Any) -> Any:
            used_by.add(threading.current_thread().name)
            return _real(*args, **kwargs)

        setattr(conn, name, record)
    compat.calls_over_own_connection(icon)
    compat.quiet_dock_failures()  # (no tray host here: showing it only fails to dock)

    def setup(icon: Any) -> None:
        icon.visible = True  # (from pystray's setup thread: already not the loop's)

    loop = threading.Thread(target=icon.run, kwargs={"setup": setup}, name="loop", daemon=True)
    loop.start()
    wait_for(lambda: icon.visible, 10, "the icon shown")
    other = threading.Thread(target=lambda: setattr(icon, "title", "second"), name="other", daemon=True)
    other.start()
    other.join(10)
    assert not other.is_alive(), "the change never reached the loop"
    watcher = display.Display()
    try:
        window = watcher.create_resource_object("window", compat.window_id(icon))
        wait_for(lambda: window.get_wm_name() == "second", 10, "the new title on the window")
    finally:
        watcher.close()
    assert used_by <= {"loop"}, used_by  # (not "other", nor pystray's setup thread)
    icon.stop()
    loop.join(10)
    assert not loop.is_alive()


def test_the_demo_on_a_display_with_no_tray_host_does_not_say_the_icon_turned_red(desktop: dict[str, str]) -> None:
    """The demo has a tray icon here, but no tray host runs to show it (a bare X server): it
    says so, never that the icon turned red or that the window opens from it."""
    import signal

    from ..conftest import ROOT

    demo = subprocess.Popen([sys.executable, "-m", "notifier", "demo"], stdout=subprocess.PIPE,
                            stderr=subprocess.DEVNULL, text=True, cwd=ROOT)  # fmt: skip
    try:
        assert demo.stdout is not None
        lines = [demo.stdout.readline()]
        while "The answer arrives" not in lines[-1]:
            lines.append(demo.stdout.readline())
            assert lines[-1], f"the demo ended early: {lines}"
        said = "".join(lines)
        assert "no tray icon here" in said and "turned red" not in said and "from the icon" not in said, said
        demo.send_signal(signal.SIGTERM)
        assert demo.wait(10) == 0
    finally:
        if demo.poll() is None:
            demo.kill()
            demo.wait()
