"""How question tools mark the way a question ended, as data for :mod:`notifier.pi.outcomes`.

Three kinds of marker, read in this order (docs/question-tools.md §4 lists them with the tools):

1. A tool's own ``details``: a state named under a known key (``status``, ``lifecycle``, …), a
   reason code, a boolean flag (``cancelled``, ``timedOut``, …), or answers present or absent.
2. pi's own markers: ``isError`` and the messages pi itself writes (``Operation aborted``, …).
3. The whole cancel, timeout and no-UI messages the known tools return. A message matches only
   the complete text (``…`` stands for the variable part of a message), never a word in it.

Pure data; the mechanism that reads it is :func:`notifier.pi.outcomes.classify`.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import NamedTuple

from notifier.core.model import Outcome

Path = tuple[str, ...]

# Keys (paths into ``details``) whose string value names how the question ended; the first one
# holding a value of STATES decides. Values are compared lower-cased with "-" read as "_".
STATE_PATHS: tuple[Path, ...] = (
    ("status",),
    ("lifecycle",),
    ("outcome",),
    ("kind",),
    ("response", "kind"),
    ("action",),
)
STATES: Mapping[str, Outcome] = {
    # answered (a chat redirect or "needs discussion" is the user's answer too)
    "answered": "answered",
    "submitted": "answered",
    "completed": "answered",
    "ok": "answered",
    "needs_discussion": "answered",
    "selection": "answered",
    "freeform": "answered",
    "batch": "answered",
    "execute": "answered",
    "execute_keep_context": "answered",
    "edit": "answered",
    # closed without an answer (the contract has no timeout outcome: a timeout is cancelled)
    "cancelled": "cancelled",
    "canceled": "cancelled",
    "cancel": "cancelled",
    "dismissed": "cancelled",
    "timeout": "cancelled",
    "timed_out": "cancelled",
    "aborted": "aborted",
    "unavailable": "unavailable",
    "no_ui": "unavailable",
    "invalid": "error",
    "error": "error",
    "failed": "error",
    "rejected": "error",
}

# Keys whose code says why a question ended without an answer. They refine a ``cancelled`` or
# ``error`` state (``status: failed`` + ``reason: interactive_ui_required`` is ``unavailable``).
REASON_PATHS: tuple[Path, ...] = (
    ("cancelReason",),
    ("reason",),
    ("error", "code"),
    ("error", "kind"),
    ("error",),
    ("mode",),
)
REASONS: Mapping[str, Outcome] = {
    "user": "cancelled",
    "user_cancelled": "cancelled",
    "aborted": "aborted",
    "unavailable": "unavailable",
    "ui_unavailable": "unavailable",
    "no_ui": "unavailable",
    "no_custom_ui": "unavailable",
    "interactive_ui_required": "unavailable",
    "unsupported_mode": "unavailable",
    "print": "unavailable",  # questions written to a file for later (``mode: print``)
    "invalid": "error",
    "invalid_input": "error",
    "invalid_request": "error",
    "questionnaire_already_active": "error",
}


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
    "answer",
    "answers",
    "responses",
    "response",
    "results",
    "selectedOptions",
    "selections",
    "customInput",
)
# Inside one answer record, the keys that hold what was picked or typed; a record with none of
# them counts as an answer when it is not empty (``{"<question>": "Label"}``).
PICKED_KEYS: tuple[str, ...] = (
    *ANSWER_KEYS,
    "selected",
    "selectedValues",
    "selectedLabel",
    "selection",
    "values",
    "labels",
    "value",
    "label",
    "text",
    "custom",
    "customText",
    "otherText",
    "freeText",
)

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
        "User cancelled the questionnaire",
        "cancelled",
        "questionnaire (pi's example, pi-vault, clankercode); ask (steve-goldberg)",
    ),
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
        "No interactive UI is available, so the questions could not be shown. …",
        "unavailable",
        "ask_user (TianZuo555 pi-ask-user)",
    ),
    Message("Ask requires interactive mode. …", "unavailable", "ask_user (pi-ask-user)"),
    Message("ask_user can only be used in interactive TUI mode.", "unavailable", "ask_user (pi-ask-herdr)"),
    Message("User prompt seems unclear: …", "unavailable", "clarify_prompt (pi-clarify, no UI)"),
    Message("## Question extension is disabled …", "unavailable", "question (rwese, switched off)"),
)
