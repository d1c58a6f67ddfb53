"""The control channel's wire format: one JSON object per line, each way, ASCII on the wire;
requests parsed with bounds (size and nesting depth). Where the socket lives."""

from __future__ import annotations

import json
import os
from typing import Any

from notifier.control.fields import BadRequest
from notifier.core import codec as jsonbound
from notifier.core.text import clean
from notifier.system import paths

MAX_REQUEST = 1 << 20  # one request line (requests are a few hundred bytes)
MAX_REQUEST_DEPTH = 16  # requests nest two or three levels
MAX_REPLY = 64 << 20  # one reply or pushed message, as a client reads it (status of many sessions)
BUSY = "busy"  # the error a connection over the cap gets before it is closed

SOCKET_ENV = "PI_NOTIFIER_SOCKET"  # set for a window spawned by an app on another channel (demo)


def socket_path() -> str:
    return os.environ.get(SOCKET_ENV) or os.path.join(paths.runtime_dir(), "control.sock")


def encode(obj: dict[str, Any]) -> bytes:
    """One message on the wire."""
    # ASCII: a lone surrogate from a badly encoded file name still travels (as an escape).
    return (json.dumps(obj, separators=(",", ":"), allow_nan=False) + "\n").encode("ascii")


def parse_request(line: bytes) -> dict[str, Any]:
    """One request line (without its newline) → the request object, or :class:`BadRequest`."""
    try:
        request = jsonbound.loads(line, max_bytes=MAX_REQUEST, max_depth=MAX_REQUEST_DEPTH)
    except ValueError as exc:  # BoundedJSONError, UnicodeDecodeError
        raise BadRequest("bad request: " + clean(exc, 120)) from None
    if not isinstance(request, dict):
        raise BadRequest("bad request: not a JSON object")
    return request
