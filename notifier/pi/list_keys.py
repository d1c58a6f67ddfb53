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
    question: Question, choices: list[str] | None, text: str | None, shown: Rows, toggles: bool = False
) -> Plan:
    """The keys that answer a question of one single-choice item in a dialog drawn as a list,
    read off the screen (``shown``: its rows in screen order, the highlighted one): Up or Down
    one row at a time from the highlighted row to the chosen one, each bound to the row it
    leaves, then Enter on the chosen row. ``toggles``: the dialog says Space selects (Enter
    submits what is ticked): Space on the chosen row while no box is ticked, then Enter once its
    box alone reads ticked."""
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
        raise Unsupported("a multi-select list in a layout pi-notifier does not know: answer it in the terminal")
    if len(choices) != 1:
        raise UsageError("this question takes one answer (it is not multi-select)")
    label = item.options[resolve(item, choices[0])].label
    if shown.cursor is None:
        raise Unsupported(
            "no row of this dialog is marked as the highlighted one (it may show it by colour alone):"
            " answer it in the terminal"
        )
    at, chosen = shown.cursor, shown.texts.index(label)
    step = 1 if chosen > at else -1
    steps = [
        Step(keys=("Down" if step > 0 else "Up",), cursor=i, cursor_text=shown.texts[i])
        for i in range(at, chosen, step)
    ]
    if toggles:
        if None in shown.checked or len(shown.checked) != len(shown.texts):
            raise Unsupported(
                "this dialog says Space selects, but its rows show no check box to read back: answer it in the terminal"
            )
        steps.append(Step(keys=("Space",), cursor=chosen, cursor_text=label, checked=()))
        steps.append(Step(keys=("Enter",), cursor=chosen, cursor_text=label, checked=(chosen,)))
    else:
        steps.append(Step(keys=("Enter",), cursor=chosen, cursor_text=label))
    return Plan(steps, {0: [resolve(item, choices[0])]})
