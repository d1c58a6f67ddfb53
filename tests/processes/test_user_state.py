"""The guard that fails a test run which touched the invoking user's own pi-notifier files: the
places it watches are the app's own folders, and a pytest run that writes there fails."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

from ..app_process import AppProcess
from ..conftest import ROOT, wait_for
from ..user_state import changes, listing, places
from ..writer import append, ask, header, user


def _user(tmp_path: Path) -> dict[str, str]:
    home = tmp_path / "user"
    runtime = home / "run"
    runtime.mkdir(parents=True, mode=0o700)
    return {"HOME": str(home), "XDG_RUNTIME_DIR": str(runtime), "PATH": os.environ["PATH"]}


def test_places_hold_the_apps_own_folders(tmp_path: Path) -> None:
    env = _user(tmp_path)
    code = "from notifier.system import paths; print(paths.config_dir()); print(paths.state_dir()); print(paths.runtime_dir())"
    out = subprocess.run([sys.executable, "-c", code], env=env, cwd=ROOT, capture_output=True, text=True, check=True)
    roots = places(env)
    for folder in out.stdout.split():
        assert any(Path(folder) == r or r in Path(folder).parents for r in roots), folder


def test_a_run_that_writes_into_the_users_state_fails(tmp_path: Path) -> None:
    """A whole pytest run with this suite's conftest, as the user of ``env``: a test writing into
    that user's state folder (as a copy of os.environ taken too early would) fails the run, and a
    test that writes into its own HOME does not."""
    env = _user(tmp_path)
    state = Path(env["HOME"]) / ".local" / "state" / "pi-notifier"
    (tmp_path / "test_leaky.py").write_text(
        textwrap.dedent(
            f"""
            import os, pathlib
            def test_own_home():
                folder = pathlib.Path(os.environ["XDG_STATE_HOME"]) / "pi-notifier"
                folder.mkdir(parents=True)
                (folder / "history.sqlite3").write_text("mine")
            def test_leaks():
                if os.environ.get("LEAK"):
                    pathlib.Path({str(state)!r}).mkdir(parents=True)
            """
        )
    )
    run = [sys.executable, "-m", "pytest", "-q", "-p", "tests.conftest", "--rootdir", str(tmp_path), "-c", "/dev/null"]
    clean = subprocess.run([*run, str(tmp_path / "test_leaky.py")], env=env, cwd=ROOT, capture_output=True, text=True)
    assert clean.returncode == 0, clean.stdout + clean.stderr
    assert not state.exists()
    leak = dict(env, LEAK="1", PYTHONPATH=str(ROOT))
    dirty = subprocess.run([*run, str(tmp_path / "test_leaky.py")], env=leak, cwd=ROOT, capture_output=True, text=True)
    assert dirty.returncode == 1, dirty.stdout + dirty.stderr
    assert f"created: {state}" in dirty.stdout and "2 passed" in dirty.stdout


def test_a_run_keeps_off_the_users_desktop_and_tmux(tmp_path: Path) -> None:
    """Run from a terminal of the user's desktop, inside their tmux: no test (nor an app it
    starts) sees their display, session bus, compositor or tmux server, so none shows them a
    notification or an icon, raises their windows or selects their panes; a tmux started
    without -S gets a server of the run's own."""
    env = dict(
        _user(tmp_path),
        DISPLAY=":0",
        WAYLAND_DISPLAY="wayland-0",
        DBUS_SESSION_BUS_ADDRESS="unix:path=/run/user/0/bus",
        TMUX="/tmp/tmux-0/default,1,0",
        TMUX_PANE="%1",
        SWAYSOCK="/run/user/0/sway-ipc.sock",
        HYPRLAND_INSTANCE_SIGNATURE="x",
        KITTY_LISTEN_ON="unix:/tmp/kitty",
        KITTY_WINDOW_ID="1",
        WEZTERM_PANE="1",
    )
    names = [k for k in env if k not in ("HOME", "XDG_RUNTIME_DIR", "PATH")]
    (tmp_path / "test_desktop_env.py").write_text(
        textwrap.dedent(
            f"""
            import os
            def test_none_of_the_users_desktop():
                assert [n for n in {names!r} if n in os.environ] == []
                assert not os.environ["TMUX_TMPDIR"].startswith("/tmp/tmux")
                assert os.environ["TMUX_TMPDIR"] != "/tmp"
            """
        )
    )
    run = [sys.executable, "-m", "pytest", "-q", "-p", "tests.conftest", "--rootdir", str(tmp_path), "-c", "/dev/null"]
    done = subprocess.run([*run, str(tmp_path / "test_desktop_env.py")], env=env, cwd=ROOT, capture_output=True, text=True)
    assert done.returncode == 0, done.stdout + done.stderr


def test_a_run_beside_the_users_own_app_and_pi_is_blamed_only_for_its_own_writes(tmp_path: Path) -> None:
    """The user's own pi-notifier runs (the real app, in the user's own folders) and the user's pi
    asks a question while a whole pytest run goes on: what the app writes meanwhile in its state
    folder is not the run's doing, and the run passes. A test that escapes into the same user's
    folders beside that app is still caught: into a place nothing of the user's holds (the config
    folder), and into the state folder the app holds, with a file naming the test's own folder."""
    env = _user(tmp_path)
    home = Path(env["HOME"])
    project = tmp_path / "project"
    project.mkdir()
    sessions = home / ".pi" / "agent" / "sessions" / "--project--"
    sessions.mkdir(parents=True)
    gate = tmp_path / "gate"
    (tmp_path / "test_beside.py").write_text(
        textwrap.dedent(
            f"""
            import os, pathlib, time
            GATE = pathlib.Path({str(gate)!r})
            USER = pathlib.Path({str(home)!r})
            def test_meanwhile():
                (GATE / "started").touch()
                deadline = time.monotonic() + 60
                while not (GATE / "done").exists():
                    assert time.monotonic() < deadline, "the user's app never wrote"
                    time.sleep(0.02)
            def test_leaks():
                if os.environ.get("LEAK"):
                    (USER / ".config" / "pi-notifier").mkdir(parents=True)
                    (USER / ".local" / "state" / "pi-notifier" / "escaped.txt").write_text(os.environ["HOME"])
            """
        )
    )
    run = [sys.executable, "-m", "pytest", "-q", "-p", "tests.conftest", "--rootdir", str(tmp_path), "-c", "/dev/null"]
    roots = places(env)
    with AppProcess("run", "--no-tray", "--json", "--no-notify", env=env) as app:
        app.wait("ready")
        for number, leak in enumerate(("", "1"), 1):
            gate.mkdir()
            inner = subprocess.Popen(
                [*run, str(tmp_path / "test_beside.py")],
                env=dict(env, LEAK=leak),
                cwd=ROOT,
                stdout=subprocess.PIPE,
                stderr=subprocess.STDOUT,
                text=True,
            )
            wait_for(lambda: (gate / "started").exists(), 60, "the run's first test")
            before = listing(roots)
            append(sessions / f"s{number}.jsonl", header(str(project)), user(), ask(f"q{number}", "Which one?"))
            app.wait("needs_input", count=number)
            wait_for(lambda: changes(before, listing(roots)), 20, "the user's app writing its state")  # noqa: B023
            (gate / "done").touch()
            out, _ = inner.communicate(timeout=120)
            state = home / ".local" / "state" / "pi-notifier"
            if not leak:
                assert inner.returncode == 0, out
                assert "2 passed" in out and "left to their own processes (pid" in out, out
            else:
                assert inner.returncode == 1, out
                assert f"created: {home / '.config' / 'pi-notifier'}" in out, out
                assert f"created: {state / 'escaped.txt'}" in out, out
                assert "state.sqlite3" not in out.split("touched the user's own")[1], out
            gate.rename(tmp_path / f"gate-{number}")
