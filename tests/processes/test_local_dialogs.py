"""`pi-notifier show` without a running app (app/runtime.py `LocalSource`) follows the companion
extension's dialogs like the app does: a stand-in extension socket (a real Unix socket speaking the
extension's protocol) announces a permission gate, the window's snapshot shows it, ``closed`` takes
it away, and closing the window lets go of the socket."""

from __future__ import annotations

import json
import os
import queue
import socket
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from notifier.app import LocalSource
from notifier.config import Config
from notifier.system import paths

from ..conftest import wait_for
from .test_companion import GATE  # the permission gate as the extension announces it


class StandInExtension:
    """What the extension does on its socket: hello to each client, then the events it is given."""

    def __init__(self, path: str) -> None:
        self.path = path
        os.makedirs(os.path.dirname(path), mode=0o700, exist_ok=True)
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.sock.bind(path)
        self.sock.listen(4)
        self.clients: queue.Queue[socket.socket] = queue.Queue()
        self.gone = threading.Event()  # the client hung up
        threading.Thread(target=self._serve, daemon=True).start()

    def _serve(self) -> None:
        conn, _ = self.sock.accept()
        hello = {"event": "hello", "protocol": 1, "pi_version": "1.6.0", "pid": os.getpid(), "mode": "wrap"}
        conn.sendall(json.dumps({**hello, "dialogs": []}).encode() + b"\n")
        self.clients.put(conn)
        while conn.recv(4096):
            pass
        self.gone.set()

    def send(self, event: dict[str, Any]) -> None:
        conn = self.clients.get(timeout=10)
        conn.sendall(json.dumps(event).encode() + b"\n")
        self.clients.put(conn)

    def close(self) -> None:
        self.sock.close()
        os.unlink(self.path)


@pytest.fixture
def extension() -> Iterator[StandInExtension]:
    ext = StandInExtension(os.path.join(paths.runtime_dir(), "ext-1-abcd.sock"))
    yield ext
    ext.close()


def test_the_window_without_the_app_shows_extension_dialogs(
    tmp_path: Path, extension: StandInExtension
) -> None:
    sessions = tmp_path / "sessions"
    session_file = sessions / "--p--" / "a.jsonl"
    session_file.parent.mkdir(parents=True)
    session_file.write_text("")
    config = Config()
    config.set("sessions_dirs", [str(sessions)], "test")
    config.set("liveness", "off", "test")  # the stand-in is no pi process
    pushed: list[dict[str, Any]] = []
    source = LocalSource(config)
    source.start(pushed.append)

    def questions() -> list[dict[str, Any]] | None:
        return pushed[-1]["window"]["questions"] if pushed else None

    try:
        wait_for(lambda: questions() == [], 10, "the first (empty) window snapshot")
        extension.send({**GATE, "session_file": str(session_file), "pid": os.getpid()})
        (shown,) = wait_for(questions, 10, "the gate in the window")
        question = shown["question"]
        assert question["kind"] == "dialog" and question["tool"] == "bash" and shown["file"] == str(session_file)
        assert [o["label"] for o in question["items"][0]["options"]] == ["Yes", "No"]
        assert "rm -rf build" in question["items"][0]["detail"]
        extension.send({"event": "closed", "id": GATE["id"], "how": "answered"})
        wait_for(lambda: questions() == [], 10, "the gate to leave the window")
    finally:
        source.close()
    assert extension.gone.wait(10), "the window let go of the extension's socket"
    assert source.dialogs is None
