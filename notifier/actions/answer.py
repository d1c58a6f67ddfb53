"""``pi-notifier answer``: answer a waiting pi's question from here, one way: the keys of a plan
(:mod:`notifier.pi.keys`), each bound to the question it is for, carried by the companion
extension when that pi has it (exact values for select / confirm / input dialogs; keys to a
custom dialog's id, checked against its mirrored screen), else typed into its tmux pane.

tmux: nothing is typed unless the session file still has this call unanswered, exactly one
running pi is this session's, in tmux, and its pane shows this very dialog, untouched. Each key
is sent only if the pane still shows, line for line, the dialog of the look it was checked
against, in the same step of the tmux server (``if-shell -F``, tmux >= 3.2).

The driver (:func:`drive`): before each key, on a fresh look, the dialog must still be this
question's in the state the plan expects, and the session file must have nothing asked or
started after it; any other look ends the answer, saying what was typed, once looks for a
frame's time (:data:`FRAME_S`) keep showing it (a frame half drawn can read as another question:
its text line not drawn yet). No key is typed meanwhile.
:func:`check_recorded` then checks that what pi recorded is that answer.
"""

from __future__ import annotations

import logging
import os
import re
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, replace
from functools import partial
from typing import Any

from notifier.actions import goto
from notifier.actions.goto import Refused, go, pick, resume_advice
from notifier.companion import (
    CLOSED,
    ExtensionDialog,
    all_open_dialogs,
    announced_sessions,
    answer_dialog,
    hello_of,
    question_of,
)
from notifier.config import Config
from notifier.core.board import startup_key
from notifier.core.codec import question_token
from notifier.core.commands import Answer, Goto
from notifier.core.model import Option, Question, QuestionItem, SessionView, Snapshot, Transition
from notifier.core.text import clean
from notifier.pi.keys import (
    Plan,
    Step,
    Unsupported,
    UsageError,
    check_screen,
    check_usage,
    no_room,
    not_ours,
    opened,
    options_said,
    plan_for,
    resolve,
    unready,
)
from notifier.pi.outcomes import result_text
from notifier.pi.records import result_mismatch
from notifier.pi.screens import Dialog, find_dialog, find_list, find_review, noted, rows, squash
from notifier.sessions import EngineOptions, OneFileReader, engine_options
from notifier.system.locate import Unmatched, locate_one
from notifier.system.tmux import (
    SHOWING_SINCE,
    TmuxPane,
    capture,
    load_buffer,
    send_if,
    showing,
    tmux,
    unread_input,
    version,
)
from notifier.tail import result_entry

# ---- the session file as the judge ----

STEP_TIMEOUT_S = 5.0
RESULT_TIMEOUT_S = 15.0


@dataclass(frozen=True)
class Answered:
    question: Question
    outcome: str | None
    answer: str | None
    note: str | None = None  # something the user should check although this answer was recorded


class AnswerJudge:
    """The session file of the question ``call_id`` being answered, read like the engine reads it,
    then followed as it grows: whether the question still waits alone before each key
    (:meth:`waits_alone`), and how it and the others ended (``resolved``). Refused at the first
    look when the file no longer has the question unanswered."""

    def __init__(self, options: EngineOptions, path: str, call_id: str) -> None:
        self.path, self.call_id = path, call_id
        self.file = OneFileReader(path, options.catalog)
        self.resolved: dict[str, Transition] = {}
        self.later: Question | None = None  # the first question asked after the first look
        self.started: str | None = None  # another tool started after the first look
        self._known = {t.question.tool_call_id for t in self.file.read()}  # the questions of the first look
        view = self.file.view()
        self._tool = view.current_tool if view is not None else None  # the other tool running at the first look
        if self.ended():
            raise Refused("the question is no longer waiting (answered or cancelled meanwhile); nothing was typed")

    def ended(self) -> bool:
        """Whether the file, read again now, has recorded an end of the question: how each
        question ended goes to ``resolved``, the first question asked since the first look to
        ``later``, another tool started to ``started``."""
        for t in self.file.read():
            if t.kind == "resolved":
                self.resolved[t.question.tool_call_id] = t
            elif t.kind == "needs_input" and t.question.tool_call_id not in self._known and self.later is None:
                self.later = t.question
        view = self.file.view()
        tool = view.current_tool if view is not None else None
        if tool is not None and tool != self._tool:
            self.started = tool
        return view is None or all(q.tool_call_id != self.call_id for q in view.pending)

    def waits_alone(self) -> str | None:
        """Why a key may not be typed now (``None``: it may), the file read again first: it
        must still have the question unanswered, and no question asked after it (pi has not
        moved on)."""
        if self.ended():
            return "pi has recorded an end of this question"
        if self.later is not None:
            return f"pi has asked another question since ({clean(self.later.text, 60)!r})"
        if self.started is not None:
            return f"pi has started another tool call since ({clean(self.started, 40)})"
        return None

    def others_ended(self) -> list[Transition]:
        """The other questions that ended since the first look, the file read again first."""
        self.ended()
        return [t for c, t in self.resolved.items() if c != self.call_id]


def polls(timeout: float, delay: float = 0.01, most: float = 0.1) -> Iterator[None]:
    """Now, then again after pauses growing from ``delay`` to ``most``, until ``timeout`` seconds passed."""
    deadline = time.monotonic() + timeout
    while True:
        yield
        if time.monotonic() > deadline:
            return
        time.sleep(delay)
        delay = min(delay * 2, most)


def wait_until(predicate: Callable[[], bool], timeout: float) -> bool:
    return any(predicate() for _ in polls(timeout))


def tool_result(path: str, call_id: str) -> tuple[str, Any] | None:
    """The text and ``details`` of the toolResult pi wrote for ``call_id`` (``None``: none found)."""
    entry = result_entry(path, call_id)
    if entry is None:
        return None
    message = entry["message"]
    return result_text(message.get("content")), message.get("details")


# ---- the driver: one checked key at a time ----

log = logging.getLogger(__name__)
KEYS_READ_TIMEOUT_S = 1.0  # how long pi may take to read the keys typed, before the last check
LATER_S = 0.5  # how long the next question may take to show that a key reached it
# How long a look that would stop an answer must keep saying so: a capture can catch pi halfway
# through drawing a frame (the dialog's help line not yet redrawn below it), which reads as no
# dialog; pi finishes such a frame within milliseconds, a dialog really gone stays gone.
FRAME_S = 0.25


@dataclass(frozen=True)
class Seen:
    """One look at the screen: the dialog found on it (``None``: none), and the tmux condition
    that holds while a pane still shows that dialog's every line where it was (the companion's
    keys go to the dialog's id instead)."""

    dialog: Dialog | None
    proof: str = ""


Look = Callable[[], Seen]
# Why a key may not be typed now, as the session file says (None: it may): AnswerJudge.waits_alone
Waits = Callable[[], "str | None"]
# (step, the look it was checked against) → True sent; False: the screen was no longer that look
# (nothing sent). Raises Refused when the carrier failed.
Send = Callable[[Step, Seen], bool]


def _said(typed: list[str]) -> str:
    return ", ".join(typed) if typed else "nothing"


Find = Callable[[str], "Dialog | None"]


def finder(question: Question, screen: str) -> tuple[Find, Dialog] | None:
    """How to read this question's dialog off a screen, and the dialog on ``screen``: a layout
    known by its help line (:func:`notifier.pi.screens.find_dialog`) showing this question as it
    draws it; else a list of the question's options (:func:`notifier.pi.screens.find_list`),
    inside that known layout's block if there is one; else that known layout (refused with what
    it shows). ``None``: neither."""
    own = find_dialog(screen)
    known = None if own is None else (find_dialog, own)
    if own is not None and (check_screen(own, question) is None or own.shows("Your answer:")):
        return known  # (its editor open: refused as such, never read as a list)
    listed = _list_finder(question)
    find = listed if own is None or listed is None else _inside_own(listed)
    first = find(screen) if find is not None else None
    return known if find is None or first is None else (find, first)


def _list_finder(question: Question) -> Find | None:
    """The question read as a list of its options (a form: whichever of its questions is shown,
    or its review); ``None`` for a question without options."""
    items = question.items or (question.first,)
    if any(not it.options for it in items):
        return None
    names = tuple(tuple(n for n in (it.header, it.text) if n) for it in items)

    def find(s: str) -> Dialog | None:
        for it in items:
            listed = find_list(s, it.text, tuple(o.label for o in it.options))
            if listed is not None:
                return listed
        return find_review(s, names) if len(items) > 1 else None

    return find


def _inside_own(find: Find) -> Find:
    """``find`` within the block of the layout whose help line ends the screen (its lines where
    they are on screen), never in the lines above it."""

    def inside(s: str) -> Dialog | None:
        own = find_dialog(s)
        found = find("\n".join(own.raw)) if own is not None else None
        return None if found is None or own is None else replace(found, top=found.top + own.top)

    return inside


def unreadable(question: Question, where: str) -> Refused:
    """Why no dialog of the question could be read (``finder`` found none), and what to do."""
    items = question.items or (question.first,)
    terminal = ": answer it in the terminal (pi-notifier goto); nothing was typed"
    if any(not it.options for it in items):
        why = f"the question has no options and its dialog {where} is not one pi-notifier can read (a layout"
        return Refused(f"{why} it knows by its help line){terminal}")
    if len(items) > 1:
        why = f"the form of {len(items)} questions {where} is not drawn in a layout pi-notifier knows"
        return Refused(f"{why} (its first question as a list of its options){terminal}")
    return Refused(
        f"the question's dialog is not on screen {where} as a layout pi-notifier knows or as a list of its"
        " options; nothing was typed"
    )


def _stopped(reason: str, typed: list[str], gone: bool, seen: Seen | None) -> Refused:
    """The one line when an answer stops: why, and exactly what was typed for it; the last look
    ``seen`` goes to the debug log (``-v``), whatever the reason."""
    lines = seen.dialog.lines if seen is not None and seen.dialog is not None else None
    log.debug("stopped after %s: %s; the dialog seen: %s", _said(typed), reason, lines)
    if not typed:
        return Refused(f"{reason}; nothing was typed")
    if gone:
        return Refused(
            f"{reason}; typed for this question before: {_said(typed)}. The last of those keys may have"
            " gone to what pi shows now: check the terminal"
        )
    return Refused(f"{reason}; typed for this question: {_said(typed)}, then stopped: finish it in the terminal")


def lasting(look: Look, seen: Seen, why: Callable[[Seen], str | None]) -> tuple[Seen, str | None]:
    """Why ``seen`` stops the answer (``why``), once looks for FRAME_S still say so. The last
    look and the reason (``None``: a look since no longer says so, the first one a frame caught
    mid-draw: its question's text, or the step the key led to, not drawn yet)."""
    reason = why(seen)
    for _ in polls(FRAME_S, 0.002, 0.05):
        if reason is None:
            break
        seen = look()
        reason = why(seen)
    return seen, reason


def drive(look: Look, send: Send, question: Question, plan: Plan, waits: Waits) -> list[str]:
    """Type the plan's keys, each bound to ``question`` (see the module's docstring); Refused,
    saying what was typed, as soon as a look or the file shows that a key may not be typed."""
    typed: list[str] = []
    steps = list(plan.steps)
    seen = look()
    i = 0
    while i < len(steps):
        step = steps[i]
        if seen.dialog is not None and opened(seen.dialog, step) and not_ours(seen.dialog, question, step) is None:
            i += 1  # (the free-text row opened its input as it was highlighted: no key opens it)
            continue
        seen = _send_checked(look, send, question, step, seen, waits, typed)
        if step.paste is not None:
            typed.append(f"the text ({len(step.paste)} characters, pasted)")
        elif step.keys:
            typed.append("+".join(step.keys))
        if i + 1 < len(steps):
            nxt = steps[i + 1]
            # (a form's later question may open with its highlight elsewhere: its keys from there)
            opens = nxt.item is not None and nxt.cursor is not None and step.item not in (None, nxt.item)
            reroute = partial(plan.from_row, nxt.item) if opens and plan.from_row and nxt.item is not None else None
            seen, again = _after(look, question, step, nxt, typed, waits, reroute)
            if again is not None and reroute is not None and nxt.cursor is not None:
                steps[i + 1 : i + 1 + len(reroute(nxt.cursor))] = again
        i += 1
    return typed


def _send_checked(
    look: Look, send: Send, question: Question, step: Step, seen: Seen, waits: Waits, typed: list[str]
) -> Seen:
    """Send ``step`` onto the look ``seen`` once it is this question's dialog in the state the
    step needs and the file has the question waiting alone (a look the carrier found changed by
    the time of the key: looked at again, three times at most); the look it was sent onto."""

    def not_now(s: Seen) -> str | None:
        return not_ours(s.dialog, question, step) or (unready(s.dialog, step) if s.dialog is not None else None)

    for _ in range(3):
        seen, why = lasting(look, seen, not_now)
        gone = not_ours(seen.dialog, question, step)
        if gone is not None:
            raise _stopped(gone, typed, gone=bool(typed), seen=seen)
        reason = why or waits()
        if reason is not None:
            raise _stopped(reason, typed, gone=False, seen=seen)
        try:
            if (not step.keys and step.paste is None) or send(step, seen):
                return seen
        except Refused as exc:
            raise _stopped(str(exc), typed, gone=False, seen=seen) from None
        seen = look()
    raise _stopped("the screen kept changing between the look and the key", typed, gone=False, seen=seen)


def _after(
    look: Look,
    question: Question,
    step: Step,
    following: Step,
    typed: list[str],
    waits: Waits,
    reroute: Callable[[int], list[Step]] | None = None,
) -> tuple[Seen, list[Step] | None]:
    """The first look after ``step``'s key that shows its effect (``step.expect`` and the state
    ``following`` needs, or a form's next question highlighted elsewhere: then its keys from
    that row by ``reroute``). A look without it is looked again, unless the file says pi moved
    on (``waits``: the user answered in the terminal meanwhile); Refused when the
    question's dialog is gone or drawn otherwise for a frame's time (:func:`lasting`), or after a
    few seconds without the key's effect."""
    for _ in polls(STEP_TIMEOUT_S, 0.001, 0.05):
        seen = look()
        gone = not_ours(seen.dialog, question, following)
        if gone is None:
            assert seen.dialog is not None
            moved = step.expect is None or seen.dialog.shows(step.expect)
            if moved and (unready(seen.dialog, following) is None or opened(seen.dialog, following)):
                return seen, None
            row = rows(seen.dialog).cursor
            again = reroute(row) if moved and reroute and row not in (None, following.cursor) else None
            if again and unready(seen.dialog, again[0]) is None:
                return seen, again
        if (moved_on := waits()) is not None:  # (not the key's effect: the user's, in the terminal?)
            raise _stopped(moved_on, typed, gone=True, seen=seen)
        if gone is not None and not_ours(seen.dialog, question, step) is not None:  # neither before nor after

            def neither(s: Seen) -> str | None:
                after = not_ours(s.dialog, question, following)
                return None if after is None or not_ours(s.dialog, question, step) is None else after

            seen, gone = lasting(look, seen, neither)
            if gone is not None:
                raise _stopped(gone, typed, gone=True, seen=seen)
    raise _stopped("the dialog did not move on as expected", typed, gone=False, seen=seen)


def check_recorded(
    judge: AnswerJudge,
    question: Question,
    plan: Plan,
    typed: list[str],
    timeout: float,
    keys_read: Callable[[], bool] | None = None,
) -> Answered:
    """Wait for pi to record an end of the question; check that it is the answer given (Refused
    if not), and that it recorded nothing for another question meanwhile (else a note says so).
    ``keys_read``: keys that could reach another dialog (tmux's) were typed; true once pi has read
    them all."""
    if not wait_until(judge.ended, timeout):
        raise Refused(
            f"keys were sent but the session file recorded no answer within {timeout:g}s (typed: {_said(typed)})"
        )
    ended = judge.resolved.get(question.tool_call_id)
    done = Answered(question, ended.outcome if ended else None, ended.answer if ended else None)
    if keys_read is not None:
        # A key read after pi moved on answers (or moves) the next question: once pi has read
        # every key typed, the next question is given a moment to show whether one reached it.
        wait_until(keys_read, KEYS_READ_TIMEOUT_S)
        wait_until(lambda: bool(judge.others_ended()), LATER_S)
    # A question that ended meanwhile may have had a key of this answer: said plainly.
    others = judge.others_ended()
    names = ", ".join(repr(clean(t.question.text, 60)) for t in others[:2])
    note = None
    if others:
        note = (
            f"pi also recorded an answer to {names} while this one was typed ({_said(typed)}): unless that was"
            " answered in the terminal, a key meant for this question may have gone there: check the terminal"
        )
    if done.outcome != "answered":
        return replace(done, note=note)
    result = tool_result(judge.path, question.tool_call_id)
    why = result_mismatch(question, plan, *result) if result else "pi's record of the answer could not be read back"
    if why:
        raise Refused(f"{why} (typed: {_said(typed)})" + (f"; {note}" if note else ": check the terminal"))
    log.debug("answered %s: keys %s", question.tool_call_id, typed)
    return replace(done, note=note)


# ---- through the companion extension ----


def channel_dialogs(session_file: str, question: Question) -> list[tuple[str, ExtensionDialog]]:
    """The open extension dialogs of this question's call (their sockets too), as its pi shows
    them now: which of them is the question shown is decided by :func:`shown_dialog`."""
    real = os.path.realpath(session_file)
    found = []
    for sock, d in all_open_dialogs():
        if d.session_file is None and d.pid is not None:  # a start-up dialog: its pi is the session
            if startup_key(d.pid) != session_file:
                continue
        elif not d.session_file or os.path.realpath(d.session_file) != real:
            continue
        if question.kind == "dialog":
            ours = d.kind == question.dialog and (d.tool_call_id or d.id) == question.tool_call_id
        else:  # (its own dialog: a custom component, or the select / input it falls back to)
            ours = question.kind == "question" and d.kind != "editor" and d.tool_call_id == question.tool_call_id
        if ours:
            found.append((sock, d))
    return found


def shown_dialog(
    options: EngineOptions, question: Question, found: list[tuple[str, ExtensionDialog]]
) -> tuple[str, ExtensionDialog]:
    """Which of the dialogs open now (``found``) is the question shown (Refused: none, or more
    than one): one tool call may open several dialogs in turn. A dialog on the board is the
    question read from the dialog open now, token for token (its title and options); a question
    tool's own dialog asks the question's text in its title, its words whatever the lines it is
    cut into (a custom component: it is checked on its screen)."""
    if question.kind == "dialog":
        token = question_token(question)
        same = [(s, d) for s, d in found if question_token(question_of(d, question.asked_at, options.catalog)) == token]
        if not same:
            now = question_of(found[0][1], question.asked_at, options.catalog)
            raise Refused(
                f"the dialog open now is not the one shown: it asks {clean(now.text, 80)!r}"
                f"{options_said(now.options)}; nothing was typed"
            )
    else:
        asked = squash(question.first.text)
        same = [(s, d) for s, d in found if d.kind == "custom" or (asked and asked in squash(d.title or ""))]
        if not same:
            title = clean(found[0][1].title or "", 80)
            raise Refused(f"the dialog open now does not ask the question shown (it asks {title!r}); nothing was typed")
    if len(same) > 1:
        raise Refused("more than one dialog of this question is open: answer it in the terminal; nothing was typed")
    return same[0]


CONFIRM_ROWS = ("Yes", "No")  # a confirm as pi draws it: a select of these two, true for the first
YES_NO = {"yes": True, "y": True, "true": True, "1": True, "no": False, "n": False, "false": False, "2": False}


def _input_text(text: str | None) -> str:
    """The text for pi's input dialog: one line a person could type (UsageError else)."""
    if text is None:
        raise UsageError("this dialog asks for a text: give it with --text TEXT")
    if any(ord(c) < 32 or c == "\x7f" for c in text):  # (none a person can type into it)
        raise UsageError("--text has line breaks or control characters: pi's input takes one line of plain text")
    return text


def dialog_value(
    d: ExtensionDialog, choices: list[str], text: str | None, question: Question | None = None
) -> tuple[str | bool, str]:
    """(the exact value pi's select / confirm / input dialog ``d`` gets for CHOICE or --text, the
    answer as the user saw it); UsageError, Unsupported. A dialog on the board is answered by its
    own rows (a confirm: yes or no); a question tool's ``question`` asked through it, by the
    question's option (:func:`option_value`)."""
    if question is not None and (len(question.items) > 1 or question.first.multi):
        what = "a form of several questions" if len(question.items) > 1 else "a question of several picks"
        raise Unsupported(f"{what} asked through pi's {d.kind} is answered in the terminal (pi-notifier goto)")
    if d.kind == "input":
        value = _input_text(text)
        return value, value
    if text is not None:
        raise UsageError(f"this {d.kind} dialog takes one choice, not --text")
    if len(choices) != 1:
        given = ", ".join(repr(clean(c, 40)) for c in choices[:4])
        raise UsageError(f"this {d.kind} dialog takes one choice, not {len(choices)} ({given}; a first word that"
                         " names no session is a choice too)")
    choice = choices[0] if choices[0].startswith("#") else clean(choices[0])
    rows = tuple(d.options or (CONFIRM_ROWS if d.kind == "confirm" else ()))
    if question is not None:
        return option_value(question.first, d.kind == "confirm", choice, rows)
    if d.kind == "confirm":
        yes = YES_NO.get(choice.strip().lower())
        if yes is None:
            raise UsageError("this confirm dialog takes yes or no")
        return yes, CONFIRM_ROWS[0 if yes else 1]
    # (every option a row, in order: numbered, and a number that is another row's label refused, as a question's)
    row = resolve(QuestionItem("", options=tuple(Option(clean(r)) for r in rows)), choice)
    return rows[row], rows[row]


def option_value(item: QuestionItem, confirm: bool, choice: str, rows: tuple[str, ...]) -> tuple[str | bool, str]:
    """(the value, the option's label) of a question asked through pi's select or confirm with
    ``rows``: CHOICE is the question's option (its number among the question's options, or its
    label), then that option's row (:func:`dialog_row`, :func:`confirm_row`: Refused when it
    cannot be told for sure)."""
    if not item.options:
        raise UsageError("this question has no options: give the answer with --text TEXT")
    chosen = resolve(item, choice)
    row = (confirm_row if confirm else dialog_row)([clean(o.label) for o in item.options], chosen, rows)
    return (row == 0 if confirm else rows[row]), item.options[chosen].label


def dialog_row(labels: list[str], chosen: int, rows: tuple[str, ...]) -> int:
    """The row of a select that option ``chosen`` of ``labels`` is (Refused: not exactly one). A
    select draws the tool's options as its rows, in any order, with rows of its own added: an
    option's row reads its label, or its label with a note after it ("Postgres (Recommended)",
    "Postgres — a server"; only where no row reads the label alone), and no other option reads
    as it."""
    cleaned = [clean(r) for r in rows]

    def rows_of(label: str) -> list[int]:
        alone = [i for i, r in enumerate(cleaned) if r == label]
        return alone or [i for i, r in enumerate(cleaned) if noted(r, label)]

    mine = rows_of(labels[chosen])
    shared = len(mine) == 1 and any(mine[0] in rows_of(o) for i, o in enumerate(labels) if i != chosen)
    if len(mine) != 1 or shared:
        how = "on no row" if not mine else "on more than one row" if len(mine) > 1 else "as another option's too"
        raise Refused(
            f"option {chosen + 1} ({clean(labels[chosen], 40)!r}) reads {how} of the dialog pi shows"
            f"{options_said(cleaned)}: answer it in the terminal; nothing was typed"
        )
    return mine[0]


def confirm_row(labels: list[str], chosen: int, rows: tuple[str, ...]) -> int:
    """The row of a confirm (Yes, No) that option ``chosen`` of ``labels`` is: the one its first
    word names, where the options' first words are the rows, one each ("Yes, delete it" / "No,
    keep the data"). Else Refused: nothing is typed."""
    named = [clean(r).casefold() for r in rows]
    words = [next(iter(re.findall(r"\w+", label)), "").casefold() for label in labels]
    if sorted(words) != sorted(named) or len(set(named)) != len(named):
        shown = ", ".join(repr(clean(label, 40)) for label in labels[:4])
        raise Refused(
            f"the question's options ({shown}) are not the confirm's {' and '.join(map(clean, rows))} one each, so"
            " which of them pi would take cannot be told: answer it in the terminal; nothing was typed"
        )
    return named.index(words[chosen])


@dataclass(frozen=True)
class Request:
    """One answer asked for: CHOICE... or --text for ``question``, waiting in the session ``view``."""

    options: EngineOptions
    view: SessionView
    question: Question
    choices: list[str]
    text: str | None
    result_timeout: float

    def judge(self) -> AnswerJudge:
        return AnswerJudge(self.options, self.view.ref.key, self.question.tool_call_id)


def by_companion(req: Request) -> Answered | None:
    """Answer through the extension; ``None`` when this pi has no channel for the question."""
    question = req.question
    found = channel_dialogs(req.view.ref.key, question)
    if not found:
        if question.kind == "dialog":
            raise Refused(f"{CLOSED}; nothing was typed")
        return None
    sock, d = shown_dialog(req.options, question, found)
    if d.kind == "editor":
        raise Unsupported("an editor dialog cannot be answered from here: answer it in the terminal (pi-notifier goto)")
    if d.remote is None:
        raise Unsupported("this pi only announces its dialogs: answer it in the terminal (pi-notifier goto)")
    if d.kind != "custom":
        value, said = dialog_value(d, req.choices, req.text, None if question.kind == "dialog" else question)
        result = answer_dialog(sock, d.id, value)
        if not result.ok:  # (one answer, refused whole)
            raise Refused(f"{clean(result.error or 'pi did not take the answer', 200)}; nothing was typed")
        return Answered(question, "answered", said)
    # A question tool's own dialog: the plan checked as in tmux, its keys forwarded to this
    # dialog's id (never another's, whatever pi shows), its mirrored screen checked.
    check_usage(question, req.choices or None, req.text)  # bad usage shows before anything else
    if d.outer_tool_call_id is not None:  # (the file has only the call it runs under, until it ends)
        raise Unsupported(
            "this question was asked from inside a running tool call (a script's), and pi records its answer"
            " only when that call ends, so it cannot be checked: answer it in the terminal (pi-notifier goto)"
        )

    def mirrored() -> str | None:  # (what its own pi mirrors: only that pi is asked)
        try:
            said = hello_of(sock)
        except (OSError, ValueError):
            return None
        return next(("\n".join(o.screen or ()) for o in said.dialogs if o.id == d.id), None)

    def send(step: Step, seen: Seen) -> bool:
        # (pasted whole, as a terminal pastes: never taken for key names)
        keys = [f"\x1b[200~{step.paste}\x1b[201~"] if step.paste is not None else list(step.keys)
        result = answer_dialog(sock, d.id, keys=keys)
        if not result.ok:
            raise Refused(f"pi did not take the keys: {clean(result.error, 200)}")
        return True

    return by_keys(req, req.judge(), mirrored, send, "in pi's dialog")


def by_keys(
    req: Request,
    judge: AnswerJudge,
    screen: Callable[[], str | None],
    send: Send,
    where: str,
    keys_read: Callable[[], bool] | None = None,
    terminal: bool = False,
) -> Answered:
    """The one way keys answer: the question's dialog read off ``screen`` (a tmux pane's, or the
    companion's mirror of pi's dialog), its plan, each key sent by ``send`` onto a fresh look of
    it (:func:`drive`), then pi's record checked (:func:`check_recorded`). ``terminal``: the
    screen is a pane's, whose rows bound the dialog (:func:`~notifier.pi.keys.no_room`)."""
    question = req.question
    found, reason = None, None
    for _ in polls(FRAME_S, 0.002, 0.05):  # (what stops it must last: the first capture may be mid-frame)
        first = screen()
        found = finder(question, first) if first is not None else None
        reason = check_screen(found[1], question) if found is not None else None
        if found is not None and reason is None:
            break
    if found is None:
        raise unreadable(question, where)
    if reason:
        raise Refused(f"{reason}; nothing was typed")
    find, dialog = found
    steps = plan_for(dialog, question, req.choices, req.text)
    short = no_room(dialog, steps, first) if terminal and first is not None else None
    if short:
        raise Refused(f"{short}; nothing was typed")

    def look() -> Seen:
        now = screen()
        shown = find(now) if now is not None else None
        if shown is None or now is None:
            return Seen(None)
        return Seen(shown, showing(now.splitlines(), range(shown.top, shown.top + len(shown.raw))))

    typed = drive(look, send, question, steps, judge.waits_alone)
    return check_recorded(judge, question, steps, typed, req.result_timeout, keys_read)


# ---- by keys into the tmux pane ----


def send(pane: TmuxPane, step: Step, seen: Seen) -> bool:
    """The step's key (or paste) into the pane, only while it still shows the look ``seen``
    (False: it no longer does; nothing was sent). Refused when tmux failed. An older tmux
    cannot read the pane in a format: there the key is sent right after the look, unchecked."""
    buffer = load_buffer(pane, step.paste) if step.paste is not None else None
    if step.paste is not None and buffer is None:
        raise Refused(f"could not paste into tmux pane {clean(pane.pane)}")
    if (version() or (0, 0)) >= SHOWING_SINCE and seen.proof:
        sent = send_if(pane, seen.proof, step.keys, buffer)
    else:  # unchecked: plain arguments, never a tmux command string
        pasted = ("paste-buffer", "-d", "-p", "-r", "-b", buffer, "-t", pane.pane) if buffer is not None else None
        args = pasted or ("send-keys", "-t", pane.pane, "--", *step.keys)
        sent = True if tmux(pane.socket, *args) is not None else None
    if sent is not True and buffer is not None:
        tmux(pane.socket, "delete-buffer", "-b", buffer)
    if sent is None:
        raise Refused(f"could not send keys to tmux pane {clean(pane.pane)}")
    return sent


def by_tmux(req: Request, neighbours: Sequence[SessionView] = ()) -> Answered:
    """Type the answer into the pane of the pi that has this session (Refused / Unsupported /
    UsageError); ``neighbours``: the other sessions known (a snapshot's)."""
    check_usage(req.question, req.choices or None, req.text)  # bad usage shows before anything else
    judge = req.judge()
    # Keys go only to the one pi the evidence gives this session to: never to a neighbour in
    # the same folder (its own session among ``neighbours``), never when two could be it.
    location = locate_one(req.view, neighbours=neighbours, announced=announced_sessions())
    if isinstance(location, Unmatched):
        raise Refused(location.reason if location.ambiguous else f"{location.reason}; {resume_advice(req.view)}")
    if location.tmux is None:
        raise Refused("this pi does not run in tmux, so keys cannot be delivered: use pi-notifier goto")
    pane, tty = location.tmux, location.tty
    return by_keys(
        req, judge, lambda: capture(pane), lambda step, seen: send(pane, step, seen),
        f"in tmux pane {clean(pane.pane)}", keys_read=lambda: tty is None or unread_input(tty) in (0, None),
        terminal=True,
    )  # fmt: skip


# ---- pi-notifier answer ----


__all__ = ["RESULT_TIMEOUT_S", "Answered", "answer", "answer_line"]


def answer(
    options: EngineOptions,
    snapshot: Snapshot,
    spec: str | None,
    call: str | None,
    choices: list[str],
    text: str | None,
    result_timeout: float = RESULT_TIMEOUT_S,
    token: str | None = None,
) -> Answered:
    """Deliver the answer (to the question ``call``, or with ``token``, or else the one ``spec``
    names). Raises UsageError (exit 2), Refused / Unsupported (exit 1)."""
    if choices and text is not None:
        raise UsageError("give either CHOICE... or --text, not both")
    if not choices and text is None:
        raise UsageError("give the answer: an option number or label, or --text TEXT")
    if call is None and token is not None:
        call, spec = _by_token(snapshot, spec, token)
    view, question = _waiting(snapshot, spec, call)
    if token is not None and question_token(question) != token:
        raise Refused(f"the question waiting is no longer the one shown: it asks {_named(question)}; nothing was typed")
    req = Request(options, view, question, choices, text, result_timeout)
    return by_companion(req) or by_tmux(req, snapshot.sessions)


def _waiting(snapshot: Snapshot, spec: str | None, call: str | None) -> tuple[SessionView, Question]:
    """The session and the question an answer is for: the call ``call`` (in whichever session
    has it, if ``spec`` names none), else the one waiting in the session ``spec`` names."""
    if spec is None and call is not None:
        spec = _holder(snapshot, call)
    view, question = pick(snapshot, spec)
    if call is not None:
        question = next((q for q in view.pending if q.tool_call_id == call), None)
        if question is None and any(q.tool_call_id == call for q in view.abandoned):
            said = f"tool call {clean(call, 60)} is not waiting: the pi that asked has stopped"
            raise Refused(f"{said}; {resume_advice(view)}")
        if question is None:
            raise Refused(f"tool call {clean(call, 60)} is not waiting (it was answered, or never asked here)")
    if question is None:
        if view.abandoned:
            raise Refused(f"the pi that asked has stopped; {resume_advice(view)}")
        raise Refused("this session has no question waiting")
    return view, question


def _holder(snapshot: Snapshot, call: str) -> str | None:
    """The session the call ``call`` waits in (or, none waiting, the one whose pi stopped with
    it: said by the caller, with how to resume it); ``None`` if several have it."""
    holders = [v for v in snapshot.sessions if any(q.tool_call_id == call for q in v.pending)]
    stopped = [v for v in snapshot.sessions if any(q.tool_call_id == call for q in v.abandoned)]
    if len(holders) == 1 or (not holders and len(stopped) == 1):
        return (holders or stopped)[0].ref.key
    if not holders:
        raise Refused(f"tool call {clean(call, 60)} is not waiting (it was answered, or never asked)")
    return None


def _named(q: Question) -> str:
    return f"{clean(q.text, 80)!r} (call {clean(q.tool_call_id, 60)}, token {question_token(q)})"


def _by_token(snapshot: Snapshot, spec: str | None, token: str) -> tuple[str, str]:
    """(the call, its session) of the waiting question with ``token`` (in the session ``spec``
    names, if given); Refused, naming what waits instead, when none has it."""
    views = [pick(snapshot, spec)[0]] if spec is not None else list(snapshot.sessions)
    found = [(q, v) for v in views for q in v.pending if question_token(q) == token]
    if len(found) == 1:
        q, v = found[0]
        return q.tool_call_id, v.ref.key
    waiting = [q for v in views for q in v.pending]
    instead = f"; waiting now: {_named(waiting[0])}" if waiting else "; no question waits now"
    raise Refused(f"no question waiting is the one shown (token {clean(token, 40)}){instead}; nothing was typed")


# ---- for the window, notification actions and the control channel ----


def answer_line(
    config: Config,
    snapshot: Snapshot,
    session: str,
    call: str,
    choices: list[str],
    text: str | None,
    timeout: float = RESULT_TIMEOUT_S,
    token: str | None = None,
) -> tuple[int, str]:
    """``pi-notifier answer`` for the desktop: (the CLI's exit code, one line to show). A remote
    session (``@host:file``) is answered by pi-notifier on that machine, through ssh."""
    if token is not None:  # what the user saw must be what waits, before anything goes anywhere
        shown = [q for v in snapshot.sessions if v.ref.key == session for q in v.pending if q.tool_call_id == call]
        if shown and question_token(shown[0]) != token:
            return 1, f"not answered: the question waiting is no longer the one shown ({_named(shown[0])})"
    remote = goto.remote_target(config, session)
    if remote is not None:
        try:
            code, out, err = goto.answer_remote(*remote, choices, timeout, call=call, token=token, text=text)
        except goto.RemoteRefused as exc:
            return 1, clean(exc)
        said = (out if code == 0 else err).strip().splitlines()
        return code, clean(said[-1] if said else f"exit code {code}", 300)
    try:
        done = answer(engine_options(config), snapshot, session, call, choices, text, timeout, token)
    except (goto.BadSession, UsageError) as exc:
        return 2, clean(exc)
    except (Refused, Unsupported) as exc:
        return 1, clean(exc)
    except Exception as exc:  # never into the UI as a traceback
        log.warning("answer failed: %s", clean(repr(exc), 200))
        return 1, f"not answered ({clean(exc, 160)}): answer it in the terminal"
    note = f" (note: {clean(done.note, 300)})" if done.note else ""
    if done.outcome not in (None, "answered"):
        return 1, f"pi recorded the question as {done.outcome}: {clean(done.answer or '', 200)}{note}"
    return 0, f"answered: {clean(done.answer or '(recorded)', 300)}{note}"


# ---- a Goto or an Answer from the tray, a notification or the window ----


def carry_out(config: Config, snapshot: Snapshot, command: Goto | Answer) -> tuple[int, str]:
    if isinstance(command, Goto):
        return go(config, snapshot, command.session)
    return answer_line(
        config, snapshot, command.session, command.call, list(command.choices), command.text, token=command.token
    )
