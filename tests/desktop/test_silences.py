"""A question asked while its session or project is snoozed or muted, against a real dunst: the
real app holds it back and announces it once when that ends (the snooze runs out or is lifted,
the project is unmuted), also across a restart, as a user does it with the CLI."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from notifier import control

from ..app_process import AppProcess
from ..conftest import cli, wait_for
from ..writer import append, ask
from .services import Dunst, Monitor
from .test_notifications import new_session


def _app(sessions: Path) -> AppProcess:
    """The app as a user runs it (the tray, so the CLI's commands reach it)."""
    app = AppProcess("run", "--json", "--liveness", "off", "--sessions-dir", str(sessions))
    wait_for(lambda: control.request({"cmd": "ping"}), 20, "the app's control channel")
    return app


def _run(sessions: Path, *args: str) -> str:
    done = cli(*args, "--sessions-dir", str(sessions))
    assert done.returncode == 0, done.stderr
    return done.stdout


def _shown(monitor: Monitor, project: str) -> list[float]:
    """When each notification saying ``project`` needs an answer arrived (monotonic)."""
    summary = f"{project} needs an answer"
    calls = monitor.of("Notify")
    stamps = monitor.stamps("Notify")
    return [t for body, t in zip(calls, stamps, strict=True) if body[0] == "pi-notifier" and body[3] == summary]


def test_asked_while_snoozed_is_announced_once_when_the_snooze_ends_or_is_lifted(
    tmp_path: Path, dunst: Dunst, monitor: Monitor
) -> None:
    nap, held, loud = (new_session(tmp_path, p) for p in ("napping", "held", "loud"))
    with _app(tmp_path) as app:
        start = time.monotonic()
        _run(tmp_path, "snooze", "napping", "5s")  # runs out by itself
        _run(tmp_path, "snooze", "held", "1h")  # lifted by hand
        append(nap, ask("q1", "Asked while snoozed?"))
        append(held, ask("q2", "Asked while snoozed for an hour?"))
        append(loud, ask("q3", "Marker?"))
        app.wait("needs_input", 3)
        wait_for(lambda: _shown(monitor, "loud"), 10, "the marker's notification")
        assert not _shown(monitor, "held")
        (napping,) = wait_for(lambda: _shown(monitor, "napping"), 15, "napping when its snooze ends")
        assert napping >= start + 5 - 0.1  # (held back until then)
        _run(tmp_path, "snooze", "held", "off")
        wait_for(lambda: _shown(monitor, "held"), 10, "held when its snooze is lifted")
        wait_for(lambda: dunst.displayed() == 3, 10, "three bubbles")
        assert app.stop() == 0  # drains the notifier: anything due was raised by now
    assert [len(_shown(monitor, p)) for p in ("napping", "held", "loud")] == [1, 1, 1]


def test_asked_while_snoozed_is_announced_when_the_snooze_ends_after_a_restart(
    tmp_path: Path, dunst: Dunst, monitor: Monitor
) -> None:
    nap, loud = new_session(tmp_path, "napping"), new_session(tmp_path, "loud")
    with _app(tmp_path) as app:
        start = time.monotonic()
        _run(tmp_path, "snooze", "napping", "6s")
        append(nap, ask("q1", "Asked while snoozed?"))
        append(loud, ask("q2", "Marker?"))
        app.wait("needs_input", 2)
        wait_for(lambda: _shown(monitor, "loud"), 10, "the marker's notification")
        assert app.stop() == 0
    assert not _shown(monitor, "napping")
    with _app(tmp_path) as app:
        (napping,) = wait_for(lambda: _shown(monitor, "napping"), 20, "napping when its snooze ends")
        assert napping >= start + 6 - 0.1
        assert app.stop() == 0
    assert len(_shown(monitor, "napping")) == 1


def _headless(sessions: Path) -> AppProcess:
    """A headless run that notifies (no app runs: the CLI's commands are saved in the store)."""
    return AppProcess("run", "--no-tray", "--json", "--liveness", "off", "--sessions-dir", str(sessions))


# what silences the project "hushed", and what lifts it
SILENCES = {"snooze": (["snooze", "hushed", "1h"], ["snooze", "off"]), "mute": (["mute", "hushed"], ["unmute", "hushed"])}


@pytest.mark.parametrize(("silence", "runner"), [("snooze", "headless"), ("mute", "app"), ("mute", "headless")])
def test_asked_while_silenced_is_announced_once_when_it_is_lifted(
    tmp_path: Path, dunst: Dunst, monitor: Monitor, silence: str, runner: str
) -> None:
    """The app, or a headless run that notifies (no app runs: the CLI saves the snooze or mute
    in the store, and the run applies it at once): what is asked meanwhile is held back, and
    announced once when it is lifted."""
    hushed, loud = new_session(tmp_path, "hushed"), new_session(tmp_path, "loud")
    put, lift = SILENCES[silence]
    with _app(tmp_path) if runner == "app" else _headless(tmp_path) as run:
        run.wait("ready")
        said = _run(tmp_path, *put)
        if runner == "headless":
            assert said.endswith(f"(saved; the headless run notifying (pid {run.proc.pid}) applies it now)\n"), said
        append(hushed, ask("q1", "Asked while silenced?"))
        append(loud, ask("q2", "Marker?"))
        run.wait("needs_input", 2)
        wait_for(lambda: _shown(monitor, "loud"), 10, "the marker's notification")
        assert not _shown(monitor, "hushed")
        _run(tmp_path, *lift)
        wait_for(lambda: _shown(monitor, "hushed"), 10, "hushed when lifted")
        wait_for(lambda: dunst.displayed() == 2, 10, "two bubbles")
        assert run.stop() == 0
    assert [len(_shown(monitor, p)) for p in ("hushed", "loud")] == [1, 1]
