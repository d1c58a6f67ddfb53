"""goto and skip_when_focused on the desktops of test_desktops.py (the same fixtures).

- XFCE (xfwm4, a real EWMH window manager, under Xvfb): goto makes the xterm of a stand-in pi
  (fake_pi.py) the active window (``_NET_ACTIVE_WINDOW``, read back with xprop); with
  ``skip_when_focused`` no Notify is sent for its question while that xterm is active, one is
  once the other xterm is.
- GNOME Shell on Wayland offers no public interface to focus a window: goto selects pi's tmux
  pane for the attached client, exits 1 and says so (the issue's required behaviour there).
- KDE: the fixture has no window manager (plasmashell alone under Xvfb), so goto is not tested
  there; KWin's own focus method is tested in test_kwin_focus.py."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from ..app_process import AppProcess
from ..conftest import FIXTURES, cli, wait_for
from ..live.pi_harness import Tmux
from ..writer import answer, append, ask
from .desktops import Desktop, Gnome, Xfce
from .services import Monitor, _wrap, stop
from .test_desktops import _env, _session, _start


@pytest.fixture(scope="module")
def gnome(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Gnome]:
    yield from _start("gnome", Gnome, tmp_path_factory)


@pytest.fixture(scope="module")
def xfce(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Xfce]:
    yield from _start("xfce", Xfce, tmp_path_factory)


def _fake_pi(tmp_path: Path) -> tuple[list[str], Path, Path]:
    """(the command of a stand-in pi waiting on a real capture's question, its sessions folder,
    its project folder)."""
    assert FIXTURES is not None
    sessions, project, bin_dir = tmp_path / "sessions", tmp_path / "project", tmp_path / "bin"
    for d in (sessions, project, bin_dir):
        d.mkdir(exist_ok=True)
    fake = bin_dir / "pi"
    fake.write_text(f"#!{sys.executable}\n" + Path(__file__).with_name("fake_pi.py").read_text())
    fake.chmod(0o755)
    return [str(fake), str(FIXTURES / "question-answer" / "A-pending.jsonl")], sessions, project


def _x(desk: Desktop, *cmd: str) -> str:
    return subprocess.run(list(cmd), env=desk.env, capture_output=True, text=True, timeout=20).stdout


def _active(desk: Desktop) -> int | None:
    """``_NET_ACTIVE_WINDOW`` of the root window, as xprop reads it."""
    out = _x(desk, "xprop", "-root", "-notype", "_NET_ACTIVE_WINDOW")  # "…: window id # 0x400022"
    try:
        wid = int(out.rsplit("#", 1)[1].split(",")[0].strip(), 16)
    except (IndexError, ValueError):
        return None
    return wid or None


def _window_of(desk: Desktop, pid: int) -> int | None:
    ids = _x(desk, "xdotool", "search", "--onlyvisible", "--pid", str(pid)).split()
    return int(ids[0]) if ids else None


def _activate(desk: Desktop, wid: int) -> None:
    subprocess.run(["xdotool", "windowactivate", str(wid)], env=desk.env, timeout=20, check=False)
    wait_for(lambda: _active(desk) == wid, 10, f"window {wid} active")


@pytest.fixture
def xterms(xfce: Xfce, tmp_path: Path) -> Iterator[tuple[Path, int, int]]:
    """Two xterms on XFCE, the first running a stand-in pi: (its sessions folder, its window, the
    other's window); both closed at the end."""
    from .conftest import require

    require("xterm", "xprop")
    command, sessions, project = _fake_pi(tmp_path)
    env = dict(xfce.env, FAKE_PI_SESSIONS=str(sessions))
    # (through sh: xterm's own command line must not name pi among its first words)
    quiet: dict[str, Any] = {"stdout": subprocess.DEVNULL, "stderr": subprocess.DEVNULL}
    mine = subprocess.Popen(_wrap(["xterm", "-e", "sh", "-c", 'exec "$0" "$@"', *command]), env=env, cwd=project, **quiet)
    other = subprocess.Popen(_wrap(["xterm", "-e", "sleep", "3600"]), env=xfce.env, **quiet)
    try:
        wait_for(lambda: list(sessions.rglob("*.jsonl")), 30, "the pi in its xterm to write its session")
        mine_win = wait_for(lambda: _window_of(xfce, mine.pid), 20, "the pi's xterm mapped")
        other_win = wait_for(lambda: _window_of(xfce, other.pid), 20, "the other xterm mapped")
        yield sessions, mine_win, other_win
    finally:
        stop(mine)
        stop(other)


def test_xfce_goto_makes_the_pis_xterm_the_active_window(xfce: Xfce, xterms: tuple[Path, int, int]) -> None:
    sessions, mine, other = xterms
    _activate(xfce, other)
    status = json.loads(cli("status", "--json", "--sessions-dir", str(sessions), env=_env(xfce)).stdout)
    (session,) = status["sessions"]
    assert session["pending"] and session["location"]["window"] == {"via": "x11", "id": mine}

    done = cli("goto", "--sessions-dir", str(sessions), env=_env(xfce))
    assert done.returncode == 0, done.stderr
    assert "through X11 EWMH" in done.stdout, done.stdout
    assert _active(xfce) == mine  # (xfwm4 did it: the request is only a client message)


def test_xfce_skip_when_focused_holds(tmp_path: Path, xfce: Xfce, xterms: tuple[Path, int, int]) -> None:
    """With the pi's xterm active its pending question raises no Notify (a later marker question
    of a session with no terminal shows it was passed over); with the other xterm active, the
    pi's next question does."""
    sessions, mine, other = xterms
    (file,) = sessions.rglob("*.jsonl")
    loose = tmp_path / "loose"
    marker = _session(loose, "elsewhere")
    cfg = tmp_path / "config.toml"
    cfg.write_text("settle_ms = 0\n[notifications]\nskip_when_focused = true\n")
    _activate(xfce, mine)
    monitor = Monitor(xfce.env["DBUS_SESSION_BUS_ADDRESS"])
    args = ["run", "--json", "--no-tray", "-v", "--liveness", "off", "--config", str(cfg),
            "--sessions-dir", str(sessions), "--sessions-dir", str(loose)]  # fmt: skip
    try:
        with AppProcess(argv=[sys.executable, "-m", "notifier", *args], env=_env(xfce)) as app:
            app.wait("ready")
            append(marker, ask("m1", "Marker question?"))
            wait_for(lambda: [n for n in monitor.notifies() if n["summary"] == "elsewhere needs an answer"],
                     20, "the marker's Notify")  # fmt: skip
            assert [n["summary"] for n in monitor.notifies()] == ["elsewhere needs an answer"]
            _activate(xfce, other)
            append(marker, answer("m1"))
            append(file, ask("q2", "Now that you look elsewhere?"))
            (n,) = wait_for(
                lambda: [n for n in monitor.notifies() if "Now that you look elsewhere?" in str(n["body"])],
                20, "the Notify of the session no longer focused",
            )  # fmt: skip
            assert n["summary"] == "project needs an answer", n
            assert app.stop() == 0
    finally:
        monitor.close()
    assert not [x for x in app.stderr if "Traceback" in x], app.stderr


def test_gnome_goto_selects_the_tmux_pane_exits_1_and_says_why(tmp_path: Path, gnome: Gnome) -> None:
    """GNOME Shell on Wayland: no public interface to focus a window. goto still switches the
    attached tmux client to pi's pane, then exits 1 saying why the terminal was not focused."""
    from .conftest import require

    require("tmux")
    command, sessions, project = _fake_pi(tmp_path)
    server, outer = Tmux(), Tmux()
    env = dict(_env(gnome), XDG_CURRENT_DESKTOP="GNOME")  # (as a GNOME session sets it)
    assert "DISPLAY" not in env and env["WAYLAND_DISPLAY"]
    try:
        server("new-session", "-d", "-s", "work", "-x", "80", "-y", "24", "-c", str(project),
               "-e", f"FAKE_PI_SESSIONS={sessions}", *command, check=True)  # fmt: skip
        pane = server("list-panes", "-t", "work", "-F", "#{pane_id}").split()[0]
        wait_for(lambda: list(sessions.rglob("*.jsonl")), 30, "the pi in tmux to write its session")
        server("new-window", "-t", "work:1", "sleep", "3600", check=True)
        # a client of that session on a terminal of its own (a pane of another tmux server)
        outer("new-session", "-d", "-s", "term", "-x", "80", "-y", "24",
              "env", "-u", "TMUX", "-u", "TMUX_PANE", "tmux", "-L", server.name, "attach", "-t", "work", check=True)  # fmt: skip
        wait_for(lambda: server("list-clients").strip(), 20, "the tmux client")

        def shown() -> str:
            tty = server("list-clients", "-F", "#{client_tty}").split()[0]
            return server("display-message", "-p", "-c", tty, "#{pane_id}").strip()

        assert shown() != pane
        done = cli("goto", "--sessions-dir", str(sessions), env=env)
        assert done.returncode == 1, (done.stdout, done.stderr)
        said = done.stderr.strip().splitlines()
        assert said == [
            f"pi-notifier: selected tmux pane {pane}, but its terminal was not focused: GNOME Shell on"
            " Wayland offers no public interface to focus a window; switch to it yourself"
        ], said
        assert shown() == pane
    finally:
        outer.kill()
        server.kill()
