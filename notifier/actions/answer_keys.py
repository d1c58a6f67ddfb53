"""Driving a question tool's dialog with keys, step by checked step, whatever carries the keys (tmux
or the companion extension): :func:`drive` checks the screen before every step of the plan
(:mod:`notifier.pi.keymaps`) and sends nothing once it does not hold; :func:`confirm` then checks
that what pi recorded is the answer given.

Keys are blind: if the dialog has moved or closed they land elsewhere. So the confirming key of
each step is sent only once the row the plan expects is the highlighted one on screen, and the
final one only once the dialog's review shows the answers chosen.
"""

from __future__ import annotations

from collections.abc import Callable

from notifier.actions.answer_session import (
    STEP_TIMEOUT_S,
    Answered,
    SessionFile,
    recorded,
    tool_result,
    wait_until,
)
from notifier.actions.goto import Refused
from notifier.core.model import Question
from notifier.core.text import clean
from notifier.pi.answer_checks import result_mismatch
from notifier.pi.keymaps import Plan, Step
from notifier.pi.screens import Dialog, rows, same_row

Read = Callable[[], "Dialog | None"]
Send = Callable[[Step], bool]


def unready(dialog: Dialog, step: Step) -> str | None:
    """Why ``step`` may not be sent to ``dialog`` yet (``None``: it may)."""
    for text in step.shows:
        if not dialog.shows(text):
            return f"the dialog does not show {clean(text, 60)!r}"
    if step.cursor is None:
        return None
    now = rows(dialog)
    if now.cursor is None:
        return "no row of the dialog is highlighted"
    shown = now.texts[now.cursor]
    if now.cursor != step.cursor or (step.cursor_text is not None and not same_row(shown, step.cursor_text)):
        want = clean(step.cursor_text, 60) if step.cursor_text is not None else f"row {step.cursor + 1}"
        return f"the dialog's cursor was moved: the highlighted row is {clean(shown, 60)!r}, not {want!r}"
    return None


def _wait_ready(read: Read, step: Step) -> str | None:
    """Wait until ``step`` may be sent: ``None`` then, or why it still may not after a few seconds."""
    reason: str | None = None

    def ready() -> bool:
        nonlocal reason
        dialog = read()
        reason = "the dialog closed before the answer was complete" if dialog is None else unready(dialog, step)
        return reason is None

    return None if wait_until(ready, STEP_TIMEOUT_S) else reason


def drive(read: Read, send: Send, plan: Plan, where: str) -> None:
    """Send each step once the dialog is ready for it (Refused, with what was seen, when it is not
    within a few seconds, or when the dialog closed or did not move on)."""
    for i, step in enumerate(plan.steps):
        reason = _wait_ready(read, step)
        if reason is not None:
            note = "; nothing was typed" if i == 0 else "; part of the answer was typed: finish it in the terminal"
            raise Refused(reason + note)
        if not send(step):
            raise Refused(f"could not send keys to {where}")
        if step.expect is not None:
            expect = step.expect

            def moved(expect: str = expect) -> bool:
                dialog = read()
                return dialog is not None and dialog.shows(expect)

            if not wait_until(moved, STEP_TIMEOUT_S):
                raise Refused("the dialog did not move on as expected; finish it in the terminal")


def confirm(session: SessionFile, question: Question, variant: str, plan: Plan, timeout: float) -> Answered:
    """Wait for pi to record the answer, and check it is the one given (Refused if not)."""
    done = recorded(session, question, timeout)
    if done.outcome != "answered":
        return done
    result = tool_result(session.path, question.tool_call_id)
    why = "pi's record of the answer could not be read back" if result is None else None
    why = why or result_mismatch(variant, question, plan, *result)  # type: ignore[misc]
    if why:
        raise Refused(f"{why}: check the terminal")
    return done
