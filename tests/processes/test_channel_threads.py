"""The doors keep their threads bounded: the control channel's handler threads end once idle (an
idle app keeps none), the app's signals wake the channel's own thread (no relay thread beside
it), and the companion sockets followed at once are capped."""

from __future__ import annotations

import os
import socket
import threading
from pathlib import Path
from typing import Any

import pytest

from notifier.control import Connection, Server, request

from ..conftest import wait_for


def _names() -> list[str]:
    return [t.name for t in threading.enumerate()]


def test_handler_threads_end_once_idle_and_come_back_for_the_next_request(tmp_path: Path) -> None:
    def handle(req: dict[str, Any], conn: Connection) -> dict[str, Any]:
        return {"ok": True, "on": threading.current_thread().name}

    server = Server(str(tmp_path / "c.sock"), handle)
    server.start()
    try:
        for _ in range(2):
            reply = request({"cmd": "ping"}, path=str(tmp_path / "c.sock"))
            assert reply == {"ok": True, "on": "pi-notifier-ipc-worker"}
            wait_for(lambda: "pi-notifier-ipc-worker" not in _names(), 10, "the idle worker's end")
    finally:
        server.stop()


def test_a_signal_wakes_the_channel_thread_and_no_relay_thread_is_started(tmp_path: Path) -> None:
    stop = threading.Event()
    r, w = os.pipe()
    server = Server(str(tmp_path / "c.sock"), lambda req, conn: {"ok": True})
    server.watch_pipe(r, stop.set)
    server.start()
    try:
        before = len(threading.enumerate())
        os.write(w, b"s")  # (what the interpreter's wakeup fd gets on SIGTERM)
        assert stop.wait(10)
        assert len(threading.enumerate()) == before
    finally:
        server.stop()
        os.close(r)
        os.close(w)


def test_companion_sockets_followed_at_once_are_capped(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import notifier.companion as watcher

    monkeypatch.setattr(watcher, "MAX_PEERS", 3)
    folder = tmp_path / "run"
    folder.mkdir(mode=0o700)
    listeners = []
    for n in range(6):  # pis that never say hello: each connection waits (a thread each)
        s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        s.bind(str(folder / f"ext-{n}.sock"))
        s.listen(1)
        listeners.append(s)
    watch = watcher.CompanionWatcher(lambda path, event: None, str(folder))
    watch.start()
    try:
        wait_for(lambda: len(watch.connected()) == 3, 10, "three connections")
        assert sum(name == "pi-notifier-companion" for name in _names()) == 3
    finally:
        watch.stop()
        for s in listeners:
            s.close()


def test_a_companion_socket_passed_over_at_the_cap_is_followed_once_a_place_frees(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import notifier.companion as watcher

    monkeypatch.setattr(watcher, "MAX_PEERS", 3)
    folder = tmp_path / "run"
    folder.mkdir(mode=0o700)
    listeners = {}
    for n in range(4):  # pis that never say hello: each connection waits
        s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        s.bind(str(folder / f"ext-{n}.sock"))
        s.listen(1)
        listeners[str(folder / f"ext-{n}.sock")] = s
    watch = watcher.CompanionWatcher(lambda path, event: None, str(folder))
    watch.start()
    try:
        wait_for(lambda: len(watch.connected()) == 3, 10, "three connections")
        (waiting,) = set(listeners) - set(watch.connected())
        gone = watch.connected()[0]  # one of those pis quits: its socket goes with it
        listeners.pop(gone).close()
        os.unlink(gone)
        wait_for(lambda: waiting in watch.connected(), 10, "the pi passed over, followed now")
        assert sorted(watch.connected()) == sorted(listeners)
    finally:
        watch.stop()
        for s in listeners.values():
            s.close()
