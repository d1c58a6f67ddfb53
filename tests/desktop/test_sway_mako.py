"""pi-notifier on a real sway with mako 1.7 (which answers some calls twice: a method return, then
an UnknownMethod error with the same reply serial). Before the D-Bus client matched replies by
serial, 16 of 20 starts here were silent."""

from __future__ import annotations

import os
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from ..app_process import AppProcess
from ..conftest import wait_for
from ..writer import answer, append, ask, header, user
from .conftest import require
from .sway import Sway


@pytest.fixture
def sway(tmp_path: Path) -> Iterator[Sway]:
    require("sway", "mako", "makoctl", "unshare", "nsenter", "setpriv", "dbus-daemon", "dbus-send")
    (tmp_path / "sway").mkdir()
    desktop = Sway(tmp_path / "sway")
    try:
        desktop.start_mako()
        yield desktop
    finally:
        desktop.stop()


def _env(sway: Sway) -> dict[str, str]:
    """The app's environment there: sway's bus and display, this test's private folders."""
    mine = ("HOME", "XDG_CONFIG_HOME", "XDG_STATE_HOME", "XDG_DATA_HOME", "XDG_CACHE_HOME")
    return dict(sway.env, **{k: os.environ[k] for k in mine})


def _app(sway: Sway, sessions: Path, *extra: str) -> AppProcess:
    args = ("run", "--json", "--no-tray", "--liveness", "off", "--sessions-dir", str(sessions), *extra)
    return AppProcess(argv=sway.argv(sys.executable, "-m", "notifier", *args), env=_env(sway))


def _session(root: Path) -> Path:
    f = root / "--home-dev-wayland--" / "s.jsonl"
    append(f, header("/home/dev/wayland"), user())
    return f


def _ours(sway: Sway) -> list[dict[str, Any]]:
    return [n for n in sway.notifications() if n["app"] == "pi-notifier"]


def test_every_start_delivers_to_mako(tmp_path: Path, sway: Sway) -> None:
    sessions = tmp_path / "sessions"
    f = _session(sessions)
    cfg = tmp_path / "config.toml"
    cfg.write_text("settle_ms = 0\n")
    delivered = 0
    for i in range(20):
        with _app(sway, sessions, "--config", str(cfg)) as app:
            app.wait("ready")
            append(f, ask(f"q{i}", f"Start {i}?"))
            (shown,) = wait_for(lambda: _ours(sway), 10, f"start {i}: mako shows the question")  # noqa: B023
            assert shown["summary"] == "wayland needs an answer" and f"Start {i}?" in str(shown["body"])
            assert app.stop() == 0  # (closes it)
        assert not [x for x in app.stderr if "no notification server" in x or "Traceback" in x], app.stderr
        append(f, answer(f"q{i}"))
        wait_for(lambda: not _ours(sway), 10, "closed at the stop")
        delivered += 1
    assert delivered == 20


def test_mako_restarted_gets_the_question_again_and_its_click_arrives(tmp_path: Path, sway: Sway) -> None:
    sessions = tmp_path / "sessions"
    f = _session(sessions)
    with _app(sway, sessions, "-v") as app:
        app.wait("ready")
        app.log_has("notifications: D-Bus notification server mako")
        append(f, ask("q1", "Still there after mako restarts?", options=["Yes", "No"]))
        (first,) = wait_for(lambda: _ours(sway), 10, "mako shows the question")
        assert set(first["actions"]) >= {"default", "answer:1", "answer:2", "show", "snooze"}
        sway.stop_mako()
        app.log_has("the notification server went away")
        sway.start_mako()
        app.log_has("the notification server is back: D-Bus notification server mako")
        (again,) = wait_for(lambda: _ours(sway), 10, "the new mako shows it again")
        sway.invoke(int(again["id"]), "snooze")
        app.log_has("snoozed 1 session")
        wait_for(lambda: not _ours(sway), 10, "snoozed: closed")
        assert app.stop() == 0
    assert not [x for x in app.stderr if "Traceback" in x]


def test_doctor_names_mako(tmp_path: Path, sway: Sway) -> None:
    import subprocess

    done = subprocess.run(
        sway.argv(sys.executable, "-m", "notifier", "doctor", "--sessions-dir", str(tmp_path)),
        env=_env(sway), capture_output=True, text=True, timeout=60,
    )  # fmt: skip
    (line,) = [x for x in done.stdout.splitlines() if "] notifications:" in x]
    assert line.startswith("[ok  ] notifications: dbus — mako "), line
    assert (
        "(emersion; process mako, pid " in line
        and "answered GetServerInformation and GetCapabilities" in line
    )
    assert "actions" in line and "install" not in line
