"""sway/i3 and Hyprland IPC over real sockets: a reply after an event, Hyprland's method
against a stand-in socket, the window and display described in words. (The framing and the
tree walk on literal data: tests/unit/test_sway_ipc.py.)"""

from __future__ import annotations

import json
import socket
import threading
from pathlib import Path

import pytest

from notifier.system import window_manager as wm


def test_a_reply_after_an_event_over_a_real_socket(tmp_path: Path) -> None:
    """A stand-in server on a unix socket: an event comes before the reply (as on a subscribed
    connection); ``ask`` passes over it. A reply of another type is refused."""
    path = str(tmp_path / "ipc.sock")
    server = socket.socket(socket.AF_UNIX)
    server.bind(path)
    server.listen(1)
    got: list[bytes] = []

    def serve() -> None:
        conn, _ = server.accept()
        with conn:
            head = conn.recv(14)
            length, kind = wm.decode_header(head)
            got.append(conn.recv(length))
            conn.sendall(wm.encode(wm.EVENT_WINDOW, json.dumps({"change": "focus"})))
            conn.sendall(wm.encode(kind, json.dumps([{"success": True}])))
            conn.recv(14 + 2)  # GET_TREE, empty payload
            conn.sendall(wm.encode(wm.RUN_COMMAND, "[]"))

    t = threading.Thread(target=serve, daemon=True)
    t.start()
    with wm.Connection(path) as conn:
        assert conn.ask(wm.RUN_COMMAND, "[con_id=5] focus") == [{"success": True}]
        with pytest.raises(wm.IpcError):
            conn.ask(wm.GET_TREE)
    t.join(5)
    server.close()
    assert got == [b"[con_id=5] focus"]


def test_the_window_display_in_words() -> None:
    assert wm.window_display({"DISPLAY": ":5"}) == ({}, "X display :5")
    none, why = wm.window_display({})
    assert none is None and "DISPLAY and WAYLAND_DISPLAY are unset" in why
    none, why = wm.window_display({"WAYLAND_DISPLAY": "wayland-9", "XDG_RUNTIME_DIR": "/nonexistent"})
    assert none is None and "offers no XWayland" in why


# ---- Hyprland (its IPC; no Hyprland in Debian 12: literal data and a stand-in socket) ----

HYPR_CLIENTS = json.dumps([
    {"address": "0x55d5a8e2c0b0", "mapped": True, "class": "foot", "title": "pi", "pid": 2201, "focusHistoryID": 1},
    {"address": "0x55d5a8f01a40", "mapped": True, "class": "kitty", "title": "~", "pid": 2310, "focusHistoryID": 0},
    {"address": "0x55d5a8f01b00", "class": "foot", "pid": 2201},
    {"address": "nonsense", "pid": 9},
    {"address": "0x1", "pid": -1},
])


def test_hyprland_method_over_a_stand_in_socket(tmp_path: Path) -> None:
    """One request per connection, answered to the end: the method lists, focuses and checks."""
    sig = "abc123_1700000000_42"
    folder = tmp_path / "hypr" / sig
    folder.mkdir(parents=True)
    path = folder / ".socket.sock"
    server = socket.socket(socket.AF_UNIX)
    server.bind(str(path))
    server.listen(4)
    state = {"active": "0x55d5a8f01a40"}
    asked: list[str] = []

    def serve() -> None:
        while True:
            try:
                conn, _ = server.accept()
            except OSError:
                return
            with conn:
                command = conn.recv(4096).decode()
                asked.append(command)
                if command == "j/clients":
                    conn.sendall(HYPR_CLIENTS.encode())
                elif command == "j/activewindow":
                    pid = 2310 if state["active"].endswith("1a40") else 2201
                    conn.sendall(json.dumps({"address": state["active"], "pid": pid}).encode())
                elif command.startswith("dispatch focuswindow address:"):
                    state["active"] = command.rsplit(":", 1)[1]
                    conn.sendall(b"ok")

    threading.Thread(target=serve, daemon=True).start()
    env = {"HYPRLAND_INSTANCE_SIGNATURE": sig, "XDG_RUNTIME_DIR": str(tmp_path), "WAYLAND_DISPLAY": "wayland-1"}
    method = wm.focus_method(env)
    assert isinstance(method, wm.Method) and method.backend is wm.HYPRLAND
    assert method.windows()[2201] == 0x55D5A8E2C0B0
    assert method.focused() == (0x55D5A8F01A40, 2310)
    assert method.activate(0x55D5A8E2C0B0)
    assert method.focused() == (0x55D5A8E2C0B0, 2201)
    assert "dispatch focuswindow address:0x55d5a8e2c0b0" in asked
    server.close()
    gone = wm.focus_method({"HYPRLAND_INSTANCE_SIGNATURE": "nothere", "WAYLAND_DISPLAY": "wayland-1"})
    assert isinstance(gone, wm.Missing) and gone.reason == "Hyprland's IPC socket was not found"
