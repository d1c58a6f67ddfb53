"""pi session entries (parsed JSONL lines) → reducer events. Pure.

See docs/pi-sessions.md §3–§5. Unknown entry types, roles and fields are ignored;
known entries with the wrong shape raise :class:`EntryError` so the caller can log it once.
"""

from __future__ import annotations

from collections.abc import Mapping
from functools import partial
from typing import Any

from notifier.core.codec import Budget, loads, parse_iso, sane_time, shrink
from notifier.core.model import Outcome, Question, State
from notifier.core.reducer import (
    Activity,
    Event,
    Header,
    Input,
    Renamed,
    Supersede,
    ToolEnd,
    ToolStart,
    TurnEnd,
)
from notifier.core.text import clean
from notifier.pi.catalog import QuestionCatalog
from notifier.pi.extraction import extract
from notifier.pi.outcomes import classify, result_text

_TIMED = frozenset({"message", "custom_message", "context_edit", "compaction", "branch_summary"})
EVENT_TYPES = frozenset({"session", "session_info", *_TIMED})  # every other entry type yields no event
NEUTRAL = frozenset({"label", "custom", "usage", "model_change", "thinking_level_change"})
_STOP_STATE: dict[str, State] = {"stop": "idle", "length": "idle", "error": "failed", "aborted": "stopped"}
ANSWER_LIMIT = 2000
# Bounds where file data enters the model (the line itself is bounded by the tailer and the parse):
ID_LIMIT = 512  # session ids and toolCallIds (pi writes < 100 characters)
CWD_LIMIT = 4096
NAME_LIMIT = 200
MAX_CALLS = 256  # tool calls read from one assistant message
RESULT_CHARS = 64 << 10  # characters of a question's toolResult that classification looks at
_SHAPE_HINTS = ('"questions"', '"options"', '"choices"', '"question"', '"prompt"', '"message"')


class EntryError(ValueError):
    """A known entry type with a shape pi never writes."""


def parse_time(value: Any, default: float) -> float:
    """An entry's ISO-8601 ``timestamp`` (or Unix ms) as epoch seconds; ``default`` if unusable
    (not a time, out of range, NaN/inf, a huge number, another type)."""
    if isinstance(value, str):
        parsed = parse_iso(value)
        return default if parsed is None else parsed
    if not isinstance(value, (int, float)) or isinstance(value, bool):
        return default
    if isinstance(value, int) and abs(value) > 10**15:
        return default
    ok = sane_time(float(value) / 1000.0 if value > 1e11 else value)  # (Unix milliseconds)
    return default if ok is None else ok


def to_events(entry: Mapping[str, Any], catalog: QuestionCatalog, seen_at: float) -> list[Event]:
    """pi's events in one entry. What a question's call and result hold is read through a
    bounded copy (:func:`notifier.core.codec.shrink`)."""
    kind = entry.get("type")
    if not isinstance(kind, str):
        raise EntryError("entry without a type")
    if kind in NEUTRAL:
        return []
    if kind == "session":
        cwd = entry.get("cwd")
        sid = entry.get("id")
        if not isinstance(sid, str):
            raise EntryError("session header without an id")  # pi does not count such a file either
        return [Header(sid[:ID_LIMIT], cwd[:CWD_LIMIT] if isinstance(cwd, str) else None)]
    if kind == "session_info":
        name = entry.get("name")
        return [Renamed(clean(name[: NAME_LIMIT * 4], NAME_LIMIT) if isinstance(name, str) else None)]
    if kind not in _TIMED:
        return []
    at = parse_time(entry.get("timestamp"), seen_at)
    if kind == "message":
        message = entry.get("message")
        if not isinstance(message, Mapping):
            raise EntryError("message entry without a message object")
        return _message(message, catalog, at)
    if kind in ("custom_message", "context_edit"):
        return [Activity(at)]
    if kind == "compaction":
        return [Supersede(at)]
    return [Supersede(at, "idle")]  # branch_summary


def _message(message: Mapping[str, Any], catalog: QuestionCatalog, at: float) -> list[Event]:
    role = message.get("role")
    if role == "user":
        return [Input(at)]
    if role == "system":
        return [Activity(at)]
    if role == "bashExecution":
        return [Supersede(at, "idle")]
    if role == "assistant":
        return _assistant(message, catalog, at)
    if role == "toolResult":
        call_id = message.get("toolCallId")
        tool = message.get("toolName")
        if not isinstance(call_id, str):
            raise EntryError("toolResult without a toolCallId")
        call_id = call_id[:ID_LIMIT]
        tool = tool if isinstance(tool, str) else ""
        if tool not in catalog:
            # A question seen by its shape ends here too: judged only if it was one (the reducer
            # asks), so an ordinary tool's result costs no classification.
            return [ToolEnd(at, call_id, tool[:ID_LIMIT], judge=partial(judge_result, message))]
        outcome, answer = judge_result(message)
        return [ToolEnd(at, call_id, tool, outcome, answer)]
    return []


def judge_result(message: Mapping[str, Any]) -> tuple[Outcome, str | None]:
    """A question's toolResult message: its outcome, and for ``answered`` the answer pi recorded.
    Only a bounded copy of what the tool returned is classified and kept."""
    budget = Budget(RESULT_CHARS)
    content = shrink(message.get("content"), budget, max_str=RESULT_CHARS)
    details = shrink(message.get("details"), budget, max_str=RESULT_CHARS)
    outcome = classify(message.get("isError"), content, details)
    answer = clean(result_text(content)[: ANSWER_LIMIT * 4], ANSWER_LIMIT) if outcome == "answered" else None
    return outcome, answer or None


def _assistant(message: Mapping[str, Any], catalog: QuestionCatalog, at: float) -> list[Event]:
    content = message.get("content")
    if content is None or isinstance(content, str):
        content = []
    if not isinstance(content, list):
        raise EntryError("assistant message whose content is not a list")
    stop = message.get("stopReason")
    events: list[Event] = [Supersede(at)]
    executed = stop not in ("error", "aborted")
    calls = 0
    budget = Budget()  # one for all the questions of this message: their sum is bounded
    for block in content:
        if not isinstance(block, Mapping) or block.get("type") != "toolCall":
            continue
        call_id, name = block.get("id"), block.get("name")
        if not isinstance(call_id, str) or not isinstance(name, str):
            continue
        calls += 1
        if calls > MAX_CALLS:
            break
        if not executed:
            continue
        call_id, name = call_id[:ID_LIMIT], name[:ID_LIMIT]
        question = _question(name, block.get("arguments"), catalog, budget, call_id, at)
        events.append(ToolStart(at, call_id, name, question))
    if isinstance(stop, str) and stop in _STOP_STATE and not (calls and executed):
        events.append(TurnEnd(at, _STOP_STATE[stop]))
    return events


def _question(
    name: str, arguments: Any, catalog: QuestionCatalog, budget: Budget, call_id: str, at: float
) -> Question | None:
    """The question a tool call asks: a question tool of the catalog by name, else one whose
    arguments have a question's shape (or that waits for a human elsewhere), else ``None``."""
    if name in catalog:
        return extract(name, _arguments(arguments, budget), call_id, at)
    if isinstance(arguments, str) and any(key in arguments for key in _SHAPE_HINTS):
        arguments = _arguments(arguments, budget)  # (arguments saved as a JSON string: rare)
    kind = catalog.kind(name, arguments)
    if kind is None:
        return None
    return extract(name, _arguments(arguments, budget), call_id, at, elsewhere=kind == "elsewhere")


def _arguments(value: Any, budget: Budget) -> Any:
    """A question's arguments, bounded (strings, list lengths, their sum) before extraction.
    Arguments saved as a JSON string are parsed here, with the same bounds."""
    if isinstance(value, str):
        value = value[: budget.chars]
        if value.lstrip()[:1] in ("{", "["):
            try:
                value = loads(value)
            except ValueError:  # not JSON, cut, too deep: extraction reads it as text
                pass
    return shrink(value, budget)
