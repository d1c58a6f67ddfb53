"""The keys that answer a question in any dialog drawn as a list (pure): read off the screen
(:func:`notifier.pi.screens.find_list`), the highlighted row known by its cursor mark, the keys
move the highlight one row at a time to the chosen row and confirm it there. Each step carries the
row it expects (the driver checks it on the screen before the key: :mod:`notifier.actions.answer_keys`).
"""

from __future__ import annotations

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
) -> Plan:
    """The keys that answer a question of one item in a dialog drawn as a list, read off the
    screen (``shown``: its rows in screen order, the highlighted one): Up or Down one row at a
    time from the highlighted row to the chosen one, each bound to the row it leaves, then Enter
    on the chosen row. ``toggles``: the dialog says Space selects (Enter submits what is ticked):
    Space on the chosen row while no box is ticked, then Enter once its box alone reads ticked.
    A multi-select question: ``toggle`` is the key its help line says ticks a row, ``submits``
    that Enter submits; each chosen row is ticked in screen order, every box read back after each
    key, then Enter once exactly the chosen boxes read ticked."""
    items = question.items or (question.first,)
    if text is not None:
        raise Unsupported("a typed answer needs the tool's own layout, which pi-notifier does not know: type it there")
    if not choices:
        raise UsageError("give the answer: an option number or label")
    if len(items) != 1:
        raise Unsupported(
            f"a form of {len(items)} questions in a layout pi-notifier reads only as a list: answer it there"
        )
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
    return None not in shown.checked and len(shown.checked) == len(shown.texts)


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
