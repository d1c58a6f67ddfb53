"""goto and skip_when_focused on a real KWin 5.27 (``kwin_wayland --virtual`` with XWayland, in a
user namespace with its own session bus: tests/desktop/kwin.py), through KWin's scripting D-Bus
interface. A stand-in pi (fake_pi.py) runs in an xterm under KWin's XWayland; another xterm is
focused. The app's environment has no DISPLAY: what it knows of windows comes from KWin."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from ..app_process import AppProcess
from ..conftest import wait_for
from ..writer import answer, append, ask
from .conftest import require
from .kwin import KWin
from .test_sway_focus import _fake_pi, _session
from .test_sway_mako import _env


@pytest.fixture
def kwin(tmp_path: Path) -> Iterator[KWin]:
    require("kwin_wayland", "Xwayland", "xterm", "unshare", "nsenter", "setpriv", "dbus-daemon", "dbus-send")
    (tmp_path / "kwin").mkdir()
    desktop = KWin(tmp_path / "kwin")
    try:
        yield desktop
    finally:
        desktop.stop()


def _cli(kwin: KWin, *args: str, timeout: float = 60) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        kwin.argv(sys.executable, "-m", "notifier", *args), env=_env(kwin), capture_output=True, text=True, timeout=timeout
    )


def _pi_in_xterm(kwin: KWin, tmp_path: Path, name: str) -> tuple[subprocess.Popen[Any], Path]:
    command, sessions, project = _fake_pi(tmp_path, name)
    term = kwin.xterm(*command, env=dict(kwin.env, FAKE_PI_SESSIONS=str(sessions)), cwd=project)
    wait_for(lambda: list(sessions.rglob("*.jsonl")), 30, "the pi in the xterm to write its session")
    return term, sessions


def _focus(kwin: KWin, pid: int) -> None:
    """Focus the window of ``pid`` with a script of the test's own (not pi-notifier's)."""
    kwin.kwin_script(
        "var l = workspace.clientList();\n"
        f"for (var i = 0; i < l.length; i++) if (l[i].pid === {pid}) workspace.activeClient = l[i];"
    )
    wait_for(lambda: kwin.active_pid() == pid, 20, f"the window of pid {pid} active")


def _windows(kwin: KWin) -> set[int]:
    text = kwin.kwin_script(
        "var l = workspace.clientList();\n"
        'for (var i = 0; i < l.length; i++) if (l[i].normalWindow) print("window-pid=" + l[i].pid);'
    )
    return {int(part.split()[0]) for part in text.split("window-pid=")[1:]}


def test_goto_focuses_an_xterm_through_kwin_scripting(tmp_path: Path, kwin: KWin) -> None:
    xterm, sessions = _pi_in_xterm(kwin, tmp_path, "a")
    other = kwin.xterm("sleep", "3600")
    wait_for(lambda: {xterm.pid, other.pid} <= _windows(kwin), 30, "both xterms mapped")
    _focus(kwin, other.pid)

    env = _env(kwin)
    assert "DISPLAY" not in env and env["XDG_CURRENT_DESKTOP"] == "KDE"
    status = json.loads(_cli(kwin, "status", "--json", "--sessions-dir", str(sessions)).stdout)
    (session,) = status["sessions"]
    assert session["location"]["window"] == {"via": "kwin", "id": xterm.pid}

    doctor = _cli(kwin, "doctor", "--sessions-dir", str(sessions)).stdout
    (line,) = [x for x in doctor.splitlines() if "] focus:" in x]
    assert line.startswith("[ok  ] focus: KWin scripting (org.kde.KWin on the session bus): ")
    assert f"focused: pid {other.pid}" in line

    done = _cli(kwin, "goto", "--sessions-dir", str(sessions))
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("focused pid ") and "through KWin scripting" in done.stdout
    assert kwin.active_pid() == xterm.pid  # (read back by the test's own script)

    # and back: the other one focused again, goto again
    _focus(kwin, other.pid)
    again = _cli(kwin, "goto", "--sessions-dir", str(sessions))
    assert again.returncode == 0, again.stderr
    assert kwin.active_pid() == xterm.pid


def test_goto_exits_1_when_kwin_has_no_window_of_that_pi(tmp_path: Path, kwin: KWin) -> None:
    """The pi runs outside any window KWin manages (started straight in the namespace): goto says
    that KWin lists no window of it and exits 1."""
    command, sessions, project = _fake_pi(tmp_path, "loose")
    kwin.popen(*command, env=dict(kwin.env, FAKE_PI_SESSIONS=str(sessions)), cwd=project,
               stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)  # fmt: skip
    wait_for(lambda: list(sessions.rglob("*.jsonl")), 30, "the loose pi to write its session")
    done = _cli(kwin, "goto", "--sessions-dir", str(sessions))
    assert done.returncode == 1, done.stdout + done.stderr
    assert "KWin scripting lists no window of pid" in done.stderr, done.stderr


def _ours(kwin: KWin) -> list[dict[str, Any]]:
    return [n for n in kwin.notifications() if n["app"] == "pi-notifier"]


def test_skip_when_focused_holds_on_kwin(tmp_path: Path, kwin: KWin) -> None:
    """The app with skip_when_focused (mako on KWin's layer shell shows its notifications): the
    pending question of the session whose xterm is focused raises no notification (a question
    of a session with no terminal, asked after it, shows it was passed over); once another
    window is focused, its next question does."""
    require("mako", "makoctl")
    kwin.start_mako()
    xterm, sessions = _pi_in_xterm(kwin, tmp_path, "a")
    other = kwin.xterm("sleep", "3600")
    wait_for(lambda: {xterm.pid, other.pid} <= _windows(kwin), 30, "both xterms mapped")
    (file,) = sessions.rglob("*.jsonl")
    loose = tmp_path / "loose"
    marker = _session(loose, "/home/dev/elsewhere")
    cfg = tmp_path / "config.toml"
    cfg.write_text("settle_ms = 0\n[notifications]\nskip_when_focused = true\n")
    _focus(kwin, xterm.pid)
    args = ("run", "--json", "--no-tray", "-v", "--liveness", "off", "--config", str(cfg),
            "--sessions-dir", str(sessions), "--sessions-dir", str(loose))  # fmt: skip
    with AppProcess(argv=kwin.argv(sys.executable, "-m", "notifier", *args), env=_env(kwin)) as app:
        app.wait("ready")
        append(marker, ask("m1", "Marker question?"))
        shown = wait_for(lambda: _ours(kwin), 20, "the marker's notification")
        assert [n["summary"] for n in shown] == ["elsewhere needs an answer"], shown
        _focus(kwin, other.pid)
        append(marker, answer("m1"))
        wait_for(lambda: not _ours(kwin), 20, "the marker's notification closed")
        append(file, ask("q2", "Now that you look elsewhere?"))
        (n,) = wait_for(lambda: _ours(kwin), 20, "the notification of the unfocused session")
        assert "Now that you look elsewhere?" in str(n["body"])
        assert app.stop() == 0
    assert not [x for x in app.stderr if "Traceback" in x], app.stderr
