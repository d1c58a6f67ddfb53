"""goto, skip_when_focused and the window on a real sway 1.7 (headless wlroots, in a user
namespace: sway refuses root), with foot (Wayland-native) and xterm under XWayland. A stand-in pi
(fake_pi.py: a process named `pi` writing a real captured session) runs in the terminal.

- goto focuses foot through sway's IPC (from the command line, from a click on mako's
  notification, and the foot of the tmux client it switches to pi's pane), and an xterm too although sway's default ``focus_on_window_activation urgent``
  turns an X11 activation request into an urgent hint;
- with ``skip_when_focused`` no Notify reaches mako while that session's foot is focused, and
  one does when another window is;
- the Tk window opens on sway's XWayland although the app has no DISPLAY; without XWayland,
  ``doctor`` and ``show`` say so in one line; the running app's window (the tray's "Open
  window", the goto fallback) opens there too."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from ..app_process import AppProcess
from ..conftest import FIXTURES, wait_for
from ..writer import answer, append, ask, header, user
from .conftest import require
from .sway import Sway
from .test_sway_mako import _env


def _desktop(tmp_path: Path, xwayland: bool) -> Iterator[Sway]:
    require("sway", "mako", "makoctl", "foot", "swaymsg", "unshare", "nsenter", "setpriv", "dbus-daemon", "dbus-send")
    if xwayland:
        require("Xwayland", "xterm")
    (tmp_path / "sway").mkdir()
    desktop = Sway(tmp_path / "sway", xwayland=xwayland)
    try:
        desktop.start_mako()
        yield desktop
    finally:
        desktop.stop()


@pytest.fixture
def sway(tmp_path: Path) -> Iterator[Sway]:
    yield from _desktop(tmp_path, xwayland=True)


@pytest.fixture
def bare_sway(tmp_path: Path) -> Iterator[Sway]:
    yield from _desktop(tmp_path, xwayland=False)


def _cli(sway: Sway, *args: str, env: dict[str, str] | None = None, timeout: float = 60) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        sway.argv(sys.executable, "-m", "notifier", *args), env=env or _env(sway),
        capture_output=True, text=True, timeout=timeout,
    )  # fmt: skip


def _fake_pi(tmp_path: Path, name: str) -> tuple[list[str], Path, Path]:
    """(the command of a stand-in pi waiting on a real capture's question, its sessions folder,
    its project folder)."""
    assert FIXTURES is not None
    sessions, project = tmp_path / f"sessions-{name}", tmp_path / f"project-{name}"
    bin_dir = tmp_path / "bin"
    for d in (sessions, project, bin_dir):
        d.mkdir(exist_ok=True)
    fake = bin_dir / "pi"
    fake.write_text(f"#!{sys.executable}\n" + Path(__file__).with_name("fake_pi.py").read_text())
    fake.chmod(0o755)
    return [str(fake), str(FIXTURES / "question-answer" / "A-pending.jsonl")], sessions, project


def _terminal(sway: Sway, tmp_path: Path, kind: str, name: str) -> tuple[subprocess.Popen[Any], Path]:
    """A foot or an xterm running a stand-in pi: (the terminal, the pi's sessions folder), once
    the session file is written and its window is mapped."""
    command, sessions, project = _fake_pi(tmp_path, name)
    env = dict(sway.env, FAKE_PI_SESSIONS=str(sessions))
    if kind == "foot":
        argv = ["foot", f"--working-directory={project}", "--", *command]
    else:
        env["DISPLAY"] = sway.display
        # (through sh: xterm's own command line must not name pi among its first words)
        argv = ["xterm", "-e", "sh", "-c", 'exec "$0" "$@"', *command]
    term = sway.popen(*argv, env=env, cwd=project, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    wait_for(lambda: list(sessions.rglob("*.jsonl")), 30, f"the pi in {kind} to write its session")
    return term, sessions


def _window_of_terminal(sway: Sway, term: subprocess.Popen[Any]) -> dict[str, Any]:
    """The sway window of the terminal ``term`` started (nsenter and setpriv exec it: same pid)."""
    return sway.view_of(term.pid)


def test_goto_focuses_foot_through_sway_ipc(tmp_path: Path, sway: Sway) -> None:
    foot, sessions = _terminal(sway, tmp_path, "foot", "a")
    other = sway.popen("foot", "--", "sleep", "3600", stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    mine, theirs = _window_of_terminal(sway, foot), _window_of_terminal(sway, other)
    assert mine["app_id"] == "foot"
    sway.focus(theirs["id"])

    status = json.loads(_cli(sway, "status", "--json", "--sessions-dir", str(sessions)).stdout)
    (session,) = status["sessions"]
    assert session["location"]["window"] == {"via": "sway", "id": mine["id"]}
    assert session["location"]["window_id"] is None  # (no X11 window: foot is Wayland-native)

    done = _cli(sway, "goto", "--sessions-dir", str(sessions))
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("focused pid ") and "through sway IPC" in done.stdout
    assert sway.focused() == mine["id"]

    # the doctor names the focus method it asked, and says what it found
    doctor = _cli(sway, "doctor", "--sessions-dir", str(sessions)).stdout
    (line,) = [x for x in doctor.splitlines() if "] focus:" in x]
    assert line.startswith("[ok  ] focus: sway IPC (socket ") and f"focused: pid {foot.pid}" in line


def test_an_xterm_under_xwayland_is_focused_despite_urgent(tmp_path: Path, sway: Sway) -> None:
    """sway's default focus_on_window_activation is "urgent": an X11 _NET_ACTIVE_WINDOW request
    only marks the xterm urgent. goto asks sway itself, which focuses it."""
    xterm, sessions = _terminal(sway, tmp_path, "xterm", "x")
    foot = sway.popen("foot", "--", "sleep", "3600", stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    mine, theirs = _window_of_terminal(sway, xterm), _window_of_terminal(sway, foot)
    assert mine["shell"] == "xwayland"
    sway.focus(theirs["id"])

    # what X11 EWMH alone gets here: an urgent hint, not the focus (so the test shows the setting)
    asked = subprocess.run(
        sway.argv(sys.executable, "-c", "import os; from notifier.system.window_manager import X11, Method;"
                  f" print(Method(X11, os.environ.get('DISPLAY', '')).activate({mine['window']}, 1.0))"),
        env=dict(_env(sway), DISPLAY=sway.display), capture_output=True, text=True, timeout=30,
    )  # fmt: skip
    assert asked.stdout.strip() == "False", asked.stderr
    assert sway.focused() == theirs["id"]
    wait_for(lambda: _window_of_terminal(sway, xterm).get("urgent"), 10, "the xterm marked urgent")

    done = _cli(sway, "goto", "--sessions-dir", str(sessions), env=dict(_env(sway), DISPLAY=sway.display))
    assert done.returncode == 0, done.stderr
    assert sway.focused() == mine["id"]


def _session(root: Path, cwd: str) -> Path:
    f = root / ("-" + cwd.replace("/", "-") + "--") / "s.jsonl"
    append(f, header(cwd), user())
    return f


def _ours(sway: Sway) -> list[dict[str, Any]]:
    return [n for n in sway.notifications() if n["app"] == "pi-notifier"]


def test_skip_when_focused_holds_on_sway(tmp_path: Path, sway: Sway) -> None:
    """The app with skip_when_focused: the question of the session whose foot is focused raises
    no notification; once another window is focused, its next question does. (A question of a
    session with no terminal, asked after it, shows that the first one was passed over.)"""
    foot, sessions = _terminal(sway, tmp_path, "foot", "a")
    other = sway.popen("foot", "--", "sleep", "3600", stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    mine, theirs = _window_of_terminal(sway, foot), _window_of_terminal(sway, other)
    (file,) = sessions.rglob("*.jsonl")
    loose = tmp_path / "loose"
    marker = _session(loose, "/home/dev/elsewhere")
    cfg = tmp_path / "config.toml"
    cfg.write_text("settle_ms = 0\n[notifications]\nskip_when_focused = true\n")
    sway.focus(mine["id"])
    args = ("run", "--json", "--no-tray", "-v", "--liveness", "off", "--config", str(cfg),
            "--sessions-dir", str(sessions), "--sessions-dir", str(loose))  # fmt: skip
    with AppProcess(argv=sway.argv(sys.executable, "-m", "notifier", *args), env=_env(sway)) as app:
        app.wait("ready")
        # the capture's question was pending at start: not notified while its foot is focused
        append(marker, ask("m1", "Marker question?"))
        shown = wait_for(lambda: _ours(sway), 20, "the marker's notification")
        assert [n["summary"] for n in shown] == ["elsewhere needs an answer"], shown
        app.log_has("watching what is focused through sway IPC")  # (read from its events, not asked)
        # another window focused: the next question of that session is notified
        sway.focus(theirs["id"])
        append(marker, answer("m1"))
        wait_for(lambda: not _ours(sway), 20, "the marker's notification closed")
        append(file, ask("q2", "Now that you look elsewhere?"))
        (n,) = wait_for(lambda: _ours(sway), 20, "the notification of the unfocused session")
        assert "Now that you look elsewhere?" in str(n["body"])
        assert app.stop() == 0
    assert not [x for x in app.stderr if "Traceback" in x], app.stderr


def test_the_window_opens_on_xwayland_without_display(tmp_path: Path, sway: Sway) -> None:
    """The app's environment has WAYLAND_DISPLAY and no DISPLAY: doctor opens Tk on sway's
    XWayland and says so; `show` opens the window there (an X11 window sway manages)."""
    require("tkinter")
    env = _env(sway)
    assert "DISPLAY" not in env
    doctor = _cli(sway, "doctor", "--sessions-dir", str(tmp_path), env=env).stdout
    (line,) = [x for x in doctor.splitlines() if "] window:" in x]
    assert line == f"[ok  ] window: Tk opened a window on XWayland display {sway.display} of the Wayland compositor (DISPLAY was unset)"
    show = sway.popen(sys.executable, "-m", "notifier", "show", "--sessions-dir", str(tmp_path), env=env,
                      stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)  # fmt: skip
    window = wait_for(
        lambda: next((v for v in sway.views() if (v.get("window_properties") or {}).get("class") == "Pi-notifier"), None),
        30,
        "the window on XWayland",
    )
    assert window["shell"] == "xwayland"
    show.terminate()
    show.wait(10)
    wait_for(lambda: not _pi_notifier_windows(sway), 20, "the window closed")

    # the running app's own window (as the tray's "Open window" and the goto fallback open it)
    args = ("run", "--liveness", "off", "--sessions-dir", str(tmp_path))
    ping = "from notifier.control import request; print(request({'cmd': 'ping'}) is not None)"
    with AppProcess(argv=sway.argv(sys.executable, "-m", "notifier", *args), env=env) as app:
        wait_for(
            lambda: subprocess.run(sway.argv(sys.executable, "-c", ping), env=env, capture_output=True, text=True,
                                   timeout=30).stdout.strip() == "True",
            30, "the app's control channel",
        )  # fmt: skip
        asked = _cli(sway, "show", env=env)
        assert asked.returncode == 0 and asked.stderr == "", asked.stderr
        (window,) = wait_for(lambda: _pi_notifier_windows(sway), 30, "the app's window on XWayland")
        assert window["shell"] == "xwayland"
        assert app.stop() == 0
    assert not [x for x in app.stderr if "Traceback" in x or "no display" in x], app.stderr


def _pi_notifier_windows(sway: Sway) -> list[dict[str, Any]]:
    return [v for v in sway.views() if (v.get("window_properties") or {}).get("class") == "Pi-notifier"]


def test_without_xwayland_doctor_and_show_say_so(tmp_path: Path, bare_sway: Sway) -> None:
    require("tkinter")
    env = _env(bare_sway)
    doctor = _cli(bare_sway, "doctor", "--sessions-dir", str(tmp_path), env=env)
    (line,) = [x for x in doctor.stdout.splitlines() if "] window:" in x]
    assert line.startswith("[FAIL] window: the window needs X (Tk) and this Wayland desktop offers no XWayland")
    shown = _cli(bare_sway, "show", "--sessions-dir", str(tmp_path), env=env)
    assert shown.returncode == 1
    assert shown.stderr.splitlines() == [
        "pi-notifier: cannot open the window: the window needs X (Tk) and this Wayland desktop offers no"
        " XWayland (sway: 'xwayland enable'); notifications and the tray still work"
    ]


def test_a_click_on_makos_notification_focuses_foot(tmp_path: Path, sway: Sway) -> None:
    """The whole way on sway: the notification of the waiting pi (its foot not focused), its
    default action picked in mako (as a click does), and the app focuses that foot through
    sway's IPC."""
    foot, sessions = _terminal(sway, tmp_path, "foot", "a")
    other = sway.popen("foot", "--", "sleep", "3600", stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    mine, theirs = _window_of_terminal(sway, foot), _window_of_terminal(sway, other)
    sway.focus(theirs["id"])
    args = ("run", "--no-tray", "-v", "--sessions-dir", str(sessions))
    with AppProcess(argv=sway.argv(sys.executable, "-m", "notifier", *args), env=_env(sway)) as app:
        (n,) = wait_for(lambda: _ours(sway), 20, "the notification")
        assert "default" in n["actions"]
        sway.invoke(int(n["id"]), "default")
        wait_for(lambda: sway.focused() == mine["id"], 20, "the pi's foot focused")
        app.log_has("goto: focused pid ")
        assert app.stop() == 0
    assert not [x for x in app.stderr if "Traceback" in x], app.stderr


def test_goto_focuses_the_foot_of_the_tmux_client_showing_pi(tmp_path: Path, sway: Sway) -> None:
    """pi in tmux, the session attached in a foot that shows another tmux window: goto selects
    pi's pane for that client and focuses that foot through sway's IPC."""
    require("tmux")
    command, sessions, project = _fake_pi(tmp_path, "t")
    name = f"pn-sway-{tmp_path.name}"[:60]

    def tmux(*args: str) -> str:
        out = sway.run("tmux", "-L", name, *args)
        assert out.returncode == 0, out.stderr
        return out.stdout

    try:
        tmux("new-session", "-d", "-s", "work", "-x", "80", "-y", "24", "-c", str(project),
             "-e", f"FAKE_PI_SESSIONS={sessions}", *command)  # fmt: skip
        pane = tmux("list-panes", "-t", "work", "-F", "#{pane_id}").split()[0]
        wait_for(lambda: list(sessions.rglob("*.jsonl")), 30, "the pi in tmux to write its session")
        tmux("new-window", "-t", "work:1", "sleep", "3600")
        client = sway.popen("foot", "--", "tmux", "-L", name, "attach", "-t", "work",
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)  # fmt: skip
        other = sway.popen("foot", "--", "sleep", "3600", stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        mine, theirs = _window_of_terminal(sway, client), _window_of_terminal(sway, other)
        wait_for(lambda: tmux("list-clients").strip(), 20, "the tmux client")
        sway.focus(theirs["id"])

        def shown() -> str:
            tty = tmux("list-clients", "-F", "#{client_tty}").split()[0]
            return tmux("display-message", "-p", "-c", tty, "#{pane_id}").strip()

        assert shown() != pane
        done = _cli(sway, "goto", "--sessions-dir", str(sessions))
        assert done.returncode == 0, done.stderr
        assert sway.focused() == mine["id"] and shown() == pane
    finally:
        sway.run("tmux", "-L", name, "kill-server")
