"""Which tool calls are questions: the built-in catalog of question tools, adjustable by the user's config.

Pure: see ``docs/question-tools.md`` §2.
"""

from __future__ import annotations

from collections.abc import Iterable

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


class QuestionCatalog:
    """The set of tool names treated as questions (exact, case-sensitive match)."""

    def __init__(self, extra: Iterable[str] = (), ignore: Iterable[str] = ()) -> None:
        self.names = (BUILTIN_QUESTION_TOOLS | frozenset(extra)) - frozenset(ignore)

    def __contains__(self, name: object) -> bool:
        return isinstance(name, str) and name in self.names
