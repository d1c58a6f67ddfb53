"""How a question ended: a question tool's ``toolResult`` classified into an ``Outcome``.

The rules are those of ``docs/question-tools.md`` §4 (first matching rule wins). Pure.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from typing import Any

from notifier.core.model import Outcome

_UNAVAILABLE = re.compile(
    r"Tool .* not found|requires (an )?interactive|interactive (TUI|mode)|UI not available|no UI|"
    r"non-interactive|headless|Cannot run in",
    re.IGNORECASE,
)
# Compiled once (re.search with a pattern string looks it up in re's cache on every call).
_SKIPPED = re.compile(r"Skipped due to queued user message")
_CANCEL_WORD = re.compile(r"cancel|declin|dismiss", re.IGNORECASE)
_ABORT_WORD = re.compile(r"abort", re.IGNORECASE)
_USER_CANCELLED = re.compile(
    r"^User (cancelled|canceled|declined|did not provide)|Dismissed by user|Cancell?ed", re.I
)
_TIMED_OUT = re.compile(r"timed out|AFK", re.IGNORECASE)
_ABORTED = re.compile(r"aborted", re.IGNORECASE)
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
    if _SKIPPED.search(text):
        return "superseded"
    if "Cannot read properties of undefined" in text or _UNAVAILABLE.search(text):
        return "unavailable"
    if _CANCEL_WORD.search(text):
        return "cancelled"
    if _ABORT_WORD.search(text):
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
    if _USER_CANCELLED.search(text):
        return "cancelled"
    if _TIMED_OUT.search(text):
        return "cancelled"
    if _ABORTED.search(text):
        return "aborted"
    return "answered"
