"""Which tool calls are questions, and what they ask (pure).

The built-in catalog of question tools, adjustable by the user's config (names and glob
patterns), and the shape of a question's arguments for a tool nobody named
(``docs/question-tools.md`` §2, §7); then :func:`extract` reads a question tool's ``arguments``,
in any shape of the catalog, into a sanitized ``Question`` by the rules of §3 (it takes the
``arguments`` dict, or JSON string, as pi saved it).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Mapping
from dataclasses import replace
from fnmatch import translate
from typing import Any, Literal

from notifier.core.codec import loads
from notifier.core.model import GENERIC_QUESTION, Option, Question, QuestionItem
from notifier.core.text import clean

# ---- which tool calls are questions ----

# Every tool of category "question" in the research catalog, plus `plan_mode` (PizzaPi), which
# blocks until the user picks an action. Look-alikes that consult another model (AskCodex, ask_jeff)
# and tools that return at once (draft_questions, pi_ask_agi) are deliberately absent.
BUILTIN_QUESTION_TOOLS: frozenset[str] = frozenset(
    {
        "question",
        "questionnaire",
        "ask",
        "ask_user",
        "ask_user_question",
        "ask_user_questions",
        "ask_questions",
        "ask_question",
        "AskUserQuestion",
        "interview",
        "ask_next_action",
        "plan_mode",
    }
)

# Tools that wait for a human's reply somewhere else (a chat, a ticket), with no dialog in pi:
# their names, as lower-case glob patterns. Data for :meth:`QuestionCatalog.kind`, which also asks
# for a question text in the arguments (docs/question-tools.md §7).
HUMAN_WAIT_PATTERNS = ("*ask_human*", "*askhuman*", "*ask_a_human*", "*consult_human*", "*human_input*")

# The shape of a question (docs/question-tools.md §7): what a question tool's arguments hold, and
# what ordinary tools' arguments hold instead.
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
# A key that names where a message goes (a chat, a channel, a person): a poll sent to a chat
# (`{chat_id, question, options}`) returns at once. Only the shape of a question in pi refuses
# them: a tool that waits for a human elsewhere (HUMAN_WAIT_PATTERNS) may well say where.
SEND_KEYS = frozenset(
    {"chat_id", "chat", "channel", "channel_id", "room", "room_id", "recipient", "recipients", "to", "email",
     "webhook", "user_id", "guild_id", "phone"}
)  # fmt: skip
_NOT_ASKING = WORK_KEYS | SEND_KEYS
MAX_TEXT = 4000  # characters of a question text (tools cap theirs at 4000 or less)
MAX_LABEL = 200  # characters of an option's label
MIN_SHAPED_OPTIONS, MAX_SHAPED_OPTIONS = 2, 20  # (a question of a tool nobody named)
MAX_QUESTIONS = 20
_PATTERN_CHARS = frozenset("*?[")

Kind = Literal["question", "elsewhere"]


def is_pattern(name: str) -> bool:
    """A ``question_tools`` entry that is a glob pattern (``mcp__*__ask*``), not a name."""
    return not _PATTERN_CHARS.isdisjoint(name)


def _matcher(patterns: Iterable[str], lower: bool = False) -> re.Pattern[str] | None:
    """One regular expression for glob ``patterns`` (fnmatch's, case-sensitive), or ``None``."""
    parts = [translate(p.lower() if lower else p) for p in patterns]
    return re.compile("|".join(f"(?:{p})" for p in parts)) if parts else None


class QuestionCatalog:
    """Which tool calls are questions: a name of the built-in set or the user's list (exact,
    case-sensitive), a name matching one of the user's glob patterns, or (:meth:`kind`) a call
    whose arguments have a question's shape. ``ignore`` (names or patterns) wins over all."""

    def __init__(
        self, extra: Iterable[str] = (), ignore: Iterable[str] = (), builtin: Iterable[str] = BUILTIN_QUESTION_TOOLS
    ) -> None:
        extra, ignore = list(extra), list(ignore)
        self._ignored = frozenset(n for n in ignore if not is_pattern(n))
        self._ignore_match = _matcher(n for n in ignore if is_pattern(n))
        named = frozenset(builtin) | frozenset(n for n in extra if not is_pattern(n))
        self.names = frozenset(n for n in named if not self._ignores(n))
        self.patterns = tuple(dict.fromkeys(n for n in extra if is_pattern(n)))
        self._match = _matcher(self.patterns)
        self._human = _matcher(HUMAN_WAIT_PATTERNS, lower=True)
        # What the start-up cache is valid for: the names, the patterns, and these rules' version.
        self.key = frozenset(
            {*self.names, *(f"+{p}" for p in self.patterns), *(f"-{n}" for n in ignore), "#shape-1"}
        )

    def _ignores(self, name: str) -> bool:
        return name in self._ignored or (self._ignore_match is not None and self._ignore_match.match(name) is not None)

    def __contains__(self, name: object) -> bool:
        """A question tool by its name (a name of the set, or matching a pattern, not ignored)."""
        if not isinstance(name, str):
            return False
        if name in self.names:
            return True
        return self._match is not None and self._match.match(name) is not None and not self._ignores(name)

    def kind(self, name: str, arguments: Any) -> Kind | None:
        """For a tool not in the catalog by name: ``"question"`` if its ``arguments`` (a dict as
        pi saved it) have a question's shape, ``"elsewhere"`` if its name says it waits for a
        human elsewhere and its arguments hold a question text, else ``None``. Cheap for ordinary
        tools: one look at their keys."""
        if not isinstance(arguments, Mapping) or not arguments or self._ignores(name):
            return None
        if self._human is not None and self._human.match(name.lower()) and _asks_human(arguments):
            return "elsewhere"  # (even with options: they are picked where it was sent)
        return "question" if is_question_shaped(arguments) else None


def _text(value: Any) -> bool:
    """A short human-facing text: a non-empty string of at most :data:`MAX_TEXT` characters."""
    return isinstance(value, str) and 0 < len(value) <= MAX_TEXT and not value.isspace()


def _label(value: Any) -> bool:
    """An option's label: a short one-line string that is not a command-line flag."""
    return (
        isinstance(value, str)
        and 0 < len(value) <= MAX_LABEL
        and "\n" not in value
        and not value.isspace()
        and not value.lstrip().startswith("-")
    )


def _option(item: Any) -> bool:
    if isinstance(item, Mapping):
        if not _NOT_ASKING.isdisjoint(item.keys()):
            return False
        return any(_label(item.get(key)) for key in LABEL_KEYS)
    return _label(item)


def _has_options(q: Mapping[str, Any]) -> bool:
    """``q`` offers a list of options to pick from: 2–20 short labels (strings or objects)."""
    for key in OPTION_KEYS:
        if key in q:
            raw = _maybe_json(q[key])
            return (
                isinstance(raw, list)
                and MIN_SHAPED_OPTIONS <= len(raw) <= MAX_SHAPED_OPTIONS
                and all(_option(item) for item in raw)
            )
    return False


def _one_question(q: Mapping[str, Any]) -> bool:
    """One question: a text under a question key, a list of options, and no key of work."""
    return any(_text(q.get(key)) for key in TEXT_KEYS) and _has_options(q) and _NOT_ASKING.isdisjoint(q.keys())


def is_question_shaped(args: Mapping[str, Any]) -> bool:
    """Whether a tool call's arguments have a question's shape (docs/question-tools.md §7): one
    question (a question/prompt/message/text string with 2–20 short option labels), or
    ``questions`` holding 1–20 questions, each with a text, at least one with options, and no
    key of work (``command``, ``path``, ``content``, ``url``, ``task``, ``answer``, …) nor of
    sending (``chat_id``, ``channel``, ``to``, …) anywhere at those levels."""
    if "questions" in args:
        if not _NOT_ASKING.isdisjoint(args.keys()):
            return False
        questions = _maybe_json(args["questions"])
        if not isinstance(questions, list) or not 0 < len(questions) <= MAX_QUESTIONS:
            return False
        if not all(
            isinstance(q, Mapping) and _NOT_ASKING.isdisjoint(q.keys()) and any(_text(q.get(k)) for k in TEXT_KEYS)
            for q in questions
        ):
            return False
        return any(_one_question(q) for q in questions)
    if OPTION_KEYS[0] not in args and OPTION_KEYS[1] not in args:
        return False  # (most tool calls end here)
    return _one_question(args)


def _asks_human(args: Mapping[str, Any]) -> bool:
    return WORK_KEYS.isdisjoint(args.keys()) and any(_text(args.get(key)) for key in TEXT_KEYS)


# ---- what a question asks: its arguments read into a Question ----

_TEXT_KEYS = ("question", "title", "prompt", "text", "message", "header", "label")
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
MAX_JSON_ARG = 1 << 20  # an argument saved as a JSON string


def _maybe_json(value: Any) -> Any:
    """A string holding a JSON object or list, parsed (bounded: size and depth); else ``value``."""
    if isinstance(value, str):
        stripped = value.strip()
        if stripped[:1] in ("[", "{"):
            try:
                return loads(stripped, max_bytes=MAX_JSON_ARG)
            except ValueError:  # not JSON, too large or too deep (UnicodeDecodeError included)
                return value
    return value


def _first_text(q: Mapping[str, Any], keys: Iterable[str]) -> tuple[str | None, str | None]:
    for key in keys:
        value = q.get(key)
        if isinstance(value, str) and value.strip():
            text = clean(value)
            if text:
                return text, key
    return None, None


def _is_true(value: Any) -> bool:
    return value is True or (isinstance(value, str) and value.lower() == "true")


def _multi(q: Mapping[str, Any]) -> bool | None:
    flag = next((q[key] for key in _MULTI_KEYS if q.get(key) is not None), None)
    if flag is not None:
        return _is_true(flag)
    kind = q.get("type")
    kind = kind.lower() if isinstance(kind, str) else None
    if q.get("selectionMode") == "multiple" or q.get("kind") == "multi" or kind in _MULTI_TYPES:
        return True
    return None


def _options(q: Mapping[str, Any]) -> tuple[Option, ...]:
    raw = _maybe_json(q.get("options"))
    if raw is None:
        raw = _maybe_json(q.get("choices"))
    if isinstance(raw, Mapping):
        raw = [raw]
    if not isinstance(raw, list):
        if q.get("type") == "confirm" or _is_true(q.get("confirm")):
            return (Option("Yes"), Option("No"))
        return ()
    recommended = _recommendation(q)
    out: list[Option] = []
    for index, item in enumerate(raw[:MAX_OPTIONS]):
        option = _read_option(item)
        # A label that is empty once cleaned ("\u200b") is still a row the dialog draws (and
        # numbers): it stays, or every later row's number would differ from the screen's.
        if option is not None:
            out.append(replace(option, recommended=option.recommended or recommended(index, option, item)))
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


def _recommendation(q: Mapping[str, Any]) -> Callable[[int, Option, Any], bool]:
    """Which options a question marks recommended beside them: by index, indices, value, or a
    label ending "(Recommended)"."""
    rec_index = q.get("recommended") if isinstance(q.get("recommended"), int) else None
    if rec_index is None and isinstance(q.get("recommendationIndex"), int):
        rec_index = q["recommendationIndex"]
    raw_indices = q.get("recommendedIndices")
    rec_indices: list[Any] = raw_indices if isinstance(raw_indices, list) else []
    recommendation = q.get("recommendation")
    rec_values = recommendation if isinstance(recommendation, list) else [recommendation]

    def recommended(index: int, option: Option, item: Any) -> bool:
        value = item.get("value", item.get("id")) if isinstance(item, Mapping) else None
        return (
            index == rec_index
            or index in rec_indices
            or (value is not None and isinstance(value, (str, int)) and value in rec_values)
            or option.label.endswith("(Recommended)")
        )

    return recommended


def _recommended_first(options: tuple[Option, ...]) -> tuple[Option, ...]:
    """pi-ask's order: the options marked recommended first, the rest after, each in its order."""
    return tuple(o for o in options if o.recommended) + tuple(o for o in options if not o.recommended)


def _show_when(q: Mapping[str, Any]) -> tuple[str, str] | None:
    cond = q.get("showWhen")
    if isinstance(cond, Mapping) and isinstance(cond.get("questionId"), str) and isinstance(cond.get("equals"), str):
        return (cond["questionId"], cond["equals"])
    return None


def _texts(q: Mapping[str, Any]) -> tuple[str | None, str | None, str | None]:
    """A question's (text, header, detail) as its dialog shows them."""
    text, key = _first_text(q, _TEXT_KEYS)
    header: str | None = None
    detail: str | None = None
    if "tab" in q and not q.get("question") and isinstance(q.get("header"), str):
        # itc-steve: `header` is the question title and `tab` the short chip.
        text = clean(q["header"]) or text
        header = clean(q.get("tab")) or None
        key = "header"
    else:
        for hkey in _HEADER_KEYS:
            if hkey == "title" and key == "title":  # (the question itself)
                continue
            value = q.get(hkey)
            if isinstance(value, (str, int)) and not isinstance(value, bool) and str(value).strip():
                header = clean(value)
                break
    message = clean(q.get("message")) if key == "title" and isinstance(q.get("message"), str) else ""
    if message:
        # An adapter's short `title` beside its `message`: the dialog asks the message, the
        # title is its header.
        header, text, key = text, message, "message"
    if key in ("title", "header") and isinstance(q.get("prompt"), str):
        detail = clean(q["prompt"]) or None
    if detail is None:
        detail = _first_text(q, ("body", "context", "description"))[0]
    return text, header, detail


def _item(q: Mapping[str, Any], form: Mapping[str, Any] | None = None, tool: str = "") -> QuestionItem | None:
    text, header, detail = _texts(q)
    options = _options(q)
    if tool == "ask_user_question" and any(isinstance(o, Mapping) and "value" in o for o in _list(q.get("options"))):
        options = _recommended_first(options)  # pi-ask draws them so
    multi = _multi(q)
    if multi is None and form is not None:
        multi = _multi(form)
    if text is None and not options:
        return None
    if not header or header == text:
        header = None
    key = q.get("id") if isinstance(q.get("id"), str) else None
    return QuestionItem(
        text or GENERIC_QUESTION,
        header,
        detail,
        options,
        bool(multi),
        key=key,
        required=q.get("required") is not False,
        show_when=_show_when(q),
        other=q.get("allowOther") is not False,
    )


def _list(value: Any) -> list[Any]:
    value = _maybe_json(value)
    return value if isinstance(value, list) else []


def _plan_item(args: Mapping[str, Any]) -> QuestionItem:
    """A plan to approve: its title, its description and steps as the detail, the actions."""
    text, _ = _first_text(args, ("title",))
    steps = args.get("steps")
    detail = clean(args.get("description")) or None
    if isinstance(steps, list):
        step_titles = [
            clean(s.get("title")) if isinstance(s, Mapping) else clean(s) for s in steps[:MAX_OPTIONS]
        ]
        joined = "; ".join(t for t in step_titles if t)
        detail = " — ".join(filter(None, (detail, joined))) or None
    return QuestionItem(text or "Approve the plan", None, detail, tuple(Option(a) for a in _PLAN_ACTIONS))


def _items(tool: str, args: Mapping[str, Any]) -> list[QuestionItem]:
    """The questions of a form (``questions``, ``prompts``), or a plan to approve, or a form
    given as text; empty: the arguments are one question themselves (or none)."""
    questions = _maybe_json(args.get("questions"))
    if questions is None and isinstance(args.get("prompts"), list):
        questions = args["prompts"]
    if isinstance(questions, Mapping):
        questions = [questions]
    if tool == "plan_mode":
        return [_plan_item(args)]
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
    items = _items(tool, args)
    if not items:
        item = _item(args, tool=tool)
        if item is not None:
            items.append(item)
    if not items:
        fallback = "asks what to do next" if tool == "ask_next_action" else GENERIC_QUESTION
        items.append(QuestionItem(f"{fallback} ({clean(tool, 60)})"))
    if elsewhere:  # nothing to pick or type in pi: it is answered where it was sent
        items = [replace(it, options=(), other=False) for it in items]
    return Question(
        tool_call_id=call_id,
        tool=clean(tool, 80),
        items=tuple(items),
        asked_at=asked_at,
        title=title,
        instructions=instructions,
    )
