"""Session lines judged on their bytes alone (pure): which ones can matter to the reducer, and
what a line too long to read still says in its first bytes.

:func:`notifier.pi.entries.to_events` yields events only for the entry types in
:data:`~notifier.pi.entries.EVENT_TYPES`. A line can have one of those types only if the type's
name is written in it as a JSON string, or if it contains a ``\\u00`` escape (the names are
ASCII, so an escape spelling one of their characters is ``\\u00`` and two hex digits; JSON has no
other escape for letters). So a line holding none of :data:`MARKERS` can be passed over unread.
"""

from __future__ import annotations

import json
import re

from notifier.core.model import Question, QuestionItem
from notifier.core.reducer import Event, Supersede, ToolEnd, ToolStart
from notifier.pi.catalog import QuestionCatalog
from notifier.pi.entries import EVENT_TYPES, ID_LIMIT, parse_time

ESCAPE = b"\\u00"
# One marker per type, quoted ('"session"' is left out: only a file's first line can be its
# header, and that line is always decoded; a file without a header is read whole), except that
# 'message"' stands for both '"message"' and '"custom_message"'. It comes first: it is the
# common one, which the start-up read searches for first.
MARKERS = (
    b'message"',
    *(f'"{t}"'.encode() for t in sorted(EVENT_TYPES - {"session", "message", "custom_message"})),
    ESCAPE,
)


def may_have_events(line: bytes) -> bool:
    """False only for a line that certainly yields no reducer event (after the header)."""
    return any(marker in line for marker in MARKERS)


# ---- a line over the size bound: what its head says ----

TOO_LARGE = "a question too large to show"
TOO_ODD = "a question too odd to show"
_S = rb'"((?:[^"\\]|\\.){1,%d})"' % ID_LIMIT  # a JSON string (escapes kept, decoded after)
_MESSAGE = re.compile(rb'\s*\{\s*"type"\s*:\s*"message"')
_TIME = re.compile(rb'"timestamp"\s*:\s*' + _S)
_ROLE = re.compile(rb'"message"\s*:\s*\{\s*"role"\s*:\s*"(assistant|toolResult)"')
_CALL = re.compile(rb'\{\s*"type"\s*:\s*"toolCall"\s*,\s*"id"\s*:\s*' + _S + rb'\s*,\s*"name"\s*:\s*' + _S)
_RESULT_ID = re.compile(rb'"toolCallId"\s*:\s*' + _S)
_RESULT_TOOL = re.compile(rb'"toolName"\s*:\s*' + _S)


def _text(raw: bytes) -> str | None:
    try:
        value = json.loads(b'"' + raw + b'"')
    except ValueError:
        return None
    return value[:ID_LIMIT] if isinstance(value, str) else None


def too_large_events(head: bytes, catalog: QuestionCatalog, seen_at: float) -> list[Event]:
    """The events of a line too long to read, from its first bytes (``head``): pi writes an
    assistant message's tool calls (``type``, ``id``, ``name``) before their arguments, so a
    question whose arguments are too large to read is still seen waiting, as
    :data:`TOO_LARGE`; a tool result too large to read still ends its call. Nothing for any
    other line."""
    return _bytes_events(head, catalog, seen_at, TOO_LARGE)


def odd_line_events(line: bytes, catalog: QuestionCatalog, seen_at: float) -> list[Event]:
    """The events of a line that cannot be parsed whole (bytes that are not UTF-8, arguments
    nested deeper than the parser's bound, JSON broken inside a value), read the same way: a
    question tool's call in it (by name or pattern: its arguments cannot be read) is still seen
    waiting, as :data:`TOO_ODD`, never dropped; a tool result still ends its call."""
    return _bytes_events(line, catalog, seen_at, TOO_ODD)


def _bytes_events(head: bytes, catalog: QuestionCatalog, seen_at: float, text: str) -> list[Event]:
    if not _MESSAGE.match(head):
        return []
    role = _ROLE.search(head)
    if role is None:
        return []
    stamp = _TIME.search(head, 0, role.start())
    at = parse_time(_text(stamp.group(1)) if stamp else None, seen_at)
    if role.group(1) == b"toolResult":
        ended, tool = _RESULT_ID.search(head, role.end()), _RESULT_TOOL.search(head, role.end())
        found = _text(ended.group(1)) if ended else None
        name = (_text(tool.group(1)) if tool else None) or ""
        return [ToolEnd(at, found, name)] if found else []
    events: list[Event] = [Supersede(at)]
    for call in _CALL.finditer(head, role.end()):
        call_id, tool_name = _text(call.group(1)), _text(call.group(2))
        if call_id is None or tool_name is None:
            continue
        asked = Question(call_id, tool_name, (QuestionItem(text),), at) if tool_name in catalog else None
        events.append(ToolStart(at, call_id, tool_name, asked))
    return events
