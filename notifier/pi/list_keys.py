"""The keys that answer a question in any dialog drawn as a list (pure): read off the screen
(:func:`notifier.pi.screens.find_list`), the highlighted row known by its cursor mark, the keys
move the highlight one row at a time to the chosen row and confirm it there. Each step carries the
row it expects (the driver checks it on the screen before the key: :mod:`notifier.actions.answer_keys`).
"""

from __future__ import annotations

from dataclasses import replace

from notifier.core.model import Question
from notifier.pi.keymaps import Plan, Step, Unsupported, UsageError, resolve
from notifier.pi.screens import Rows


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
        return _plan_text(text, shown, toggles, toggle)
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
        if not _boxed(shown):
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


def _boxed(shown: Rows) -> bool:
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
    if not _boxed(shown):
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


def _plan_text(text: str, shown: Rows, toggles: bool, toggle: str | None) -> Plan:
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
