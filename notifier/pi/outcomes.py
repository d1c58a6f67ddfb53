"""How a question ended: a question tool's ``toolResult`` classified into an ``Outcome``.

By structure first (docs/question-tools.md §4), with the markers of
:mod:`notifier.pi.outcome_markers` as data:

1. the tool's own ``details``: a named state, flags, answers present or absent (a reason code,
   an error or a whole known message then says what kind of "no answer" it was);
2. pi's own markers: ``isError`` (the text then says which kind of failure);
3. the text, only as a whole known message (or an ``Error:`` text); otherwise ``answered``.

A word inside an answer never decides: a text is read for words only when the structure already
says it is an error, not an answer. Pure.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from typing import Any

from notifier.core.model import Outcome
from notifier.pi.outcome_markers import (
    ANSWER_KEYS,
    ERROR_PREFIX,
    FLAGS,
    PI_MESSAGES,
    PICKED_KEYS,
    REASON_PATHS,
    REASONS,
    STATE_PATHS,
    STATES,
    TOOL_MESSAGES,
    UNAVAILABLE,
    Message,
    Path,
)

_UNAVAILABLE = re.compile(UNAVAILABLE, re.IGNORECASE)
# Last resort for the text of an error (never an answer): which kind of failure it reports.
_CANCEL_WORD = re.compile(r"cancel|declin|dismiss", re.IGNORECASE)
_ABORT_WORD = re.compile(r"abort", re.IGNORECASE)
_NESTING = 8  # how deep an answer is looked for (the shapes nest 3 levels)


def _whole(message: Message) -> re.Pattern[str]:
    parts = message.text.split("…")
    pattern = r"\s*(?s:.*)".join(re.escape(p.strip()) if p.strip() else "" for p in parts)
    return re.compile(pattern, re.IGNORECASE)


_MESSAGES = tuple((_whole(m), m.outcome) for m in (*PI_MESSAGES, *TOOL_MESSAGES))


def result_text(content: Any) -> str:
    """The text blocks of a toolResult's content, joined (raw; sanitize before showing)."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        parts = [
            b["text"]
            for b in content
            if isinstance(b, Mapping) and b.get("type") == "text" and isinstance(b.get("text"), str)
        ]
        return "\n".join(parts)
    return ""


def classify(is_error: Any, content: Any, details: Any) -> Outcome:
    """How a question ended, from its toolResult."""
    text = result_text(content)
    fields: Mapping[str, Any] = details if isinstance(details, Mapping) else {}
    stated = _stated(fields)
    if stated == "answered":
        return "answered"
    if stated is not None:
        return _why(stated, fields, text)
    if is_error is True:
        return _failure(text)
    known = known_message(text)
    if known is not None:
        return known
    if _is_error_text(text):
        return "unavailable" if _UNAVAILABLE.search(text) else "error"
    return "answered"


def known_message(text: str) -> Outcome | None:
    """The outcome of a whole message pi or a known tool returns, if ``text`` is one."""
    whole = text.strip()
    for pattern, outcome in _MESSAGES:
        if pattern.fullmatch(whole):
            return outcome
    return None


def _stated(fields: Mapping[str, Any]) -> Outcome | None:
    """What the tool's own details say: a named state, a flag, or answers present or absent."""
    for path in STATE_PATHS:
        state = _named(STATES, _at(fields, path))
        if state is not None:
            return state
    for flag in FLAGS:
        if fields.get(flag.key) is flag.value:
            return "answered" if any(_holds(fields.get(k), 0) for k in flag.unless) else flag.outcome
    present = [k for k in ANSWER_KEYS if k in fields]
    if present:
        return "answered" if any(_holds(fields[k], 0) for k in present) else "cancelled"
    return None


def _why(stated: Outcome, fields: Mapping[str, Any], text: str) -> Outcome:
    """Which kind of "no answer": a reason code, an error, a whole known message; else ``stated``."""
    if stated not in ("cancelled", "error"):
        return stated
    for path in REASON_PATHS:
        reason = _named(REASONS, _at(fields, path))
        if reason is not None:
            return reason
    error = fields.get("error")
    error_text = _is_error_text(text)
    if error or error_text:
        described = " ".join(_strings(error)) + ("\n" + text if error_text else "")
        return "unavailable" if _UNAVAILABLE.search(described) else "error"
    return known_message(text) or stated


def _failure(text: str) -> Outcome:
    """A result pi marked ``isError`` with no state of its own: the error text says which kind."""
    known = known_message(text)
    if known is not None:
        return known
    if _UNAVAILABLE.search(text):
        return "unavailable"
    if _CANCEL_WORD.search(text):
        return "cancelled"
    if _ABORT_WORD.search(text):
        return "aborted"
    return "error"


def _is_error_text(text: str) -> bool:
    return text.lstrip()[: len(ERROR_PREFIX)].lower() == ERROR_PREFIX.lower()


def _at(fields: Mapping[str, Any], path: Path) -> Any:
    value: Any = fields
    for key in path:
        if not isinstance(value, Mapping):
            return None
        value = value.get(key)
    return value


def _named(table: Mapping[str, Outcome], value: Any) -> Outcome | None:
    """The outcome a state or reason code names (read lower-cased, ``-`` as ``_``), if any."""
    if isinstance(value, str) and len(value) <= 64:
        return table.get(value.strip().lower().replace("-", "_"))
    return None


def _holds(value: Any, depth: int) -> bool:
    """Whether an answer value holds an answer: a non-empty text, a number, a record with
    something picked or typed, a list with one such."""
    if value is None:
        return False
    if depth > _NESTING:
        return True  # something is there, too deep to look into: not taken for "no answer"
    if isinstance(value, (bool, int, float)):
        return True
    if isinstance(value, str):
        return bool(value.strip())
    if isinstance(value, Mapping):
        picked = [k for k in PICKED_KEYS if k in value]
        if picked:
            return any(_holds(value[k], depth + 1) for k in picked)
        return any(_holds(v, depth + 1) for v in value.values())
    if isinstance(value, list):
        return any(_holds(v, depth + 1) for v in value)
    return False


def _strings(value: Any, depth: int = 0) -> Iterable[str]:
    """The strings in an error value (a text or a record such as ``{code, message}``)."""
    if depth > _NESTING:
        return
    if isinstance(value, str):
        yield value
    elif isinstance(value, Mapping):
        for v in value.values():
            yield from _strings(v, depth + 1)
    elif isinstance(value, list):
        for v in value:
            yield from _strings(v, depth + 1)
