"""Which raw session lines can matter to the reducer, decided on bytes alone (pure).

:func:`notifier.pi.entries.to_events` yields events only for the entry types in
:data:`EVENT_TYPES`; every other line (``label``, ``custom``, ``model_change``, unknown types …)
yields none. A line can have one of those types only if the type's name is written in it as a
JSON string, or if it contains a ``\\u`` escape (which could spell the name). So a line holding
neither needs no decoding: skipping it can never change the result.
"""

from __future__ import annotations

EVENT_TYPES = frozenset(
    {"session", "session_info", "message", "custom_message", "context_edit", "compaction", "branch_summary"}
)
# '"session"' is left out on purpose: only a file's first line can be its header, and that
# line is always decoded. '"session_info"' is its own marker.
_MARKERS = tuple(f'"{t}"'.encode() for t in sorted(EVENT_TYPES - {"session"}))
MARKERS = (*_MARKERS, b"\\u")  # a line holding none of these yields no event


def may_have_events(line: bytes) -> bool:
    """False only for a line that certainly yields no reducer event (after the header)."""
    for marker in _MARKERS:
        if marker in line:
            return True
    return b"\\u" in line
