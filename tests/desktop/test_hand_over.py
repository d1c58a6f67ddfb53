"""One notification per question between a headless run and the app, on a real private
dbus-daemon with a notification server that records every call: the app started after a
headless run that notifies takes notifying over (the question already shown is not shown a
second time, the next one is shown once, by the app), and `run --json` beside the app streams
the events without notifying."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from notifier.control.client import request

from ..app_process import AppProcess
from ..conftest import wait_for
from ..writer import append, ask, header, user
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
    return [str(body[3]) for body in server.of("Notify")]


def test_the_app_takes_notifying_over_from_a_headless_run(tmp_path: Path, server: HostileServer) -> None:
    sessions = tmp_path / "sessions"
    one = sessions / "--home-dev-one--" / "s.jsonl"
    two = sessions / "--home-dev-two--" / "s.jsonl"
    append(one, header("/home/dev/one"), user())
    append(two, header("/home/dev/two"), user())
    cfg = tmp_path / "config.toml"
    cfg.write_text("settle_ms = 0\n")
    common = ("--liveness", "off", "--config", str(cfg), "--sessions-dir", str(sessions))

    with AppProcess("run", "--json", "--no-tray", "-v", *common) as headless:
        headless.wait("ready")
        append(one, ask("q1", "First?"))
        wait_for(lambda: _summaries(server) == ["one needs an answer"], 10, "the headless run's Notify")

        with AppProcess("run", "-v", *common) as app:  # the app, after it: it notifies from now on
            headless.log_has("the app started and watches the same folders: it notifies from now on")
            wait_for(lambda: request({"cmd": "ping"}), 20, "the app's control channel")
            app.log_has("notifications: D-Bus notification server recorder")
            with AppProcess("run", "--json", *common) as beside:  # (no --no-tray: the app is there)
                beside.wait("ready")
                assert beside.of("needs_input")[0]["question"]["text"] == "First?"
                beside.log_has("it notifies, this run does not")
                append(two, ask("q2", "Second?"))
                assert beside.wait("needs_input", 2)[1]["question"]["text"] == "Second?"
                assert headless.wait("needs_input", 2)[1]["question"]["text"] == "Second?"
                wait_for(lambda: "two needs an answer" in _summaries(server), 10, "the app's Notify")
                assert beside.stop() == 0
            assert app.stop() == 0  # (each stop ends what it was still about to do)
        # the app closed both bubbles as it stopped: the adopted one (id 1) and its own (id 2)
        assert sorted(server.of("CloseNotification")) == [(1,), (2,)]
        assert headless.stop() == 0
    assert len(server.of("CloseNotification")) == 2  # the headless run had nothing left to close
    # The first question was shown once (the app adopted the bubble), the second once (by the app):
    assert _summaries(server) == ["one needs an answer", "two needs an answer"]
    for proc in (headless, app, beside):
        assert not [line for line in proc.stderr if "Traceback" in line]
    assert not [line for line in app.stderr if "did not hand over" in line]
