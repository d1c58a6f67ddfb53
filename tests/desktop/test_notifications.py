"""Notifications against a real dunst on a private session bus under Xvfb."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest

from notifier.control import request

from ..app_process import AppProcess
from ..conftest import cli, wait_for
from ..writer import answer, append, ask, header, user
from .services import Dunst, Monitor


def run_app(sessions: Path, *extra: str) -> AppProcess:
    return AppProcess(
        "run", "--json", "--no-tray", "--liveness", "off", "--sessions-dir", str(sessions), *extra
    )


def new_session(root: Path, project: str) -> Path:
    f = root / f"--home-dev-{project}--" / "s.jsonl"
    append(f, header(f"/home/dev/{project}"), user())
    return f


def test_notification_arrives_is_harmless_and_is_withdrawn(
    tmp_path: Path, dunst: Dunst, monitor: Monitor
) -> None:
    f = new_session(tmp_path, "webshop")
    text = 'Deploy <b>now</b> & "really"? See <a href="http://evil.example">docs</a>'
    with run_app(tmp_path) as app:
        app.wait("ready")
        append(f, ask("q1", text, options=["Yes <i>please</i>", "No"]))
        (n,) = wait_for(lambda: monitor.notifies(), 10, "Notify call")
        assert n["summary"] == "webshop needs an answer"
        assert "Deploy" in n["body"] and "now" in n["body"] and "docs" in n["body"]
        for tag in ("<b>", "<a", "</a>", "<i>", 'href="http'):
            assert tag not in n["body"], n["body"]
        assert "Yes" in n["body"] and "No" in n["body"]
        # a click goes to the session; its two options are buttons (answered like `pi-notifier answer`);
        # each label once (dunst: the spec's reading, every button)
        assert n["actions"] == [
            "default", "Go to session",
            "answer:1", "Yes <i>please</i>", "answer:2", "No",
            "show", "Show", "snooze", "Snooze 15 min",
        ]  # fmt: skip
        assert n["hints"].get("sound-name") == ("s", "message-new-instant")  # its own sound
        assert os.path.basename(n["icon"]) == "pi-notifier.png"
        wait_for(lambda: dunst.displayed() == 1, 10, "bubble shown")
        append(f, answer("q1"))
        app.wait("resolved")
        closes = wait_for(lambda: monitor.of("NotificationClosed"), 10, "NotificationClosed")
        assert closes[0][1] == 3  # closed by a CloseNotification call
        wait_for(lambda: dunst.displayed() == 0, 10, "bubble gone")
        assert app.proc.poll() is None


def test_question_resolved_at_once_raises_nothing(tmp_path: Path, dunst: Dunst, monitor: Monitor) -> None:
    fast = new_session(tmp_path, "fast")
    slow = new_session(tmp_path, "slow")
    with run_app(tmp_path) as app:
        app.wait("ready")
        append(
            fast, ask("q1", "Instant?") + answer("q1", "Error: UI not available", details={"answer": None})
        )
        app.wait("resolved")
        append(slow, ask("q2", "Real question?"))
        # the later question's notification comes after the first one's settle window ended
        (n,) = wait_for(lambda: monitor.notifies(), 10, "Notify for the real question")
        assert n["summary"] == "slow needs an answer"
        assert len(monitor.notifies()) == 1


def test_burst_becomes_one_summary(tmp_path: Path, dunst: Dunst, monitor: Monitor) -> None:
    files = [new_session(tmp_path, f"proj{i}") for i in range(5)]
    with run_app(tmp_path) as app:
        app.wait("ready")
        for i, f in enumerate(files):
            append(f, ask(f"q{i}", f"Question {i}?"))
        app.wait("needs_input", 5)
        summary = wait_for(
            lambda: [n for n in monitor.notifies() if n["summary"] == "5 pi sessions need answers"],
            10,
            "summary",
        )
        assert summary
        wait_for(lambda: dunst.displayed() == 1, 10, "a single bubble")
        for i in range(5):
            assert f"proj{i}" in summary[-1]["body"]


def test_snooze_action_from_the_bubble(tmp_path: Path, dunst: Dunst, monitor: Monitor) -> None:
    a = new_session(tmp_path, "alpha")
    b = new_session(tmp_path, "beta")
    with run_app(tmp_path, "-v") as app:
        app.wait("ready")
        append(a, ask("q1", "First?"))
        wait_for(lambda: monitor.notifies(), 10, "Notify")
        wait_for(lambda: dunst.displayed() == 1, 10, "bubble shown")
        dunst.ctl("context")  # dunst's menu, answered by our dmenu script: picks "Snooze 15 min"
        wait_for(
            lambda: [x for x in monitor.of("ActionInvoked") if x[1] == "snooze"], 10, "ActionInvoked snooze"
        )
        app.log_has("snoozed 1 session")
        append(a, answer("q1"), ask("q2", "Second while snoozed?"))
        append(b, ask("q3", "Other project?"))
        wait_for(
            lambda: [n for n in monitor.notifies() if n["summary"] == "beta needs an answer"], 10, "beta"
        )
        assert not [n for n in monitor.notifies() if "Second while snoozed" in n["body"]]


def test_startup_pending_is_one_summary_and_never_repeated(
    tmp_path: Path, dunst: Dunst, monitor: Monitor
) -> None:
    for name in ("one", "two"):
        append(new_session(tmp_path, name), ask(f"q-{name}", f"{name}?"))
    with run_app(tmp_path) as app:
        app.wait("ready")
        (n,) = wait_for(lambda: monitor.notifies(), 10, "startup summary")
        assert n["summary"] == "2 pi sessions need answers"
    marker = new_session(tmp_path, "three")
    with run_app(tmp_path) as app:  # a restart: already notified, so only its bubble is put back
        app.wait("ready")
        wait_for(lambda: dunst.displayed() == 1, 10, "the summary back on screen")
        append(marker, ask("q-three", "three?"))
        wait_for(
            lambda: [x for x in monitor.notifies() if x["summary"] == "three needs an answer"], 10, "marker"
        )
        assert [n["summary"] for n in monitor.notifies()] == ["2 pi sessions need answers"] * 2 + [
            "three needs an answer"
        ]


def test_a_restart_puts_the_bubble_back_without_a_new_notification(
    tmp_path: Path, dunst: Dunst, monitor: Monitor
) -> None:
    """Notified, the app stops (closing its bubble) and starts again: the bubble is on screen
    again, the same as before, and the question is still one question in the history."""
    import json

    f = new_session(tmp_path, "again")
    with run_app(tmp_path) as app:
        app.wait("ready")
        append(f, ask("q1", "Still there after a restart?"))
        wait_for(lambda: dunst.displayed() == 1, 10, "the bubble")
        assert app.stop() == 0
    wait_for(lambda: dunst.displayed() == 0, 10, "closed at the stop")
    with run_app(tmp_path) as app:
        app.wait("ready")
        wait_for(lambda: dunst.displayed() == 1, 10, "the bubble back after the restart")
        first, back = monitor.notifies()
        assert (back["summary"], back["body"], back["actions"]) == (first["summary"], first["body"], first["actions"])
        history = json.loads(cli("history", "--json").stdout)
        assert [row["question"]["tool_call_id"] for row in history["questions"]] == ["q1"], history
        append(f, answer("q1"))
        app.wait("resolved")
        wait_for(lambda: dunst.displayed() == 0, 10, "withdrawn when answered")


NO_SERVER = "no notification server:"
TRAY_ALONE = "the tray icon alone will show questions"
JSON_ALONE = "with no tray icon either, only the run --json stream shows questions"


def _server_lines(app: AppProcess) -> list[str]:
    return [line for line in app.stderr if "notification" in line]


def test_bus_without_a_notification_server(tmp_path: Path, desktop: dict[str, str]) -> None:
    """A session bus, no server: nothing is chosen that would show nothing (notify-send would
    print 'Cannot autolaunch' or vanish), one line says so, doctor fails saying what to install,
    and the app keeps running."""
    f = new_session(tmp_path, "lonely")
    g = new_session(tmp_path, "lonelier")
    with run_app(tmp_path) as app:
        app.wait("ready")
        line = app.log_has(NO_SERVER)
        # (--no-tray --json: the line says what is left, not a tray icon that is not there)
        assert JSON_ALONE in line and "dunst" in line and "org.freedesktop.Notifications" in line
        append(f, ask("q1", "Anyone?"))
        append(g, ask("q2", "Anyone at all?"))
        app.wait("needs_input", 2)
        assert app.proc.poll() is None
        assert app.stop() == 0  # drains the notification worker: both questions were handled by now
    assert _server_lines(app) == [line]  # told once, not once per question
    assert not [x for x in app.stderr if "Traceback" in x or "autolaunch" in x.lower()]
    doctor = cli("doctor", "--sessions-dir", str(tmp_path))
    assert doctor.returncode == 1, doctor.stdout  # README: 1 when a check fails
    (note,) = [x for x in doctor.stdout.splitlines() if "notifications" in x]
    # (no tray host here either: the icon is not on screen, so the line names what is left)
    assert note.startswith("[FAIL] notifications: " + NO_SERVER) and "dunst" in note
    assert TRAY_ALONE not in note and "with no tray icon either, pi-notifier status, run --json, the window" in note


def test_no_session_bus_at_all(tmp_path: Path, desktop: dict[str, str]) -> None:
    f = new_session(tmp_path, "nobus")
    append(f, ask("q1", "Anyone?"))
    env = {k: v for k, v in os.environ.items() if k != "DBUS_SESSION_BUS_ADDRESS"}
    with AppProcess(
        "run", "--json", "--no-tray", "--liveness", "off", "--sessions-dir", str(tmp_path), env=env
    ) as app:
        app.wait("ready")
        assert "no session bus" in app.log_has(NO_SERVER)
        append(f, answer("q1"))
        app.wait("resolved")
        assert app.stop() == 0
    assert len(_server_lines(app)) == 1
    assert not [line for line in app.stderr if "Traceback" in line or "autolaunch" in line.lower()]
    doctor = cli("doctor", "--sessions-dir", str(tmp_path), env=env)
    assert doctor.returncode == 1
    assert "[FAIL] notifications: no notification server: no session bus" in doctor.stdout


def test_doctor_with_a_server_makes_a_round_trip(tmp_path: Path, dunst: Dunst, monitor: Monitor) -> None:
    doctor = cli("doctor", "--sessions-dir", str(tmp_path))
    (note,) = [x for x in doctor.stdout.splitlines() if "notifications" in x]
    assert note.startswith("[ok  ] notifications: dbus") and "dunst" in note, note
    assert "stay until answered" in note
    assert monitor.of("GetServerInformation")  # asked the server itself, not just the bus


def test_server_that_starts_late_goes_away_and_comes_back(
    tmp_path: Path, desktop: dict[str, str], monitor: Monitor
) -> None:
    f = new_session(tmp_path, "late")

    def shown() -> list[dict[str, Any]]:
        return [n for n in monitor.notifies() if n["summary"] == "late needs an answer"]

    with run_app(tmp_path) as app:
        app.wait("ready")
        app.log_has(NO_SERVER)
        append(f, ask("q1", "Still there?"))
        app.wait("needs_input")
        (tmp_path / "d1").mkdir()
        first = Dunst(desktop, tmp_path / "d1")
        try:
            app.log_has("a notification server appeared: D-Bus notification server dunst")
            wait_for(shown, 10, "the waiting question shown once a server appeared")
            wait_for(lambda: first.displayed() == 1, 10, "bubble")
        finally:
            first.stop()
        app.log_has("the notification server went away")
        (tmp_path / "d2").mkdir()
        second = Dunst(desktop, tmp_path / "d2")
        try:
            app.log_has("the notification server is back")
            wait_for(lambda: len(shown()) == 2, 10, "shown again on the new server")
            wait_for(lambda: second.displayed() == 1, 10, "bubble on the new server")
            append(f, answer("q1"))
            app.wait("resolved")
            wait_for(lambda: second.displayed() == 0, 10, "withdrawn from the new server")
            assert app.stop() == 0
        finally:
            second.stop()
    lines = _server_lines(app)
    assert len(lines) == 4, "\n".join(lines)  # no server, appeared, went away, is back: one line each
    assert not [line for line in app.stderr if "Traceback" in line]


def test_question_stays_on_screen_past_the_servers_own_timeout(
    tmp_path: Path, desktop: dict[str, str], monitor: Monitor
) -> None:
    (tmp_path / "d").mkdir()
    dunst = Dunst(desktop, tmp_path / "d", timeout=1)  # dunst closes a default bubble after 1 s
    try:
        f = new_session(tmp_path, "sticky")
        with run_app(tmp_path) as app:
            app.wait("ready")
            append(f, ask("q1", "Will you still see me?"))
            (n,) = wait_for(lambda: monitor.notifies(), 10, "Notify")
            assert n["timeout"] == 0 and n["hints"]["resident"] == ("b", True)
            assert n["hints"]["urgency"] == ("y", 2)
            wait_for(lambda: dunst.displayed() == 1, 10, "bubble")
            other = dunst.notify("another app", -1)  # raised after ours, with the server's timeout
            (closed,) = wait_for(
                lambda: [c for c in monitor.of("NotificationClosed") if c[0] == other], 10, "it expired"
            )
            assert closed[1] == 1  # expired
            assert dunst.displayed() == 1  # ours outlived dunst's own timeout
            assert [c[0] for c in monitor.of("NotificationClosed")] == [other]
            append(f, answer("q1"))
            app.wait("resolved")
            wait_for(lambda: dunst.displayed() == 0, 10, "withdrawn once answered")
    finally:
        dunst.stop()


def test_expire_in_seconds_lets_the_bubble_close(tmp_path: Path, dunst: Dunst, monitor: Monitor) -> None:
    cfg = _config(tmp_path, "[notifications]\nexpire = 1\n")
    f = new_session(tmp_path, "brief")
    with run_app(tmp_path, "--config", str(cfg)) as app:
        app.wait("ready")
        append(f, ask("q1", "Quick look?"))
        (n,) = wait_for(lambda: monitor.notifies(), 10, "Notify")
        assert n["timeout"] == 1000 and "resident" not in n["hints"] and n["hints"]["urgency"] == ("y", 1)
        (closed,) = wait_for(lambda: monitor.of("NotificationClosed"), 10, "closed by the server")
        assert closed[1] == 1  # expired
        assert dunst.displayed() == 0


def test_reminders_carry_on_across_a_restart(tmp_path: Path, dunst: Dunst, monitor: Monitor) -> None:
    """Reminders are counted from when the question was asked, survive a restart, and are never
    repeated; a question first seen at start-up, asked 15 min ago, is announced saying so."""
    import re
    import time as _time

    cfg = _config(tmp_path, "settle_ms = 0\nremind_after = [0.02, 0.15]\n")  # 1.2 s and 9 s
    f = new_session(tmp_path, "patient")
    with run_app(tmp_path, "--config", str(cfg)) as app:
        app.wait("ready")
        append(f, ask("q1", "Still waiting?"))
        wait_for(lambda: [n for n in monitor.notifies() if "Waiting for" in n["body"]], 10, "first reminder")
        assert app.stop() == 0  # drains the worker: the reminder count is stored
    before = monitor.notifies()
    assert [n["summary"] for n in before] == ["patient needs an answer"] * 2
    assert "Waiting for" not in before[0]["body"] and before[1]["replaces"] != 0
    late = new_session(tmp_path, "late")  # asked while the app was not running
    append(late, ask("q2", "Did anyone see me?", at=_time.time() - 15 * 60))
    with run_app(tmp_path, "--config", str(cfg)) as app:
        app.wait("ready")
        (second,) = wait_for(
            lambda: [
                n
                for n in monitor.notifies()[2:]
                if n["summary"] == "patient needs an answer" and "Waiting for" in n["body"]
            ],
            30,
            "the second reminder",
        )
        m = re.search(r"Waiting for (\d+) s", second["body"])
        assert m and int(m.group(1)) >= 9, second["body"]  # due 9 s after it was asked
        (first_seen,) = [n for n in monitor.notifies()[2:] if n["summary"] == "late needs an answer"]
        assert "Waiting for 15 min" in first_seen["body"]
        assert app.stop() == 0
    # nothing repeated, nothing else due; the third is its bubble put back at the restart
    after = [n for n in monitor.notifies()[2:] if n["summary"] == "patient needs an answer"]
    assert len(monitor.notifies()) == 5 and ["Waiting for" in n["body"] for n in after] == [False, True]


def test_show_action_opens_the_window(tmp_path: Path, dunst: Dunst, monitor: Monitor) -> None:
    import subprocess

    from .conftest import require

    require("tkinter", "xdotool")

    f = new_session(tmp_path, "clicky")
    with AppProcess(
        "run", "--liveness", "off", "--sessions-dir", str(tmp_path), "--config", str(_config(tmp_path, ""))
    ) as app:
        wait_for(lambda: request({"cmd": "ping"}), 20, "app")
        append(f, ask("q1", "Open me?"))
        wait_for(lambda: monitor.notifies(), 10, "Notify")
        wait_for(lambda: dunst.displayed() == 1, 10, "bubble")
        dunst.ctl("action", "0")  # the bubble's default action: "Show"
        wait_for(
            lambda: [x for x in monitor.of("ActionInvoked") if x[1] == "default"], 10, "ActionInvoked default"
        )

        def window() -> list[str]:
            out = subprocess.run(
                ["xdotool", "search", "--class", "pi-notifier"], capture_output=True, text=True
            )
            return out.stdout.split()

        wait_for(window, 20, "the window")
        assert app.stop() == 0


def _config(tmp_path: Path, text: str) -> Path:
    cfg = tmp_path / "config.toml"
    cfg.write_text(text)
    return cfg


def test_quiet_hours_and_hidden_text(tmp_path: Path, dunst: Dunst, monitor: Monitor) -> None:
    import time as _time

    now = _time.localtime()
    start = f"{now.tm_hour:02d}:{now.tm_min:02d}"
    end_min = (now.tm_hour * 60 + now.tm_min + 2) % 1440
    quiet = _config(
        tmp_path, f'settle_ms = 0\nquiet_hours = "{start}-{end_min // 60:02d}:{end_min % 60:02d}"\n'
    )
    a = new_session(tmp_path, "sleepy")
    with run_app(tmp_path, "--config", str(quiet)) as app:
        app.wait("ready")
        append(a, ask("q1", "Quiet please?"))
        app.wait("needs_input")
    # stopping drains the notification worker, so anything it would have raised was raised by now
    assert monitor.notifies() == []
    private = _config(tmp_path, "[notifications]\nshow_text = false\n")
    b = new_session(tmp_path, "secret")
    with run_app(tmp_path, "--config", str(private)) as app:
        app.wait("ready")
        # outside quiet hours the held-back question is announced once, at start-up
        wait_for(
            lambda: [x for x in monitor.notifies() if x["summary"] == "sleepy needs an answer"], 10, "sleepy"
        )
        append(b, ask("q2", "The launch codes are?"))
        (n,) = wait_for(
            lambda: [x for x in monitor.notifies() if x["summary"] == "secret needs an answer"], 10, "Notify"
        )
        assert "launch codes" not in n["body"] and "waiting for your answer" in n["body"]
    assert not [x for x in monitor.notifies() if "Quiet please" in x["body"]]


def test_snooze_and_mute_survive_a_restart(tmp_path: Path, dunst: Dunst, monitor: Monitor) -> None:
    from notifier import control

    nap, hush, loud = (new_session(tmp_path, p) for p in ("napping", "hushed", "loud"))
    args = ("run", "--liveness", "off", "--sessions-dir", str(tmp_path))
    with AppProcess(*args) as app:
        wait_for(lambda: control.request({"cmd": "ping"}), 20, "app")
        assert control.request({"cmd": "snooze", "project": "napping", "seconds": 3600}) == {"ok": True}
        assert control.request({"cmd": "mute", "project": "hushed", "on": True}) == {"ok": True}
        assert app.stop() == 0
    with AppProcess(*args) as app:
        wait_for(lambda: control.request({"cmd": "ping"}), 20, "app after the restart")
        append(nap, ask("q1", "Snoozed project?"))
        append(hush, ask("q2", "Muted project?"))
        append(loud, ask("q3", "Marker?"))
        wait_for(
            lambda: [n for n in monitor.notifies() if n["summary"] == "loud needs an answer"], 10, "marker"
        )
        assert app.stop() == 0  # drains the notification worker: anything due was raised by now
    assert [n["summary"] for n in monitor.notifies()] == ["loud needs an answer"]


def test_no_backend_is_chosen_by_name_without_a_server(tmp_path: Path, desktop: dict[str, str]) -> None:
    """Asking for plyer (notify-send) or D-Bus by name does not make them deliver without a server."""
    for backend in ("dbus", "plyer"):
        cfg = _config(tmp_path, f'[notifications]\nbackend = "{backend}"\n')
        doctor = cli("doctor", "--sessions-dir", str(tmp_path), "--config", str(cfg))
        assert doctor.returncode == 1, (backend, doctor.stdout)
        assert f"[FAIL] notifications: {NO_SERVER}" in doctor.stdout and "with no tray icon either" in doctor.stdout


def test_session_bus_going_away_is_said_once(tmp_path: Path, desktop: dict[str, str]) -> None:
    from .services import start_bus, stop

    bus, address = start_bus(tmp_path)  # a bus of its own: this test ends it
    env = dict(desktop, DBUS_SESSION_BUS_ADDRESS=address)
    (tmp_path / "d").mkdir()
    dunst = Dunst(env, tmp_path / "d")
    f = new_session(tmp_path, "orphan")
    try:
        with AppProcess(
            "run", "--json", "--no-tray", "-v", "--liveness", "off", "--sessions-dir", str(tmp_path), env=env
        ) as app:
            app.wait("ready")
            append(f, ask("q1", "Shown?"))
            wait_for(lambda: dunst.displayed() == 1, 10, "bubble")
            stop(bus)
            wait_for(lambda: [x for x in app.stderr if "the session bus" in x], 10, "the bus loss noticed")
            append(f, answer("q1"), ask("q2", "And now?"))
            app.wait("needs_input", 2)
            assert app.proc.poll() is None
            assert app.stop() == 0
        went = [line for line in app.stderr if "went away" in line]
        assert len(went) == 1, "\n".join(app.stderr)  # the server and its bus: one line
        assert not [line for line in app.stderr if "Traceback" in line]
    finally:
        stop(dunst.proc)
        stop(bus)


def test_state_folder_deleted_while_running_is_recreated_and_nothing_is_notified_twice(
    tmp_path: Path, dunst: Dunst, monitor: Monitor
) -> None:
    import shutil

    state = Path(os.environ["XDG_STATE_HOME"]) / "pi-notifier"
    f = new_session(tmp_path, "keep")
    with run_app(tmp_path) as app:
        app.wait("ready")
        append(f, ask("q1", "Notified once?"))
        wait_for(lambda: monitor.notifies(), 10, "the notification")
        wait_for(lambda: (state / "state.sqlite3").exists(), 10, "the store")
        shutil.rmtree(state)  # the user cleans up their state folder while the app runs
        g = new_session(tmp_path, "other")
        append(g, ask("q2", "Recorded in the new store?"))
        wait_for(lambda: len(monitor.notifies()) == 2, 10, "the second notification")
        app.log_has("was deleted while running; recreated it")
        assert (state / "state.sqlite3").exists()
    assert sum("was deleted while running" in x for x in app.stderr) == 1
    with run_app(tmp_path) as app:  # a restart: both still pending, both notified: put back, once
        app.wait("ready")
        h = new_session(tmp_path, "marker")
        append(h, ask("q3", "marker?"))
        wait_for(lambda: [x for x in monitor.notifies() if x["summary"] == "marker needs an answer"], 10, "marker")
        summaries = [n["summary"] for n in monitor.notifies()]
        assert summaries[2:] == ["2 pi sessions need answers", "marker needs an answer"], summaries


def test_bubbles_left_by_a_crash_are_closed_once_their_question_is_over(
    tmp_path: Path, dunst: Dunst, monitor: Monitor
) -> None:
    """A run that dies without closing its notifications (they stay until answered) leaves them
    on screen; the next run closes those whose question ended meanwhile at once, the others when
    theirs ends, without announcing them again."""
    import signal

    cfg = _config(tmp_path, "settle_ms = 0\n")
    first, second = new_session(tmp_path, "first"), new_session(tmp_path, "second")
    with run_app(tmp_path, "--config", str(cfg)) as app:
        app.wait("ready")
        append(first, ask("q1", "First?"))
        wait_for(lambda: dunst.displayed() == 1, 10, "the first bubble")
        append(second, ask("q2", "Second?"))
        wait_for(lambda: dunst.displayed() == 2, 10, "the second bubble")
        app.proc.send_signal(signal.SIGKILL)  # no chance to close anything
        app.proc.wait(5)
    assert dunst.displayed() == 2  # (left on screen: they never expire)
    shown = len(monitor.notifies())
    append(first, answer("q1"))  # answered while no pi-notifier ran
    with run_app(tmp_path, "--config", str(cfg)) as app:
        app.wait("ready")
        wait_for(lambda: dunst.displayed() == 1, 10, "the answered question's bubble closed")
        append(second, answer("q2"))
        app.wait("resolved")
        wait_for(lambda: dunst.displayed() == 0, 10, "the other one closed when answered")
        # nothing announced again: the bubble still asked is drawn anew in its place, silently
        again = monitor.notifies()[shown:]
        assert [(n["summary"], bool(n["replaces"])) for n in again] == [("second needs an answer", True)]
    # and a normal stop leaves nothing for the next run to close
    append(second, ask("q3", "Third?"))
    with run_app(tmp_path, "--config", str(cfg)) as app:
        app.wait("ready")
        wait_for(lambda: dunst.displayed() == 1, 10, "a bubble for the third")
    wait_for(lambda: dunst.displayed() == 0, 10, "closed at the normal stop")


def test_quiet_hours_follow_the_config_file_while_the_app_runs(
    tmp_path: Path, dunst: Dunst, monitor: Monitor
) -> None:
    """Quiet hours written into config.toml (its folder made only now) apply at once and show in
    status and doctor; a bad edit keeps them and says why once; removing them announces what they
    held."""
    import datetime as dt

    conf = Path(os.environ["XDG_CONFIG_HOME"]) / "pi-notifier" / "config.toml"
    local = dt.datetime.now()
    hours = f"{local - dt.timedelta(minutes=1):%H:%M}-{local + dt.timedelta(hours=2):%H:%M}"
    a, b = new_session(tmp_path, "hush"), new_session(tmp_path, "shh")
    with AppProcess(
        "run", "--json", "--no-tray", "-v", "--liveness", "off", "--sessions-dir", str(tmp_path)
    ) as app:
        app.wait("ready")
        conf.parent.mkdir(parents=True)
        conf.write_text(f'settle_ms = 0\nquiet_hours = "{hours}"\n')
        app.log_has(f"config: quiet hours {hours}")
        assert "applies at the next start" in app.log_has("config: settle_ms changed")
        status = cli("status", "--sessions-dir", str(tmp_path)).stdout
        assert f"Quiet hours until {hours[-5:]} ({hours}): no notifications" in status, status
        doctor = cli("doctor", "--sessions-dir", str(tmp_path)).stdout
        assert f"[ok  ] quiet hours: {hours}: in effect now (quiet hours until {hours[-5:]})" in doctor
        append(a, ask("q1", "Quietly?"))
        app.log_has("quiet hours: 1 question(s) held")
        conf.write_text('settle_ms = 0\nquiet_hours = "after lunch"\n')  # a bad edit
        bad = app.log_has("keeping the last good config")
        assert "quiet_hours" in bad and "HH:MM-HH:MM" in bad, bad
        append(b, ask("q2", "Still quiet?"))
        app.log_has("quiet hours: 2 question(s) held")  # the last good config still holds
        assert monitor.notifies() == []
        conf.write_text("settle_ms = 0\n")  # quiet hours removed
        app.log_has("config: quiet hours off")
        (n,) = wait_for(lambda: monitor.notifies(), 10, "what the quiet hours held")
        assert n["summary"] == "2 pi sessions need answers"
        assert app.stop() == 0
    assert sum("keeping the last good config" in line for line in app.stderr) == 1, app.stderr
    assert not [line for line in app.stderr if "Traceback" in line]


class Boom(BaseException):
    """Not an Exception: what an ``except Exception`` would let through and kill the thread."""


def test_the_notifier_runs_again_by_itself_after_its_worker_failed(
    tmp_path: Path, dunst: Dunst, monitor: Monitor, caplog: pytest.LogCaptureFixture, monkeypatch: pytest.MonkeyPatch
) -> None:
    """In-process app: the notifier's worker fails (a BaseException while it plans); it runs again
    by itself (said once, in the health record), the engine keeps the very outputs it was built
    with, and the next question is notified."""
    from notifier.app import App
    from notifier.config import Config

    config = Config()
    config.values["sessions_dirs"] = [str(tmp_path)]
    config.values["liveness"] = "off"
    app = App(config, json_out=False, notify=True)
    try:
        app.start()
        wait_for(lambda: app.engine is not None and app.engine.ready_event.is_set(), 20, "ready")
        assert app.engine is not None and app.alerts is not None
        alerts, outputs = app.alerts, app.engine.outputs
        planner = alerts.planner
        real_feed = planner.feed
        armed = {"left": 1}

        def feed(transitions: Any, now: float, wall: float | None = None) -> Any:
            if armed["left"]:
                armed["left"] -= 1
                raise Boom("injected")
            return real_feed(transitions, now, wall)

        monkeypatch.setattr(planner, "feed", feed)
        append(new_session(tmp_path, "alpha"), ask("q1", "Asked while it broke?"))
        wait_for(lambda: app.health.report().get("outputs", {}).get("recovered"), 10, "the notifier again")
        append(new_session(tmp_path, "beta"), ask("q2", "And after?"))
        wait_for(lambda: [n for n in monitor.notifies() if n["summary"] == "beta needs an answer"], 10, "beta")
        report = app.health.report()["outputs"]  # (the one outputs thread: the notifier's)
        assert report["count"] == 1 and "Boom: injected" in report["error"] and report["doing"] == "restarted 1×"
        assert app.alerts is alerts and app.engine.outputs is outputs  # nothing outside swapped an output
        assert any(line.startswith("outputs failed once (Boom: injected)") for line in app.ui_state().health)
        said = [r for r in caplog.records if "the outputs failed" in r.getMessage()]
        assert len(said) == 1 and said[0].exc_info is not None and said[0].exc_info[0] is Boom
    finally:
        app.shutdown()


def test_a_summary_the_user_closed_stays_closed_as_its_questions_end(
    tmp_path: Path, dunst: Dunst, monitor: Monitor
) -> None:
    """The user closes the summary bubble (dunst's close: NotificationClosed, reason 2); its
    questions are then answered one by one: the summary is not drawn again (dunst would draw a
    replaced id anew), and the app closes it when the last is answered."""
    files = [new_session(tmp_path, f"proj{i}") for i in range(4)]
    with run_app(tmp_path) as app:
        app.wait("ready")
        for i, f in enumerate(files):
            append(f, ask(f"q{i}", f"Question {i}?"))
        wait_for(lambda: [n for n in monitor.notifies() if n["summary"] == "4 pi sessions need answers"], 10, "summary")
        wait_for(lambda: dunst.displayed() == 1, 10, "a single bubble")
        shown = len(monitor.notifies())
        dunst.ctl("close")
        wait_for(lambda: monitor.of("NotificationClosed"), 10, "closed")
        for i, f in enumerate(files):
            append(f, answer(f"q{i}"))
            app.wait("resolved", i + 1, 10)
        # the last answered: the app closes what it knows as its bubble (all changes before it done)
        wait_for(lambda: monitor.of("CloseNotification"), 10, "the summary withdrawn")
        assert len(monitor.notifies()) == shown and dunst.displayed() == 0
