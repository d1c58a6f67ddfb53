"""Which raw session lines can matter to the reducer, decided on bytes alone (pure).

:func:`notifier.pi.entries.to_events` yields events only for the entry types in
:data:`EVENT_TYPES`; every other line (``label``, ``custom``, ``model_change``, unknown types …)
yields none. A line can have one of those types only if the type's name is written in it as a
JSON string, or if it contains a ``\\u00`` escape (the names are ASCII, so an escape spelling
one of their characters is ``\\u00`` and two hex digits; JSON has no other escape for letters).
So a line holding neither needs no decoding: skipping it can never change the result.

The markers are substrings of those spellings, chosen to be few and long (each is one C scan of
the bytes, and a longer needle skips faster): ``message"`` stands for both ``"message"`` and
``"custom_message"``.
"""

from __future__ import annotations

EVENT_TYPES = frozenset(
    {"session", "session_info", "message", "custom_message", "context_edit", "compaction", "branch_summary"}
)
# '"session"' is left out on purpose: only a file's first line can be its header, and that
# line is always decoded. '"session_info"' is its own marker.
_MARKERS = (b'message"', b'"session_info"', b'"context_edit"', b'"compaction"', b'"branch_summary"')
ESCAPE = b"\\u00"
MARKERS = (*_MARKERS, ESCAPE)  # a line holding none of these yields no event


def may_have_events(line: bytes) -> bool:
    """False only for a line that certainly yields no reducer event (after the header)."""
    return any(marker in line for marker in MARKERS)
