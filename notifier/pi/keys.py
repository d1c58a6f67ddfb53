"""The keys that answer a question dialog from outside pi, and the checks around them (pure).

``answer`` types into pi's terminal only what a plan here says, one step at a time; before each
step the driver (:mod:`notifier.actions.answer`) checks the screen read by
:mod:`notifier.pi.screens`: the dialog is the question's own (:func:`bound`), the highlighted row
is the one the step expects, a review shows the answers chosen; afterwards, that the tool result
pi recorded is the answer the plan gave (:func:`result_mismatch`).

One driver for any dialog drawn as a list (:func:`plan_list`): read off the screen, the
highlighted row known by its cursor mark, the keys move the highlight one row at a time to the
chosen row and confirm it there (ticks, a free-text row, a form's tabs and its review step).

The layouts whose tool is known are planned by what that tool does with each key, checked
against the real tool (:func:`plan`):

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

import re
from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Any

from notifier.core.model import Question, QuestionItem
from notifier.core.text import clean, number
from notifier.pi.screens import PI_ASK_OTHER, Dialog, Rows, names_line, rows, same_row, shows_text, squash

# ---- the layouts whose tool is known ----

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
    per_question = _per_question(items, choices)
    if variant == "dreki":
        return Plan(_plan_dreki(items, per_question), dict(enumerate(per_question)))
    if any(len(p) > 1 for p in per_question) or any(it.multi for it in items):
        raise Unsupported(f"the {variant} dialog has no multi-select")
    if variant == "question" and len(items) > 1:
        raise Unsupported("the question dialog asks one question")
    return Plan(_plan_numbered(variant, items, [p for (p,) in per_question]), dict(enumerate(per_question)))


def _per_question(items: tuple[QuestionItem, ...], choices: list[str]) -> list[list[int]]:
    """The rows chosen for each question: every choice for a question alone (several only where
    it is multi-select), one choice for each question of a form, in order."""
    if len(items) != 1:
        if len(choices) != len(items):
            raise UsageError(f"this form has {len(items)} questions: give one answer for each, in order")
        return [[resolve(it, c)] for it, c in zip(items, choices, strict=True)]
    picks = [resolve(items[0], c) for c in choices]
    if len(set(picks)) != len(picks):
        raise UsageError("the same option was given twice")
    if len(picks) > 1 and not items[0].multi:
        raise UsageError("this question takes one answer (it is not multi-select)")
    return [picks]


def _plan_numbered(variant: str, items: tuple[QuestionItem, ...], picks: list[int]) -> list[Step]:
    """pi's question / questionnaire: Down to each question's row, Enter; a form then shows
    "Ready to submit" with each question's label and answer, where Enter submits."""
    steps: list[Step] = []
    for i, pick in enumerate(picks):
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
            for it, p in zip(items, picks, strict=True)
        )
        steps.append(Step(keys=("Enter",), shows=("Press Enter to submit", *chosen), item=None))
    return steps


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
        picks = _pi_ask_picks(item, given.pop(0))
        answered[tab] = picks
        nxt = next((i for i in range(tab + 1, len(items)) if shown(i)), len(items))
        expect = items[nxt].text if nxt < len(items) else "Review your answers"
        steps += _pi_ask_steps(item, tab, picks, expect)
        tab = nxt
    if given:
        raise UsageError(f"too many answers: with these answers the form asks {len(answered)} questions")
    chosen = [", ".join(items[i].options[p].label for p in sorted(ps)) for i, ps in answered.items() if ps]
    # the review lists every question asked (its text) and the answers chosen
    asked = [items[i].text[:24] for i in answered]  # (its start: a long one is cut to the width)
    steps.append(Step(keys=("Enter",), shows=("Press Enter to submit", *chosen, *asked), item=None))
    return Plan(steps, answered)


def _pi_ask_picks(item: QuestionItem, group: list[str]) -> list[int]:
    """The rows chosen for one pi-ask question (none: an optional one skipped with ``-``; a
    multi-choice one's picks given as ``1,3``)."""
    if group == [SKIP] and SKIP not in [o.label for o in item.options]:
        if item.required:
            raise UsageError(f"{clean(item.text, 60)!r} is not optional: it cannot be skipped")
        if item.multi:  # pi-ask takes Enter there as a choice of the highlighted row
            raise Unsupported(f"pi-ask cannot skip the multi-choice {clean(item.text, 60)!r} by keys: answer it there")
        return []
    if item.multi and len(group) == 1 and "," in group[0] and group[0] not in [o.label for o in item.options]:
        group = group[0].split(",")
    picks = [resolve(item, c) for c in group]
    if len(picks) > 1 and not item.multi:
        raise UsageError(f"{clean(item.text, 60)!r} takes one answer (it is not multi-select)")
    if len(set(picks)) != len(picks):
        raise UsageError("the same option was given twice")
    return picks


def _pi_ask_steps(item: QuestionItem, tab: int, picks: list[int], expect: str) -> list[Step]:
    """The keys of one pi-ask question: Enter alone skips it; Space ticks each pick of a
    multi-choice one, then Enter; Down to the pick of a single-choice one (Space first where
    it is optional: Enter alone would skip it), then Enter."""
    rows = drawn_rows("pi-ask", item)
    if not picks:
        return [Step(keys=("Enter",), cursor=0, cursor_text=rows[0], expect=expect, item=tab)]
    steps: list[Step] = []
    if item.multi:
        at = 0
        for p in sorted(picks):
            steps += moves(at, p, rows, tab)
            steps.append(Step(keys=("Space",), cursor=p, cursor_text=rows[p], item=tab))
            at = p
        return [*steps, Step(keys=("Enter",), cursor=at, cursor_text=rows[at], expect=expect, item=tab)]
    steps += moves(0, picks[0], rows, tab)
    if not item.required:
        steps.append(Step(keys=("Space",), cursor=picks[0], cursor_text=rows[picks[0]], item=tab))
    return [*steps, Step(keys=("Enter",), cursor=picks[0], cursor_text=rows[picks[0]], expect=expect, item=tab)]


# ---- any dialog drawn as a list ----

def plan_list(
    question: Question,
    choices: list[str] | None,
    text: str | None,
    shown: Rows,
    toggles: bool = False,
    toggle: str | None = None,
    submits: bool = False,
    usage_only: bool = False,
    review: bool = False,
) -> Plan:
    """The keys that answer a question of one item in a dialog drawn as a list, read off the
    screen (``shown``: its rows in screen order, the highlighted one): Up or Down one row at a
    time from the highlighted row to the chosen one, each bound to the row it leaves, then Enter
    on the chosen row. ``toggles``: the dialog says Space selects (Enter submits what is ticked):
    Space on the chosen row while no box is ticked, then Enter once its box alone reads ticked.
    A multi-select question: ``toggle`` is the key its help line says ticks a row, ``submits``
    that Enter submits; each chosen row is ticked in screen order, every box read back after each
    key, then Enter once exactly the chosen boxes read ticked. ``review``: a form says it ends in a
    review step of its own (its tab bar names it)."""
    items = question.items or (question.first,)
    if text is not None:
        if len(items) != 1:
            raise Unsupported("a typed answer is supported for a dialog of one question only")
        return _plan_list_text(text, shown, toggles, toggle)
    if not choices:
        raise UsageError("give the answer: an option number or label")
    if len(items) != 1:
        return _plan_form(question, choices, shown, toggles, toggle, submits or review, usage_only, review)
    item = items[0]
    if item.multi:
        return _plan_ticks(question, choices, shown, toggle, submits)
    if len(choices) != 1:
        raise UsageError("this question takes one answer (it is not multi-select)")
    label = item.options[resolve(item, choices[0])].label
    if shown.cursor is None:
        raise Unsupported(_NO_CURSOR)
    at, chosen = shown.cursor, shown.texts.index(label)
    steps = _walk(shown, at, chosen)
    if toggles:
        if not boxes_readable(shown):
            raise Unsupported(
                "this dialog says Space selects, but its rows show no check box to read back: answer it in the terminal"
            )
        steps.append(Step(keys=(toggle or "Space",), cursor=chosen, cursor_text=label, checked=()))
        steps.append(Step(keys=("Enter",), cursor=chosen, cursor_text=label, checked=(chosen,)))
    else:
        steps.append(Step(keys=("Enter",), cursor=chosen, cursor_text=label))
    return Plan(steps, {0: [resolve(item, choices[0])]})


_NO_CURSOR = (
    "no row of this dialog is marked as the highlighted one (it may show it by colour alone): answer it in the terminal"
)


def boxes_readable(shown: Rows) -> bool:
    """Whether every option's row shows a box (a free-text row may have none)."""
    boxes = [on for i, on in enumerate(shown.checked) if i != shown.other]
    return None not in boxes and len(shown.checked) == len(shown.texts)


def _walk(shown: Rows, at: int, to: int, ticked: tuple[int, ...] | None = None) -> list[Step]:
    """Up or Down one row at a time from row ``at`` to row ``to``, each key bound to the row it
    leaves (and, ``ticked``, to the boxes read ticked)."""
    step = 1 if to > at else -1
    return [
        Step(keys=("Down" if step > 0 else "Up",), cursor=i, cursor_text=shown.texts[i], checked=ticked)
        for i in range(at, to, step)
    ]


def _plan_ticks(question: Question, choices: list[str], shown: Rows, toggle: str | None, submits: bool) -> Plan:
    """A multi-select list: tick each chosen row, every box read back, then Enter."""
    item = question.first
    if len(choices) == 1 and "," in choices[0] and choices[0] not in [o.label for o in item.options]:
        choices = choices[0].split(",")  # ("1,3", as for a form's multi-select question)
    picks = [resolve(item, c.strip()) for c in choices]
    if len(set(picks)) != len(picks):
        raise UsageError("the same option was given twice")
    if toggle is None:
        raise Unsupported(
            "this multi-select dialog's help line does not say which key ticks a row: answer it in the terminal"
        )
    if not submits:
        raise Unsupported(
            "this multi-select dialog's help line does not say that Enter submits: answer it in the terminal"
        )
    if not boxes_readable(shown):
        raise Unsupported("this multi-select dialog's rows show no check box to read back: answer it in the terminal")
    if shown.cursor is None:
        raise Unsupported(_NO_CURSOR)
    rows = sorted(shown.texts.index(item.options[p].label) for p in picks)
    steps: list[Step] = []
    at, ticked = shown.cursor, tuple[int, ...]()
    for row in rows:
        steps += _walk(shown, at, row, ticked)
        steps.append(Step(keys=(toggle,), cursor=row, cursor_text=shown.texts[row], checked=ticked))
        at, ticked = row, (*ticked, row)
    steps.append(Step(keys=("Enter",), cursor=at, cursor_text=shown.texts[at], checked=ticked))
    return Plan(steps, {0: picks})


def _plan_list_text(text: str, shown: Rows, toggles: bool, toggle: str | None) -> Plan:
    """A typed answer: to the free-text row ("Other", "Type something"), confirm it (Enter, or the
    key that ticks where the help says so), paste the text once an input is open, and Enter once
    the text reads back on screen. Where Enter on the list submits (a layout that ticks rows), the
    input saves the text back into the list: then Enter once more, the input closed, the text shown."""
    if not text.strip():
        raise UsageError("--text needs some text")
    if any(ord(c) < 32 or c == "\x7f" for c in text):
        raise UsageError("--text has line breaks or control characters: a list's input takes one line of plain text")
    if shown.other is None:
        raise Unsupported(
            "this dialog shows no row for a typed answer (such as 'Other' or 'Type something'): answer it there"
        )
    if shown.cursor is None:
        raise Unsupported(_NO_CURSOR)
    row, label = shown.other, shown.texts[shown.other]
    opens = (toggle or "Space") if toggles else "Enter"
    steps = [
        *_walk(shown, shown.cursor, row),
        Step(keys=(opens,), cursor=row, cursor_text=label, typing=False),
        Step(paste=text, typing=True),
        Step(keys=("Enter",), typing=True, typed=text),
    ]
    if toggles:  # (the text saved into the list; Enter there submits it)
        steps.append(Step(keys=("Enter",), typing=False, typed=text))
    return Plan(steps, {}, text)


def _plan_form(
    question: Question,
    choices: list[str],
    shown: Rows,
    toggles: bool,
    toggle: str | None,
    submits: bool,
    usage_only: bool,
    review: bool = False,
) -> Plan:
    """A form of several questions drawn one at a time as lists (tabs): each question answered in
    turn as a list of its own (one choice per question, in order; ``1,3`` for a multi-select one),
    its confirming key moving to the next question; the last one submits the form, where the
    dialog's help line says Enter submits ("Enter next/submit"), or opens its review, where its
    tab bar names one ("✓ Submit"): Enter there once the review shows every answer chosen (each
    question's chosen options alone) and its highlighted row is the one that submits. The first
    question's rows are the ones read; each later one is expected with its options in order, the
    highlight on the first and no box ticked, and every key is checked against that before it is
    sent (else it stops)."""
    items = question.items
    if len(choices) != len(items):
        raise UsageError(f"this form has {len(items)} questions: give one answer for each, in order")
    if not usage_only and not submits:
        raise Unsupported(
            f"a form of {len(items)} questions whose help line does not say that Enter submits it, nor its tab bar"
            " that a review step submits it: answer it in the terminal; nothing was typed"
        )
    steps: list[Step] = []
    picks: dict[int, list[int]] = {}
    for k, (item, choice) in enumerate(zip(items, choices, strict=True)):
        one = replace(question, items=(item,))
        if k == 0:
            rows_k = shown
        else:  # (as it is expected when its tab opens)
            labels = tuple(o.label for o in item.options)
            boxes = (False,) * len(labels) if any(c is not None for c in shown.checked) else ()
            rows_k = Rows(labels, 0, boxes)
        done = plan_list(one, [choice], None, rows_k, toggles, toggle, submits)
        steps += [replace(st, item=k) for st in done.steps]
        picks[k] = done.picks[0]
    if review and not usage_only:
        answers = tuple(tuple(picks[k]) for k in range(len(items)))
        steps.append(Step(keys=("Enter",), item=None, answers=answers))
    return Plan(steps, picks)


# ---- the checks: the dialog is the question's, the record is the answer ----

_BOX = re.compile(r"^\[[^\]]\]")


def _named(name: str, text: str) -> bool:
    """Whether ``text`` names ``name`` as a whole (not as a part of a longer word)."""
    return re.search(rf"(?<!\w){re.escape(name)}(?!\w)", text) is not None


def _drawn_as(shown: str, drawn: str) -> bool:
    """Whether a row on screen is the row ``drawn``, in any state the dialog draws it in while it
    is answered: cut to the width, marked after its label (an editor open on it: " ✎", a
    text typed for it: ": text") or its check box toggled ("[x]" for "[ ]")."""
    if same_row(shown, drawn) or same_row(_BOX.sub("[ ]", shown, count=1), drawn):
        return True
    shown, drawn = clean(shown), clean(drawn)
    return shown.startswith((drawn + " ", drawn + ":"))


def bound(dialog: Dialog, question: Question, item: int | None, shows: tuple[str, ...] = ()) -> str | None:
    """Why the dialog on screen is not (or no longer) ``question``'s, at its question ``item``
    (``None``: the form's review, known by what it ``shows``); ``None`` if it is: it shows that
    question's text and exactly its rows, in order, in whatever state answering puts them.
    This is what binds every key to the question it is for: a look-alike next question (the
    same rows, another text) is not it."""
    items = question.items or (question.first,)
    if item is None:
        missing = next((t for t in shows if not dialog.shows(t)), None)
        return None if missing is None else f"the dialog on screen does not show {clean(missing, 60)!r}"
    it = items[item] if item < len(items) else items[0]
    if not shows_text(dialog.lines, it.text):
        return "the dialog on screen does not show this question"
    if it.options:
        now = rows(dialog)
        shown = now.texts
        if dialog.variant == "list":  # (read by its labels: the same labels, in the order drawn)
            labels = [t for i, t in enumerate(shown) if i != now.other]  # (not its free-text row)
            ok = sorted(labels) == sorted(o.label for o in it.options)
        else:
            drawn = drawn_rows(dialog.variant, it)
            ok = len(shown) == len(drawn) and all(_drawn_as(a, b) for a, b in zip(shown, drawn, strict=True))
        if not ok:
            return "the dialog on screen does not show this question's options"
    return None


def names_alone(said: str, chosen: Sequence[tuple[str | None, ...]], others: Sequence[tuple[str | None, ...]]) -> bool:
    """Whether ``said`` names each chosen option (by one of its names: label, value) as a whole,
    and no other option (one whose name is part of a chosen one's is not counted)."""
    mine = [n for names in chosen for n in names if n]
    rest = [n for names in others for n in names if n and not any(n in m for m in mine)]
    each = all(any(_named(n, said) for n in names if n) for names in chosen)
    return each and not any(_named(n, said) for n in rest)


def _review_sections(lines: list[str], items: tuple[QuestionItem, ...]) -> list[str] | None:
    """What a review says of each question: its lines from the one naming it (header or text)
    to the next one's, those names taken out (``None``: a question is not named, in order)."""
    at: list[int] = []
    for it in items:
        want = {squash(n) for n in (it.header, it.text) if n}
        start = at[-1] + 1 if at else 0
        found = next((n for n in range(start, len(lines)) if names_line(lines[n], want)), None)
        if found is None:
            return None
        at.append(found)
    sections = []
    for k, it in enumerate(items):
        said = " ".join(lines[at[k] : at[k + 1] if k + 1 < len(at) else len(lines)])
        for n in (it.header, it.text):
            said = said.replace(n, " ") if n else said
        sections.append(said)
    return sections


def review_mismatch(dialog: Dialog, question: Question, answers: tuple[tuple[int, ...], ...]) -> str | None:
    """Why ``dialog`` is not the form's review showing ``answers`` (each question's chosen rows),
    ``None`` if it is: a review (:func:`notifier.pi.screens.find_review`) where, between the line
    naming each question and the next one's (the last: its list), the options chosen for it are
    named, each whole, and no other option of it."""
    if dialog.variant != "review":
        return "the dialog on screen is not the form's review"
    items = question.items or (question.first,)
    lines = [clean(line) for line in dialog.lines[: len(dialog.lines) - len(dialog.labels)]]
    sections = _review_sections(lines, items)
    if sections is None:
        return "the form's review does not name every question"
    for k, (it, said) in enumerate(zip(items, sections, strict=True)):
        chosen = [(it.options[p].label,) for p in answers[k]]
        others = [(o.label,) for i, o in enumerate(it.options) if i not in answers[k]]
        if not names_alone(said, chosen, others):
            names = ", ".join(repr(clean(c, 40)) for (c,) in chosen)
            return f"the form's review does not show {names} alone for {clean(it.header or it.text, 40)!r}"
    return None


def check_screen(dialog: Dialog, question: Question) -> str | None:
    """Why this dialog is not (or no longer) the untouched dialog of ``question``; ``None`` if it is:
    it shows the question, and exactly the rows this tool draws for it, in its order."""
    if dialog.variant == "list":
        return bound(dialog, question, 0)
    items = question.items or (question.first,)
    item = next((it for it in items if it.show_when is None), items[0])
    if not squash(item.text) or squash(item.text) not in squash(" ".join(dialog.lines)):
        return "the dialog on screen does not show this question"
    if any("Your answer:" in line for line in dialog.lines):
        return "the dialog is in its text editor (answer it in the terminal)"
    if item.options:
        shown, drawn = rows(dialog).texts, drawn_rows(dialog.variant, item)
        if len(shown) != len(drawn) or not all(same_row(a, b) for a, b in zip(shown, drawn, strict=True)):
            return "the dialog on screen does not show this question's options as pi-notifier knows them"
    return None


Items = tuple[QuestionItem, ...]
Got = dict[str, Any]  # a tool result's details (empty: none, or not an object)


def result_mismatch(variant: str, question: Question, done: Plan, text: str, details: object) -> str | None:
    """Why the tool result pi recorded is not the answer ``done`` gave (``None``: it is):
    ``text`` is the result's text, ``details`` its ``details``; read as the tool of ``variant``
    records an answer (:data:`_RECORDS`), else as any tool's text."""
    items = question.items or (question.first,)
    got = details if isinstance(details, dict) else {}
    typed = done.text.strip() if done.text is not None else None
    return _RECORDS.get(variant, _list_record)(items, done, typed, text, got)


def _list_record(items: Items, done: Plan, typed: str | None, text: str, got: Got) -> str | None:
    """A tool whose record is not known: its text holds the text typed, or names the options
    chosen alone (the questions' own words taken out: they may name options themselves)."""
    if typed is not None:
        if squash(typed) in squash(text):
            return None
        return f"pi recorded {clean(text, 80)!r}, which does not hold the text typed"
    said = clean(text)
    for it in items:
        said = said.replace(it.text, " ")
    picked = [it.options[p] for k, it in enumerate(items) for p in done.picks.get(k, [])]
    others = [(o.label, o.value) for it in items for o in it.options if o not in picked]
    if names_alone(said, [(o.label, o.value) for o in picked], others):
        return None
    names = ", ".join(repr(clean(o.label, 40)) for o in picked)
    return f"pi recorded {clean(text, 80)!r}, which does not name {names} alone"


def _question_record(items: Items, done: Plan, typed: str | None, text: str, got: Got) -> str | None:
    if typed is not None:
        return None if got.get("answer") == typed else "pi recorded another text than the one sent"
    (pick,) = done.picks[0]
    ok = text.startswith(f"User selected: {pick + 1}. ") and clean(got.get("answer")) == items[0].options[pick].label
    return None if ok else f"pi recorded {clean(text, 80)!r}, not option {pick + 1}"


def _questionnaire_record(items: Items, done: Plan, typed: str | None, text: str, got: Got) -> str | None:
    answers: list[object] = got["answers"] if isinstance(got.get("answers"), list) else []
    if len(answers) != len(items):
        return "pi recorded another number of answers than were given"
    for i, entry in enumerate(answers):
        a = entry if isinstance(entry, dict) else {}
        if typed is not None:
            if not a.get("wasCustom") or a.get("label") != typed:
                return "pi recorded another text than the one sent"
        elif a.get("wasCustom") or a.get("index") != done.picks[i][0] + 1:
            return f"pi recorded another answer for question {i + 1} than option {done.picks[i][0] + 1}"
    return None


def _pi_ask_record(items: Items, done: Plan, typed: str | None, text: str, got: Got) -> str | None:
    if got.get("status") != "submitted":
        return "pi-ask did not record the form as submitted"
    want: list[dict[str, object]] = [
        {"questionId": items[i].key, "selectedValues": [items[i].options[p].value for p in sorted(picks)]}
        for i, picks in sorted(done.picks.items())
        if picks
    ]
    if typed is not None:
        want = [{"questionId": items[0].key, "selectedValues": [], "customText": typed}]
    return None if got.get("answers") == want else "pi-ask recorded other answers than the ones given"


def _dreki_record(items: Items, done: Plan, typed: str | None, text: str, got: Got) -> str | None:
    answers = got["answers"] if isinstance(got.get("answers"), list) else []
    chosen = [[items[i].options[p].value for p in sorted(ps)] for i, ps in sorted(done.picks.items())]
    seen = [
        [o.get("value") for o in a.get("selectedOptions") or [] if isinstance(o, dict)] if isinstance(a, dict) else None
        for a in answers
    ]
    return None if seen == chosen else "the questionnaire recorded other answers than the ones given"


# How each known tool records an answer (by the layout read); any other: :func:`_list_record`.
_RECORDS = {
    "question": _question_record,
    "questionnaire": _questionnaire_record,
    "pi-ask": _pi_ask_record,
    "dreki": _dreki_record,
}
