r"""A pi session line read into reducer events (pure): the line judged on its bytes, the entry
parsed, and which extensions open dialogs only the companion can show.

- Bytes alone: :func:`to_events` yields events only for the entry types in :data:`EVENT_TYPES`.
  A line can have one of those types only if the type's name is written in it as a JSON string,
  or if it contains a ``\u00`` escape (the names are ASCII, so an escape spelling one of their
  characters is ``\u00`` and two hex digits; JSON has no other escape for letters). So a line
  holding none of :data:`MARKERS` can be passed over unread; a line too long to read still says
  what it holds in its first bytes.
- Entries (docs/pi-sessions.md §3–§5): unknown entry types, roles and fields are ignored; known
  entries with the wrong shape raise :class:`EntryError` so the caller can log it once.
- Extensions: a dialog of ``ctx.ui`` (select, confirm, input, editor, custom) leaves nothing in
  the session file, so a permission gate or a question built on ``ctx.ui.select`` is seen only
  through the companion. A question tool of the catalog (its own ``custom`` dialog) is seen from
  the session file anyway, so a file that only registers such tools is not counted.
"""

from __future__ import annotations

import json
import re
from collections.abc import Container, Mapping, Sequence
from functools import partial
from typing import Any

from notifier.core.codec import Budget, loads, parse_iso, sane_time, shrink
from notifier.core.model import Outcome, Question, QuestionItem, State
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
from notifier.pi.catalog import QuestionCatalog, extract
from notifier.pi.outcomes import classify, result_text

# ---- entries ----

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


# ---- a line judged on its bytes ----

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


# ---- extensions ----

_DIALOG = re.compile(r"\bui\s*\.\s*(select|confirm|input|editor|custom)\s*(?:<[^>()]*>\s*)?\(")
_TOOL_NAME = re.compile(r"registerTool\s*\(\s*\{[^{}]*?\bname\s*:\s*[\"'`]([\w.:-]+)[\"'`]", re.S)
_OTHER_HOOKS = re.compile(r"\bregisterCommand\s*\(|\bregisterShortcut\s*\(|\bpi\s*\.\s*on\s*\(")


def dialog_kinds(source: str, question_tools: Container[str] = ()) -> list[str]:
    """The kinds of ``ctx.ui`` dialog an extension's source opens (sorted; empty: none, or only
    as a catalog question tool's own dialog)."""
    kinds = sorted(set(_DIALOG.findall(source)))
    if not kinds:
        return []
    tools = _TOOL_NAME.findall(source)
    if tools and all(t in question_tools for t in tools) and not _OTHER_HOOKS.search(source):
        return []
    return kinds


def extension_args(argv: Sequence[str]) -> tuple[list[str], bool]:
    """The extensions a pi command line names (``-e`` / ``--extension``), and whether it turns
    discovery off (``--no-extensions`` / ``-ne``)."""
    paths: list[str] = []
    no_discovery = False
    args = list(argv)
    for i, arg in enumerate(args):
        if arg in ("-e", "--extension") and i + 1 < len(args):
            paths.append(args[i + 1])
        elif arg.startswith("--extension="):
            paths.append(arg.split("=", 1)[1])
        elif arg in ("--no-extensions", "-ne"):
            no_discovery = True
    return paths, no_discovery


def listed_extensions(screen: str) -> list[str]:
    """The extensions pi's start-up banner lists (``[Extensions]`` then the names, comma-separated,
    on indented lines), from a terminal's text; the last such list; empty when none shows."""
    lines = screen.splitlines()
    starts = [i for i, line in enumerate(lines) if line.strip() == "[Extensions]"]
    if not starts:
        return []
    names: list[str] = []
    for line in lines[starts[-1] + 1 :]:
        if not line.strip() or not line.startswith(" ") or line.strip().startswith("["):
            break
        names += [n.strip() for n in line.split(",") if n.strip()]
    return names
