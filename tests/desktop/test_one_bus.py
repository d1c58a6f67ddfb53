"""The one D-Bus client on a real private dbus-daemon (no X needed): every handle in the process
shares one connection and one reader thread, a signal handler that calls the bus is answered on
that reader, the connection closes with its last handle, and the push output's "is the desktop
away" check asks the screensaver through it."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from notifier.outputs import dbus
from notifier.outputs.dbus import BUS_NAME, Bus, ask
from notifier.outputs.push import desktop_away

from ..conftest import wait_for
from .conftest import require
from .services import start_bus, stop

SAVER = "org.freedesktop.ScreenSaver"


@pytest.fixture
def bus(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[str]:
    """A private session bus of this test's own; no system bus (logind is not asked)."""
    require("dbus-daemon")
    proc, address = start_bus(tmp_path)
    monkeypatch.setenv("DBUS_SESSION_BUS_ADDRESS", address)
    monkeypatch.setenv("DBUS_SYSTEM_BUS_ADDRESS", f"unix:path={tmp_path / 'no-system-bus'}")
    try:
        yield address
    finally:
        stop(proc)


def _readers() -> list[threading.Thread]:
    return [t for t in threading.enumerate() if t.name == "pi-notifier-dbus"]


def _owner_changed(name: str) -> str:
    return f"type='signal',sender='{BUS_NAME}',member='NameOwnerChanged',arg0='{name}'"


def _add_match(bus: Bus, rule: str) -> None:
    from jeepney import message_bus

    bus.ask(message_bus.AddMatch(rule))


def test_handles_share_one_connection_and_one_reader(bus: str) -> None:
    before = len(_readers())
    first, second = Bus(), Bus()
    try:
        assert first.unique_name == second.unique_name  # one connection
        assert len(_readers()) == before + 1  # one reader for both
        first.close()
        assert second.alive and not first.alive
        from jeepney import message_bus

        (bus_id,) = second.ask(message_bus.GetId())  # the other handle still calls
        assert isinstance(bus_id, str) and bus_id
    finally:
        first.close()
        second.close()
    wait_for(lambda: len(_readers()) == before, 5, "the reader to end with the last handle")


def test_a_signal_handler_that_calls_the_bus_is_answered_on_the_reader(bus: str) -> None:
    """A handler runs on the reader thread; its own call must not wait for the reader (itself)."""
    from jeepney import DBusAddress, message_bus, new_method_call

    answers: list[Any] = []
    done = threading.Event()
    listener: Bus | None = None

    def on_signal(message: Any) -> None:
        if message.body[:1] != ("org.example.Probe",) or not message.body[2]:
            return
        assert listener is not None
        answers.append(listener.ask(message_bus.GetNameOwner("org.example.Probe"), 2.0))
        done.set()

    listener = Bus(on_signal)
    owner = Bus(address=bus + ";")  # (another address string: a connection of its own, to own the name)
    try:
        assert owner.unique_name != listener.unique_name
        _add_match(listener, _owner_changed("org.example.Probe"))
        owner.ask(message_bus.RequestName("org.example.Probe"))
        assert done.wait(5), "the handler's own call was never answered"
        assert answers == [(owner.unique_name,)]
        # and the reader still reads: a plain call after it
        peer = DBusAddress("/org/freedesktop/DBus", bus_name=BUS_NAME, interface="org.freedesktop.DBus.Peer")
        assert listener.ask(new_method_call(peer, "Ping")) == ()
    finally:
        listener.close()
        owner.close()


def _serve_saver(address: str, active: bool, stop_serving: threading.Event) -> threading.Thread:
    """A screensaver stand-in: owns org.freedesktop.ScreenSaver and answers GetActive."""
    from jeepney import message_bus, new_method_return
    from jeepney.io.blocking import open_dbus_connection

    conn = open_dbus_connection(bus=address)
    conn.send_and_get_reply(message_bus.RequestName(SAVER), timeout=5)

    def serve() -> None:
        with conn:
            while not stop_serving.is_set():
                try:
                    msg = conn.receive(timeout=0.2)
                except TimeoutError:
                    continue
                if msg.header.fields.get(3) == "GetActive":  # (3: the member header field)
                    conn.send(new_method_return(msg, "b", (active,)))

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    return thread


@pytest.mark.parametrize("active", [True, False])
def test_desktop_away_asks_the_screensaver_when_logind_is_not_there(bus: str, active: bool) -> None:
    stop_serving = threading.Event()
    thread = _serve_saver(bus, active, stop_serving)
    try:
        assert desktop_away() is active
    finally:
        stop_serving.set()
        thread.join(5)
    assert dbus._links == {}  # (its one-shot handles closed their connections)


def test_desktop_away_is_unknown_without_either(bus: str) -> None:
    assert desktop_away() is None
    with pytest.raises(dbus.BusError):
        ask("unix:path=/nonexistent/bus", None)


def test_a_method_call_is_served_by_the_handle_that_takes_it(bus: str) -> None:
    """A call to our connection: the handle whose ``on_call`` takes it answers; one nobody takes
    is answered UnknownMethod at once (never left waiting)."""
    from jeepney import DBusAddress, new_method_call
    from jeepney.wrappers import DBusErrorResponse

    served: list[tuple[Any, ...]] = []
    server: Bus | None = None

    def on_call(message: Any) -> bool:
        if message.header.fields.get(3) != "Report":  # (3: the member header field)
            return False
        served.append(message.body)
        assert server is not None
        server.reply(message, "s", ("thanks",))
        return True

    server = Bus(on_call=on_call)
    caller = Bus(address=bus + ";")  # (a connection of its own)
    try:
        to_us = DBusAddress("/report", bus_name=server.unique_name, interface="org.example.Reports")
        assert caller.ask(new_method_call(to_us, "Report", "s", ("done",))) == ("thanks",)
        assert served == [("done",)]
        with pytest.raises(DBusErrorResponse) as error:
            caller.ask(new_method_call(to_us, "Other"))
        assert error.value.name == dbus.UNKNOWN_METHOD
    finally:
        server.close()
        caller.close()
