"""Hyprland's IPC (what ``hyprctl`` uses): the windows by process, the focused one, focusing one.

One request per connection on the unix socket ``$XDG_RUNTIME_DIR/hypr/$HYPRLAND_INSTANCE_SIGNATURE/
.socket.sock`` (``/tmp/hypr/…`` before Hyprland 0.40): the command as text, the answer read to
the end. ``j/clients`` and ``j/activewindow`` answer JSON (a client's ``address`` is a hex
string, ``pid`` its process); ``dispatch focuswindow address:0x…`` answers ``ok``. Not tried
against a running Hyprland here (it is not in Debian 12): the parsing is tested on literal data
shaped as its documentation shows, the exchange against a stand-in socket."""

from __future__ import annotations

import json
import os
import socket
from typing import Any

TIMEOUT_S = 2.0
MAX_ANSWER = 16 << 20


def socket_path(env: dict[str, str]) -> str | None:
    sig = env.get("HYPRLAND_INSTANCE_SIGNATURE")
    if not sig or "/" in sig:
        return None
    bases = [os.path.join(env["XDG_RUNTIME_DIR"], "hypr")] if env.get("XDG_RUNTIME_DIR") else []
    for base in [*bases, "/tmp/hypr"]:
        path = os.path.join(base, sig, ".socket.sock")
        if os.path.exists(path):
            return path
    return None


def request(path: str, command: str, timeout: float = TIMEOUT_S) -> str:
    """Hyprland's answer to one command (``OSError`` when the socket fails)."""

    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as s:
        s.settimeout(timeout)
        s.connect(path)
        s.sendall(command.encode())
        data = b""
        while len(data) <= MAX_ANSWER:
            chunk = s.recv(65536)
            if not chunk:
                break
            data += chunk
    return data.decode(errors="replace")


def _address(client: Any) -> int | None:
    addr = client.get("address") if isinstance(client, dict) else None
    try:
        return int(addr, 16) if isinstance(addr, str) and addr.startswith("0x") else None
    except ValueError:
        return None


def clients_by_pid(answer: str) -> dict[int, int]:
    """``j/clients`` → pid → the window address (as an int) of that process's first window."""
    try:
        clients = json.loads(answer)
    except ValueError:
        return {}
    found: dict[int, int] = {}
    for c in clients if isinstance(clients, list) else ():
        addr, pid = _address(c), c.get("pid") if isinstance(c, dict) else None
        if addr is not None and isinstance(pid, int) and pid > 0:
            found.setdefault(pid, addr)
    return found


def active_window(answer: str) -> tuple[int, int] | None:
    """``j/activewindow`` → (address, pid); ``None`` for ``{}`` (nothing focused)."""
    try:
        client = json.loads(answer)
    except ValueError:
        return None
    addr = _address(client)
    pid = client.get("pid") if isinstance(client, dict) else None
    return (addr, pid) if addr is not None and isinstance(pid, int) and pid > 0 else None


def focus_command(address: int) -> str:
    return f"dispatch focuswindow address:0x{address:x}"
