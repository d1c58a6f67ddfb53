"""Living in the background: signals, one instance, an unwritable store, history, autostart.
Every test runs with its own HOME and XDG folders (tests/conftest.py)."""

from __future__ import annotations

import json
import os
import plistlib
import re
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from notifier.control import request, socket_path
from notifier.system import autostart

from ..app_process import AppProcess
from ..conftest import cli, wait_for
from ..writer import answer, append, ask, header, user


def headless_env() -> dict[str, str]:
    """No display and no session bus: the tray app must still work (notifications only)."""
    return {
        k: v
        for k, v in os.environ.items()
        if k not in ("DISPLAY", "WAYLAND_DISPLAY", "DBUS_SESSION_BUS_ADDRESS")
    }


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT])
@pytest.mark.parametrize("mode", [["--no-tray", "--json"], []])
def test_signal_exits_cleanly_within_two_seconds(
    tmp_path: Path, sig: signal.Signals, mode: list[str]
) -> None:
    with AppProcess(
        "run", *mode, "--liveness", "off", "--sessions-dir", str(tmp_path), env=headless_env()
    ) as app:
        if mode:
            app.wait("ready")
        else:
            wait_for(lambda: request({"cmd": "ping"}), 20, "control channel")
        began = time.monotonic()
        app.proc.send_signal(sig)
        assert app.proc.wait(5) == 0
        assert time.monotonic() - began < 2.0
        assert not [x for x in app.stderr if "Traceback" in x]


def test_one_instance_per_user_and_headless_runs_beside_it(tmp_path: Path) -> None:
    env = headless_env()
    with AppProcess("run", "--liveness", "off", "--sessions-dir", str(tmp_path), env=env) as first:
        wait_for(lambda: request({"cmd": "ping"}), 20, "control channel")
        path = Path(socket_path())
        assert oct(path.stat().st_mode & 0o777) == "0o600"
        assert oct(path.parent.stat().st_mode & 0o777) == "0o700"
        second = subprocess.run(
            [sys.executable, "-m", "notifier", "run"], capture_output=True, text=True, env=env, timeout=30
        )
        assert second.returncode == 0 and "already running" in second.stderr
        # the first one has no display: it must not claim that its window was opened
        assert "no window was opened" in second.stderr and "its window was opened" not in second.stderr
        with AppProcess(
            "run", "--no-tray", "--json", "--liveness", "off", "--sessions-dir", str(tmp_path), env=env
        ) as side:
            side.wait("ready")
            append(tmp_path / "s.jsonl", header(), user(), ask("q1", "Seen by both?"))
            side.wait("needs_input")
        status = request(
            {"cmd": "status", "roots": [str(tmp_path)], "liveness": "off", "question_tools": []}
        )
        assert status and status["ok"] and status["status"]["pending"] == 1
        args = ("--liveness", "off", "--sessions-dir", str(tmp_path))
        out = cli("status", "--json", *args, env=env)
        # the CLI adds what is snoozed or muted (additive "snoozed", "muted"); with liveness off
        # it looks at no process: every location stays null, as the app's object says
        silenced = {"snoozed": {"all": None, "sessions": {}, "projects": {}}, "muted": []}
        assert json.loads(out.stdout) == {**status["status"], **silenced}
        assert [s["location"] for s in status["status"]["sessions"]] == [None]
        by_app = cli("status", *args, env=env)  # the text, from the app's object too
        assert by_app.returncode == 0 and "Seen by both?" in by_app.stdout
        assert first.proc.poll() is None
    # without the app: a scan of our own says the same (text and JSON), but for the time it ran
    scanned = cli("status", *args, env=env)
    assert _without_waits(scanned.stdout) == _without_waits(by_app.stdout)
    alone = json.loads(cli("status", "--json", *args, env=env).stdout)
    assert alone == {**status["status"], **silenced}


def _without_waits(table: str) -> list[list[str]]:
    """``status``'s table without its WAITING column (the seconds move on between two runs)."""
    return [[w for w in line.split() if not w.isdigit() and w not in ("s", "min")] for line in table.splitlines()]


def test_unwritable_state_folder_logs_once_and_carries_on(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    blocker = tmp_path / "not-a-folder"
    blocker.write_text("x")
    monkeypatch.setenv("XDG_STATE_HOME", str(blocker))
    sessions = tmp_path / "sessions"
    with AppProcess(
        "run", "--no-tray", "--json", "--liveness", "off", "--sessions-dir", str(sessions)
    ) as app:
        app.wait("ready")
        app.log_has("cannot write the state store")
        append(sessions / "s.jsonl", header(), user(), ask("q1", "Still working?"))
        app.wait("needs_input")
        assert app.proc.poll() is None
    assert sum("cannot write the state store" in x for x in app.stderr) == 1


def test_history_records_the_wait(tmp_path: Path) -> None:
    sessions = tmp_path / "sessions"
    f = sessions / "--home-dev-hist--" / "s.jsonl"
    append(f, header("/home/dev/hist"), user())
    with AppProcess(
        "run", "--no-tray", "--json", "--liveness", "off", "--sessions-dir", str(sessions)
    ) as app:
        app.wait("ready")
        asked_at = time.time()
        append(f, ask("q1", "How long?", options=["Short", "Long"], at=asked_at))
        app.wait("needs_input")
        append(f, answer("q1", "User selected: 1. Short", at=asked_at + 1.25))  # answered 1.25 s later
        app.wait("resolved")
    out = subprocess.run(
        [sys.executable, "-m", "notifier", "history", "--json", "--since", "1"],
        capture_output=True,
        text=True,
        timeout=30,
    )
    assert out.returncode == 0, out.stderr
    data = json.loads(out.stdout)
    (q,) = data["questions"]
    assert q["question"]["text"] == "How long?" and q["question"]["options"] == ["Short", "Long"]
    assert q["outcome"] == "answered" and q["waited_s"] == pytest.approx(1.25, abs=0.01)
    assert (
        q["session"]["cwd"] == "/home/dev/hist"
        and q["asked_at"].endswith("Z")
        and q["resolved_at"].endswith("Z")
    )
    assert data["summary"] == {"count": 1, "median_wait_s": q["waited_s"], "longest_wait_s": q["waited_s"]}
    assert q["question"]["count"] == 1
    text = subprocess.run(
        [sys.executable, "-m", "notifier", "history"], capture_output=True, text=True, timeout=30
    )
    assert (
        "hist" in text.stdout and "answered" in text.stdout and "1 question · median wait 1 s" in text.stdout
    )
    log_file = Path(os.environ["XDG_STATE_HOME"]) / "pi-notifier" / "pi-notifier.log"
    assert log_file.exists()


def test_history_records_how_a_question_ended_while_no_app_ran(tmp_path: Path) -> None:
    """Questions the app saw asked and that ended while it was stopped: the next start records
    each as pi wrote its end, when it ended and the answer; one whose call pi never ended (a
    user's message superseded it) stays open; one still asked stays open."""
    sessions = tmp_path / "sessions"
    files = {name: sessions / "--home-dev-later--" / f"{name}.jsonl" for name in ("a", "c", "s", "w")}
    for f in files.values():
        append(f, header("/home/dev/later"), user())
    run = ("run", "--no-tray", "--json", "--liveness", "off", "--sessions-dir", str(sessions))
    asked_at = time.time() - 60
    with AppProcess(*run) as app:
        app.wait("ready")
        for name, f in files.items():
            append(f, ask(f"q-{name}", f"Which {name}?", options=["Kafka", "Redis"], at=asked_at))
        app.wait("needs_input", 4)
    # while no app runs: one answered (an answer that holds a word of cancelling), one cancelled,
    # one superseded by the user's next message, one still asked
    append(files["a"], answer("q-a", "User selected: 1. Kafka", at=asked_at + 7.5))
    append(files["c"], answer("q-c", "User cancelled the selection", details={"answer": None}, at=asked_at + 3))
    append(files["s"], user("never mind"))
    with AppProcess(*run) as app:
        app.wait("ready")
    out = cli("history", "--json")
    assert out.returncode == 0, out.stderr
    got = {q["question"]["tool_call_id"]: q for q in json.loads(out.stdout)["questions"]}
    assert (got["q-a"]["outcome"], got["q-a"]["answer"]) == ("answered", "User selected: 1. Kafka")
    assert got["q-a"]["waited_s"] == pytest.approx(7.5, abs=0.01) and got["q-a"]["resolved_at"].endswith("Z")
    assert (got["q-c"]["outcome"], got["q-c"]["waited_s"]) == ("cancelled", pytest.approx(3, abs=0.01))
    assert got["q-s"]["outcome"] is None and got["q-w"]["outcome"] is None and got["q-w"]["resolved_at"] is None


def test_history_empty_and_bad_since() -> None:
    out = subprocess.run(
        [sys.executable, "-m", "notifier", "history"], capture_output=True, text=True, timeout=30
    )
    assert out.returncode == 0 and "No questions recorded yet" in out.stdout
    bad = subprocess.run(
        [sys.executable, "-m", "notifier", "history", "--since", "-3"],
        capture_output=True,
        text=True,
        timeout=30,
    )
    assert bad.returncode == 2 and len(bad.stderr.splitlines()) == 1


def test_autostart_install_status_remove(private_dirs: Path) -> None:
    def cli(action: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [sys.executable, "-m", "notifier", "autostart", action],
            capture_output=True,
            text=True,
            timeout=30,
        )

    assert "not installed" in cli("status").stdout
    installed = cli("install")
    assert installed.returncode == 0, installed.stderr
    entry = Path(os.environ["XDG_CONFIG_HOME"]) / "autostart" / "pi-notifier.desktop"
    unit = Path(os.environ["XDG_CONFIG_HOME"]) / "systemd" / "user" / "pi-notifier.service"
    path = entry if entry.exists() else unit
    text = path.read_text()
    exe = autostart.executable()[0]
    assert os.path.isabs(exe) and exe in text
    assert "installed" in cli("status").stdout
    assert "removed" in cli("remove").stdout
    assert not path.exists() and "not installed" in cli("status").stdout


def test_the_autostart_entry_names_its_icon_by_theme_name(private_dirs: Path) -> None:
    """``Icon=`` pointed into site-packages (gone after an upgrade or a moved venv): the icon is
    installed into the user's icon theme and named, and removed with the entry."""
    done = subprocess.run(
        [sys.executable, "-c", "from notifier.system import autostart; print(autostart.install('xdg'))"],
        capture_output=True, text=True, timeout=30,
    )
    assert done.returncode == 0, done.stderr
    entry = Path(os.environ["XDG_CONFIG_HOME"]) / "autostart" / "pi-notifier.desktop"
    assert "Icon=pi-notifier\n" in entry.read_text() and "site-packages" not in entry.read_text()
    icon = Path(os.environ["XDG_DATA_HOME"]) / "icons" / "hicolor" / "256x256" / "apps" / "pi-notifier.png"
    assert icon.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    autostart.remove()
    assert not entry.exists() and not icon.exists()


def _require(tool: str) -> None:
    if not shutil.which(tool):
        if os.environ.get("NOTIFIER_REQUIRE_DESKTOP") == "1":
            pytest.fail(f"{tool} is missing (NOTIFIER_REQUIRE_DESKTOP=1)")
        pytest.skip(f"{tool} is not installed")


def test_packaging_files_validate(tmp_path: Path) -> None:
    exe = autostart.executable()
    desktop = tmp_path / "pi-notifier.desktop"
    desktop.write_text(autostart.unit_text(autostart.Target("xdg", desktop), exe))
    unit = tmp_path / "pi-notifier.service"
    unit.write_text(autostart.unit_text(autostart.Target("systemd", unit), exe))
    plist = tmp_path / "dev.pi-notifier.plist"
    plist.write_text(autostart.unit_text(autostart.Target("launchagent", plist), exe))
    parsed = plistlib.loads(plist.read_bytes())
    assert parsed["ProgramArguments"] == [*exe, "run"] and parsed["RunAtLoad"] is True
    cmd = autostart.unit_text(autostart.Target("startup", tmp_path / "x.cmd"), exe)
    assert f'"{exe[0]}" run' in cmd
    _require("desktop-file-validate")
    r = subprocess.run(["desktop-file-validate", str(desktop)], capture_output=True, text=True, timeout=30)
    assert r.returncode == 0 and "error" not in r.stdout.lower(), r.stdout
    _require("systemd-analyze")
    runtime = tmp_path / "run"
    runtime.mkdir(mode=0o700)
    r = subprocess.run(
        ["systemd-analyze", "--user", "verify", str(unit)],
        capture_output=True,
        text=True,
        timeout=60,
        env=dict(os.environ, XDG_RUNTIME_DIR=str(runtime)),
    )
    assert r.returncode == 0, r.stderr


def _desktop_exec(value: str) -> list[str]:
    """The argv of a desktop entry's Exec value, read as the Desktop Entry spec says: first the
    key file's string escapes, then the Exec quoting (double quotes; ``\\"`` ``\\` ``
    ``\\$`` ``\\\\`` inside them), then ``%%``."""
    value = re.sub(r"\\(.)", lambda m: {"s": " ", "n": "\n", "t": "\t", "r": "\r"}.get(m[1], m[1]), value)
    words = re.findall(r'"((?:[^"\\]|\\.)*)"|(\S+)', value)
    return [re.sub(r'\\(["`$\\])', r"\1", q).replace("%%", "%") if q else w.replace("%%", "%") for q, w in words]


def _systemd_exec(value: str) -> list[str]:
    """The argv of a systemd ExecStart= value: double-quoted words with C escapes, ``$$``, ``%%``."""
    words = re.findall(r'"((?:[^"\\]|\\.)*)"|(\S+)', value)
    return [re.sub(r"\\(.)", r"\1", q or w).replace("$$", "$").replace("%%", "%") for q, w in words]


@pytest.mark.parametrize("odd", ["my venv", 'say "hi"', "cost $HOME", "back`tick`", "back\\slash", "100%"])
def test_the_autostart_entry_runs_the_executable_whatever_its_path_holds(tmp_path: Path, odd: str) -> None:
    """The installed executable's path may hold spaces, quotes, ``$``, backquotes, backslashes or
    ``%``: the entry's command line reads back as that path (the desktop's own rules, and
    systemd's), so autostart starts the app, not some other command."""
    exe = [f"/home/u/{odd}/.venv/bin/pi-notifier"]
    entry = autostart.unit_text(autostart.Target("xdg", tmp_path / "x.desktop"), exe)
    line = next(x for x in entry.splitlines() if x.startswith("Exec="))
    assert _desktop_exec(line[len("Exec="):]) == [*exe, "run"], line
    unit = autostart.unit_text(autostart.Target("systemd", tmp_path / "x.service"), exe)
    line = next(x for x in unit.splitlines() if x.startswith("ExecStart="))
    assert _systemd_exec(line[len("ExecStart="):]) == [*exe, "run"], line


def test_a_closed_window_is_forgotten_so_the_next_click_opens_a_new_one(tmp_path: Path) -> None:
    """The window's subscription ends when it hangs up; 'show' then starts a new window."""
    import socket as sock

    with AppProcess("run", "--liveness", "off", "--sessions-dir", str(tmp_path), env=headless_env()) as app:
        wait_for(lambda: request({"cmd": "ping"}), 20, "control channel")
        window = sock.socket(sock.AF_UNIX, sock.SOCK_STREAM)
        window.connect(socket_path())
        window.sendall(b'{"cmd": "subscribe"}\n')
        pushed = window.makefile()
        assert "window" in json.loads(pushed.readline())
        reply = request({"cmd": "show", "focus": None})
        assert reply and reply["ok"] and reply["window"] == "raised"

        def next_focus() -> dict[str, object]:
            while True:  # snapshots may be pushed in between
                message: dict[str, object] = json.loads(pushed.readline())
                if "focus" in message:
                    return message

        assert next_focus() == {"focus": None}  # raised, not a second window
        pushed.close()  # (the file object keeps the socket open otherwise)
        window.close()

        def new_window_started() -> bool:
            request({"cmd": "show", "focus": None})
            # no display here: the new window process says so on the app's stderr
            return any("no display to show the window on" in line for line in app.stderr)

        wait_for(new_window_started, 20, "a new window after the old one closed")


def test_signals_are_never_lost(tmp_path: Path) -> None:
    """A signal can land on any thread; the app must still stop every time (it used to hang
    when one hit a worker thread while the main thread slept)."""
    for i in range(10):
        with AppProcess(
            "run", "--liveness", "off", "--sessions-dir", str(tmp_path), env=headless_env()
        ) as app:
            wait_for(lambda: request({"cmd": "ping"}), 20, "control channel")
            app.proc.send_signal(signal.SIGTERM if i % 2 else signal.SIGINT)
            assert app.proc.wait(5) == 0, f"start {i} did not stop"


def test_with_neither_tray_nor_notifications_the_log_says_what_is_left(tmp_path: Path) -> None:
    """No display and no session bus: the log says neither one shows questions (not that the
    other one will), and where to find them."""
    with AppProcess("run", "--liveness", "off", "--sessions-dir", str(tmp_path), env=headless_env()) as app:
        assert "no display" in app.log_has("no tray icon: ")
        line = app.log_has("no notification server: ")
        assert "nothing on this desktop shows questions (pi-notifier status and pi-notifier show" in line
        assert not [x for x in app.stderr if "tray icon alone" in x or "notifications only" in x]
