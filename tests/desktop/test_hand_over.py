"""One notification per question between a headless run and the app, on a real private
dbus-daemon with a notification server that records every call: the app started after a
headless run that notifies takes notifying over (the question already shown is not shown a
second time, the next one is shown once, by the app), and gives it back when it ends (quits, or
is killed); `run --json` beside the app streams the events without notifying, also after the
app ended; an app that does not notify leaves notifying to the headless run."""

from __future__ import annotations

import os
import sqlite3
from collections.abc import Iterator
from contextlib import ExitStack, closing
from pathlib import Path

import pytest

from notifier.cli.run import HANDED_OVER, TAKEN_BACK
from notifier.control import request

from ..app_process import AppProcess
from ..conftest import cli, wait_for
from ..writer import answer, append, ask, header, user
from .conftest import require
from .notification_server import HostileServer
from .services import start_bus, stop


@pytest.fixture
def server(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[HostileServer]:
    """A private session bus of this test's own and a well-behaved recording server on it."""
    require("dbus-daemon")
    (tmp_path / "bus").mkdir()
    proc, address = start_bus(tmp_path / "bus")
    monkeypatch.setenv("DBUS_SESSION_BUS_ADDRESS", address)
    for name in ("DISPLAY", "WAYLAND_DISPLAY"):  # (no tray: the app runs on notifications alone)
        monkeypatch.delenv(name, raising=False)
    recorder = HostileServer(address, name="recorder", duplicate=False, stray=False, late=False).start()
    try:
        yield recorder
    finally:
        recorder.stop()
        stop(proc)


def _summaries(server: HostileServer) -> list[str]:
    """The notifications that popped up (``Notify`` with ``replaces_id`` 0), by title. A bubble
    a run takes over from another is drawn anew in its place (:func:`_redrawn`), not a second one."""
    return [str(body[3]) for body in server.of("Notify") if not body[1]]


def _redrawn(server: HostileServer) -> list[tuple[int, str]]:
    """The bubbles drawn anew in place (``replaces_id``, title)."""
    return [(int(body[1]), str(body[3])) for body in server.of("Notify") if body[1]]


def _projects(tmp_path: Path, *names: str) -> tuple[list[Path], tuple[str, ...]]:
    """A session file per project of ``names`` (idle: a header and a user message) and the run
    arguments every process of a test shares (no settle window, no liveness, that folder)."""
    sessions = tmp_path / "sessions"
    files = [sessions / f"--home-dev-{name}--" / "s.jsonl" for name in names]
    for path, name in zip(files, names, strict=True):
        append(path, header(f"/home/dev/{name}"), user())
    cfg = tmp_path / "config.toml"
    cfg.write_text("settle_ms = 0\n")
    return files, ("--liveness", "off", "--config", str(cfg), "--sessions-dir", str(sessions))


def test_the_app_takes_notifying_over_from_a_headless_run_and_gives_it_back(tmp_path: Path, server: HostileServer) -> None:
    (one, two, three), common = _projects(tmp_path, "one", "two", "three")

    with ExitStack() as stack:
        headless = stack.enter_context(AppProcess("run", "--json", "--no-tray", "-v", *common))
        headless.wait("ready")
        append(one, ask("q1", "First?"))
        wait_for(lambda: _summaries(server) == ["one needs an answer"], 10, "the headless run's Notify")

        with AppProcess("run", "-v", *common) as app:  # the app, after it: it notifies from now on
            headless.log_has("the app started and watches the same folders: it notifies from now on")
            wait_for(lambda: request({"cmd": "ping"}), 20, "the app's control channel")
            app.log_has("notifications: D-Bus notification server recorder")
            beside = stack.enter_context(AppProcess("run", "--json", *common))  # (the app is there)
            beside.wait("ready")
            assert beside.of("needs_input")[0]["question"]["text"] == "First?"
            said = beside.log_has("it notifies, this run does not")
            assert "until the app ends" not in said  # (a stream beside the app: it never notifies)
            append(two, ask("q2", "Second?"))
            assert beside.wait("needs_input", 2)[1]["question"]["text"] == "Second?"
            assert headless.wait("needs_input", 2)[1]["question"]["text"] == "Second?"
            wait_for(lambda: "two needs an answer" in _summaries(server), 10, "the app's Notify")
            assert app.stop() == 0  # (each stop ends what it was still about to do)
        # The app left both bubbles on screen (the adopted one, id 1, and its own, id 2): a run
        # stands by to notify after it. The headless run notifies again and takes them over as
        # after a crash: both questions, notified already, in one bubble drawn in place of the
        # first (the other closed), nothing popping up; then the next one is notified.
        headless.log_has("the app that notified ended: this run notifies from now on")
        wait_for(lambda: len(_redrawn(server)) == 2, 10, "the headless run's bubble put back in place")
        assert server.of("CloseNotification") == [(2,)] and len(_summaries(server)) == 2
        append(three, ask("q3", "Third?"))
        assert beside.wait("needs_input", 3)[2]["question"]["text"] == "Third?"
        wait_for(lambda: "three needs an answer" in _summaries(server), 10, "the headless run's Notify")
        assert beside.stop() == 0
        assert headless.stop() == 0
    # Each question was notified once: the first by the headless run (the app adopted its
    # bubble, drawn anew in place: its buttons are the app's), the second by the app, the third
    # by the headless run again; what the app showed was taken back in place:
    assert _summaries(server) == ["one needs an answer", "two needs an answer", "three needs an answer"]
    assert _redrawn(server) == [(1, "one needs an answer"), (1, "2 pi sessions need answers")]
    assert sorted(server.of("CloseNotification")) == [(1,), (2,), (3,)]  # the headless run's too
    for proc in (headless, app, beside):
        assert not [line for line in proc.stderr if "Traceback" in line]
    assert not [line for line in app.stderr if "did not hand over" in line]
    assert not [line for line in beside.stderr if "notifies from now on" in line]


def _lines(proc: AppProcess, said: str) -> int:
    return sum(said in line for line in list(proc.stderr))


def _bubbles_recorded(state: Path) -> list[tuple[object, ...]]:
    """The notifications on screen as the state store's file records them (what the next
    notifier adopts), read as another process would."""
    path = state / "pi-notifier" / "state.sqlite3"
    if not path.exists():
        return []
    with closing(sqlite3.connect(path, timeout=5)) as db:
        try:
            return db.execute("SELECT id, call_id FROM bubbles ORDER BY id").fetchall()
        except sqlite3.OperationalError:  # (not made yet)
            return []


@pytest.mark.parametrize("end", ["killed", "quits"])
def test_a_headless_run_beside_the_app_takes_over_when_the_app_ends(
    tmp_path: Path, server: HostileServer, end: str
) -> None:
    """Started beside the app, the headless run never notified; the app is killed (`kill -9`: it
    says nothing, its bubble stays on screen) or quits (it leaves its bubble on screen: a run
    stands by to notify after it): the run adopts that bubble (closing it when its question is
    answered), nothing popping up again, and notifies the next question, once."""
    (one, two), common = _projects(tmp_path, "one", "two")
    with AppProcess("run", "-v", *common) as app, ExitStack() as stack:
        wait_for(lambda: request({"cmd": "ping"}), 20, "the app's control channel")
        append(one, ask("q1", "First?"))
        wait_for(lambda: _summaries(server) == ["one needs an answer"], 10, "the app's Notify")
        state = Path(os.environ["XDG_STATE_HOME"])
        wait_for(lambda: _bubbles_recorded(state) == [(1, "q1")], 10, "the app's record of its bubble")
        headless = stack.enter_context(AppProcess("run", "--json", "--no-tray", "-v", *common))
        headless.wait("ready")
        said = headless.log_has("it notifies, this run does not")
        assert said.endswith("(until the app ends)")
        if end == "killed":
            app.proc.kill()  # (no word, no clean-up: its claim names a pid that ended)
            app.proc.wait(10)
        else:
            assert app.stop() == 0
            assert server.of("CloseNotification") == []
        headless.log_has("the app that notified ended: this run notifies from now on")
        # a question asked while the command line snoozes everything, announced once that is lifted
        snoozed = cli("snooze", "all", "10m", *common)
        assert snoozed.returncode == 0 and "the headless run notifying" in snoozed.stdout, snoozed
        append(two, ask("q2", "Second?"))
        headless.wait("needs_input", 2)
        assert "two needs an answer" not in _summaries(server)
        assert cli("snooze", "off", *common).returncode == 0
        wait_for(lambda: "two needs an answer" in _summaries(server), 10, "the headless run's Notify")
        append(one, answer("q1"))
        headless.wait("resolved")
        wait_for(lambda: server.of("CloseNotification") == [(1,)], 10, "the adopted bubble closed")
        append(two, answer("q2"))
        headless.wait("resolved", 2)
        wait_for(lambda: server.of("CloseNotification") == [(1,), (2,)], 10, "its own bubble closed")

        # Turn and turn about: the app again, and after it the run once more
        with AppProcess("run", "-v", *common) as again:
            wait_for(lambda: request({"cmd": "ping"}), 20, "the app's control channel")
            wait_for(lambda: _lines(headless, HANDED_OVER) == 1, 10, "the run handing over")
            append(two, ask("q3", "Third?"))
            wait_for(lambda: "two needs an answer" in _summaries(server)[2:], 10, "the app's Notify")
            append(two, answer("q3"))
            headless.wait("resolved", 3)
            wait_for(lambda: len(server.of("CloseNotification")) == 3, 10, "the app's bubble closed")
            assert again.stop() == 0
        wait_for(lambda: _lines(headless, TAKEN_BACK) == 2, 10, "the run notifying again")
        append(one, ask("q4", "Fourth?"))
        wait_for(lambda: len(_summaries(server)) == 4, 10, "the headless run's Notify")
        assert headless.stop() == 0
    # The app's bubble was adopted (drawn anew in place), not shown a second time; each question
    # was notified once:
    assert _summaries(server) == ["one needs an answer", "two needs an answer", "two needs an answer", "one needs an answer"]
    assert _redrawn(server) == [(1, "one needs an answer")]
    assert sorted(server.of("CloseNotification")) == [(1,), (2,), (3,), (4,)]
    assert not [line for line in headless.stderr if "Traceback" in line]


def test_an_app_that_quits_closes_its_bubbles_unless_a_run_on_its_bus_stands_by(tmp_path: Path, server: HostileServer) -> None:
    """A headless run beside the app that is on no session bus (an ssh or cron shell) cannot take
    a bubble over: the app that quits closes its own, as with nobody standing by (one left would
    stay on the desktop with nobody to close it when its question ends)."""
    (one,), common = _projects(tmp_path, "one")
    with AppProcess("run", "-v", *common) as app, ExitStack() as stack:
        wait_for(lambda: request({"cmd": "ping"}), 20, "the app's control channel")
        append(one, ask("q1", "First?"))
        wait_for(lambda: _summaries(server) == ["one needs an answer"], 10, "the app's Notify")
        busless = {k: v for k, v in os.environ.items() if k != "DBUS_SESSION_BUS_ADDRESS"}
        headless = stack.enter_context(AppProcess("run", "--json", "--no-tray", "-v", *common, env=busless))
        headless.wait("ready")
        headless.log_has("it notifies, this run does not")
        assert app.stop() == 0
        assert server.of("CloseNotification") == [(1,)]
        assert headless.stop() == 0


def test_an_app_that_does_not_notify_leaves_notifying_to_a_headless_run(tmp_path: Path, server: HostileServer) -> None:
    """`run --no-notify`, or `notifications.backend = "none"`: the app claims nothing, so the
    headless run beside it (started before or after it) notifies; nobody notifies twice."""
    sessions = tmp_path / "sessions"
    files = [sessions / f"--home-dev-p{n}--" / "s.jsonl" for n in range(3)]
    for n, path in enumerate(files):
        append(path, header(f"/home/dev/p{n}"), user())
    cfg, quiet = tmp_path / "config.toml", tmp_path / "none.toml"
    cfg.write_text("settle_ms = 0\n")
    quiet.write_text('settle_ms = 0\n[notifications]\nbackend = "none"\n')
    where = ("--liveness", "off", "--sessions-dir", str(sessions))
    with AppProcess("run", "--no-notify", "--config", str(cfg), *where):
        wait_for(lambda: request({"cmd": "ping"}), 20, "the app's control channel")
        with AppProcess("run", "--json", "--no-tray", "-v", "--config", str(cfg), *where) as headless:
            headless.wait("ready")
            append(files[0], ask("q0", "Zero?"))
            wait_for(lambda: _summaries(server) == ["p0 needs an answer"], 10, "the headless run's Notify")
            append(files[0], answer("q0"))  # (else the next run puts its bubble back on screen)
            headless.wait("resolved")
    with AppProcess("run", "--json", "--no-tray", "-v", "--config", str(cfg), *where) as headless:
        headless.wait("ready")
        with AppProcess("run", "-v", "--config", str(quiet), *where) as app:
            wait_for(lambda: request({"cmd": "ping"}), 20, "the app's control channel")
            append(files[1], ask("q1", "One?"))
            wait_for(lambda: "p1 needs an answer" in _summaries(server), 10, "the headless run's Notify")
            assert app.stop() == 0
        append(files[2], ask("q2", "Two?"))
        wait_for(lambda: "p2 needs an answer" in _summaries(server), 10, "the headless run's Notify")
        assert headless.stop() == 0
    assert _summaries(server) == ["p0 needs an answer", "p1 needs an answer", "p2 needs an answer"]
    for line in headless.stderr:
        assert "this run does not" not in line and "notifies from now on" not in line


def test_two_headless_runs_of_the_same_folders_notify_each_question_once(tmp_path: Path, server: HostileServer) -> None:
    """Two `run --no-tray` side by side (no app): the first notifies, the second only streams
    and says so; when the first ends (stopped, or killed) the second notifies from then on, as
    after the app: what the first notified is put back on screen, not notified anew."""
    from notifier.cli.run import PEER_ENDED

    (one, two, three), common = _projects(tmp_path, "one", "two", "three")
    with ExitStack() as stack:
        first = stack.enter_context(AppProcess("run", "--json", "--no-tray", "-v", *common))
        first.wait("ready")
        second = stack.enter_context(AppProcess("run", "--json", "--no-tray", "-v", *common))
        second.wait("ready")
        said = second.log_has("another headless run notifies the same folders")
        assert f"(pid {first.proc.pid})" in said and said.endswith("(until it ends)")
        append(one, ask("q1", "First?"))
        assert second.wait("needs_input")[0]["question"]["text"] == "First?"
        first.wait("needs_input")
        wait_for(lambda: _summaries(server) == ["one needs an answer"], 10, "one Notify")
        append(two, ask("q2", "Second?"))
        second.wait("needs_input", 2)
        wait_for(lambda: "two needs an answer" in _summaries(server), 10, "the first run's Notify")
        assert _summaries(server) == ["one needs an answer", "two needs an answer"]  # (once each)
        state = Path(os.environ["XDG_STATE_HOME"])
        wait_for(lambda: _bubbles_recorded(state) == [(1, "q1"), (2, "q2")], 10, "the first run's record of its bubbles")
        first.proc.kill()  # (no word: the second run follows the first's end)
        first.proc.wait(10)
        second.log_has(PEER_ENDED)
        put_back = "2 pi sessions need answers"  # (what the first run left on screen, as after a restart:
        wait_for(lambda: (1, put_back) in _redrawn(server), 10, "the first run's bubbles put back")  # in place)
        append(three, ask("q3", "Third?"))
        second.wait("needs_input", 3)
        wait_for(lambda: "three needs an answer" in _summaries(server), 10, "the second run's Notify")
        assert second.stop() == 0
    assert _summaries(server) == ["one needs an answer", "two needs an answer", "three needs an answer"]
    assert _redrawn(server) == [(1, put_back)]
    assert not [line for line in second.stderr if "Traceback" in line]
