"""One bounded JSON parse for every untrusted source (session lines, control requests, cache
rows, remote streams): a size cap and a nesting-depth cap, checked before the decoder runs, so no
input can exhaust memory or the interpreter's recursion limit.

Pure: bytes in, a value or :class:`BoundedJSONError` out.
"""

from __future__ import annotations

import json
from typing import Any

MAX_DEPTH = 64  # pi's own entries nest < 12 levels; tool arguments a few more
_OPENERS = (b"[", b"{")


class BoundedJSONError(ValueError):
    """The input is not JSON, too large or too deeply nested (the message says which)."""


def nesting_depth(data: bytes, stop_at: int | None = None) -> int:
    """The deepest ``[``/``{`` nesting of ``data`` outside strings (``stop_at``: return as soon as
    it is exceeded). Linear in ``len(data)``; only run when a cheap count says it could matter."""
    depth = deepest = 0
    in_string = escaped = False
    for byte in data:
        if in_string:
            if escaped:
                escaped = False
            elif byte == 0x5C:  # backslash
                escaped = True
            elif byte == 0x22:  # quote
                in_string = False
        elif byte == 0x22:
            in_string = True
        elif byte in (0x5B, 0x7B):
            depth += 1
            if depth > deepest:
                deepest = depth
                if stop_at is not None and deepest > stop_at:
                    return deepest
        elif byte in (0x5D, 0x7D):
            depth -= 1
    return deepest


def loads(data: bytes | str, max_bytes: int | None = None, max_depth: int = MAX_DEPTH) -> Any:
    """``json.loads`` with bounds. Raises :class:`BoundedJSONError` (a ``ValueError``) for
    anything that is not acceptable JSON, and ``UnicodeDecodeError`` for bytes that are not UTF-8."""
    raw = data.encode("utf-8", "surrogatepass") if isinstance(data, str) else data
    if max_bytes is not None and len(raw) > max_bytes:
        raise BoundedJSONError(f"longer than {max_bytes} bytes")
    # Counting brackets is a fast C loop; only a line that could be too deep is scanned exactly.
    if raw.count(_OPENERS[0]) + raw.count(_OPENERS[1]) > max_depth and (
        nesting_depth(raw, stop_at=max_depth) > max_depth
    ):
        raise BoundedJSONError(f"nested deeper than {max_depth} levels")
    text = raw.decode("utf-8")
    try:
        return json.loads(text)
    except RecursionError as exc:  # pragma: no cover - excluded by the depth check above
        raise BoundedJSONError("nested too deeply") from exc
    except ValueError as exc:
        raise BoundedJSONError(f"not JSON ({exc.args[0] if exc.args else exc})") from exc
