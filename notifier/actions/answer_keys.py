"""Driving a question tool's dialog with keys, one checked key at a time, whatever carries the keys
(tmux or the companion extension): :func:`drive` binds every key to the question it is for and
stops at once when that no longer holds; :func:`confirm` then checks that what pi recorded is that
question's answer, and that nothing was recorded for a question asked after it.

Keys are blind: once pi has moved on to another question, a key lands there, however alike the two
look. So before each key, on a fresh look at the screen, the dialog must still be this question's
(its text and its rows: :func:`notifier.pi.answer_checks.bound`) in the state the plan expects (the
highlighted row the chosen one before a confirming key), and the session file must still have this
call unanswered with no question asked nor tool started after it. The look is handed to the carrier, which sends
the key only onto that very screen (tmux checks it in the same step as it sends). Nothing waits
for a dialog to come back: the only wait is for the dialog to show what this question's own last
key does, and any look that shows something else ends the answer, saying what was typed.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from typing import Protocol

from notifier.actions.answer_session import (
    GUESS,
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
from notifier.pi.answer_checks import bound, result_mismatch, review_mismatch
from notifier.pi.keymaps import Plan, Step, Unsupported, plan
from notifier.pi.list_keys import plan_list
from notifier.pi.screens import (
    Dialog,
    Rows,
    find_dialog,
    find_list,
    find_review,
    input_open,
    readable_help,
    reviews,
    rows,
    same_row,
    shows_text,
    squash,
    submit_row,
)

log = logging.getLogger(__name__)
SETTLE_TIMEOUT_S = 1.0  # how long pi may take to read the keys typed, before the last check
LATER_S = 0.5  # how long the next question may take to show that a key reached it


@dataclass(frozen=True)
class Seen:
    """One look at the screen: the dialog found on it (``None``: none), what the carrier needs to
    send a key only onto this very screen (tmux: the lines to check; the companion: nothing, its
    keys go to the dialog's id), and when the look began (``time.monotonic()``)."""

    dialog: Dialog | None
    proof: object = None
    at: float = 0.0


class Waits(Protocol):
    """What the driver asks of the session file before each key (:class:`SessionFile`)."""

    def waits_alone(self, call_id: str) -> str | None: ...


Look = Callable[[], Seen]
# (step, the look it was checked against) → True sent; False: the screen was no longer that look
# (nothing sent). Raises Refused when the carrier failed.
Send = Callable[[Step, Seen], bool]


@dataclass
class Typed:
    """What was typed for a question, and how long each key's look was before the key (seconds)."""

    keys: list[str] = field(default_factory=list)
    windows: list[float] = field(default_factory=list)

    def said(self) -> str:
        return ", ".join(self.keys) if self.keys else "nothing"


Find = Callable[[str], "Dialog | None"]


def finder(question: Question, screen: str) -> tuple[Find, Dialog] | None:
    """How to read this question's dialog off a screen, and the dialog on ``screen``: its tool's
    own layout where pi-notifier knows it, else any list that shows the question's text and its
    options on rows of their own (:func:`notifier.pi.screens.find_list`). ``None``: neither."""
    own = find_dialog(screen, question.tool) if question.tool in GUESS else None
    if own is not None:
        return (lambda s: find_dialog(s, question.tool)), own
    items = question.items or (question.first,)
    if any(not it.options for it in items):
        return None

    names = tuple(tuple(n for n in (it.header, it.text) if n) for it in items)

    def find(s: str) -> Dialog | None:  # (a form: the list of whichever of its questions is shown, or its review)
        for it in items:
            listed = find_list(s, it.text, tuple(o.label for o in it.options))
            if listed is not None:
                return listed
        return find_review(s, names) if len(items) > 1 else None

    first = find(screen)
    return None if first is None else (find, first)


def unreadable(question: Question, where: str) -> Refused:
    """Why no dialog of the question could be read (``finder`` found none), and what to do."""
    if len(question.items) > 1:
        return Refused(
            f"the form of {len(question.items)} questions {where} is not drawn in a layout pi-notifier knows"
            " (its first question as a list of its options): answer it in the terminal (pi-notifier goto);"
            " nothing was typed"
        )
    return Refused(
        f"the question's dialog is not on screen {where} as its tool's layout or as a list of its options;"
        " nothing was typed"
    )


def usage(question: Question, choices: list[str], text: str | None) -> None:
    """Bad usage (UsageError) or an answer no screen can take (Unsupported), before any look."""
    if question.tool in GUESS:
        plan(GUESS[question.tool], question, choices or None, text)
        return
    items = question.items or (question.first,)
    if any(not it.options for it in items):
        raise Unsupported(
            f"the {clean(question.tool, 40)} tool's dialog is not one pi-notifier can read (a question"
            " without options, in a layout it does not know): answer it in the terminal (pi-notifier goto)"
        )
    labels = tuple(o.label for o in items[0].options)
    # (the usage alone: as if the dialog drew boxes and said how to tick and submit)
    drawn = Rows((*labels, "Other"), 0, (False,) * (len(labels) + 1), len(labels))
    plan_list(question, choices or None, text, drawn, toggle="Space", submits=True, usage_only=True)


def plan_for(dialog: Dialog, question: Question, choices: list[str], text: str | None) -> Plan:
    """The keys for the dialog as read: its tool's key map, or the list driver's."""
    if dialog.variant == "review":
        raise Unsupported("the form is at its review step: answer it in the terminal (pi-notifier goto)")
    if dialog.variant == "list":
        if len(question.items) > 1 and not shows_text(dialog.lines, question.items[0].text):
            raise Unsupported("the form is not at its first question: answer it in the terminal (pi-notifier goto)")
        if text is not None and not readable_help(dialog):
            raise Unsupported(
                "this dialog draws no help line below its rows that pi-notifier can read, so whether its"
                " free-text row opens an input cannot be known: answer it in the terminal; nothing was typed"
            )
        return plan_list(
            question, choices or None, text, rows(dialog), dialog.toggles, dialog.toggle_key, dialog.submits,
            review=reviews(dialog),
        )  # fmt: skip
    return plan(dialog.variant, question, choices or None, text)


def unready(dialog: Dialog, step: Step) -> str | None:
    """Why ``step`` may not be sent to ``dialog`` (this question's) in the state it is in
    (``None``: it may)."""
    for text in step.shows:
        if not dialog.shows(text):
            return f"the dialog does not show {clean(text, 60)!r}"
    if step.typing is not None and input_open(dialog) != step.typing:
        return "the dialog shows no open input for the text" if step.typing else "the dialog's input is still open"
    # (the text read in the open input below the rows, else wherever the dialog shows it)
    where = dialog.below if step.typing else f"{' '.join(dialog.lines)} {dialog.below}"
    if step.typed is not None and squash(step.typed) not in squash(where):
        return "the dialog does not show the text typed"
    now = rows(dialog)
    if step.checked is not None:
        ticked = tuple(i for i, on in enumerate(now.checked) if on)
        boxes = [on for i, on in enumerate(now.checked) if i != now.other]  # (a free-text row may have none)
        if None in boxes or len(now.checked) != len(now.texts):
            return "the dialog's rows show no check box to read"
        if ticked != step.checked:
            shown = ", ".join(repr(clean(now.texts[i], 40)) for i in ticked) or "none"
            return f"the dialog's selection is not what this answer expects (ticked: {shown})"
    # (a form's review: Enter only on the row that submits it)
    if step.answers is not None and (now.cursor is None or not submit_row(now.texts[now.cursor])):
        return "the highlighted row of the form's review is not the one that submits it"
    if step.cursor is None:
        return None
    if now.cursor is None:
        return "no row of the dialog is highlighted"
    shown = now.texts[now.cursor]
    if now.cursor != step.cursor or (step.cursor_text is not None and not same_row(shown, step.cursor_text)):
        want = clean(step.cursor_text, 60) if step.cursor_text is not None else f"row {step.cursor + 1}"
        return f"the dialog's cursor was moved: the highlighted row is {clean(shown, 60)!r}, not {want!r}"
    return None


def _not_ours(seen: Seen, question: Question, step: Step) -> str | None:
    """Why the dialog seen is not ``question``'s at ``step`` (gone, or another's)."""
    if seen.dialog is None:
        return "the question's dialog is no longer on screen"
    if step.answers is not None:
        return review_mismatch(seen.dialog, question, step.answers)
    return bound(seen.dialog, question, step.item, step.shows if step.item is None else ())


def _name(step: Step) -> str:
    if step.paste is not None:
        return f"the text ({len(step.paste)} characters, pasted)"
    return "+".join(step.keys)


def _stopped(reason: str, typed: Typed, gone: bool) -> Refused:
    """The one line when an answer stops: why, and exactly what was typed for it."""
    if not typed.keys:
        return Refused(f"{reason}; nothing was typed")
    if gone:
        return Refused(
            f"{reason}; typed for this question before: {typed.said()}. The last of those keys may have"
            " gone to what pi shows now: check the terminal"
        )
    return Refused(f"{reason}; typed for this question: {typed.said()}, then stopped: finish it in the terminal")


def drive(look: Look, send: Send, question: Question, plan: Plan, session: Waits) -> Typed:
    """Type the plan's keys, each bound to ``question`` (see the module's docstring); Refused,
    saying what was typed, as soon as a look or the file shows that a key may not be typed."""
    typed = Typed()
    seen = look()
    for i, step in enumerate(plan.steps):
        for _ in range(3):  # (a look the carrier found changed by the time of the key: look again)
            gone = _not_ours(seen, question, step)
            if gone is not None:
                raise _stopped(gone, typed, gone=bool(typed.keys))
            assert seen.dialog is not None
            reason = unready(seen.dialog, step) or session.waits_alone(question.tool_call_id)
            if reason is not None:
                raise _stopped(reason, typed, gone=False)
            try:
                if (not step.keys and step.paste is None) or send(step, seen):
                    break
            except Refused as exc:
                raise _stopped(str(exc), typed, gone=False) from None
            seen = look()
        else:
            raise _stopped("the screen kept changing between the look and the key", typed, gone=False)
        if step.keys or step.paste is not None:
            typed.keys.append(_name(step))
            typed.windows.append(time.monotonic() - seen.at)
        if i + 1 < len(plan.steps):
            seen = _after(look, question, step, plan.steps[i + 1], typed)
    return typed


def _after(look: Look, question: Question, step: Step, following: Step, typed: Typed) -> Seen:
    """The first look after ``step``'s key that shows its effect (``step.expect``, and the state
    ``following`` needs). A look that still shows the question as it was before the key (pi has
    not drawn it yet) is looked again; Refused at once when a look shows the question's dialog
    gone or another's, or after a few seconds without the key's effect."""
    deadline = time.monotonic() + STEP_TIMEOUT_S
    delay = 0.001
    while True:
        seen = look()
        gone = _not_ours(seen, question, following)
        if gone is None:
            assert seen.dialog is not None
            moved = step.expect is None or seen.dialog.shows(step.expect)
            if moved and unready(seen.dialog, following) is None:
                return seen
        elif _not_ours(seen, question, step) is not None:  # neither as before the key nor after it
            log.debug("after %s: %s; the dialog seen: %s", typed.said(), gone, seen.dialog and seen.dialog.lines)
            raise _stopped(gone, typed, gone=True)
        if time.monotonic() > deadline:
            raise _stopped("the dialog did not move on as expected", typed, gone=False)
        time.sleep(delay)
        delay = min(delay * 2, 0.05)


def confirm(
    session: SessionFile,
    question: Question,
    variant: str,
    plan: Plan,
    typed: Typed,
    timeout: float,
    settled: Callable[[], bool] | None = None,
) -> Answered:
    """Wait for pi to record an end of the question; check that it is the answer given (Refused
    if not), and that it recorded nothing for another question meanwhile (else a note says so).
    ``settled``: keys that could reach another dialog (tmux's) were typed; true once pi has read
    them all."""
    try:
        done = recorded(session, question, timeout)
    except Refused as exc:
        raise Refused(f"{exc} (typed: {typed.said()})") from None
    if settled is not None:
        # A key read after pi moved on answers (or moves) the next question: once pi has read
        # every key typed, the next question is given a moment to show whether one reached it.
        wait_until(settled, SETTLE_TIMEOUT_S)
        wait_until(lambda: bool(session.others_ended(question.tool_call_id)), LATER_S)
    # A question that ended meanwhile may have had a key of this answer: said plainly.
    others = session.others_ended(question.tool_call_id)
    names = ", ".join(repr(clean(t.question.text, 60)) for t in others[:2])
    note = (
        f"pi also recorded an answer to {names} while this one was typed ({typed.said()}): unless that was"
        " answered in the terminal, a key meant for this question may have gone there: check the terminal"
        if others
        else None
    )
    if done.outcome != "answered":
        return replace(done, note=note)
    result = tool_result(session.path, question.tool_call_id)
    why = "pi's record of the answer could not be read back" if result is None else None
    why = why or result_mismatch(variant, question, plan, *result)  # type: ignore[misc]
    if why:
        raise Refused(f"{why} (typed: {typed.said()})" + (f"; {note}" if note else ": check the terminal"))
    log.debug("answered %s: keys %s, look-to-key %s s", question.tool_call_id, typed.keys, typed.windows)
    return replace(done, note=note)
