"""Answering by keys into the tmux pane where pi runs (when that pi has no companion channel).

Nothing is typed unless, just before, (1) the session file still has this tool call unanswered,
(2) exactly one running pi is this session's and it runs in tmux, and (3) its pane shows this very
dialog, untouched, with the rows this tool draws. Then the plan is driven one key at a time, each
bound to this question (:mod:`notifier.actions.answer_keys`), and what pi recorded is checked
against the answer given.

Each key is sent by tmux only if the pane still shows, line for line, the dialog of the look it
was checked against, in the same step of the tmux server as the key (``if-shell -F`` on the
pane's own lines, tmux >= 3.2): no other client's key comes between the check and the key. What
no tool can close is a key pi has already read but not yet drawn the effect of; that is why
the companion channel, bound to its dialog, is preferred wherever a pi has it.
"""

from __future__ import annotations

import time
from collections.abc import Sequence

from notifier.actions.answer_keys import Find, Seen, confirm, drive, finder, plan_for, unreadable, usage
from notifier.actions.answer_session import Answered, SessionFile
from notifier.actions.goto import Refused, resume_advice
from notifier.companion import announced_sessions
from notifier.core.model import Question, SessionView
from notifier.core.text import clean
from notifier.pi.answer_checks import check_screen
from notifier.pi.keymaps import Step
from notifier.sessions import EngineOptions
from notifier.system.locate import Unmatched, locate_one
from notifier.system.tmux import (
    SHOWING_SINCE,
    TmuxPane,
    capture,
    load_buffer,
    paste,
    send_if,
    send_keys,
    showing,
    tmux,
    unread_input,
    version,
)


def look(pane: TmuxPane, find: Find) -> Seen:
    """A fresh capture of the pane: the question's dialog on it, and the tmux condition that
    holds while the pane still shows that dialog's every line where it was."""
    at = time.monotonic()
    screen = capture(pane)
    dialog = find(screen) if screen is not None else None
    if dialog is None:
        return Seen(None, None, at)
    assert screen is not None
    return Seen(dialog, showing(screen.splitlines(), range(dialog.top, dialog.top + len(dialog.raw))), at)


def send(pane: TmuxPane, step: Step, seen: Seen) -> bool:
    """The step's key (or paste) into the pane, only onto the screen ``seen`` (False: the pane
    no longer shows it; nothing was sent). Refused when tmux failed."""
    checked = (version() or (0, 0)) >= SHOWING_SINCE and isinstance(seen.proof, str)
    if not checked:  # an older tmux: sent right after the look, unchecked in between
        ok = paste(pane, step.paste) if step.paste is not None else send_keys(pane, step.keys)
        if not ok:
            raise Refused(f"could not send keys to tmux pane {clean(pane.pane)}")
        return True
    assert isinstance(seen.proof, str)
    buffer = load_buffer(pane, step.paste) if step.paste is not None else None
    if step.paste is not None and buffer is None:
        raise Refused(f"could not paste into tmux pane {clean(pane.pane)}")
    sent = send_if(pane, seen.proof, step.keys, buffer)
    if sent is not True and buffer is not None:
        tmux(pane.socket, "delete-buffer", "-b", buffer)
    if sent is None:
        raise Refused(f"could not send keys to tmux pane {clean(pane.pane)}")
    return sent


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
    usage(question, choices, text)  # bad usage shows before anything else
    session = SessionFile(options, view.ref.key)
    if not session.pending(question.tool_call_id):
        raise Refused("the question is no longer waiting (answered or cancelled meanwhile); nothing was typed")

    # Keys go only to the one pi the evidence gives this session to: never to a neighbour in
    # the same folder (its own session among ``neighbours``), never when two could be it.
    location = locate_one(view, neighbours=neighbours, announced=announced_sessions())
    if isinstance(location, Unmatched):
        raise Refused(location.reason if location.ambiguous else f"{location.reason}; {resume_advice(view)}")
    if location.tmux is None:
        raise Refused("this pi does not run in tmux, so keys cannot be delivered: use pi-notifier goto")
    pane = location.tmux

    screen = capture(pane)
    found = finder(question, screen) if screen is not None else None
    if found is None:
        raise unreadable(question, f"in tmux pane {clean(pane.pane)}")
    find, dialog = found
    reason = check_screen(dialog, question)
    if reason:
        raise Refused(f"{reason}; nothing was typed")
    steps = plan_for(dialog, question, choices, text)
    typed = drive(lambda: look(pane, find), lambda step, seen: send(pane, step, seen), question, steps, session)
    tty = location.tty
    return confirm(
        session, question, dialog.variant, steps, typed, result_timeout,
        settled=lambda: tty is None or unread_input(tty) in (0, None),
    )  # fmt: skip
