"""Answering by keys into the tmux pane where pi runs (when that pi has no companion channel).

Keys are blind: if the dialog has closed they land in pi's prompt editor. So nothing is typed
unless, just before, (1) the session file still has this tool call unanswered and (2) the pane
shows this very dialog, untouched (its question, its options, the cursor on the first option).
Multi-step plans re-check the dialog between steps. Afterwards the answer is confirmed from the
session file (with a deadline).
"""

from __future__ import annotations

from notifier.app.answer_session import GUESS, STEP_TIMEOUT_S, Answered, SessionFile, recorded, wait_until
from notifier.app.goto import Refused, resume_hint
from notifier.core.model import Question, SessionView
from notifier.core.text import clean
from notifier.engine.options import EngineOptions
from notifier.pi.keymaps import Dialog, Step, Unsupported, check_screen, find_dialog, plan
from notifier.system.locate import locate_sessions
from notifier.system.tmux import TmuxPane, capture, tmux


def dialog_of(pane: TmuxPane, tool: str) -> Dialog | None:
    screen = capture(pane)
    return find_dialog(screen, tool) if screen is not None else None


def send(pane: TmuxPane, step: Step) -> bool:
    if step.literal is not None:
        return tmux(pane.socket, "send-keys", "-t", pane.pane, "-l", step.literal) is not None
    return tmux(pane.socket, "send-keys", "-t", pane.pane, *step.keys) is not None


def by_tmux(
    options: EngineOptions,
    view: SessionView,
    question: Question,
    choices: list[str],
    text: str | None,
    result_timeout: float,
) -> Answered:
    """Type the answer into the pane of the pi that has this session (Refused / Unsupported / UsageError)."""
    if question.tool not in GUESS:
        raise Unsupported(
            f"no key map for the {clean(question.tool, 40)} tool: answer it in the terminal (pi-notifier goto)"
        )
    plan(GUESS[question.tool], question, choices or None, text)  # bad usage shows before anything else

    location = locate_sessions([view], with_windows=False).get(view.ref.key)
    if location is None:
        raise Refused(f"no running pi has this session; resume it with: {clean(resume_hint(view))}")
    if location.tmux is None:
        raise Refused("this pi does not run in tmux, so keys cannot be delivered: use pi-notifier goto")
    pane = location.tmux

    session = SessionFile(options, view.ref.key)
    if not session.pending(question.tool_call_id):
        raise Refused("the question is no longer waiting (answered or cancelled meanwhile)")
    dialog = dialog_of(pane, question.tool)
    if dialog is None:
        raise Refused(f"the question's dialog is not on screen in tmux pane {clean(pane.pane)}")
    reason = check_screen(dialog, question)
    if reason:
        raise Refused(reason)
    steps = plan(dialog.variant, question, choices or None, text)
    if text is not None and not any("Type something." in line for line in dialog.lines):
        raise Unsupported("this dialog has no free-text row")

    for i, step in enumerate(steps):
        if i > 0 and dialog_of(pane, question.tool) is None:
            raise Refused("the dialog closed before the answer was complete; check the terminal")
        if i == 0 and not session.pending(question.tool_call_id):  # last look right before typing
            raise Refused("the question is no longer waiting (answered or cancelled meanwhile)")
        if not send(pane, step):
            raise Refused(f"tmux could not send keys to pane {clean(pane.pane)}")
        if step.expect is not None:
            expect = clean(step.expect).casefold()[:40]

            def shows(expect: str = expect) -> bool:
                d = dialog_of(pane, question.tool)
                return d is not None and expect in " ".join(d.lines).casefold()

            if not wait_until(shows, STEP_TIMEOUT_S):
                raise Refused("the dialog did not move on as expected; finish it in the terminal")

    return recorded(session, question, result_timeout)
