"""Question tools: which tool calls are questions, what they ask, and how they ended.

The rules are those of ``docs/question-tools.md`` §3 (extraction) and §4 (outcomes). Everything here is pure: it takes
the ``arguments`` / ``toolResult`` dicts as pi saved them and returns sanitized values.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Mapping
from typing import Any

from notifier.core.jsonbound import loads
from notifier.core.model import GENERIC_QUESTION, Option, Outcome, Question, QuestionItem
from notifier.core.text import clean

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

_TEXT_KEYS = ("question", "title", "prompt", "text", "message", "header", "label")
_LABEL_KEYS = ("label", "title", "text", "value", "name", "option")
_DESC_KEYS = ("description", "detail", "details")
_MULTI_KEYS = ("multiSelect", "multi", "allowMultiple", "multiple", "multipleSelect")
_PLAN_ACTIONS = ("Execute", "Keep context", "Edit", "Cancel")
MAX_ITEMS = 50
MAX_OPTIONS = 50
MAX_JSON_ARG = 1 << 20  # an argument saved as a JSON string


class QuestionCatalog:
    """The set of tool names treated as questions (exact, case-sensitive match)."""

    def __init__(self, extra: Iterable[str] = (), ignore: Iterable[str] = ()) -> None:
        self.names = (BUILTIN_QUESTION_TOOLS | frozenset(extra)) - frozenset(ignore)

    def __contains__(self, name: object) -> bool:
        return isinstance(name, str) and name in self.names


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
    for key in _MULTI_KEYS:
        if key in q and q[key] is not None:
            return _is_true(q[key])
    if q.get("selectionMode") == "multiple":
        return True
    kind = q.get("type")
    if isinstance(kind, str) and kind.lower() in ("multi", "multiselect", "checkbox"):
        return True
    if q.get("kind") == "multi":
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
    rec_index = q.get("recommended") if isinstance(q.get("recommended"), int) else None
    if rec_index is None and isinstance(q.get("recommendationIndex"), int):
        rec_index = q["recommendationIndex"]
    raw_indices = q.get("recommendedIndices")
    rec_indices: list[Any] = raw_indices if isinstance(raw_indices, list) else []
    recommendation = q.get("recommendation")
    rec_values = recommendation if isinstance(recommendation, list) else [recommendation]
    out: list[Option] = []
    for index, item in enumerate(raw[:MAX_OPTIONS]):
        description: str | None = None
        value: Any = None
        recommended = False
        if isinstance(item, str):
            label = clean(item)
        elif isinstance(item, Mapping):
            label = _first_text(item, _LABEL_KEYS)[0] or ""
            description = _first_text(item, _DESC_KEYS)[0]
            value = item.get("value", item.get("id"))
            recommended = item.get("recommended") is True
        elif isinstance(item, (int, float)) and not isinstance(item, bool):
            label = clean(item)
        else:
            continue
        if not label:
            continue
        if (
            recommended
            or index == rec_index
            or index in rec_indices
            or (value is not None and isinstance(value, (str, int)) and value in rec_values)
            or label.endswith("(Recommended)")
        ):
            recommended = True
        out.append(Option(label, description, recommended))
    return tuple(out)


def _item(q: Mapping[str, Any], form: Mapping[str, Any] | None = None) -> QuestionItem | None:
    text, key = _first_text(q, _TEXT_KEYS)
    header: str | None = None
    detail: str | None = None
    if "tab" in q and not q.get("question") and isinstance(q.get("header"), str):
        # itc-steve: `header` is the question title and `tab` the short chip.
        text = clean(q["header"]) or text
        header = clean(q.get("tab")) or None
        key = "header"
    else:
        for hkey in ("header", "label", "tab", "topic", "id"):
            value = q.get(hkey)
            if isinstance(value, (str, int)) and not isinstance(value, bool) and str(value).strip():
                header = clean(value)
                break
    if key in ("title", "header") and isinstance(q.get("prompt"), str):
        detail = clean(q["prompt"]) or None
    if detail is None:
        detail = _first_text(q, ("body", "context", "description"))[0]
    options = _options(q)
    multi = _multi(q)
    if multi is None and form is not None:
        multi = _multi(form)
    if text is None and not options:
        return None
    if header is not None and (not header or header == text):
        header = None
    return QuestionItem(text or GENERIC_QUESTION, header, detail, options, bool(multi))


def extract(tool: str, arguments: Any, call_id: str, asked_at: float) -> Question:
    """Read a question tool call's arguments (any shape in the catalog, malformed ones included)."""
    args = _maybe_json(arguments)
    if not isinstance(args, Mapping):
        args = {}
    title = _first_text(args, ("title",))[0] if isinstance(args.get("questions"), (list, str)) else None
    items: list[QuestionItem] = []
    questions = _maybe_json(args.get("questions"))
    if questions is None and isinstance(args.get("prompts"), list):
        questions = args["prompts"]
    if isinstance(questions, Mapping):
        questions = [questions]
    if tool == "plan_mode":
        text, _ = _first_text(args, ("title",))
        steps = args.get("steps")
        detail = clean(args.get("description")) or None
        if isinstance(steps, list):
            step_titles = [
                clean(s.get("title")) if isinstance(s, Mapping) else clean(s) for s in steps[:MAX_OPTIONS]
            ]
            joined = "; ".join(t for t in step_titles if t)
            detail = f"{detail} — {joined}" if detail and joined else (detail or joined or None)
        items.append(
            QuestionItem(text or "Approve the plan", None, detail, tuple(Option(a) for a in _PLAN_ACTIONS))
        )
    elif isinstance(questions, list):
        for q in questions[:MAX_ITEMS]:
            if isinstance(q, Mapping):
                item = _item(q, args if len(questions) == 1 else None)
            elif isinstance(q, str) and q.strip():
                item = QuestionItem(clean(q))
            else:
                item = None
            if item is not None:
                items.append(item)
    elif isinstance(questions, str) and questions.strip():
        if tool == "interview":
            items.append(QuestionItem(f"Interview form: {clean(questions, 200)}"))
        else:
            items.append(QuestionItem(clean(questions)))
    if not items:
        item = _item(args)
        if item is not None:
            items.append(item)
    if not items:
        fallback = "asks what to do next" if tool == "ask_next_action" else GENERIC_QUESTION
        items.append(QuestionItem(f"{fallback} ({clean(tool, 60)})"))
    return Question(
        tool_call_id=call_id, tool=clean(tool, 80), items=tuple(items), asked_at=asked_at, title=title
    )


# ---- outcome classification, docs/question-tools.md §4 ----

_UNAVAILABLE = re.compile(
    r"Tool .* not found|requires (an )?interactive|interactive (TUI|mode)|UI not available|no UI|"
    r"non-interactive|headless|Cannot run in",
    re.IGNORECASE,
)
_STATUS = {
    "submitted": "answered",
    "completed": "answered",
    "answered": "answered",
    "dismissed": "cancelled",
    "cancelled": "cancelled",
    "canceled": "cancelled",
    "aborted": "aborted",
    "timeout": "cancelled",  # closed without an answer
    "unavailable": "unavailable",
    "no-ui": "unavailable",
    "invalid": "error",
    "error": "error",
}
_CANCEL_REASON = {
    "user": "cancelled",
    "aborted": "aborted",
    "unavailable": "unavailable",
    "ui_unavailable": "unavailable",
    "invalid": "error",
    "invalid_input": "error",
}


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


def _error_kind(text: str) -> Outcome:
    if re.search(r"Skipped due to queued user message", text):
        return "superseded"
    if "Cannot read properties of undefined" in text or _UNAVAILABLE.search(text):
        return "unavailable"
    if re.search(r"cancel|declin|dismiss", text, re.IGNORECASE):
        return "cancelled"
    if re.search(r"abort", text, re.IGNORECASE):
        return "aborted"
    return "error"


def _all_empty_selections(details: Mapping[str, Any]) -> bool:
    def empty(d: Mapping[str, Any]) -> bool:
        return not d.get("selectedOptions") and not d.get("customInput")

    if "selectedOptions" not in details and "results" not in details:
        return False
    results = details.get("results")
    if isinstance(results, list) and results:
        return all(isinstance(r, Mapping) and empty(r) for r in results) and empty(details)
    return empty(details)


def classify(is_error: Any, content: Any, details: Any) -> Outcome:
    """How a question ended, from its toolResult (first matching rule wins)."""
    text = result_text(content)
    starts_error = text.lstrip().startswith("Error:")
    if is_error is True:
        return _error_kind(text)
    if not isinstance(details, Mapping):
        details = {}
    status = details.get("status")
    if isinstance(status, str) and status.lower() in _STATUS:
        return _STATUS[status.lower()]  # type: ignore[return-value]
    kind = details.get("kind")
    if kind in ("ok", "cancelled", "error"):
        return {"ok": "answered", "cancelled": "cancelled", "error": "error"}[kind]  # type: ignore[return-value]
    if details.get("dismissed") is True:
        return "cancelled"
    if details.get("outcome") in ("submitted", "needs_discussion") or details.get("chatRedirect") is True:
        return "answered"
    reason = details.get("cancelReason")
    if isinstance(reason, str) and reason in _CANCEL_REASON:
        return _CANCEL_REASON[reason]  # type: ignore[return-value]
    if details.get("error"):
        err = details["error"]
        err_text = err if isinstance(err, str) else json.dumps(err, default=str)
        return "unavailable" if _UNAVAILABLE.search(err_text) or _UNAVAILABLE.search(text) else "error"
    if details.get("timedOut") is True:
        return "answered" if details.get("selectedOptions") else "cancelled"
    cancelled = details.get("cancelled")
    if cancelled is True:
        return "unavailable" if starts_error or _UNAVAILABLE.search(text) else "cancelled"
    if cancelled is False:
        return "answered"
    if "answer" in details and details["answer"] is None:
        return "unavailable" if starts_error else "cancelled"
    if "response" in details and details["response"] is None:
        return "cancelled"
    if _all_empty_selections(details):
        return "cancelled"
    if isinstance(details.get("answers"), list) and not details["answers"] and "questions" in details:
        return "unavailable" if details.get("mode") == "print" else "cancelled"
    if not details and starts_error:
        return "unavailable"
    if re.search(
        r"^User (cancelled|canceled|declined|did not provide)|Dismissed by user|Cancell?ed", text, re.I
    ):
        return "cancelled"
    if re.search(r"timed out|AFK", text, re.IGNORECASE):
        return "cancelled"
    if re.search(r"aborted", text, re.IGNORECASE):
        return "aborted"
    return "answered"
