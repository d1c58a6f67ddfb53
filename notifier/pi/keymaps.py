"""Per-tool key maps for answering a question dialog from outside pi (pure: no I/O).

``answer`` types into pi's terminal only what a plan here says, one step at a time, and before
each step it checks the screen (:mod:`notifier.pi.screens`): the rows drawn are the rows known,
the highlighted row is the one the step expects, and a review shows the answers chosen (that the
dialog is the question's own, and that pi recorded the answer: :mod:`notifier.pi.answer_checks`). Each
plan follows the tool's own key handling, checked against the real tool:

- ``question`` (pi's example): Down×k moves to row k, Enter answers; the last row "Type
  something." opens an editor, Enter submits what was pasted there.
- ``questionnaire`` (pi's example): one question = like ``question`` (its free-text row only
  with ``allowOther``). Several: each Enter answers the current tab and moves to the next; after
  the last comes "Ready to submit", where Enter submits.
- ``ask_user_question`` (pi-ask): the rows are drawn recommended first. Enter on a single-choice
  row selects and confirms it, Space toggles a multi-choice row and Enter confirms; an optional
  single-choice question is skipped with Enter (a multi-choice one cannot be: Enter chooses the
  highlighted row there), and answered with Space then Enter; a question with
  ``showWhen`` is asked only when its parent was answered so. Confirming moves to the next
  question shown, then to "Review your answers", where Enter submits.
- ``questionnaire`` (dreki-gg): Space selects, ``r`` opens the review, Enter submits.
"""

from __future__ import annotations

from dataclasses import dataclass

from notifier.core.model import Question, QuestionItem
from notifier.core.text import clean, number
from notifier.pi.screens import PI_ASK_OTHER

SKIP = "-"  # the answer that skips an optional question


class UsageError(ValueError):
    """The choices given cannot mean anything for this question (exit code 2)."""


class Unsupported(ValueError):
    """This question cannot be answered by keys (exit code 1: answer in the terminal)."""


@dataclass(frozen=True)
class Step:
    """One key of a plan (or one paste). Before it: the dialog shows question ``item`` of the
    form (its text and rows; ``None``: the form's review), shows ``shows``, and row ``cursor``
    is the highlighted one (showing ``cursor_text``). Then the ``keys`` (one tmux key name) are
    sent, or ``paste`` is pasted whole. After it, before the next step: the dialog shows
    ``expect``."""

    keys: tuple[str, ...] = ()
    paste: str | None = None
    cursor: int | None = None
    cursor_text: str | None = None
    shows: tuple[str, ...] = ()
    expect: str | None = None
    item: int | None = 0
    checked: tuple[int, ...] | None = None  # the rows whose boxes are ticked ("list" dialogs; None: not looked at)
    typing: bool | None = None  # "list": the dialog shows an open input (True) or none (False); None: not looked at
    typed: str | None = None  # "list": the dialog shows this text (a typed answer, read back)
    # "list": a form's review (``item`` None): it shows each question's options at these rows chosen,
    # and the highlighted row of its list is the one that submits
    answers: tuple[tuple[int, ...], ...] | None = None


def moves(start: int, end: int, rows: tuple[str, ...], item: int, marked: frozenset[int] = frozenset()) -> list[Step]:
    """Down one row at a time from row ``start`` to row ``end``, each key bound to the row it
    leaves (its text unchecked where ``marked``: a row toggled, which the dialog redraws)."""
    return [
        Step(keys=("Down",), cursor=i, cursor_text=None if i in marked else rows[i], item=item)
        for i in range(start, end)
    ]


@dataclass(frozen=True)
class Plan:
    """The steps, and what they answer: each question's rows picked (by index), or the text."""

    steps: list[Step]
    picks: dict[int, list[int]]
    text: str | None = None


def resolve(item: QuestionItem, choice: str) -> int:
    """An option number (``2``, or ``#2`` that is never a label), or an option's label → the
    row's 0-based index. A number that is also another row's label is refused as ambiguous."""
    labels = [o.label for o in item.options]
    n = len(labels)
    hashed = number(choice[1:]) if choice.startswith("#") else None
    if hashed is not None:
        if 1 <= hashed <= n:
            return hashed - 1
        raise UsageError(f"option {hashed} does not exist (the question has {n} options)")
    named = [i for i, label in enumerate(labels) if label == choice]
    if not named:
        named = [i for i, label in enumerate(labels) if label.casefold() == choice.casefold()]
    given = number(choice)
    numbered = given - 1 if given is not None and 1 <= given <= n else None
    if numbered is not None and any(i != numbered for i in named):
        raise UsageError(
            f"{clean(choice, 20)!r} is ambiguous: option {numbered + 1} is {clean(labels[numbered], 40)!r}"
            f" and option {named[0] + 1} is labelled {clean(choice, 20)!r}: give '#{numbered + 1}' for the"
            " number, or another label"
        )
    if numbered is not None:
        return numbered
    if len(named) == 1:
        return named[0]
    if len(named) > 1:
        raise UsageError(f"several options are called {clean(choice, 60)!r}: give the option's number")
    if given is not None:
        raise UsageError(f"option {choice} does not exist (the question has {n} options)")
    shown = ", ".join(f"{i + 1}. {clean(label, 40)}" for i, label in enumerate(labels[:9]))
    raise UsageError(f"no option is called {clean(choice, 60)!r} (options: {shown})")


def drawn_rows(variant: str, item: QuestionItem) -> tuple[str, ...]:
    """The rows a dialog of ``variant`` draws for ``item``, as they read on screen."""
    if variant in ("question", "questionnaire"):
        texts = [f"{i}. {o.label}".rstrip() for i, o in enumerate(item.options, 1)]
        if variant == "question" or item.other:
            texts.append(f"{len(texts) + 1}. Type something.")
        return tuple(texts)
    if variant == "pi-ask":
        texts = [o.label + (" (Recommended)" if o.recommended else "") for o in item.options]
        return (*texts, PI_ASK_OTHER)
    return (*(f"[ ] {o.label}" for o in item.options), "[ ] Other")


def plan(
    variant: str, question: Question, choices: list[str] | None = None, text: str | None = None
) -> Plan:
    """The steps that answer ``question`` in a dialog of ``variant`` with ``choices`` (or ``text``)."""
    items = question.items or (question.first,)
    if text is not None:
        return Plan(_plan_text(variant, items, text), {}, text)
    if not choices:
        raise UsageError("give the answer: an option number or label, or --text TEXT")
    if variant == "pi-ask":
        return _plan_pi_ask(items, choices)
    if any(not it.options for it in items):
        raise UsageError("this question has no options to choose from: answer it with --text TEXT")
    if len(items) == 1:
        picks = [resolve(items[0], c) for c in choices]
        if len(set(picks)) != len(picks):
            raise UsageError("the same option was given twice")
        if len(picks) > 1 and not items[0].multi:
            raise UsageError("this question takes one answer (it is not multi-select)")
        per_question = [picks]
    else:
        if len(choices) != len(items):
            raise UsageError(f"this form has {len(items)} questions: give one answer for each, in order")
        per_question = [[resolve(it, c)] for it, c in zip(items, choices, strict=True)]
    if variant == "dreki":
        return Plan(_plan_dreki(items, per_question), dict(enumerate(per_question)))
    if any(len(p) > 1 for p in per_question) or any(it.multi for it in items):
        raise Unsupported(f"the {variant} dialog has no multi-select")
    if variant == "question" and len(items) > 1:
        raise Unsupported("the question dialog asks one question")
    steps: list[Step] = []
    for i, (pick,) in enumerate(per_question):
        rows = drawn_rows(variant, items[i])
        if len(items) == 1:
            expect = None
        else:
            expect = items[i + 1].text if i + 1 < len(items) else "Ready to submit"
        steps += moves(0, pick, rows, i)
        steps.append(Step(keys=("Enter",), cursor=pick, cursor_text=rows[pick], expect=expect, item=i))
    if len(items) > 1:
        # the review lists each question's label and the answer chosen for it
        chosen = tuple(
            f"{it.header}: {it.options[p].label}" if it.header else it.options[p].label
            for it, (p,) in zip(items, per_question, strict=True)
        )
        steps.append(Step(keys=("Enter",), shows=("Press Enter to submit", *chosen), item=None))
    return Plan(steps, dict(enumerate(per_question)))


def _plan_text(variant: str, items: tuple[QuestionItem, ...], text: str) -> list[Step]:
    if not text.strip():
        raise UsageError("--text needs some text")
    if any(ord(c) < 32 and c != "\n" or c == "\x7f" for c in text):
        raise UsageError("--text has control characters that pi's editor would drop: give plain text")
    if len(items) != 1 or variant == "dreki":
        raise Unsupported("a typed answer is supported for a dialog of one question only")
    item = items[0]
    rows = drawn_rows(variant, item)
    n = len(item.options)
    if variant == "pi-ask":
        if len(text) > 1000 or text.count("\n") >= 10:
            raise Unsupported("pi-ask keeps a text of over 1,000 characters or 10 lines as a marker: type it there")
        return [
            *moves(0, n, rows, 0),
            Step(keys=("Enter",), cursor=n, cursor_text=rows[n], expect="Your answer:"),
            Step(paste=text, shows=("Your answer:",)),
            Step(keys=("Enter",), shows=("Your answer:",), expect=f"{PI_ASK_OTHER}:"),
            Step(keys=("Enter",), cursor=n, cursor_text=f"{PI_ASK_OTHER}: {clean(text)}", expect="Review your answers"),
            Step(keys=("Enter",), shows=("Press Enter to submit", item.text[:24]), item=None),
        ]
    if variant == "questionnaire" and not item.other:
        raise Unsupported("this question has no free-text row")
    return [
        *moves(0, n, rows, 0),
        Step(keys=("Enter",), cursor=n, cursor_text=rows[n], expect="Your answer:"),
        Step(paste=text, shows=("Your answer:",)),
        Step(keys=("Enter",), shows=("Your answer:",)),
    ]


def _plan_dreki(items: tuple[QuestionItem, ...], per_question: list[list[int]]) -> list[Step]:
    if len(items) > 1:
        raise Unsupported("a dreki questionnaire of several questions: answer it in the terminal")
    rows = drawn_rows("dreki", items[0])
    steps: list[Step] = []
    at, marked = 0, frozenset[int]()
    for p in sorted(per_question[0]):
        steps += moves(at, p, rows, 0, marked)
        steps.append(Step(keys=("Space",), cursor=p, cursor_text=rows[p]))
        at, marked = p, marked | {p}
    chosen = tuple(items[0].options[p].label for p in per_question[0])
    return [*steps, Step(keys=("r",)), Step(keys=("Enter",), shows=chosen, item=None)]


def _plan_pi_ask(items: tuple[QuestionItem, ...], choices: list[str]) -> Plan:
    """pi-ask's form, walked as pi-ask walks it: the questions shown, given the answers so far."""
    keys = [it.key for it in items]
    answered: dict[int, list[int]] = {}

    def shown(i: int) -> bool:
        cond = items[i].show_when
        if cond is None:
            return True
        parent = keys.index(cond[0]) if cond[0] in keys else -1
        if parent < 0 or parent not in answered:
            return False
        values = [o.value for o in items[parent].options]
        return cond[1] in values and values.index(cond[1]) in answered[parent]

    steps: list[Step] = []
    # One question: every choice is for it. A form: one choice per question asked, a
    # multi-choice one's picks joined with commas ("1,3").
    given = [list(choices)] if len(items) == 1 else [[c] for c in choices]
    tab = next((i for i in range(len(items)) if shown(i)), len(items))
    while tab < len(items):
        item = items[tab]
        if not given:
            raise UsageError("too few answers: this form also asks " + repr(clean(item.text, 60)))
        group = given.pop(0)
        rows = drawn_rows("pi-ask", item)
        if group == [SKIP] and SKIP not in [o.label for o in item.options]:
            if item.required:
                raise UsageError(f"{clean(item.text, 60)!r} is not optional: it cannot be skipped")
            if item.multi:  # pi-ask takes Enter there as a choice of the highlighted row
                raise Unsupported(
                    f"pi-ask cannot skip the multi-choice {clean(item.text, 60)!r} by keys: answer it there"
                )
            group = []
        if item.multi and len(group) == 1 and "," in group[0] and group[0] not in [o.label for o in item.options]:
            group = group[0].split(",")
        picks = [resolve(item, c) for c in group]
        if len(picks) > 1 and not item.multi:
            raise UsageError(f"{clean(item.text, 60)!r} takes one answer (it is not multi-select)")
        if len(set(picks)) != len(picks):
            raise UsageError("the same option was given twice")
        answered[tab] = picks
        nxt = next((i for i in range(tab + 1, len(items)) if shown(i)), len(items))
        expect = items[nxt].text if nxt < len(items) else "Review your answers"
        if not picks:  # an optional question, skipped: Enter with nothing selected
            steps.append(Step(keys=("Enter",), cursor=0, cursor_text=rows[0], expect=expect, item=tab))
        elif item.multi:
            at = 0
            for p in sorted(picks):
                steps += moves(at, p, rows, tab)
                steps.append(Step(keys=("Space",), cursor=p, cursor_text=rows[p], item=tab))
                at = p
            steps.append(Step(keys=("Enter",), cursor=at, cursor_text=rows[at], expect=expect, item=tab))
        else:
            steps += moves(0, picks[0], rows, tab)
            if not item.required:  # Enter alone would skip it
                steps.append(Step(keys=("Space",), cursor=picks[0], cursor_text=rows[picks[0]], item=tab))
            steps.append(Step(keys=("Enter",), cursor=picks[0], cursor_text=rows[picks[0]], expect=expect, item=tab))
        tab = nxt
    if given:
        raise UsageError(f"too many answers: with these answers the form asks {len(answered)} questions")
    chosen = [", ".join(items[i].options[p].label for p in sorted(ps)) for i, ps in answered.items() if ps]
    # the review lists every question asked (its text) and the answers chosen
    asked = [items[i].text[:24] for i in answered]  # (its start: a long one is cut to the width)
    steps.append(Step(keys=("Enter",), shows=("Press Enter to submit", *chosen, *asked), item=None))
    return Plan(steps, answered)

