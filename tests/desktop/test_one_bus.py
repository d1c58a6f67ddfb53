"""The one D-Bus client on a real private dbus-daemon (no X needed): every handle in the process
shares one connection and no thread of its own; it is read on the worker a handle gives (signals
handled there while nothing calls, a handler that calls the bus answered there), calls from other
threads meanwhile get their own replies, the connection closes with its last handle, and the push
output's "is the desktop away" check asks the screensaver through it."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from notifier.outputs import dbus
from notifier.outputs.dbus import BUS_NAME, Bus, ask
from notifier.outputs.push import desktop_away
from notifier.system.supervisor import Worker

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


def _owner_changed(name: str) -> str:
    return f"type='signal',sender='{BUS_NAME}',member='NameOwnerChanged',arg0='{name}'"


def _add_match(bus: Bus, rule: str) -> None:
    from jeepney import message_bus

    bus.ask(message_bus.AddMatch(rule))


def test_handles_share_one_connection_and_no_thread(bus: str) -> None:
    from jeepney import message_bus

    before = threading.active_count()
    first, second = Bus(), Bus()
    try:
        assert first.unique_name == second.unique_name  # one connection
        assert first.ask(message_bus.GetId())  # (read on this thread)
        assert threading.active_count() == before  # no reader thread
        first.close()
        assert second.alive and not first.alive
        (bus_id,) = second.ask(message_bus.GetId())  # the other handle still calls
        assert isinstance(bus_id, str) and bus_id
    finally:
        first.close()
        second.close()
    assert dbus._links == {}  # (closed with its last handle)


def test_a_signal_is_handled_on_the_worker_and_its_handler_may_call_the_bus(bus: str, worker: Worker) -> None:
    """Nothing calls: the worker reads the signal when it comes; the handler runs there and its own
    call is answered there (it reads for itself)."""
    from jeepney import DBusAddress, message_bus, new_method_call

    answers: list[Any] = []
    done = threading.Event()
    listener: Bus | None = None

    def on_signal(message: Any) -> None:
        if message.body[:1] != ("org.example.Probe",) or not message.body[2]:
            return
        assert listener is not None and worker.on_thread
        answers.append(listener.ask(message_bus.GetNameOwner("org.example.Probe"), 2.0))
        done.set()

    listener = Bus(on_signal, worker=worker)
    owner = Bus(address=bus + ";")  # (another address string: a connection of its own, to own the name)
    try:
        assert owner.unique_name != listener.unique_name
        _add_match(listener, _owner_changed("org.example.Probe"))
        owner.ask(message_bus.RequestName("org.example.Probe"))
        assert done.wait(5), "the signal was not handled, or the handler's own call was never answered"
        assert answers == [(owner.unique_name,)]
        # and the connection is still read: a plain call after it
        peer = DBusAddress("/org/freedesktop/DBus", bus_name=BUS_NAME, interface="org.freedesktop.DBus.Peer")
        assert listener.ask(new_method_call(peer, "Ping")) == ()
    finally:
        listener.close()
        owner.close()


def test_calls_from_many_threads_each_get_their_own_reply_while_the_worker_reads(bus: str, worker: Worker) -> None:
    from jeepney import message_bus

    handle = Bus(lambda message: None, worker=worker)
    got: list[tuple[Any, ...]] = []
    lock = threading.Lock()

    def calls() -> None:
        for _ in range(30):
            reply = handle.ask(message_bus.GetNameOwner(BUS_NAME), 5.0)
            with lock:
                got.append(reply)

    threads = [threading.Thread(target=calls) for _ in range(4)]
    try:
        for t in threads:
            t.start()
        worker.put(calls)  # (and on the worker itself, between)
        for t in threads:
            t.join(30)
        assert worker.sync(30)
        assert got == [(BUS_NAME,)] * 150
    finally:
        handle.close()


def test_a_call_answered_while_another_thread_reads_returns_at_once(bus: str) -> None:
    """One call waits on a service that holds its reply (a busy server, one being started),
    reading the connection; a second call from another thread, whose reply that read routes to
    it, returns at once (it waited the first one out: up to its timeout, 3 of 3)."""
    from jeepney import DBusAddress, message_bus, new_method_call, new_method_return
    from jeepney.io.blocking import open_dbus_connection

    held, release = threading.Event(), threading.Event()
    service = open_dbus_connection(bus=bus)
    service.send_and_get_reply(message_bus.RequestName("org.example.Held"), timeout=5)

    def serve() -> None:  # (answers one call, once released)
        msg = service.receive(timeout=10)
        held.set()
        release.wait(30)
        service.send(new_method_return(msg, "s", ("done",)))

    threading.Thread(target=serve, daemon=True).start()
    handle = Bus()
    slow = threading.Thread(
        target=handle.ask, args=(new_method_call(DBusAddress("/x", "org.example.Held", "org.example.Held"), "Go"), 30.0)
    )
    try:
        slow.start()
        wait_for(lambda: held.is_set() and handle._link._reading, 10, "the held call read for")
        quick = threading.Thread(target=handle.ask, args=(message_bus.GetId(), 30.0))
        quick.start()
        quick.join(10)
        assert not quick.is_alive()  # (answered while the held call still waits)
    finally:
        release.set()
        slow.join(30)
        handle.close()
        service.close()


def test_without_a_worker_signals_come_after_a_call_on_its_thread(bus: str) -> None:
    from jeepney import message_bus

    seen: list[Any] = []
    def on_signal(message: Any) -> None:
        if message.body[0] == "org.example.Later":  # (not the bus's NameAcquired at the start)
            seen.append((threading.current_thread(), message.body[0]))

    listener = Bus(on_signal)
    owner = Bus(address=bus + ";")
    try:
        _add_match(listener, _owner_changed("org.example.Later"))
        owner.ask(message_bus.RequestName("org.example.Later"))
        wait_for(lambda: listener.ask(message_bus.GetId()) and seen, 5, "the signal, with a call")
        assert seen[0] == (threading.current_thread(), "org.example.Later")
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


def test_a_method_call_to_us_is_answered_unknown_method_at_once(bus: str, worker: Worker) -> None:
    """Nothing is served here: a call to our connection is answered UnknownMethod (never left
    waiting), read on the worker while nothing calls."""
    from jeepney import DBusAddress, new_method_call
    from jeepney.wrappers import DBusErrorResponse

    us = Bus(worker=worker)
    caller = Bus(address=bus + ";")  # (a connection of its own)
    try:
        to_us = DBusAddress("/report", bus_name=us.unique_name, interface="org.example.Reports")
        with pytest.raises(DBusErrorResponse) as error:
            caller.ask(new_method_call(to_us, "Report", "s", ("done",)), 2.0)
        assert error.value.name == dbus.UNKNOWN_METHOD
    finally:
        us.close()
        caller.close()
