"""Question tools: which tool calls are questions, what they ask, and how they ended.

The public face of three pure units, each taking the ``arguments`` / ``toolResult`` dicts as pi saved them and returning
sanitized values: ``catalog`` (which tools, ``docs/question-tools.md`` §2), ``extraction`` (what they ask, §3) and
``outcomes`` (how they ended, §4).
"""

from __future__ import annotations

from notifier.pi.catalog import BUILTIN_QUESTION_TOOLS, QuestionCatalog
from notifier.pi.extraction import extract
from notifier.pi.outcomes import classify, result_text

__all__ = ["BUILTIN_QUESTION_TOOLS", "QuestionCatalog", "classify", "extract", "result_text"]
