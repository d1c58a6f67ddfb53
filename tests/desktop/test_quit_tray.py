"""``pi-notifier quit`` on a desktop: the app with its icon docked in a real tray and its window
open ends, and nothing of it is left: no process (the window's included), no window, no icon."""

from __future__ import annotations

from pathlib import Path

import psutil

from notifier.outputs.tray import COLORS

from ..app_process import AppProcess
from ..conftest import cli, wait_for
from ..writer import append, ask, header, user
from .conftest import require
from .services import Dunst
from .test_tray import count, tray_area, windows_of_class


def test_quit_ends_the_tray_app_its_window_and_its_icon(
    tmp_path: Path, dunst: Dunst, trayer: None, private_dirs: Path
) -> None:
    require("tkinter")
    sessions = tmp_path / "sessions"
    append(sessions / "--home-dev-shop--" / "a.jsonl", header("/home/dev/shop"), user(), ask("q1", "Quit?"))
    with AppProcess("run", "--liveness", "off", "--sessions-dir", str(sessions)) as app:
        wait_for(lambda: count(tray_area(), COLORS["needs"]) > 100, 20, "the icon docked, a question waiting")
        assert cli("show").returncode == 0
        wait_for(lambda: windows_of_class("pi-notifier"), 20, "the window")
        family = [psutil.Process(app.proc.pid), *psutil.Process(app.proc.pid).children(recursive=True)]
        assert len(family) >= 2  # the app and its window process
        r = cli("quit")
        assert r.returncode == 0 and r.stdout == f"the app (pid {app.proc.pid}) has quit\n", r.stdout + r.stderr
        assert app.proc.poll() == 0
        wait_for(lambda: not [p for p in family if p.is_running() and p.status() != psutil.STATUS_ZOMBIE],
                 10, "the app's processes gone")  # fmt: skip
        wait_for(lambda: windows_of_class("pi-notifier") == [], 10, "the window closed")
        wait_for(lambda: count(tray_area(), COLORS["needs"]) == 0, 10, "the icon gone from the tray")
    assert not [line for line in app.stderr if "Traceback" in line]
