"""Per-tool key maps for answering a question dialog from outside pi (pure: no I/O).

``answer`` types into pi's terminal only what these plans say, and only after the screen has been
checked against the question (:func:`check_screen`). Each dialog is recognised on screen by its
help line; each plan is taken from the tool's source and checked against the real tool:

- ``question`` (pi's example ``question.ts``): options ``1. Label``, cursor ``> `` on the first;
  Down×(n−1) Enter answers; the last row "Type something." opens an editor (Enter submits).
- ``questionnaire`` (pi's example ``questionnaire.ts``): one question = like ``question``. Several
  questions: each Enter answers the current tab and moves to the next; after the last comes the
  "Ready to submit" tab, where Enter submits.
- ``ask_user_question`` (``@nguyenquangthai/pi-ask``): Space toggles (multi-select), Enter
  confirms a question; a review step follows, where Enter submits (real capture: Down Enter Enter).
- ``questionnaire`` (``@dreki-gg/pi-questionnaire``): Space selects, ``r`` opens the review,
  Enter submits (real capture: Down Space r Enter).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from notifier.core.model import Question, QuestionItem
from notifier.core.text import clean


class UsageError(ValueError):
    """The choices given cannot mean anything for this question (exit code 2)."""


class Unsupported(ValueError):
    """This question cannot be answered by keys (exit code 1: answer in the terminal)."""


@dataclass(frozen=True)
class Step:
    """Keys to send (tmux key names), or ``literal`` text; then, before the next step, wait until
    the dialog shows ``expect`` (``None``: go on at once)."""

    keys: tuple[str, ...] = ()
    literal: str | None = None
    expect: str | None = None


@dataclass(frozen=True)
class Dialog:
    variant: str  # "question" | "questionnaire" | "pi-ask" | "dreki"
    lines: tuple[str, ...]  # the dialog's own lines on screen (cleaned)


# The help line that identifies each dialog, and the tool names it can belong to.
_SIGNATURES: tuple[tuple[str, re.Pattern[str], frozenset[str]], ...] = (
    # (each help line, and the one its free-text editor shows)
    (
        "question",
        re.compile(r"↑↓ navigate • Enter to select • Esc to cancel|Enter to submit • Esc to go back"),
        frozenset({"question"}),
    ),
    (
        "questionnaire",
        re.compile(
            r"↑↓ navigate • Enter select • Esc cancel|Tab/←→ navigate • ↑↓ select • Enter confirm"
            r"|Enter to submit • Esc to cancel"
        ),
        frozenset({"questionnaire"}),
    ),
    (
        "pi-ask",
        re.compile(r"Space select/toggle\s+•\s+Enter confirm"),
        frozenset({"ask_user_question"}),
    ),
    ("dreki", re.compile(r"Space select/edit • r review"), frozenset({"questionnaire"})),
)
_BORDER = re.compile(r"^─{8,}$")
_MAX_DIALOG_LINES = 60


def _norm(text: str) -> str:
    return clean(text).casefold()


def find_dialog(screen: str, tool: str) -> Dialog | None:
    """The question dialog of ``tool`` at the bottom of a captured pane, or ``None``.

    The dialog is the block that ends with its help line, up to the border line above it (or
    at most 60 lines). Only the last help line on screen counts, and it must be among the last
    lines of the screen (below it only a border, pi's footer and blank lines)."""
    raw = screen.splitlines()
    lines = [clean(line) for line in raw]
    # pi's own rules start at column 0; an editor inside a dialog draws its rules indented
    border = [bool(_BORDER.match(line.rstrip())) for line in raw]
    for variant, pattern, tools in _SIGNATURES:
        if tool not in tools:
            continue
        hits = [i for i, line in enumerate(lines) if pattern.search(line)]
        if not hits:
            continue
        end = hits[-1]
        below = [line for i, line in enumerate(lines[end + 1 :], end + 1) if line and not border[i]]
        if len(below) > 3:
            continue  # something was drawn below it: that help line is history, not the live dialog
        start = end
        while start > 0 and end - start < _MAX_DIALOG_LINES and not border[start - 1]:
            start -= 1
        return Dialog(variant, tuple(lines[start : end + 1]))
    return None


def _prefix(text: str, n: int = 40) -> str:
    return _norm(text)[:n].strip()


def check_screen(dialog: Dialog, question: Question) -> str | None:
    """Why this dialog is not (or no longer) the untouched dialog of ``question``; ``None`` if it is."""
    body = " ".join(line for line in dialog.lines if line)
    flat = _norm(body)
    first = question.first
    if not _prefix(first.text) or _prefix(first.text) not in flat:
        return "the dialog on screen does not show this question"
    labels = [o.label for o in first.options]
    if labels and _prefix(labels[0], 30) not in flat:
        return "the dialog on screen does not show this question's options"
    cursor = [line for line in dialog.lines if line.startswith(">")]
    if labels:
        if len(cursor) != 1 or _prefix(labels[0], 30) not in _norm(cursor[0]):
            return "the dialog's selection was moved (answer it in the terminal)"
        if any(m in cursor[0] for m in ("✓", "[x]", "[X]", "■")):
            return "the dialog already has a selection (answer it in the terminal)"
    if any("Your answer:" in line for line in dialog.lines):
        return "the dialog is in its text editor (answer it in the terminal)"
    return None


def resolve(item: QuestionItem, choice: str) -> int:
    """A 1-based option number or an exact option label → the option's 0-based index."""
    labels = [o.label for o in item.options]
    if choice.isdigit():
        n = int(choice)
        if 1 <= n <= len(labels):
            return n - 1
        raise UsageError(f"option {n} does not exist (the question has {len(labels)} options)")
    if choice in labels:
        return labels.index(choice)
    folded = [i for i, label in enumerate(labels) if label.casefold() == choice.casefold()]
    if len(folded) == 1:
        return folded[0]
    shown = ", ".join(f"{i + 1}. {clean(label, 40)}" for i, label in enumerate(labels[:9]))
    raise UsageError(f"no option is called {clean(choice, 60)!r} (options: {shown})")


def plan(
    variant: str, question: Question, choices: list[str] | None = None, text: str | None = None
) -> list[Step]:
    """The keys that answer ``question`` in a dialog of ``variant`` with ``choices`` (or ``text``)."""
    items = question.items or (question.first,)
    if text is not None:
        return _plan_text(variant, items, text)
    if not choices:
        raise UsageError("give the answer: an option number or label, or --text TEXT")
    if any(not it.options for it in items):
        raise UsageError("this question has no options to choose from: answer it with --text TEXT")
    if len(items) == 1:
        item = items[0]
        picks = [resolve(item, c) for c in choices]
        if len(set(picks)) != len(picks):
            raise UsageError("the same option was given twice")
        if len(picks) > 1 and not item.multi:
            raise UsageError("this question takes one answer (it is not multi-select)")
        per_question = [picks]
    else:
        if any(it.multi for it in items):
            raise Unsupported("a form of several questions with multi-select ones: answer it in the terminal")
        if len(choices) != len(items):
            raise UsageError(f"this form has {len(items)} questions: give one answer for each, in order")
        per_question = [[resolve(it, c)] for it, c in zip(items, choices, strict=True)]

    if variant in ("question", "questionnaire"):
        if any(len(p) > 1 for p in per_question):
            raise Unsupported(f"the {variant} dialog has no multi-select")
        if variant == "question" and len(items) > 1:
            raise Unsupported("the question dialog asks one question")
        steps: list[Step] = []
        for i, (pick,) in enumerate(per_question):
            last = i == len(per_question) - 1
            if len(items) == 1:
                expect = None
            elif not last:
                expect = items[i + 1].text
            else:
                expect = "Ready to submit"
            steps.append(Step(keys=("Down",) * pick + ("Enter",), expect=expect))
        if len(items) > 1:
            steps.append(Step(keys=("Enter",)))
        return steps
    if variant == "pi-ask":
        steps = []
        for i, picks in enumerate(per_question):
            item = items[i]
            keys: list[str] = []
            if item.multi:
                at = 0
                for p in sorted(picks):
                    keys += ["Down"] * (p - at) + ["Space"]
                    at = p
                keys.append("Enter")
            else:
                keys += ["Down"] * picks[0] + ["Enter"]
            steps.append(Step(keys=tuple(keys)))
        steps.append(Step(keys=("Enter",)))  # the review step
        return steps
    if variant == "dreki":
        if len(items) > 1:
            raise Unsupported("a dreki questionnaire of several questions: answer it in the terminal")
        keys = []
        at = 0
        for p in sorted(per_question[0]):
            keys += ["Down"] * (p - at) + ["Space"]
            at = p
        return [Step(keys=tuple(keys)), Step(keys=("r",)), Step(keys=("Enter",))]
    raise Unsupported(f"no key map for the {clean(variant)} dialog")


def _plan_text(variant: str, items: tuple[QuestionItem, ...], text: str) -> list[Step]:
    typed = clean(text)
    if not typed:
        raise UsageError("--text needs some text")
    if variant not in ("question", "questionnaire") or len(items) != 1:
        raise Unsupported("a typed answer is supported for pi's question and one-question questionnaire only")
    # The last row ("Type something.") opens an editor; Enter submits what was typed.
    n = len(items[0].options)
    return [
        Step(keys=("Down",) * n + ("Enter",), expect="Your answer:"),
        Step(literal=typed),
        Step(keys=("Enter",)),
    ]
