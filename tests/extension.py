"""A stand-in for one pi's companion extension socket, as its protocol draws it (docs/companion-
extension.md): each connection gets a hello naming the dialogs open now, then one request is
read, recorded and answered (the dialog closed, then the result)."""

from __future__ import annotations

import json
import os
import socket
import threading
from typing import Any


class ExtensionStandIn:
    """``dialogs``: what the hello says is open (changed by a test as pi opens and closes them);
    ``requests``: each request received, as sent."""

    def __init__(self, path: str, dialogs: list[dict[str, Any]] | None = None, pid: int | None = None) -> None:
        self.path = path
        self.dialogs = list(dialogs or [])
        self.pid = os.getpid() if pid is None else pid
        self.requests: list[dict[str, Any]] = []
        os.makedirs(os.path.dirname(path), mode=0o700, exist_ok=True)
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.sock.bind(path)
        self.sock.listen(8)
        threading.Thread(target=self._serve, daemon=True).start()

    def _serve(self) -> None:
        while True:
            try:
                conn, _ = self.sock.accept()
            except OSError:
                return
            with conn:
                hello = {"event": "hello", "protocol": 1, "pid": self.pid, "mode": "wrap", "dialogs": self.dialogs}
                conn.sendall(json.dumps(hello).encode() + b"\n")
                data = conn.makefile("rb").readline()
                if not data:
                    continue
                req = json.loads(data)
                self.requests.append(req)
                kind = "answer" if "answer" in req else "keys"
                dialog_id = req[kind]["id"]
                for event in (
                    {"event": "closed", "id": dialog_id, "how": "remote"},
                    {"event": "result", "request": kind, "id": dialog_id, "ok": True, "closed": True},
                ):
                    conn.sendall(json.dumps(event).encode() + b"\n")

    def close(self) -> None:
        self.sock.close()
