"""Answering by keys into the tmux pane where pi runs (when that pi has no companion channel).

Nothing is typed unless, just before, (1) the session file still has this tool call unanswered,
(2) exactly one running pi is this session's and it runs in tmux, and (3) its pane shows this very
dialog, untouched, with the rows this tool draws. Then the plan is driven step by checked step
(:mod:`notifier.actions.answer_keys`), and what pi recorded is checked against the answer given.
"""

from __future__ import annotations

from collections.abc import Sequence

from notifier.actions.answer_keys import confirm, drive
from notifier.actions.answer_session import GUESS, Answered, SessionFile
from notifier.actions.goto import Refused, resume_advice
from notifier.companion.channel import announced_sessions
from notifier.core.model import Question, SessionView
from notifier.core.text import clean
from notifier.engine.options import EngineOptions
from notifier.pi.answer_checks import check_screen
from notifier.pi.keymaps import Step, Unsupported, plan
from notifier.pi.screens import Dialog, find_dialog
from notifier.system.locate import Unmatched, locate_one
from notifier.system.tmux import TmuxPane, capture, paste, send_keys


def dialog_of(pane: TmuxPane, tool: str) -> Dialog | None:
    screen = capture(pane)
    return find_dialog(screen, tool) if screen is not None else None


def send(pane: TmuxPane, step: Step) -> bool:
    if step.paste is not None:
        return paste(pane, step.paste)
    return send_keys(pane, step.keys)


def by_tmux(
    options: EngineOptions,
    view: SessionView,
    question: Question,
    choices: list[str],
    text: str | None,
    result_timeout: float,
    neighbours: Sequence[SessionView] = (),
) -> Answered:
    """Type the answer into the pane of the pi that has this session (Refused / Unsupported /
    UsageError); ``neighbours``: the other sessions known (a snapshot's)."""
    if question.tool not in GUESS:
        raise Unsupported(
            f"no key map for the {clean(question.tool, 40)} tool: answer it in the terminal (pi-notifier goto)"
        )
    session = SessionFile(options, view.ref.key)
    if not session.pending(question.tool_call_id):
        raise Refused("the question is no longer waiting (answered or cancelled meanwhile)")
    plan(GUESS[question.tool], question, choices or None, text)  # bad usage shows before anything else

    # Keys go only to the one pi the evidence gives this session to: never to a neighbour in
    # the same folder (its own session among ``neighbours``), never when two could be it.
    location = locate_one(view, neighbours=neighbours, announced=announced_sessions())
    if isinstance(location, Unmatched):
        raise Refused(location.reason if location.ambiguous else f"{location.reason}; {resume_advice(view)}")
    if location.tmux is None:
        raise Refused("this pi does not run in tmux, so keys cannot be delivered: use pi-notifier goto")
    pane = location.tmux

    dialog = dialog_of(pane, question.tool)
    if dialog is None:
        raise Refused(f"the question's dialog is not on screen in tmux pane {clean(pane.pane)}")
    reason = check_screen(dialog, question)
    if reason:
        raise Refused(reason)
    steps = plan(dialog.variant, question, choices or None, text)
    if not session.pending(question.tool_call_id):  # last look right before typing
        raise Refused("the question is no longer waiting (answered or cancelled meanwhile)")
    drive(lambda: dialog_of(pane, question.tool), lambda step: send(pane, step), steps, f"tmux pane {clean(pane.pane)}")
    return confirm(session, question, dialog.variant, steps, result_timeout)
