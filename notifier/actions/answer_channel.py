"""Answering through the companion extension, when the pi that asked has it: exact for select / confirm /
input dialogs, keys forwarded to a custom dialog such as a question tool's (checked against its mirrored
screen as the tmux path checks the pane), never an editor.
"""

from __future__ import annotations

import os
import time

from notifier.actions.answer_keys import Seen, confirm, drive, finder, plan_for, unreadable, usage
from notifier.actions.answer_session import Answered, SessionFile
from notifier.actions.goto import Refused
from notifier.companion import Dialog as ExtDialog
from notifier.companion import all_open_dialogs, answer_dialog
from notifier.core.board import startup_key
from notifier.core.model import Option, Question, QuestionItem, SessionView
from notifier.core.text import clean
from notifier.pi.answer_checks import check_screen
from notifier.pi.keymaps import Step, Unsupported, UsageError, resolve
from notifier.sessions import EngineOptions


def channel_dialog(session_file: str, question: Question) -> tuple[str, ExtDialog] | None:
    """The open extension dialog that is this question (its socket too), if its pi has one."""
    real = os.path.realpath(session_file)
    for sock, d in all_open_dialogs():
        if d.session_file is None and d.pid is not None:  # a start-up dialog: its pi is the session
            if startup_key(d.pid) != session_file:
                continue
        elif not d.session_file or os.path.realpath(d.session_file) != real:
            continue
        if (
            question.kind == "dialog"
            and d.kind == question.dialog
            and (d.tool_call_id or d.id) == question.tool_call_id
        ):
            return sock, d
        if question.kind == "question" and d.kind != "editor" and d.tool_call_id == question.tool_call_id:
            return sock, d  # (its own dialog: a custom component, or the select / input it falls back to)
    return None


def dialog_value(d: ExtDialog, choices: list[str], text: str | None) -> str | bool:
    """The exact value a select / confirm / input dialog gets for CHOICE or --text (UsageError)."""
    if d.kind == "input":
        if text is None:
            raise UsageError("this dialog asks for a text: give it with --text TEXT")
        return text
    if text is not None or len(choices) != 1:
        raise UsageError(f"this {d.kind} dialog takes one choice, not --text")
    choice = choices[0]
    if d.kind == "confirm":
        yes, no = ("yes", "y", "true", "1"), ("no", "n", "false", "2")
        if choice.strip().lower() in yes + no:
            return choice.strip().lower() in yes
        raise UsageError("this confirm dialog takes yes or no")
    options = list(d.options or ())
    # pi's select draws every option as a row, in order: the same numbering and the same
    # refusal of a number that is also another row's label as for a question tool
    item = QuestionItem("", options=tuple(Option(clean(o)) for o in options))
    return options[resolve(item, choice if choice.startswith('#') else clean(choice))]


def by_channel(
    options: EngineOptions,
    view: SessionView,
    question: Question,
    choices: list[str],
    text: str | None,
    result_timeout: float,
) -> Answered | None:
    """Answer through the extension; ``None`` when this pi has no channel for the question."""
    found = channel_dialog(view.ref.key, question)
    if found is None:
        if question.kind == "dialog":
            raise Refused("the dialog is no longer open (answered or cancelled meanwhile)")
        return None
    sock, d = found
    if d.kind == "editor":
        raise Unsupported(
            "an editor dialog cannot be answered from here: answer it in the terminal (pi-notifier goto)"
        )
    if d.remote is None:
        raise Unsupported("this pi only announces its dialogs: answer it in the terminal (pi-notifier goto)")
    if d.kind == "custom":
        return _by_keys(options, view, question, sock, d, choices, text, result_timeout)
    value = dialog_value(d, choices, text)
    result = answer_dialog(sock, d.id, value)
    if not result.ok:
        raise Refused(clean(result.error or "pi did not take the answer", 200))
    said = ("Yes" if value else "No") if isinstance(value, bool) else value
    return Answered(question, "answered", said)


def _keys_of(step: Step) -> list[str]:
    if step.paste is not None:  # pasted whole, as a terminal pastes: never taken for key names
        return [f"\x1b[200~{step.paste}\x1b[201~"]
    return list(step.keys)


def _by_keys(
    options: EngineOptions,
    view: SessionView,
    question: Question,
    sock: str,
    d: ExtDialog,
    choices: list[str],
    text: str | None,
    result_timeout: float,
) -> Answered:
    """A question tool's own dialog: the same checked plan as in tmux, its keys forwarded to the
    component, its mirrored screen checked instead of the pane's."""
    usage(question, choices, text)  # bad usage shows before anything else
    session = SessionFile(options, view.ref.key)
    if not session.pending(question.tool_call_id):
        raise Refused("the question is no longer waiting (answered or cancelled meanwhile); nothing was typed")
    found = finder(question, "\n".join(d.screen or ()))
    if found is None:
        raise unreadable(question, "in pi's dialog")
    find, dialog = found
    reason = check_screen(dialog, question)
    if reason:
        raise Refused(f"{reason}; nothing was typed")
    steps = plan_for(dialog, question, choices, text)

    def look() -> Seen:
        at = time.monotonic()
        screen = _screen(sock, d.id)
        return Seen(find("\n".join(screen)) if screen is not None else None, None, at)

    def send(step: Step, seen: Seen) -> bool:
        # (to this dialog's id: keys never reach another dialog, whatever pi shows)
        result = answer_dialog(sock, d.id, keys=_keys_of(step))
        if not result.ok:
            raise Refused(f"pi did not take the keys: {clean(result.error, 200)}")
        return True

    typed = drive(look, send, question, steps, session)
    return confirm(session, question, dialog.variant, steps, typed, result_timeout)


def _screen(sock: str, dialog_id: str) -> tuple[str, ...] | None:
    for path, d in all_open_dialogs():
        if path == sock and d.id == dialog_id:
            return d.screen
    return None
