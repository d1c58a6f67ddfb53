r"""What a pi session line means (pure): its entry read into reducer events, which tool calls are
questions and what they ask, a line judged on its bytes, and which extensions open dialogs.

- Questions (docs/question-tools.md §2, §3, §7): a tool of the built-in catalog or the user's
  config (names and glob patterns), else a call whose arguments have a question's shape;
  :func:`extract` reads its ``arguments`` (a dict, or the JSON string pi saved) into a sanitized
  ``Question``.
- Entries (docs/pi-sessions.md §3–§5): unknown entry types, roles and fields are ignored; known
  entries with the wrong shape raise :class:`EntryError` so the caller can log it once.
- Bytes alone: a line can have one of the :data:`EVENT_TYPES` only if the type's name is written
  in it as a JSON string, or if it holds a ``\u00`` escape (the names are ASCII; JSON has no other
  escape for letters). So a line holding none of :data:`MARKERS` can be passed over unread; a line
  too long to read still says what it holds in its first bytes.
- Extensions: a ``ctx.ui`` dialog leaves nothing in the session file, so it is seen only through
  the companion; a file that only registers catalog question tools (their own ``custom`` dialog,
  seen in the session file anyway) is not counted.
"""

from __future__ import annotations

import contextlib
import json
import re
from collections.abc import Container, Iterable, Mapping, Sequence
from dataclasses import replace
from fnmatch import translate
from functools import partial
from typing import Any, Literal

from notifier.core.codec import Budget, loads, parse_iso, sane_time, shrink
from notifier.core.model import GENERIC_QUESTION, Option, Outcome, Question, QuestionItem, State
from notifier.core.reducer import Activity, Event, Header, Input, Renamed, Supersede, ToolEnd, ToolStart, TurnEnd
from notifier.core.text import clean
from notifier.pi.outcomes import classify, result_text

# ---- which tool calls are questions ----

# Every tool of category "question" in the research catalog, plus `plan_mode` (PizzaPi), which
# blocks until the user picks an action. Look-alikes that consult another model (AskCodex, ask_jeff)
# and tools that return at once (draft_questions, pi_ask_agi) are deliberately absent.
BUILTIN_QUESTION_TOOLS: frozenset[str] = frozenset(
    {"question", "questionnaire", "ask", "ask_user", "ask_user_question", "ask_user_questions", "ask_questions",
     "ask_question", "AskUserQuestion", "interview", "ask_next_action", "plan_mode"}
)  # fmt: skip
# Tools that wait for a human's reply somewhere else (a chat, a ticket), with no dialog in pi:
# lower-case glob patterns; such a call is a question when its arguments hold a question text.
HUMAN_WAIT_PATTERNS = ("*ask_human*", "*askhuman*", "*ask_a_human*", "*consult_human*", "*human_input*")
# The shape of a question (§7): what a question tool's arguments hold, and what ordinary tools' hold.
TEXT_KEYS = ("question", "prompt", "message", "text")
OPTION_KEYS = ("options", "choices")
LABEL_KEYS = ("label", "title", "text", "value", "name", "option")
# A key that names work on something (a command, a file, a pattern, a URL, a task for a model)
# or holds an answer (a quiz's key): such arguments are no question to the user.
WORK_KEYS = frozenset(
    {
        "command", "cmd", "commands", "script", "code", "shell",
        "path", "paths", "file", "files", "filePath", "file_path", "filename", "dir", "directory", "cwd",
        "content", "contents", "oldText", "newText", "old_string", "new_string", "edits", "diff", "patch",
        "pattern", "patterns", "glob", "regex", "query", "url", "urls", "uri",
        "task", "tasks", "agent", "agents", "model", "messages", "system", "systemPrompt", "tools",
        "todos", "todo", "items",
        "answer", "answers", "correct", "correctAnswer", "correct_answer", "solution", "expected",
    }
)  # fmt: skip
# A key that names where a message goes: a poll sent to a chat (`{chat_id, question, options}`)
# returns at once. Only the shape refuses them: a tool that waits for a human elsewhere may say where.
SEND_KEYS = frozenset(
    {"chat_id", "chat", "channel", "channel_id", "room", "room_id", "recipient", "recipients", "to", "email",
     "webhook", "user_id", "guild_id", "phone"}
)  # fmt: skip
_NOT_ASKING = WORK_KEYS | SEND_KEYS
MAX_TEXT = 4000  # characters of a question text (tools cap theirs at 4000 or less)
MAX_LABEL = 200  # characters of an option's label
MIN_SHAPED_OPTIONS, MAX_SHAPED_OPTIONS = 2, 20  # (a question of a tool nobody named)
MAX_QUESTIONS = 20

Kind = Literal["question", "elsewhere"]


def is_pattern(name: str) -> bool:
    """A ``question_tools`` entry that is a glob pattern (``mcp__*__ask*``), not a name."""
    return not set("*?[").isdisjoint(name)


def _matcher(patterns: Iterable[str]) -> re.Pattern[str]:
    """One regular expression for glob ``patterns`` (fnmatch's, case-sensitive: a name that is no
    pattern matches itself alone; no patterns: it matches nothing)."""
    return re.compile("|".join(f"(?:{translate(p)})" for p in patterns) or "(?!)")


_HUMAN = _matcher(HUMAN_WAIT_PATTERNS)


class QuestionCatalog:
    """Which tool calls are questions: a name of the built-in set or the user's list (exact,
    case-sensitive), a name matching one of the user's glob patterns, or (:meth:`kind`) a call
    whose arguments have a question's shape. ``ignore`` (names or patterns) wins over all."""

    def __init__(
        self, extra: Iterable[str] = (), ignore: Iterable[str] = (), builtin: Iterable[str] = BUILTIN_QUESTION_TOOLS
    ) -> None:
        extra, ignore = list(extra), list(ignore)
        self._ignore = _matcher(ignore)
        named = frozenset(builtin) | frozenset(n for n in extra if not is_pattern(n))
        self.names = frozenset(n for n in named if not self._ignore.match(n))
        self.patterns = tuple(dict.fromkeys(n for n in extra if is_pattern(n)))
        self._match = _matcher(self.patterns)
        # What the start-up cache is valid for: the names, the patterns, and these rules' version.
        self.key = frozenset(
            {*self.names, *(f"+{p}" for p in self.patterns), *(f"-{n}" for n in ignore), "#shape-1"}
        )

    def __contains__(self, name: object) -> bool:
        """A question tool by its name (a name of the set, or matching a pattern, not ignored)."""
        if not isinstance(name, str):
            return False
        return name in self.names or (self._match.match(name) is not None and not self._ignore.match(name))

    def kind(self, name: str, arguments: Any) -> Kind | None:
        """For a tool not in the catalog by name: ``"question"`` if its ``arguments`` have a
        question's shape, ``"elsewhere"`` if its name says it waits for a human elsewhere and its
        arguments hold a question text, else ``None``. Cheap for ordinary tools: one look at their keys."""
        if not isinstance(arguments, Mapping) or not arguments or self._ignore.match(name):
            return None
        if _HUMAN.match(name.lower()) and _asks_human(arguments):
            return "elsewhere"  # (even with options: they are picked where it was sent)
        return "question" if is_question_shaped(arguments) else None


def _is_text(value: Any) -> bool:
    """A short human-facing text: a non-empty string of at most :data:`MAX_TEXT` characters."""
    return isinstance(value, str) and 0 < len(value) <= MAX_TEXT and not value.isspace()


def _is_label(value: Any) -> bool:
    """An option's label: a short one-line string that is not a command-line flag."""
    return _is_text(value) and len(value) <= MAX_LABEL and "\n" not in value and not value.lstrip().startswith("-")


def _is_option(item: Any) -> bool:
    if isinstance(item, Mapping):
        return _NOT_ASKING.isdisjoint(item.keys()) and any(_is_label(item.get(key)) for key in LABEL_KEYS)
    return _is_label(item)


def _listed(q: Mapping[str, Any]) -> Any:
    """The options of a question as its tool gives them (the first of :data:`OPTION_KEYS` set;
    a JSON string parsed); ``None``: none."""
    return next((_maybe_json(q[key]) for key in OPTION_KEYS if q.get(key) is not None), None)


def _has_options(q: Mapping[str, Any]) -> bool:
    """``q`` offers a list of options to pick from: 2–20 short labels (strings or objects)."""
    raw = _listed(q)
    return (
        isinstance(raw, list)
        and MIN_SHAPED_OPTIONS <= len(raw) <= MAX_SHAPED_OPTIONS
        and all(_is_option(item) for item in raw)
    )


def _has_text(q: Mapping[str, Any]) -> bool:
    return any(_is_text(q.get(key)) for key in TEXT_KEYS)


def is_question_shaped(args: Mapping[str, Any]) -> bool:
    """Whether a tool call's arguments have a question's shape (docs/question-tools.md §7): one
    question (a question/prompt/message/text string with 2–20 short option labels), or
    ``questions`` holding 1–20 questions, each with a text, at least one with options, and no
    key of work (``command``, ``path``, ``url``, ``answer``, …) nor of sending (``chat_id``,
    ``to``, …) anywhere at those levels."""
    if not _NOT_ASKING.isdisjoint(args.keys()):
        return False
    if "questions" in args:
        questions = _maybe_json(args["questions"])
        if not isinstance(questions, list) or not 0 < len(questions) <= MAX_QUESTIONS:
            return False
        if not all(isinstance(q, Mapping) and _NOT_ASKING.isdisjoint(q.keys()) and _has_text(q) for q in questions):
            return False
        return any(_has_options(q) for q in questions)
    return _has_text(args) and _has_options(args)


def _asks_human(args: Mapping[str, Any]) -> bool:
    return WORK_KEYS.isdisjoint(args.keys()) and _has_text(args)


# ---- what a question asks: its arguments read into a Question ----

# Where a question's text is read, the first found (wider than TEXT_KEYS, which decide whether
# arguments are shaped as a question at all: once they are, a title, header or label may hold it).
_TEXT_READ_FROM = ("question", "title", "prompt", "text", "message", "header", "label")
_DESC_KEYS = ("description", "detail", "details")
# A chip beside the question; `title` only when the question is under another key (a short title
# beside it, never the question itself).
_HEADER_KEYS = ("header", "label", "questionTopic", "tab", "topic", "title", "id")
_INSTRUCTION_KEYS = ("instructions", "description", "intro", "context")  # a form's, under its title
ELSEWHERE = "Waits for a reply outside pi, not in its terminal ({tool})"
_MULTI_KEYS = ("multiSelect", "multi", "allowMultiple", "multiple", "multipleSelect")
_MULTI_TYPES = ("multi", "multiselect", "checkbox")
_PLAN_ACTIONS = ("Execute", "Keep context", "Edit", "Cancel")
MAX_ITEMS = 50
MAX_OPTIONS = 50
MAX_JSON_ARG = 1 << 20  # characters of an argument saved as a JSON string


def _maybe_json(value: Any, chars: int = MAX_JSON_ARG) -> Any:
    """A string holding a JSON object or list in its first ``chars`` characters, parsed (bounded:
    depth too); else ``value``: what is not JSON (cut, too deep) stays text, read as text."""
    if isinstance(value, str) and value.lstrip()[:1] in ("[", "{"):
        with contextlib.suppress(ValueError):  # (UnicodeDecodeError included)
            return loads(value[:chars])
    return value


def _first_text(q: Mapping[str, Any], keys: Iterable[str]) -> tuple[str | None, str | None]:
    """The first of ``keys`` holding a text, cleaned, and that key."""
    for key in keys:
        value = q.get(key)
        if isinstance(value, str) and (text := clean(value)):
            return text, key
    return None, None


def _is_true(value: Any) -> bool:
    return value is True or (isinstance(value, str) and value.lower() == "true")


def _multi(q: Mapping[str, Any]) -> bool | None:
    flag = next((q[key] for key in _MULTI_KEYS if q.get(key) is not None), None)
    if flag is not None:
        return _is_true(flag)
    kind = q.get("type")
    multi = isinstance(kind, str) and kind.lower() in _MULTI_TYPES
    return True if multi or q.get("selectionMode") == "multiple" or q.get("kind") == "multi" else None


def _options(q: Mapping[str, Any]) -> tuple[Option, ...]:
    raw = _listed(q)
    if isinstance(raw, Mapping):
        raw = [raw]
    if not isinstance(raw, list):
        return (Option("Yes"), Option("No")) if q.get("type") == "confirm" or _is_true(q.get("confirm")) else ()
    # Which options the question marks recommended: by index, indices, value, or a label so ending.
    index = next((q[key] for key in ("recommended", "recommendationIndex") if isinstance(q.get(key), int)), None)
    indices, values = q.get("recommendedIndices"), q.get("recommendation")
    indices = indices if isinstance(indices, list) else []
    values = values if isinstance(values, list) else [values]
    out: list[Option] = []
    for n, item in enumerate(raw[:MAX_OPTIONS]):
        # A label that is empty once cleaned ("\u200b") is still a row the dialog draws (and
        # numbers): it stays, or every later row's number would differ from the screen's.
        option = _read_option(item)
        if option is None:
            continue
        value = item.get("value", item.get("id")) if isinstance(item, Mapping) else None
        recommended = (
            option.recommended
            or n == index
            or n in indices
            or (isinstance(value, (str, int)) and value in values)
            or option.label.endswith("(Recommended)")
        )
        out.append(replace(option, recommended=recommended))
    return tuple(out)


def _read_option(item: Any) -> Option | None:
    """One option as a tool gives it (a label, or an object with a label, a description, a
    value and its own ``recommended`` flag); ``None``: not an option."""
    if isinstance(item, Mapping):
        value = item.get("value", item.get("id"))
        label = _first_text(item, LABEL_KEYS)[0] or ""
        description = _first_text(item, _DESC_KEYS)[0]
        return Option(label, description, item.get("recommended") is True, value if isinstance(value, str) else None)
    if isinstance(item, str) or (isinstance(item, (int, float)) and not isinstance(item, bool)):
        return Option(clean(item))
    return None


def _texts(q: Mapping[str, Any]) -> tuple[str | None, str | None, str | None]:
    """A question's (text, header, detail) as its dialog shows them."""
    text, key = _first_text(q, _TEXT_READ_FROM)
    header: str | None = None
    if "tab" in q and not q.get("question") and isinstance(q.get("header"), str):
        # itc-steve: `header` is the question title and `tab` the short chip.
        text, header, key = clean(q["header"]) or text, clean(q.get("tab")) or None, "header"
    else:
        for hkey in _HEADER_KEYS:
            value = q.get(hkey)
            if hkey == "title" and key == "title":  # (the question itself)
                continue
            if isinstance(value, (str, int)) and not isinstance(value, bool) and str(value).strip():
                header = clean(value)
                break
    message = clean(q.get("message")) if key == "title" and isinstance(q.get("message"), str) else ""
    if message:  # an adapter's short `title` beside its `message`: the message is asked, the title its header
        header, text, key = text, message, "message"
    detail = None
    if key in ("title", "header") and isinstance(q.get("prompt"), str):
        detail = clean(q["prompt"]) or None
    if detail is None:
        detail = _first_text(q, ("body", "context", "description"))[0]
    return text, header, detail


def _item(q: Mapping[str, Any], form: Mapping[str, Any] | None = None, tool: str = "") -> QuestionItem | None:
    text, header, detail = _texts(q)
    options = _options(q)
    listed = _listed(q)
    if tool == "ask_user_question" and isinstance(listed, list) and any(
        isinstance(o, Mapping) and "value" in o for o in listed
    ):
        options = tuple(sorted(options, key=lambda o: not o.recommended))  # pi-ask draws the recommended first
    multi = _multi(q)
    if multi is None and form is not None:
        multi = _multi(form)
    if text is None and not options:
        return None
    return QuestionItem(
        text or GENERIC_QUESTION,
        None if header == text else header or None,
        detail,
        options,
        bool(multi),
        key=q.get("id") if isinstance(q.get("id"), str) else None,
        required=q.get("required") is not False,
        show_when=_show_when(q.get("showWhen")),
        other=q.get("allowOther") is not False,
    )


def _show_when(cond: Any) -> tuple[str, str] | None:
    if isinstance(cond, Mapping) and isinstance(cond.get("questionId"), str) and isinstance(cond.get("equals"), str):
        return (cond["questionId"], cond["equals"])
    return None


def _plan_item(args: Mapping[str, Any]) -> QuestionItem:
    """A plan to approve: its title, its description and steps as the detail, the actions."""
    steps = args.get("steps")
    detail = clean(args.get("description")) or None
    if isinstance(steps, list):
        titles = [clean(s.get("title")) if isinstance(s, Mapping) else clean(s) for s in steps[:MAX_OPTIONS]]
        detail = " — ".join(filter(None, (detail, "; ".join(t for t in titles if t)))) or None
    text = _first_text(args, ("title",))[0] or "Approve the plan"
    return QuestionItem(text, None, detail, tuple(Option(a) for a in _PLAN_ACTIONS))


def _items(tool: str, args: Mapping[str, Any]) -> list[QuestionItem]:
    """The questions of a form (``questions``, ``prompts``), or a plan to approve, or a form
    given as text; empty: the arguments are one question themselves (or none)."""
    if tool == "plan_mode":
        return [_plan_item(args)]
    questions = _maybe_json(args.get("questions"))
    if questions is None and isinstance(args.get("prompts"), list):
        questions = args["prompts"]
    if isinstance(questions, Mapping):
        questions = [questions]
    if isinstance(questions, str) and questions.strip():
        if tool == "interview":
            return [QuestionItem(f"Interview form: {clean(questions, 200)}")]
        return [QuestionItem(clean(questions))]
    items: list[QuestionItem | None] = []
    for q in questions[:MAX_ITEMS] if isinstance(questions, list) else []:
        if isinstance(q, Mapping):
            items.append(_item(q, args if len(questions) == 1 else None, tool))
        elif isinstance(q, str) and q.strip():
            items.append(QuestionItem(clean(q)))
    return [item for item in items if item is not None]


def extract(tool: str, arguments: Any, call_id: str, asked_at: float, elsewhere: bool = False) -> Question:
    """Read a question tool call's arguments (any shape in the catalog, malformed ones included).
    ``elsewhere``: the tool waits for a human's reply outside pi (no dialog): said in the title."""
    args = _maybe_json(arguments)
    if not isinstance(args, Mapping):
        args = {}
    title = instructions = None
    if isinstance(args.get("questions"), (list, str)):  # a form: its title and instructions
        title = _first_text(args, ("title", "header"))[0]
        instructions = _first_text(args, _INSTRUCTION_KEYS)[0]
    if elsewhere:
        title = ELSEWHERE.format(tool=clean(tool, 60))
    items = _items(tool, args) or [item for item in (_item(args, tool=tool),) if item is not None]
    if not items:
        fallback = "asks what to do next" if tool == "ask_next_action" else GENERIC_QUESTION
        items.append(QuestionItem(f"{fallback} ({clean(tool, 60)})"))
    if elsewhere:  # nothing to pick or type in pi: it is answered where it was sent
        items = [replace(it, options=(), other=False) for it in items]
    return Question(call_id, clean(tool, 80), tuple(items), asked_at, title=title, instructions=instructions)


# ---- entries ----

_TIMED = frozenset({"message", "custom_message", "context_edit", "compaction", "branch_summary"})
EVENT_TYPES = frozenset({"session", "session_info", *_TIMED})  # every other entry type yields no event
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
    if not isinstance(value, (int, float)) or isinstance(value, bool) or abs(value) > 10**15:
        return default
    ok = sane_time(float(value) / 1000.0 if value > 1e11 else value)  # (Unix milliseconds)
    return default if ok is None else ok


def to_events(entry: Mapping[str, Any], catalog: QuestionCatalog, seen_at: float) -> list[Event]:
    """pi's events in one entry. What a question's call and result hold is read through a
    bounded copy (:func:`notifier.core.codec.shrink`)."""
    kind = entry.get("type")
    if not isinstance(kind, str):
        raise EntryError("entry without a type")
    if kind == "session":
        cwd, sid = entry.get("cwd"), entry.get("id")
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
    return [Supersede(at, "idle" if kind == "branch_summary" else None)]  # (a compaction: no state)


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
    if role != "toolResult":
        return []
    call_id, tool = message.get("toolCallId"), message.get("toolName")
    if not isinstance(call_id, str):
        raise EntryError("toolResult without a toolCallId")
    tool = tool if isinstance(tool, str) else ""
    # Judged only if the call was the question asked (the reducer asks), so an ordinary tool's
    # result costs no classification.
    return [ToolEnd(at, call_id[:ID_LIMIT], tool[:ID_LIMIT], judge=partial(judge_result, message))]


def judge_result(message: Mapping[str, Any], question: Question) -> tuple[Outcome, str | None]:
    """The toolResult message of ``question``: its outcome, and for ``answered`` the answer pi
    recorded. Only a bounded copy of what the tool returned is classified and kept."""
    budget = Budget(RESULT_CHARS)
    content = shrink(message.get("content"), budget, max_str=RESULT_CHARS)
    details = shrink(message.get("details"), budget, max_str=RESULT_CHARS)
    choices = {o.label for item in question.items for o in item.options}
    outcome = classify(message.get("isError"), content, details, choices)
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
        if executed:
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
        arguments = _maybe_json(arguments, budget.chars)  # (saved as a JSON string: rare; charged once, below)
    kind = catalog.kind(name, arguments)
    if kind is None:
        return None
    return extract(name, _arguments(arguments, budget), call_id, at, elsewhere=kind == "elsewhere")


def _arguments(value: Any, budget: Budget) -> Any:
    """A question's arguments, bounded (strings, list lengths, their sum) before extraction."""
    return shrink(_maybe_json(value, budget.chars), budget)


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


TOO_LARGE = "a question too large to show"
TOO_ODD = "a question too odd to show"
_S = rb'"((?:[^"\\]|\\.){1,%d})"' % ID_LIMIT  # a JSON string (escapes kept, decoded after)
_MESSAGE = re.compile(rb'\s*\{\s*"type"\s*:\s*"message"')
_TIME = re.compile(rb'"timestamp"\s*:\s*' + _S)
_ROLE = re.compile(rb'"message"\s*:\s*\{\s*"role"\s*:\s*"(assistant|toolResult)"')
_CALL = re.compile(rb'\{\s*"type"\s*:\s*"toolCall"\s*,\s*"id"\s*:\s*' + _S + rb'\s*,\s*"name"\s*:\s*' + _S)
_RESULT_ID = re.compile(rb'"toolCallId"\s*:\s*' + _S)
_RESULT_TOOL = re.compile(rb'"toolName"\s*:\s*' + _S)


_PLAIN = re.compile(rb"[^\\\x00-\x1f]*")  # the inside of a JSON string without escapes: its UTF-8 as is


def _json_str(found: re.Match[bytes] | None, group: int = 1) -> str | None:
    """A JSON string a pattern found (its escapes decoded), bounded; None if none or not one."""
    if found is None:
        return None
    raw = found.group(group)
    try:
        value = raw.decode("utf-8", "surrogatepass") if _PLAIN.fullmatch(raw) else json.loads(b'"' + raw + b'"')
    except ValueError:  # (and UnicodeDecodeError)
        return None
    return value[:ID_LIMIT] if isinstance(value, str) else None


# The first keys of pi's line for a tool's result, as pi writes them (JSON.stringify: no spaces,
# its keys in this order): up to the tool's name, before its output.
_RESULT_LINE = re.compile(
    rb'\{"type":"message",(?:"(?:id|parentId)":(?:"(?:[^"\\]|\\.){0,%d}"|null),)*"timestamp":' % ID_LIMIT
    + _S
    + rb',"message":\{"role":"toolResult","toolCallId":'
    + _S
    + rb',"toolName":'
    + _S
    + rb',"'
)


def result_events(line: bytes, catalog: QuestionCatalog, seen_at: float) -> list[Event] | None:
    """The events of pi's line for the result of a tool that is no question by its name, read
    from its first keys (:data:`_RESULT_LINE`) without parsing the tool's output, which only a
    call seen as a question by its shape needs: the line is parsed (bounded) if the reducer asks
    for its outcome. The same events as :func:`to_events` of the parsed line (JSON.stringify
    writes each key once; a line that repeats one is read by its first); ``None`` for any other
    line: parse it whole. Most of what agents write is such a line, and most of its bytes are
    the tool's output."""
    found = _RESULT_LINE.match(line)
    if found is None:
        return None
    stamp, call_id, tool = _json_str(found, 1), _json_str(found, 2), _json_str(found, 3)
    if stamp is None or call_id is None or tool is None or tool in catalog:
        return None
    return [ToolEnd(parse_time(stamp, seen_at), call_id, tool, judge=partial(_judge_line, line))]


def _judge_line(line: bytes, question: Question) -> tuple[Outcome, str | None]:
    """:func:`judge_result` of a result line read by :func:`result_events`, parsed now (bounded);
    one that cannot be parsed ended its call without a word, as :func:`odd_line_events` reads it."""
    try:
        entry = loads(line)
    except ValueError:  # (BoundedJSONError, and bytes that are not UTF-8)
        return "answered", None
    message = entry.get("message") if isinstance(entry, dict) else None
    return judge_result(message, question) if isinstance(message, Mapping) else ("answered", None)


def too_large_events(head: bytes, catalog: QuestionCatalog, seen_at: float) -> list[Event]:
    """The events of a line too long to read, from its first bytes (``head``): pi writes an
    assistant message's tool calls (``type``, ``id``, ``name``) before their arguments, so a
    question whose arguments are too large to read is still seen waiting, as :data:`TOO_LARGE`;
    a tool result too large to read still ends its call. Nothing for any other line."""
    return _bytes_events(head, catalog, seen_at, TOO_LARGE)


def odd_line_events(line: bytes, catalog: QuestionCatalog, seen_at: float) -> list[Event]:
    """The events of a line that cannot be parsed whole (not UTF-8, nested too deep, JSON broken
    inside a value), read the same way: a question tool's call in it is still seen waiting, as
    :data:`TOO_ODD`, never dropped; a tool result still ends its call."""
    return _bytes_events(line, catalog, seen_at, TOO_ODD)


def _bytes_events(head: bytes, catalog: QuestionCatalog, seen_at: float, text: str) -> list[Event]:
    role = _ROLE.search(head) if _MESSAGE.match(head) else None
    if role is None:
        return []
    at = parse_time(_json_str(_TIME.search(head, 0, role.start())), seen_at)
    if role.group(1) == b"toolResult":
        found = _json_str(_RESULT_ID.search(head, role.end()))
        name = _json_str(_RESULT_TOOL.search(head, role.end())) or ""
        return [ToolEnd(at, found, name)] if found else []
    events: list[Event] = [Supersede(at)]
    for call in _CALL.finditer(head, role.end()):
        call_id, tool = _json_str(call), _json_str(call, 2)
        if call_id is not None and tool is not None:
            asked = Question(call_id, tool, (QuestionItem(text),), at) if tool in catalog else None
            events.append(ToolStart(at, call_id, tool, asked))
    return events


# ---- extensions ----

_DIALOG = re.compile(r"\bui\s*\.\s*(select|confirm|input|editor|custom)\s*(?:<[^>()]*>\s*)?\(")
_TOOL_NAME = re.compile(r"registerTool\s*\(\s*\{[^{}]*?\bname\s*:\s*[\"'`]([\w.:-]+)[\"'`]", re.S)
_OTHER_HOOKS = re.compile(r"\bregisterCommand\s*\(|\bregisterShortcut\s*\(|\bpi\s*\.\s*on\s*\(")


def dialog_kinds(source: str, question_tools: Container[str] = ()) -> list[str]:
    """The kinds of ``ctx.ui`` dialog an extension's source opens (sorted; empty: none, or only
    as a catalog question tool's own dialog)."""
    kinds = sorted(set(_DIALOG.findall(source)))
    tools = _TOOL_NAME.findall(source)
    if tools and all(t in question_tools for t in tools) and not _OTHER_HOOKS.search(source):
        return []
    return kinds


def extension_args(argv: Sequence[str]) -> tuple[list[str], bool]:
    """The extensions a pi command line names (``-e`` / ``--extension``), and whether it turns
    discovery off (``--no-extensions`` / ``-ne``)."""
    paths: list[str] = []
    for i, arg in enumerate(argv):
        if arg in ("-e", "--extension") and i + 1 < len(argv):
            paths.append(argv[i + 1])
        elif arg.startswith("--extension="):
            paths.append(arg.split("=", 1)[1])
    return paths, any(arg in ("--no-extensions", "-ne") for arg in argv)


def listed_extensions(screen: str) -> list[str]:
    """The extensions pi's start-up banner lists (``[Extensions]`` then the names, comma-separated,
    on indented lines), from a terminal's text; the last such list; empty when none shows."""
    lines = screen.splitlines()
    starts = [i for i, line in enumerate(lines) if line.strip() == "[Extensions]"]
    names: list[str] = []
    for line in lines[starts[-1] + 1 :] if starts else ():
        if not line.strip() or not line.startswith(" ") or line.strip().startswith("["):
            break
        names += [n.strip() for n in line.split(",") if n.strip()]
    return names
