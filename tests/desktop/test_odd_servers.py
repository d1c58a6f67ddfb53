"""The D-Bus client against notification servers that misbehave, on a real private dbus-daemon (no
X needed): a server that answers twice like mako 1.7 (a method return, then an UnknownMethod
error with the same reply serial), sends replies to serials never used and late repeats, holds
an answer past the client's timeout, answers with errors, and restarts (the name changes owner)."""

from __future__ import annotations

import os
import threading
from collections.abc import Iterator
from functools import partial
from pathlib import Path

import pytest

from notifier.outputs.dbus import NOTIFICATIONS, DBusBackend
from notifier.outputs.render import Message
from notifier.system.supervisor import Worker

from ..app_process import AppProcess
from ..conftest import cli, wait_for
from ..writer import append, ask, header, user
from .conftest import require
from .notification_server import PATH, HostileServer
from .services import start_bus, stop


@pytest.fixture
def bus(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[str]:
    """A private session bus of this test's own (nothing activatable on it)."""
    require("dbus-daemon")
    (tmp_path / "bus").mkdir()
    proc, address = start_bus(tmp_path / "bus")
    monkeypatch.setenv("DBUS_SESSION_BUS_ADDRESS", address)
    try:
        yield address
    finally:
        stop(proc)


@pytest.fixture
def servers(bus: str) -> Iterator[list[HostileServer]]:
    """Servers a test starts (each appended here is stopped at the end)."""
    started: list[HostileServer] = []
    try:
        yield started
    finally:
        for s in started:
            s.stop()


class Heard:
    """What the client's callbacks received, on the worker that reads the bus (its own)."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.actions: list[tuple[int, str]] = []
        self.server: list[str] = []
        self.worker = Worker("heard", threading.Event())
        self.worker.start()

    def backend(self) -> DBusBackend:
        return DBusBackend(on_action=self.action, on_server=self.on_server, worker=self.worker)

    def action(self, nid: int, action: str) -> None:
        with self.lock:
            self.actions.append((nid, action))

    def on_server(self, event: str) -> None:
        with self.lock:
            self.server.append(event)


MESSAGE = Message("proj needs an answer", "Go on?", actions=(("default", "Go to session"),), sticky=True)


def start(servers: list[HostileServer], address: str, name: str) -> HostileServer:
    server = HostileServer(address, name=name).start()
    servers.append(server)
    return server


def test_twenty_starts_deliver_and_hear_actions_after_a_restart(
    bus: str, servers: list[HostileServer]
) -> None:
    """Every start finds the server, delivers, follows its restart, asks the new one who it is,
    delivers there and hears its ActionInvoked — although every answer came twice (and with a
    stray and a late reply around it)."""
    delivered = 0
    for i in range(20):
        try:
            delivered += _start_restart_and_click(bus, servers, i)
        finally:
            for s in servers:
                s.stop()
            servers.clear()
    assert delivered == 20


def _start_restart_and_click(bus: str, servers: list[HostileServer], i: int) -> int:
    first = start(servers, bus, f"first-{i}")
    heard = Heard()
    backend = heard.backend()
    try:
        assert backend.connect(), backend.problem
        assert backend.server_info[0] == f"first-{i}" and "actions" in backend.capabilities
        nid = backend.show(MESSAGE, 0)
        assert first.of("Notify")[-1][3] == "proj needs an answer" and nid == 1
        first.invoke(nid, "default")
        wait_for(lambda: heard.actions == [(nid, "default")], 5, "ActionInvoked from the first server")
        first.stop()
        wait_for(lambda: heard.server == ["down"], 5, "the name lost its owner")
        second = start(servers, bus, f"second-{i}")
        wait_for(lambda: heard.server == ["down", "up"], 5, "the name has a new owner")
        assert backend.probe(), backend.problem  # (what the notifier does on "up")
        assert backend.server_info[0] == f"second-{i}"
        assert second.of("GetServerInformation") and second.of("GetCapabilities")
        again = backend.show(MESSAGE, 0)
        assert second.of("Notify") and again == 1
        second.invoke(again, "snooze")
        backend.close(again)
        wait_for(lambda: heard.actions[1:] == [(again, "snooze")], 5, "ActionInvoked after the restart")
        wait_for(lambda: second.of("CloseNotification") == [(again,)], 5, "closed on the new server")
        assert backend._bus is not None and backend._bus.dropped >= 10  # the doubles really came
        return 1
    finally:
        backend.shutdown()


def test_a_server_that_takes_the_name_over_is_asked_who_it_is(bus: str, servers: list[HostileServer]) -> None:
    first = start(servers, bus, "old")
    heard = Heard()
    backend = heard.backend()
    try:
        assert backend.connect() and backend.server_info[0] == "old"
        second = HostileServer(bus, name="new").start(take_over=True)
        servers.append(second)
        wait_for(lambda: heard.server == ["up"], 5, "the name passed to the new server")  # no "down"
        assert backend.probe() and backend.server_info[0] == "new"
        assert backend.server_key.endswith("/" + second.unique_name)
        nid = backend.show(MESSAGE, 0)
        first.invoke(nid, "old")  # it owns the name no more: not heard
        second.invoke(nid, "new")
        wait_for(lambda: heard.actions, 5, "the new server's ActionInvoked")
        assert heard.actions == [(nid, "new")] and first.of("Notify") == []
    finally:
        backend.shutdown()


def test_a_reply_after_its_call_timed_out_is_dropped(bus: str, servers: list[HostileServer]) -> None:
    server = start(servers, bus, "slow")
    server.hold["GetServerInformation"] = 0.6
    backend = Heard().backend()  # (read on a worker: the late reply is read while nothing calls)
    try:
        assert not backend.connect(timeout=0.2)
        assert backend.found == "odd"  # a server is there: not "no server"
        assert "did not answer GetServerInformation within 0.2 s" in backend.problem
        assert f"pid {os.getpid()}" in backend.problem, backend.problem  # who it is (this process)
        assert backend._bus is not None
        dropped = backend._bus.dropped
        wait_for(lambda: backend._bus is not None and backend._bus.dropped > dropped, 5, "the late reply")
        server.hold.clear()
        assert backend.probe(), backend.problem
        assert backend.show(MESSAGE, 0) == 1
    finally:
        backend.shutdown()


@pytest.mark.parametrize("method", ["GetServerInformation", "GetCapabilities"])
def test_an_error_answer_is_a_server_that_answered_oddly(
    bus: str, servers: list[HostileServer], method: str
) -> None:
    server = start(servers, bus, "grumpy")
    server.errors[method] = "org.example.Error.Grumpy"
    backend = DBusBackend()
    try:
        assert not backend.connect()
        assert backend.found == "odd"
        assert f"answered {method} with the error org.example.Error.Grumpy" in backend.problem
        server.errors.clear()
        assert backend.probe() and backend.found == "server"
    finally:
        backend.shutdown()


def test_no_server_is_not_an_odd_server(bus: str) -> None:
    backend = DBusBackend()
    try:
        assert not backend.connect()
        assert backend.found == "none" and "nothing owns" in backend.problem
    finally:
        backend.shutdown()


def test_signals_of_a_connection_that_does_not_own_the_name_are_ignored(
    bus: str, servers: list[HostileServer]
) -> None:
    from jeepney import DBusAddress, new_signal
    from jeepney.io.blocking import open_dbus_connection

    server = start(servers, bus, "real")
    heard = Heard()
    backend = heard.backend()
    try:
        assert backend.connect()
        with open_dbus_connection(bus=bus) as impostor:
            emitter = DBusAddress(PATH, interface=NOTIFICATIONS)
            impostor.send(new_signal(emitter, "ActionInvoked", "us", (1, "impostor")))
        server.invoke(1, "real")  # sent after the impostor's: once it is heard, the other would be too
        wait_for(lambda: heard.actions, 5, "the owner's ActionInvoked")
        assert heard.actions == [(1, "real")]
    finally:
        backend.shutdown()


def test_a_click_sent_twice_or_by_another_connection_straight_to_us_is_one_action(
    bus: str, servers: list[HostileServer]
) -> None:
    """GNOME 43: the shell broadcasts each click, and its notification service (the owner of the
    name) sends it to us again; a signal sent to us directly passes every match rule."""
    from jeepney import DBusAddress, new_signal
    from jeepney.io.blocking import open_dbus_connection

    server = start(servers, bus, "real")
    heard = Heard()
    replies: list[tuple[int, str]] = []
    backend = DBusBackend(
        on_action=heard.action,
        on_server=heard.on_server,
        on_reply=lambda n, t: replies.append((n, t)),
        worker=heard.worker,
    )
    try:
        assert backend.connect()
        assert backend._bus is not None
        with open_dbus_connection(bus=bus) as shell:
            to_us = DBusAddress(PATH, bus_name=backend._bus.unique_name, interface=NOTIFICATIONS)
            shell.send(new_signal(to_us, "ActionInvoked", "us", (1, "default")))
            shell.send(new_signal(to_us, "NotificationReplied", "us", (1, "forged")))
        server.invoke(1, "default")
        server.invoke(1, "default")  # the same click once more
        server.emit("NotificationReplied", "us", (1, "typed"))
        server.invoke(1, "show")  # sent last: once heard, everything before it was
        wait_for(lambda: (1, "show") in heard.actions, 5, "the owner's last ActionInvoked")
        assert heard.actions == [(1, "default"), (1, "show")]
        assert replies == [(1, "typed")]
    finally:
        backend.shutdown()


def test_the_bus_going_away_is_reported_once_and_calls_fail_cleanly(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from notifier.outputs.dbus import ServerGone

    require("dbus-daemon")
    proc, address = start_bus(tmp_path)  # a bus of its own: this test ends it
    monkeypatch.setenv("DBUS_SESSION_BUS_ADDRESS", address)
    server = HostileServer(address, name="doomed").start()
    heard = Heard()
    backend = heard.backend()
    try:
        assert backend.connect()
        stop(proc)
        wait_for(lambda: "lost" in heard.server, 5, "the bus loss")
        assert not backend.connected
        with pytest.raises(ServerGone) as gone:
            backend.show(MESSAGE, 0)
        assert gone.value.what == "bus"
        assert heard.server.count("lost") == 1
    finally:
        backend.shutdown()
        server.stop()
        stop(proc)


# ---- the app and doctor against them ----


def _session(root: Path, project: str) -> Path:
    f = root / "sessions" / f"--home-dev-{project}--" / "s.jsonl"
    append(f, header(f"/home/dev/{project}"), user())
    return f


def _config(tmp_path: Path, text: str) -> Path:
    cfg = tmp_path / "config.toml"
    cfg.write_text(text)
    return cfg


def _doctor_line(tmp_path: Path, *extra: str) -> tuple[int, str]:
    done = cli("doctor", "--sessions-dir", str(tmp_path / "sessions"), *extra)
    (line,) = [x for x in done.stdout.splitlines() if "] notifications:" in x]
    return done.returncode, line


def test_the_app_delivers_follows_a_restart_and_hears_the_new_server(
    tmp_path: Path, bus: str, servers: list[HostileServer]
) -> None:
    first = start(servers, bus, "first")
    f = _session(tmp_path, "odd")
    cfg = _config(tmp_path, "settle_ms = 0\n")
    args = ("run", "--json", "--no-tray", "-v", "--liveness", "off", "--config", str(cfg))
    with AppProcess(*args, "--sessions-dir", str(tmp_path / "sessions")) as app:
        app.wait("ready")
        app.log_has("notifications: D-Bus notification server first")
        append(f, ask("q1", "Still there?"))
        wait_for(lambda: first.of("Notify"), 10, "Notify on the first server")
        first.stop()
        app.log_has("the notification server went away")
        second = start(servers, bus, "second")
        app.log_has("the notification server is back: D-Bus notification server second")
        (shown,) = wait_for(lambda: second.of("Notify"), 10, "shown again on the new server")
        assert shown[3] == "odd needs an answer"
        second.invoke(1, "snooze")  # its id there: 1 (ids start again)
        app.log_has("snoozed 1 session")
        wait_for(lambda: second.of("CloseNotification") == [(1,)], 10, "the snoozed bubble closed")
        assert app.stop() == 0
    assert not [line for line in app.stderr if "Traceback" in line or "no notification server" in line]


def test_doctor_names_the_server_and_what_it_answered(
    tmp_path: Path, bus: str, servers: list[HostileServer]
) -> None:
    start(servers, bus, "hostile")
    code, line = _doctor_line(tmp_path)
    assert line.startswith("[ok  ] notifications: dbus — hostile 1.0 (tests; process "), line
    assert f"pid {os.getpid()})" in line
    assert "answered GetServerInformation and GetCapabilities: actions, body, body-markup" in line


def test_doctor_on_a_server_that_answers_oddly_fails_without_telling_to_install_one(
    tmp_path: Path, bus: str, servers: list[HostileServer]
) -> None:
    server = start(servers, bus, "grumpy")
    server.errors["GetServerInformation"] = "org.example.Error.Grumpy"
    code, line = _doctor_line(
        tmp_path, "--config", str(_config(tmp_path, '[notifications]\nbackend = "dbus"\n'))
    )
    assert code == 1 and line.startswith("[FAIL] notifications: the notification server (python, pid "), line
    assert "answered GetServerInformation with the error org.example.Error.Grumpy" in line
    assert "install" not in line and "no notification server" not in line
    assert 'notifications.backend = "plyer"' in line


def test_plyer_asks_the_bus_not_the_server(tmp_path: Path, bus: str, servers: list[HostileServer]) -> None:
    """notifications.backend = "plyer" is the way round a server the D-Bus client cannot use: it
    does not call the server to decide, and what it sends arrives (through notify-send)."""
    require("notify-send")
    server = start(servers, bus, "grumpy")
    server.errors["GetCapabilities"] = "org.example.Error.Grumpy"  # (notify-send never asks it)
    cfg = _config(tmp_path, 'settle_ms = 0\n[notifications]\nbackend = "plyer"\n')
    code, line = _doctor_line(tmp_path, "--config", str(cfg))
    assert line.startswith("[ok  ] notifications: plyer through "), line
    assert f"owns {NOTIFICATIONS} (python" in line or f"pid {os.getpid()}" in line, line
    assert server.calls == []  # nothing was asked of the server itself
    f = _session(tmp_path, "plain")
    with AppProcess(
        "run", "--json", "--no-tray", "--liveness", "off", "--config", str(cfg),
        "--sessions-dir", str(tmp_path / "sessions"),
    ) as app:  # fmt: skip
        app.wait("ready")
        append(f, ask("q1", "Through plyer?"))
        (notify,) = wait_for(lambda: server.of("Notify"), 20, "Notify through notify-send")
        assert notify[3] == "plain needs an answer"
        assert app.stop() == 0


def test_auto_falls_back_to_plyer_past_a_server_that_answers_oddly(
    tmp_path: Path, bus: str, servers: list[HostileServer]
) -> None:
    require("notify-send")
    server = start(servers, bus, "grumpy")
    server.errors["GetCapabilities"] = "org.example.Error.Grumpy"
    code, line = _doctor_line(tmp_path)
    assert code == 0 and line.startswith("[ok  ] notifications: plyer through notify-send"), line
    assert "(D-Bus: the notification server (python, pid " in line
    assert "answered GetCapabilities with the error org.example.Error.Grumpy" in line


def test_a_server_that_answered_oddly_is_asked_again_and_then_shows_what_waits(
    bus: str, servers: list[HostileServer]
) -> None:
    """A server that owns the name but answers no use (still starting, say) is asked again after
    a while (the screen's clock here), and what waits is shown once it answers."""
    from notifier.core.model import Item, Notice, Option, Question, QuestionItem, SessionRef
    from notifier.outputs.backends import choose_backend
    from notifier.outputs.desktop import RECONNECT_S, Screen

    server = start(servers, bus, "waking")
    server.errors["GetCapabilities"] = "org.example.Error.NotYet"
    now = [1000.0]
    screen = Screen(lambda: choose_backend("dbus", partial(DBusBackend, on_server=lambda event: None)), lambda: now[0], True)
    screen.start()
    try:
        assert isinstance(screen.backend, DBusBackend) and screen.backend.found == "odd"
        assert screen.reconnect_at == 1000.0 + RECONNECT_S
        ref = SessionRef("/s/a.jsonl", "a", "/home/me/a", None)
        q = Question("q1", "question", (QuestionItem("Go?", options=(Option("Yes"),)),), 1.0)
        screen.put(Notice(1, "question", (Item((ref.key, "q1"), ref, q),)))
        assert server.of("Notify") == []  # (nothing to show it on yet)
        server.errors.clear()
        now[0] += RECONNECT_S
        screen.reconnect(now[0])
        assert screen.backend.online and screen.reconnect_at is None
        (shown,) = server.of("Notify")
        assert shown[3] == "a needs an answer"
    finally:
        screen.stop()


def test_plyer_without_a_way_to_the_server_does_not_say_there_is_none(
    tmp_path: Path, bus: str, servers: list[HostileServer]
) -> None:
    import importlib.util

    if importlib.util.find_spec("dbus") is not None:
        pytest.skip("dbus-python is installed here: plyer has a way to the server")
    start(servers, bus, "present")
    cfg = _config(tmp_path, '[notifications]\nbackend = "plyer"\n')
    env = dict(os.environ, PATH=str(tmp_path / "no-tools"))  # no notify-send
    done = cli("doctor", "--sessions-dir", str(tmp_path / "sessions"), "--config", str(cfg), env=env)
    (line,) = [x for x in done.stdout.splitlines() if "] notifications:" in x]
    assert done.returncode == 1 and line.startswith(
        f"[FAIL] notifications: a server owns {NOTIFICATIONS} ("
    ), line
    assert "neither dbus-python nor notify-send" in line and "libnotify-bin" in line
    assert "no notification server" not in line and "dunst" not in line
