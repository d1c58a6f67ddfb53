"""sway's IPC: the windows it manages, which one is focused, focusing one, and its focus events.

The protocol (sway-ipc(7), i3's "IPC interface"): over the unix socket ``$SWAYSOCK`` each message is
the magic ``i3-ipc``, a payload length and a message type (two native-endian uint32) and a JSON
payload; replies have the same header, events the type's high bit set. Written here rather than
taken from the ``i3ipc`` package (2.2.1, unreleased since 2020): three message types are needed,
each call must have a timeout, and the focus watcher reads events on a thread of its own that it
must be able to stop.

A sway view names its client's process (``pid``, the X11 client's too under XWayland) and
``focused``; ``[con_id=N] focus`` focuses it whatever ``focus_on_window_activation`` says (that
setting only turns an X11 client's *request* into an urgent hint). i3 speaks the same protocol
but its tree names no processes: under i3 the focus method is X11 EWMH."""

from __future__ import annotations

import glob
import json
import os
import socket
import struct
from collections.abc import Iterator
from typing import Any

from notifier.core.text import number

MAGIC = b"i3-ipc"
HEADER = struct.Struct("=6sII")
RUN_COMMAND, SUBSCRIBE, GET_TREE, GET_VERSION = 0, 2, 4, 7
EVENT_BIT = 0x80000000
EVENT_WORKSPACE, EVENT_WINDOW = EVENT_BIT | 0, EVENT_BIT | 3
TIMEOUT_S = 2.0
MAX_PAYLOAD = 64 << 20  # a tree of thousands of windows is a few MB


class IpcError(OSError):
    """The socket failed or answered something that is not the protocol."""


def socket_path(env: dict[str, str] | None = None) -> str | None:
    """sway's IPC socket: ``$SWAYSOCK``; without it (an app started
    outside sway's environment, by systemd say), sway's own ``sway-ipc.UID.PID.sock`` in
    ``$XDG_RUNTIME_DIR`` of a sway that still runs (the one serving ``$WAYLAND_DISPLAY`` first)."""
    env = dict(os.environ) if env is None else env
    path = env.get("SWAYSOCK")
    if path and os.path.exists(path):
        return path
    runtime = env.get("XDG_RUNTIME_DIR")
    if not runtime:
        return None
    alive = []
    for path in sorted(glob.glob(os.path.join(glob.escape(runtime), f"sway-ipc.{os.getuid()}.*.sock"))):
        pid = _sock_pid(path)
        if pid is not None and os.path.exists(f"/proc/{pid}"):
            alive.append((pid, path))
    if not alive:
        return None
    compositor = wayland_server_pid(env)
    return next((p for pid, p in alive if pid == compositor), alive[0][1])


def _sock_pid(path: str) -> int | None:
    parts = os.path.basename(path).split(".")
    return number(parts[2]) if len(parts) == 4 else None


def wayland_server_pid(env: dict[str, str] | None = None) -> int | None:
    """The pid of the compositor serving ``$WAYLAND_DISPLAY`` (the socket peer's credentials)."""
    env = dict(os.environ) if env is None else env
    name = env.get("WAYLAND_DISPLAY")
    if not name:
        return None
    path = name if os.path.isabs(name) else os.path.join(env.get("XDG_RUNTIME_DIR") or "/nonexistent", name)
    try:
        with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as s:
            s.settimeout(TIMEOUT_S)
            s.connect(path)
            creds = s.getsockopt(socket.SOL_SOCKET, socket.SO_PEERCRED, struct.calcsize("3i"))
    except OSError:
        return None
    pid = struct.unpack("3i", creds)[0]
    return pid or None


def encode(kind: int, payload: str = "") -> bytes:
    data = payload.encode()
    return HEADER.pack(MAGIC, len(data), kind) + data


def decode_header(head: bytes) -> tuple[int, int]:
    """(payload length, message type) of a 14-byte header; :class:`IpcError` if it is not one."""
    magic, length, kind = HEADER.unpack(head)
    if magic != MAGIC or length > MAX_PAYLOAD:
        raise IpcError("not an i3-ipc message")
    return length, kind


class Connection:
    """One connection to the compositor (the caller closes it: a context manager)."""

    def __init__(self, path: str, timeout: float = TIMEOUT_S) -> None:
        self.path = path
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.sock.settimeout(timeout)
        try:
            self.sock.connect(path)
        except OSError:
            self.sock.close()
            raise

    def __enter__(self) -> Connection:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        self.sock.close()

    def _read(self, n: int) -> bytes:
        data = b""
        while len(data) < n:
            chunk = self.sock.recv(n - len(data))
            if not chunk:
                raise IpcError("the compositor closed its IPC socket")
            data += chunk
        return data

    def receive(self) -> tuple[int, Any]:
        """The next message: (type, its JSON)."""
        length, kind = decode_header(self._read(HEADER.size))
        try:
            return kind, json.loads(self._read(length))
        except ValueError as exc:
            raise IpcError(f"not JSON: {exc}") from None

    def ask(self, kind: int, payload: str = "") -> Any:
        """Send one message and return its reply (events that come first are passed over)."""
        self.sock.sendall(encode(kind, payload))
        while True:
            got, body = self.receive()
            if got == kind:
                return body
            if not got & EVENT_BIT:
                raise IpcError(f"reply of type {got} to a message of type {kind}")

    def tree(self) -> dict[str, Any]:
        tree = self.ask(GET_TREE)
        if not isinstance(tree, dict):
            raise IpcError("the tree is not an object")
        return tree

    def command(self, command: str) -> bool:
        """Run a sway command; True when every part of it succeeded."""
        replies = self.ask(RUN_COMMAND, command)
        return isinstance(replies, list) and bool(replies) and all(
            isinstance(r, dict) and r.get("success") is True for r in replies
        )

    def subscribe(self, *events: str) -> None:
        reply = self.ask(SUBSCRIBE, json.dumps(list(events)))
        if not (isinstance(reply, dict) and reply.get("success") is True):
            raise IpcError(f"the compositor refused to send {', '.join(events)} events")


# ---- the tree (pure: literal data in the unit tests) ----


def nodes(tree: dict[str, Any]) -> Iterator[dict[str, Any]]:
    """Every node of the tree, tiled and floating, depth first."""
    stack = [tree]
    while stack:
        node = stack.pop()
        yield node
        for key in ("floating_nodes", "nodes"):
            children = node.get(key)
            if isinstance(children, list):
                stack.extend(reversed([c for c in children if isinstance(c, dict)]))


def is_view(node: dict[str, Any]) -> bool:
    """A window of a client (not a workspace, an output or a split)."""
    return (
        node.get("type") in ("con", "floating_con")
        and isinstance(node.get("id"), int)
        and isinstance(node.get("pid"), int)
        and node["pid"] > 0
        and (node.get("app_id") is not None or node.get("window") is not None or "shell" in node)
    )


def views_by_pid(tree: dict[str, Any]) -> dict[int, int]:
    """pid → the con id of that process's first window."""
    found: dict[int, int] = {}
    for node in nodes(tree):
        if is_view(node):
            found.setdefault(int(node["pid"]), int(node["id"]))
    return found


def focused_view(tree: dict[str, Any]) -> tuple[int, int] | None:
    """(con id, pid) of the focused window; ``None`` when the focus is on no window (an empty
    workspace, a layer such as a bar)."""
    for node in nodes(tree):
        if node.get("focused") is True:
            return (int(node["id"]), int(node["pid"])) if is_view(node) else None
    return None


def view_of_event(event: Any) -> tuple[int, int] | None:
    """A ``window`` event's focused window ("change": "focus"), as (con id, pid)."""
    if not isinstance(event, dict) or event.get("change") != "focus":
        return None
    con = event.get("container")
    return (int(con["id"]), int(con["pid"])) if isinstance(con, dict) and is_view(con) else None
