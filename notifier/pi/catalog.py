"""Which tool calls are questions: the built-in catalog of question tools, adjustable by the user's
config (names and glob patterns), and the shape of a question's arguments for a tool nobody named.

Pure: see ``docs/question-tools.md`` §2 (names, patterns) and §7 (shapes).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from fnmatch import translate
from typing import Any, Literal

from notifier.core.codec import loads

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
MIN_OPTIONS, MAX_OPTIONS = 2, 20
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


def _loads(value: Any) -> Any:
    """A list sent as a JSON string, parsed (bounded); else ``value``."""
    if isinstance(value, str) and value.lstrip()[:1] == "[" and len(value) <= 64 << 10:
        try:
            return loads(value, max_depth=8)
        except ValueError:
            return value
    return value


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


def _options(q: Mapping[str, Any]) -> bool:
    """``q`` offers a list of options to pick from: 2–20 short labels (strings or objects)."""
    for key in OPTION_KEYS:
        if key in q:
            raw = _loads(q[key])
            return (
                isinstance(raw, list)
                and MIN_OPTIONS <= len(raw) <= MAX_OPTIONS
                and all(_option(item) for item in raw)
            )
    return False


def _one_question(q: Mapping[str, Any]) -> bool:
    """One question: a text under a question key, a list of options, and no key of work."""
    return any(_text(q.get(key)) for key in TEXT_KEYS) and _options(q) and _NOT_ASKING.isdisjoint(q.keys())


def is_question_shaped(args: Mapping[str, Any]) -> bool:
    """Whether a tool call's arguments have a question's shape (docs/question-tools.md §7): one
    question (a question/prompt/message/text string with 2–20 short option labels), or
    ``questions`` holding 1–20 questions, each with a text, at least one with options, and no
    key of work (``command``, ``path``, ``content``, ``url``, ``task``, ``answer``, …) nor of
    sending (``chat_id``, ``channel``, ``to``, …) anywhere at those levels."""
    if "questions" in args:
        if not _NOT_ASKING.isdisjoint(args.keys()):
            return False
        questions = _loads(args["questions"])
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
