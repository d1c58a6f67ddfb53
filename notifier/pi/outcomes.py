"""How a question ended: a question tool's ``toolResult`` classified into an ``Outcome`` (pure).

By structure first (docs/question-tools.md §4, which lists the markers with the tools), with the
markers below as data:

1. the tool's own ``details``: a state named under a known key (``status``, ``lifecycle``, …), a
   reason code, a boolean flag (``cancelled``, ``timedOut``, …), or answers present or absent (a
   reason code, an error or a whole known message then says what kind of "no answer" it was);
2. pi's own markers: ``isError`` and the messages pi itself writes (``Operation aborted``, …);
3. the text, only as a whole known cancel, timeout or no-UI message of the known tools (``…``
   stands for the variable part of a message), or an ``Error:`` text; otherwise ``answered``.

An error (``isError`` with no state of the tool's, a ``details.error``, an ``Error:`` text) says
which failure it was by its words, one rule wherever it is (:data:`_FAILURES`). A word inside an
answer never decides: a text is read for words only when it is an error's, not an answer.
"""

from __future__ import annotations

import re
from collections.abc import Container, Iterable, Mapping
from typing import Any, NamedTuple

from notifier.core.model import Outcome
from notifier.core.text import clean

# ---- the markers, as data ----

def _by_outcome(groups: Mapping[Outcome, str]) -> Mapping[str, Outcome]:
    """A table of codes from the codes of each outcome (space-separated)."""
    return {code: outcome for outcome, codes in groups.items() for code in codes.split()}


# Keys (dotted paths into ``details``) whose string value names how the question ended; the first one
# holding a value of STATES decides. Values are compared lower-cased with "-" read as "_".
STATE_PATHS = ("status", "lifecycle", "outcome", "kind", "response.kind", "action")
STATES = _by_outcome(
    {
        # answered (a chat redirect or "needs discussion" is the user's answer too)
        "answered": "answered submitted completed ok needs_discussion selection freeform batch execute "
        "execute_keep_context edit",
        # closed without an answer (the contract has no timeout outcome: a timeout is cancelled)
        "cancelled": "cancelled canceled cancel dismissed timeout timed_out",
        "aborted": "aborted",
        "unavailable": "unavailable no_ui",
        "error": "invalid error failed rejected",
    }
)

# Keys whose code says why a question ended without an answer. They refine a ``cancelled`` or
# ``error`` state (``status: failed`` + ``reason: interactive_ui_required`` is ``unavailable``).
REASON_PATHS = ("cancelReason", "reason", "error.code", "error.kind", "error", "mode")
REASONS = _by_outcome(
    {
        "cancelled": "user user_cancelled",
        "aborted": "aborted",
        # (``print``: questions written to a file for later, ``mode: print``)
        "unavailable": "unavailable ui_unavailable no_ui no_custom_ui interactive_ui_required unsupported_mode print",
        "error": "invalid invalid_input invalid_request questionnaire_already_active",
    }
)


class Flag(NamedTuple):
    """A boolean flag in ``details``: ``key`` set to ``value`` means ``outcome``, unless one of
    the ``unless`` keys holds an answer (then ``answered``)."""

    key: str
    value: bool
    outcome: Outcome
    unless: tuple[str, ...] = ()


# First match wins. A timeout that picked the recommended option (oh-my-pi) records the pick in
# selectedOptions / results: answered, not cancelled.
FLAGS: tuple[Flag, ...] = (
    Flag("timedOut", True, "cancelled", unless=("selectedOptions", "results")),
    Flag("cancelled", True, "cancelled"),
    Flag("dismissed", True, "cancelled"),
    Flag("skipped", True, "cancelled"),
    Flag("chatRedirect", True, "answered"),
    Flag("cancelled", False, "answered"),
)

# Keys of ``details`` that carry the user's answers. When a result has any of them, it is answered
# if one holds an answer (a non-empty text, a number, a non-empty record, a list with one such) and
# not answered if none does (``answer: null``, ``answers: []``, empty ``selectedOptions``).
ANSWER_KEYS: tuple[str, ...] = (
    "answer", "answers", "responses", "response", "results", "selectedOptions", "selections", "customInput",
)
# Inside one answer record, the keys that hold what was picked or typed; a record with none of
# them counts as an answer when it is not empty (``{"<question>": "Label"}``).
PICKED_KEYS: tuple[str, ...] = (
    *ANSWER_KEYS, "selected", "selectedValues", "selectedLabel", "selection", "values", "labels", "value", "label",
    "text", "custom", "customText", "otherText", "freeText",
)  # fmt: skip

# An error text (``isError``, a ``details.error``, or a text that starts with ``Error:``) that
# matches this says the question could not be shown: ``unavailable``. Only error texts are read
# this way; an answer never is.
UNAVAILABLE = (
    r"Tool .* not found|requires (an )?interactive|interactive (TUI|mode)|UI not available|no UI|"
    r"non-interactive|headless|Cannot run in|Cannot read properties of undefined"
)
ERROR_PREFIX = "Error:"


class Message(NamedTuple):
    """A whole message a tool (or pi) returns when a question ends without an answer."""

    text: str  # the complete text; "…" stands for a variable part
    outcome: Outcome
    tools: str  # who writes it (for the docs)


# pi's own messages (results pi writes itself, with ``isError: true`` and empty details).
PI_MESSAGES: tuple[Message, ...] = (
    Message("Skipped due to queued user message.", "superseded", "pi"),
    Message("Operation aborted", "aborted", "pi"),
    Message("Tool … not found", "unavailable", "pi"),
    Message("Tool execution was blocked", "error", "pi (a tool_call handler)"),
    Message("Cannot read properties of undefined …", "unavailable", "pi (a custom-UI tool in RPC mode)"),
)
# The known tools' messages.
TOOL_MESSAGES: tuple[Message, ...] = (
    Message("User cancelled the selection", "cancelled", "question (pi's example); ask (oh-my-pi v5)"),
    Message(
        "User cancelled the questionnaire", "cancelled",
        "questionnaire (pi's example, pi-vault, clankercode); ask (steve-goldberg)",
    ),  # fmt: skip
    Message("User cancelled the questions.", "cancelled", "ask_user (pi-agent-extensions)"),
    Message("User cancelled the question", "cancelled", "ask_user (pi-ask-user); question (rwese)"),
    Message("User cancelled the question.", "cancelled", "ask_question (fitchmultz)"),
    Message("User cancelled the form", "cancelled", "ask_user_question (ebbe-brandstrup)"),
    Message("User cancelled", "cancelled", "ask_user_question (pi-askuserquestion, Shiina18)"),
    Message("User cancelled.", "cancelled", "clarify_prompt (pi-clarify)"),
    Message("Cancelled", "cancelled", "clarify_prompt (pi-clarify, when pi aborts the run)"),
    Message("Cancelled.", "cancelled", "ask_user (TianZuo555 pi-ask-user, when pi aborts the run)"),
    Message("Cancelled by user.", "cancelled", "ask_user_question (@nguyenquangthai/pi-ask)"),
    Message("Dismissed by user.", "cancelled", "ask (@howaboua/pi-ask)"),
    Message("Handoff dismissed by user.", "cancelled", "ask (@howaboua/pi-ask)"),
    Message("User declined to answer questions", "cancelled", "ask_user_question (rpiv, pi-ask-me)"),
    Message("User dismissed the questions without submitting answers.", "cancelled", "ask_user (seen in the wild)"),
    Message("User dismissed the questions without answering. …", "cancelled", "ask_user (TianZuo555 pi-ask-user)"),
    Message("User did not provide an answer.", "cancelled", "AskUserQuestion (PizzaPi)"),
    Message("Human consultation cancelled.", "cancelled", "ask_human"),
    Message("Ask tool was cancelled by the user", "cancelled", "ask (oh-my-pi, thrown)"),
    Message("The user interaction was cancelled.", "cancelled", "ask_user (@qmahyar/pi-ask, thrown)"),
    Message("The user interaction was aborted.", "aborted", "ask_user (@qmahyar/pi-ask, thrown)"),
    Message("User did not respond (timed out)", "cancelled", "ask_user (seen in the wild)"),
    Message("Timed out after 5 minutes. …", "cancelled", "ask_question (fitchmultz)"),
    Message(
        "No interactive UI is available, so the questions could not be shown. …", "unavailable",
        "ask_user (TianZuo555 pi-ask-user)",
    ),  # fmt: skip
    Message("Ask requires interactive mode. …", "unavailable", "ask_user (pi-ask-user)"),
    Message("ask_user can only be used in interactive TUI mode.", "unavailable", "ask_user (pi-ask-herdr)"),
    Message("User prompt seems unclear: …", "unavailable", "clarify_prompt (pi-clarify, no UI)"),
    Message("## Question extension is disabled …", "unavailable", "question (rwese, switched off)"),
)


# ---- the mechanism that reads them ----

# An error's words (never an answer's): which kind of failure it reports.
_FAILURES: tuple[tuple[re.Pattern[str], Outcome], ...] = (
    (re.compile(UNAVAILABLE, re.IGNORECASE), "unavailable"),
    (re.compile(r"cancel|declin|dismiss", re.IGNORECASE), "cancelled"),
    (re.compile(r"abort", re.IGNORECASE), "aborted"),
)
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


def classify(is_error: Any, content: Any, details: Any, choices: Container[str] = ()) -> Outcome:
    """How a question ended, from its toolResult: the tool's own details, then a whole known
    message (unless it is one of the question's ``choices``, as shown: then the tool returned
    the option chosen, "Cancelled" as much as any other), then (for an error only: ``isError``
    with no state of the tool's, a ``details.error`` or an ``Error:`` text) which kind of failure
    its words report; otherwise ``answered``."""
    text = result_text(content)
    fields: Mapping[str, Any] = details if isinstance(details, Mapping) else {}
    stated = _stated(fields)
    if stated not in (None, "cancelled", "error"):
        return stated
    reasons = (_named(REASONS, _at(fields, path)) for path in REASON_PATHS) if stated else ()
    reason: Outcome | None = next(filter(None, reasons), None)
    if reason is not None:
        return reason
    known = None if clean(text) in choices else known_message(text)
    error = fields.get("error") if stated else None
    failed = (is_error is True and stated is None) or _is_error_text(text)  # (then its words are read)
    if known is None and (failed or error):
        described = " ".join(_strings(error)) + ("\n" + text if failed else "")
        return next((outcome for pattern, outcome in _FAILURES if pattern.search(described)), "error")
    return known or stated or "answered"


def known_message(text: str) -> Outcome | None:
    """The outcome of a whole message pi or a known tool returns, if ``text`` is one."""
    return next((outcome for pattern, outcome in _MESSAGES if pattern.fullmatch(text.strip())), None)


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


def _is_error_text(text: str) -> bool:
    return text.lstrip()[: len(ERROR_PREFIX)].lower() == ERROR_PREFIX.lower()


def _at(fields: Mapping[str, Any], path: str) -> Any:
    value: Any = fields
    for key in path.split("."):
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
    if isinstance(value, Mapping):  # what was picked or typed, else anything in it
        value = [value[k] for k in PICKED_KEYS if k in value] or list(value.values())
    if isinstance(value, list):
        return any(_holds(v, depth + 1) for v in value)
    return False


def _strings(value: Any, depth: int = 0) -> Iterable[str]:
    """The strings in an error value (a text or a record such as ``{code, message}``)."""
    if depth > _NESTING:
        return
    if isinstance(value, str):
        yield value
    elif isinstance(value, (Mapping, list)):
        for v in value.values() if isinstance(value, Mapping) else value:
            yield from _strings(v, depth + 1)
