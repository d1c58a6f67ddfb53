"""The keys that answer a question dialog from outside pi, and the checks around them (pure).

The driver (:mod:`notifier.actions.answer`) types a plan from here one step at a time, checking
before each that the dialog read by :mod:`notifier.pi.screens` is the question's own
(:func:`not_ours`, :func:`bound`) in the state the step expects (:func:`unready`); afterwards,
that the tool result pi recorded is the answer given (:mod:`notifier.pi.records`). Whether a
question can be answered from here at all is decided by its shape (:func:`check_usage`), never
by its tool's name.

One driver (:func:`plan_rows`) for every dialog drawn as a list: from the highlighted row, one
key per row to each chosen row, each bound to the row it leaves, ticked where the dialog ticks,
confirmed (a free-text row, a form's questions in turn, its review step). What the screen does
not show is data, one :class:`Layout` per kind of dialog: a list read off the screen
(:func:`plan_list`: what its help line and tab bar say), or a layout known by its help line
(:data:`LAYOUTS`, :func:`plan`); :func:`plan_for` picks by the dialog read. A typed answer
first needs room for the input it opens, where the screen is a terminal's (:func:`no_room`).
"""

from __future__ import annotations

import re
import textwrap
import unicodedata
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace

from notifier.core.model import Question, QuestionItem
from notifier.core.text import clean, number
from notifier.pi.screens import (
    PI_ASK_OTHER,
    Dialog,
    Rows,
    named_in_order,
    rows,
    same_row,
    shows_text,
    squash,
    submit_row,
)

# ---- the steps of a plan, and what the user chose ----

SKIP = "-"  # the answer that skips an optional question


class UsageError(ValueError):
    """The choices given cannot mean anything for this question (exit code 2)."""


class Unsupported(ValueError):
    """This question cannot be answered by keys (exit code 1: answer in the terminal)."""


@dataclass(frozen=True)
class Step:
    """One key (tmux key names) or paste of a plan, and the state it needs: the dialog shows
    question ``item`` (``None``: the form's review) and ``shows``, row ``cursor`` highlighted
    (reading ``cursor_text``); after it the dialog shows ``expect``."""

    keys: tuple[str, ...] = ()
    paste: str | None = None
    cursor: int | None = None
    cursor_text: str | None = None
    shows: tuple[str, ...] = ()
    expect: str | None = None
    item: int | None = 0
    checked: tuple[int, ...] | None = None  # the rows whose boxes are ticked ("list" dialogs; None: not looked at)
    typing: bool | None = None  # "list": the dialog shows an open input (True) or none (False); None: not looked at
    typed: str | None = None  # "list": the dialog shows this text (a typed answer, read back)
    # "list": a form's review (``item`` None): it shows each question's options at these rows chosen,
    # and the highlighted row of its list is the one that submits
    answers: tuple[tuple[int, ...], ...] | None = None
    # "list": the key that opens the free-text row's input, not sent where that row opened its
    # input as it was highlighted (:func:`opened`)
    opens: bool = False


@dataclass(frozen=True)
class Plan:
    """The steps, and what they answer: each question's rows picked (by index), or the text."""

    steps: list[Step]
    picks: dict[int, list[int]]
    text: str | None = None
    # The keys of a form's later question ``k`` from the row highlighted when it opens (``row``),
    # where that is not the row the plan expected (None: no such question).
    from_row: Callable[[int, int], list[Step]] | None = field(default=None, compare=False, repr=False)


def resolve(item: QuestionItem, choice: str) -> int:
    """An option number (``2``, or ``#2`` that is never a label), or an option's label → the
    row's 0-based index. A number that is also another row's label is refused as ambiguous."""
    labels = [o.label for o in item.options]
    n = len(labels)
    hashed = number(choice[1:]) if choice.startswith("#") else None
    if hashed is not None:
        if 1 <= hashed <= n:
            return hashed - 1
        raise UsageError(f"option {hashed} does not exist (the question has {n} options)")
    named = [i for i, label in enumerate(labels) if label == choice]
    if not named:
        named = [i for i, label in enumerate(labels) if label.casefold() == choice.casefold()]
    given = number(choice)
    numbered = given - 1 if given is not None and 1 <= given <= n else None
    if numbered is not None and any(i != numbered for i in named):
        raise UsageError(
            f"{clean(choice, 20)!r} is ambiguous: option {numbered + 1} is {clean(labels[numbered], 40)!r}"
            f" and option {named[0] + 1} is labelled {clean(choice, 20)!r}: give '#{numbered + 1}' for the"
            " number, or another label"
        )
    if numbered is not None:
        return numbered
    if len(named) == 1:
        return named[0]
    if len(named) > 1:
        raise UsageError(f"several options are called {clean(choice, 60)!r}: give the option's number")
    if given is not None:
        raise UsageError(f"option {choice} does not exist (the question has {n} options)")
    raise UsageError(f"no option is called {clean(choice, 60)!r}{options_said(labels)}")


def options_said(labels: Sequence[str]) -> str:
    """The first options, numbered, as a usage line names them (" (options: 1. A, 2. B)"; none: "")."""
    shown = ", ".join(f"{i + 1}. {clean(label, 40)}" for i, label in enumerate(labels[:9]))
    return f" (options: {shown})" if shown else ""


# ---- the facts a screen does not show: data for the one driver ----


@dataclass(frozen=True)
class Layout:
    """What a dialog does with keys where its screen does not say it: data for the one driver
    (:func:`plan_rows`). A list read off the screen (:func:`plan_list`) has only what its help
    line and its tab bar say; a tool's own layout (:data:`LAYOUTS`, known by its help line) has
    the facts checked against the real tool."""

    name: str = "list"
    row: str = "{label}"  # an option's row as drawn ({n}: its number, {note}: " (Recommended)" where so)
    other: str | None = None  # the free-text row as drawn after the options ({n}: its number)
    other_if_asked: bool = False  # that row is drawn only where the question allows another answer
    in_order: bool = False  # option k is drawn on row k (else each option's row is found by its label)
    boxes: bool = True  # a row ticked is read back in its box (False: the tool's ticks are known, not read)
    toggle: str | None = None  # the key that ticks a row
    ticks: bool = False  # a chosen row is ticked, then confirmed (a single choice too)
    submits: bool = False  # Enter submits what is ticked, and a form at its last question
    confirms: bool = True  # Enter confirms each question (False: ticks only, then the review key)
    skips: bool = False  # an optional question is skipped with Enter on it untouched (a pick is ticked first)
    multi: bool = True  # it draws multi-select questions
    forms: bool = True  # it draws forms of several questions
    texts: bool = True  # its free-text row takes a typed answer
    editor: str | None = None  # what its free-text input shows ("Your answer:"); None: read by its help line
    saves: bool = False  # Enter in that input saves the text into the list, where Enter then answers it
    lines: bool = False  # that input takes line breaks
    text_max: tuple[int, int] | None = None  # (characters, lines) past which the tool keeps no typed text
    box_in_text: bool = False  # a row's text shows its box (so a ticked row reads otherwise)
    review_key: str | None = None  # the key that opens the review after the last question ("r")
    review: str | None = None  # what the dialog shows once at its review ("Ready to submit")
    review_alone: bool = False  # a question asked alone ends on the review too
    review_prompt: str | None = None  # the review's line that says Enter submits
    review_says: tuple[str, ...] = ()  # what it shows of each question answered: {head}{labels} {label} {start}
    review_reads: bool = False  # a form's review read as a list's (:func:`review_mismatch`)
    # The rows its free-text input adds to the dialog as it opens, besides the text's own lines
    # (question: a blank, "Your answer:", the editor's two borders; questionnaire: those, and its
    # help line and a blank in place of one help line; from their render code); None: not known.
    input_rows: int | None = None


_EDITOR = "Your answer:"
_SUBMIT = "Press Enter to submit"
# The layouts of the tools whose dialog pi-notifier knows by its help line (notifier.pi.screens):
# pi's ``question`` and ``questionnaire`` examples, pi-ask (``ask_user_question``: the recommended
# options drawn first, optional questions, ``showWhen``), dreki-gg's ``questionnaire``.
LAYOUTS: dict[str, Layout] = {
    "question": Layout(
        "question", "{n}. {label}", "{n}. Type something.", in_order=True, boxes=False, multi=False,
        forms=False, editor=_EDITOR, lines=True, input_rows=4,
    ),
    "questionnaire": Layout(
        "questionnaire", "{n}. {label}", "{n}. Type something.", other_if_asked=True, in_order=True, boxes=False,
        submits=True, multi=False, editor=_EDITOR, lines=True, review="Ready to submit", review_prompt=_SUBMIT,
        review_says=("{head}{labels}",), input_rows=5,
    ),
    "pi-ask": Layout(
        "pi-ask", "{label}{note}", PI_ASK_OTHER, in_order=True, boxes=False, toggle="Space", submits=True,
        skips=True, editor=_EDITOR, saves=True, lines=True, text_max=(1000, 10), review="Review your answers",
        review_alone=True, review_prompt=_SUBMIT, review_says=("{labels}", "{start}"),
    ),
    "dreki": Layout(
        "dreki", "[ ] {label}", "[ ] Other", in_order=True, boxes=False, toggle="Space", ticks=True, submits=True,
        confirms=False, forms=False, texts=False, box_in_text=True, review_key="r", review_alone=True,
        review_says=("{label}",),
    ),
}  # fmt: skip


def drawn(layout: Layout, item: QuestionItem, boxes: bool = False) -> Rows:
    """The rows a dialog of ``layout`` draws for ``item`` when it opens, as they read on screen,
    the first highlighted (``boxes``: each with its box unticked)."""
    texts = [
        layout.row.format(n=n, label=o.label, note=" (Recommended)" if o.recommended else "").rstrip()
        for n, o in enumerate(item.options, 1)
    ]
    other = None
    if layout.other is not None and (item.other or not layout.other_if_asked):
        other = len(texts)
        texts.append(layout.other.format(n=other + 1))
    return Rows(tuple(texts), 0, (False,) * len(texts) if boxes else (), other)


def plan(
    variant: str,
    question: Question,
    choices: list[str] | None = None,
    text: str | None = None,
    shown: Rows | None = None,
) -> Plan:
    """The steps that answer ``question`` in a tool's own dialog of ``variant`` (:data:`LAYOUTS`),
    from the row highlighted in ``shown`` (``None``: its first row)."""
    return plan_rows(LAYOUTS[variant], question, choices, text, shown)


# What any dialog drawn as a list may take, as far as a question's shape says (the usage alone:
# which key ticks, whether Enter submits, whether a typed text may have lines is read on screen).
_ANY_LIST = Layout(other="Other", toggle="Space", submits=True, skips=True, lines=True)


def check_usage(question: Question, choices: list[str] | None, text: str | None) -> None:
    """Bad usage (:class:`UsageError`) or an answer no dialog drawn as a list can take
    (:class:`Unsupported`), by the question's shape alone, whatever its tool is called: how many
    questions it asks, their options, multi-select, an optional one skipped, a typed text for a
    question asked alone. What the dialog on screen takes is checked on it, before any key."""
    items = question.items or (question.first,)
    if text is None or items[0].options or len(items) > 1:  # (a typed answer alone: the screen shows its input)
        plan_rows(_ANY_LIST, question, choices, text, boxes=True)


def plan_list(
    question: Question,
    choices: list[str] | None,
    text: str | None,
    shown: Rows,
    toggles: bool = False,
    toggle: str | None = None,
    submits: bool = False,
    review: bool = False,
) -> Plan:
    """The steps that answer a question in any dialog drawn as a list, read off the screen
    (``shown``: its rows in screen order, the highlighted one), with what its help line says:
    ``toggles``, Space selects (Enter submits what is ticked); ``toggle``, the key that ticks a
    row; ``submits``, Enter submits; ``review``: a form's tab bar names a review step."""
    # (a review step submits a form; a question alone is submitted where its help says Enter does)
    submitted = submits or (review and len(question.items) > 1)
    # (an input whose Enter saves the text into the list, where Enter then submits it: a list
    # whose Space selects and whose Enter submits)
    layout = Layout(toggle=toggle, ticks=toggles, submits=submitted, saves=toggles and submits, review_reads=review)
    boxes = any(c is not None for c in shown.checked)
    if shown.commit is not None and len(question.items) > 1 and any(it.multi for it in question.items):
        raise Unsupported(
            f"a form of {len(question.items)} questions whose multi-select questions are submitted by a row of"
            f" their own ({clean(shown.texts[shown.commit], 20)!r}): answer it in the terminal; nothing was typed"
        )
    return plan_rows(layout, question, choices, text, shown, boxes)


def plan_rows(
    layout: Layout,
    question: Question,
    choices: list[str] | None,
    text: str | None,
    shown: Rows | None = None,
    boxes: bool = False,
) -> Plan:
    """The one driver's plan: each question asked (a form's, in turn: one answer each, ``1,3``
    for a multi-select one; a question whose ``showWhen`` is not met is not asked) answered on
    its rows (:func:`_question`): Up or Down one row at a time from the highlighted row to each
    chosen one, each key bound to the row it leaves; a chosen row ticked where the layout ticks;
    Enter on it, which moves to the next question; then the review, where the layout has one.
    ``text``: the free-text row (:func:`_typed`).

    The first question asked is answered on the rows ``shown`` on screen (a layout that draws
    option k on row k: its own rows, from the row highlighted there); a form's later questions
    on the rows the layout draws when one opens (``boxes``: unticked), the first highlighted (where
    another row is when one opens, the driver takes its keys from there: ``Plan.from_row``)."""

    def rows_of(k: int, first: bool) -> Rows:
        own = drawn(layout, items[k], boxes)
        if not first or shown is None:
            return own
        return replace(own, cursor=shown.cursor) if layout.in_order else shown

    items = question.items or (question.first,)
    if text is not None:
        if len(items) != 1 or not layout.texts:
            raise Unsupported("a typed answer is supported for a dialog of one question only")
        return _typed(layout, items[0], text, rows_of(0, True))
    if not choices:
        raise UsageError("give the answer: an option number or label, or --text TEXT")
    if any(not it.options for it in items):
        raise UsageError("this question has no options to choose from: answer it with --text TEXT")
    if len(items) > 1:
        _form_answerable(layout, items, choices)
    steps, picks, opened = _questions(layout, items, choices, rows_of)

    def from_row(k: int, row: int) -> list[Step]:
        item, shown, expect = opened[k]
        return _question(layout, item, k, picks[k], replace(shown, cursor=row), expect)

    return Plan(steps + _review(layout, items, picks), picks, from_row=from_row)


Opened = dict[int, tuple[QuestionItem, Rows, "str | None"]]  # each question asked: its rows, what follows it


def _questions(
    layout: Layout, items: Items, choices: list[str], rows_of: Callable[[int, bool], Rows]
) -> tuple[list[Step], dict[int, list[int]], Opened]:
    """The keys of every question asked, in turn (one answer group each), the rows picked, and
    each question's rows as expected when it opens and what its last key is expected to show."""
    picks: dict[int, list[int]] = {}
    opened: Opened = {}

    def asked_after(k: int) -> int:  # (the next question asked, given the rows picked so far)
        return next((i for i in range(k + 1, len(items)) if _asked(items, picks, i)), len(items))

    groups = [list(choices)] if len(items) == 1 else [[c] for c in choices]
    steps: list[Step] = []
    k = asked_after(-1)
    while k < len(items):
        item = items[k]
        if not groups:
            raise UsageError("too few answers: this form also asks " + repr(clean(item.text, 60)))
        first = not picks
        picks[k] = _picks(layout, item, groups.pop(0))
        if item.multi and not layout.multi:
            raise Unsupported(f"the {layout.name} dialog has no multi-select")
        nxt = asked_after(k)
        ends = len(items) > 1 or layout.review_alone
        expect = items[nxt].text if nxt < len(items) else (layout.review if ends else None)
        opened[k] = (item, rows_of(k, first), expect)
        steps += _question(layout, item, k, picks[k], opened[k][1], expect)
        k = nxt
    if groups:
        raise UsageError(f"too many answers: with these answers the form asks {len(picks)} questions")
    return steps, picks, opened


def _form_answerable(layout: Layout, items: Items, choices: list[str]) -> None:
    """Refuse a form of several questions this layout cannot answer, or answers not one a question."""
    if not any(it.show_when for it in items) and len(choices) != len(items):
        raise UsageError(f"this form has {len(items)} questions: give one answer for each, in order")
    if not layout.forms:
        raise Unsupported(f"the {layout.name} dialog asks one question: answer this form in the terminal")
    if not layout.submits:
        raise Unsupported(
            f"a form of {len(items)} questions whose help line does not say that Enter submits it, nor its tab"
            " bar that a review step submits it: answer it in the terminal; nothing was typed"
        )


def _asked(items: Items, picks: dict[int, list[int]], i: int) -> bool:
    """Is question ``i`` asked, given the rows picked so far (its ``showWhen`` met, or none)?"""
    cond = items[i].show_when
    if cond is None:
        return True
    keys = [it.key for it in items]
    parent = keys.index(cond[0]) if cond[0] in keys else -1
    if parent not in picks:
        return False
    values = [o.value for o in items[parent].options]
    return cond[1] in values and values.index(cond[1]) in picks[parent]


def _picks(layout: Layout, item: QuestionItem, group: list[str]) -> list[int]:
    """The rows chosen for one question (none: an optional one skipped with ``-`` where the
    layout skips; a multi-choice one's picks given as ``1,3`` too)."""
    labels = [o.label for o in item.options]
    if layout.skips and group == [SKIP] and SKIP not in labels:
        if item.required:
            raise UsageError(f"{clean(item.text, 60)!r} is not optional: it cannot be skipped")
        if item.multi:  # (Enter there chooses the highlighted row)
            raise Unsupported(f"the multi-choice {clean(item.text, 60)!r} cannot skip by keys: answer it there")
        return []
    if item.multi and len(group) == 1 and "," in group[0] and group[0] not in labels:
        group = [c.strip() for c in group[0].split(",")]
    picks = [resolve(item, c) for c in group]
    if len(set(picks)) != len(picks):
        raise UsageError("the same option was given twice")
    if len(picks) > 1 and not item.multi:
        raise UsageError(f"{clean(item.text, 60)!r} takes one answer (it is not multi-select)")
    return picks


def _question(
    layout: Layout, item: QuestionItem, k: int, picks: list[int], rows: Rows, expect: str | None
) -> list[Step]:
    """The keys of one question on its ``rows``: to each chosen row in screen order, ticked
    where the layout ticks (a multi-select question; an optional one where Enter alone skips
    it), every box read back where the layout draws them; then Enter, expecting ``expect``.
    No pick: Enter on the untouched question (an optional one skipped)."""
    ticking = item.multi or layout.ticks or (bool(picks) and layout.skips and not item.required)
    key = layout.toggle if item.multi else (layout.toggle or "Space")
    read = ticking and layout.boxes
    at = _question_answerable(layout, item, rows, read)
    targets = sorted(p if layout.in_order else rows.texts.index(item.options[p].label) for p in picks)
    steps: list[Step] = []
    ticked: tuple[int, ...] = ()
    for row in targets:
        steps += _walk(rows, at, row, ticked if read else None, k, ticked if layout.box_in_text else ())
        if ticking and key is not None:
            box = ticked if read else None
            steps.append(Step(keys=(key,), cursor=row, cursor_text=rows.texts[row], checked=box, item=k))
            ticked = (*ticked, row)
        at = row
    return steps + _submit(layout, item, k, rows, at, ticked, read, expect)


def _submit(
    layout: Layout, item: QuestionItem, k: int, rows: Rows, at: int, ticked: tuple[int, ...], read: bool,
    expect: str | None,
) -> list[Step]:
    """The keys that submit one question from row ``at``, the rows ``ticked`` (``read``: its boxes
    read back): to its row that submits the ticks and Enter there (a multi-select question whose
    list draws one), else Enter on the row reached where the layout confirms so."""
    box = ticked if read else None
    if item.multi and rows.commit is not None:
        unread = (*(ticked if layout.box_in_text else ()), *(() if rows.other is None else (rows.other,)))
        label = rows.texts[rows.commit]
        return [
            *_walk(rows, at, rows.commit, box, k, unread),
            Step(("Enter",), cursor=rows.commit, cursor_text=label, checked=box, expect=expect, item=k),
        ]
    if layout.confirms:  # (a row whose text shows its own box, ticked: known by its boxes)
        text = None if layout.box_in_text and at in ticked else rows.texts[at]
        return [Step(("Enter",), cursor=at, cursor_text=text, checked=box, expect=expect, item=k)]
    return []


def _question_answerable(layout: Layout, item: QuestionItem, rows: Rows, read: bool) -> int:
    """Refuse a question whose keys this layout's dialog does not say (which key ticks, that
    Enter submits), with no highlighted row, or with boxes to read back that its rows do not
    show; else the highlighted row."""
    if item.multi and layout.toggle is None:
        raise Unsupported(
            "this multi-select dialog's help line does not say which key ticks a row: answer it in the terminal;"
            " nothing was typed"
        )
    if item.multi and not layout.submits and rows.commit is None:
        raise Unsupported(
            "this multi-select dialog's help line does not say that Enter submits, nor does it draw a row that"
            " submits ('Submit', 'Next'): answer it in the terminal; nothing was typed"
        )
    if rows.cursor is None:
        raise Unsupported(_NO_CURSOR)
    if read and not boxes_readable(rows):
        raise Unsupported(
            "this dialog ticks the rows chosen, but its rows show no check box to read back: answer it in the"
            " terminal; nothing was typed"
        )
    return rows.cursor


def _review(layout: Layout, items: Items, picks: dict[int, list[int]]) -> list[Step]:
    """The form's last steps: its review opened (where a key opens it), then Enter once the
    review shows every answer chosen (by the layout's words, or read as a list's review)."""
    if len(items) == 1 and not layout.review_alone:
        return []
    steps = [Step(keys=(layout.review_key,), item=max(picks, default=0))] if layout.review_key else []
    if layout.review_reads:
        answers = tuple(tuple(picks.get(k, ())) for k in range(len(items)))
        return [*steps, Step(keys=("Enter",), item=None, answers=answers)]
    if layout.review is None and layout.review_key is None:
        return steps
    said = [layout.review_prompt] if layout.review_prompt else []
    for k, ps in picks.items():
        it = items[k]
        labels = [it.options[p].label for p in sorted(ps)]
        for words in layout.review_says:
            if "{label}" in words:
                said += [words.format(label=x) for x in labels]
            elif labels or "{labels}" not in words:
                head = f"{it.header}: " if it.header else ""
                said.append(words.format(head=head, labels=", ".join(labels), start=it.text[:24]))
    return [*steps, Step(keys=("Enter",), shows=tuple(said), item=None)]


def _typed(layout: Layout, item: QuestionItem, text: str, rows: Rows) -> Plan:
    """A typed answer: to the free-text row ("Other", "Type something"), open its input (Enter,
    or the key that ticks where the layout ticks), paste the text once the input is open, Enter
    once it reads back there. Where the input saves the text into the list, Enter on that row
    then answers it (and the review, where the layout has one, submits it)."""
    if not text.strip():
        raise UsageError("--text needs some text")
    if any((ord(c) < 32 and not (layout.lines and c == "\n")) or c == "\x7f" for c in text):
        if layout.lines:
            raise UsageError("--text has control characters that pi's editor would drop: give plain text")
        raise UsageError("--text has line breaks or control characters: a list's input takes one line of plain text")
    if layout.text_max is not None and (len(text) > layout.text_max[0] or text.count("\n") >= layout.text_max[1]):
        chars, lines = layout.text_max
        raise Unsupported(
            f"{layout.name} keeps a text of over {chars:,} characters or {lines} lines as a marker: type it there"
        )
    if rows.other is None:
        raise Unsupported(
            "this dialog shows no row for a typed answer (no free-text row such as 'Other' or 'Type something';"
            " a list scrolled to fit a short pane may hide it): answer it there; nothing was typed"
        )
    if rows.cursor is None:
        raise Unsupported(_NO_CURSOR)
    row, label = rows.other, rows.texts[rows.other]
    opens = (layout.toggle or "Space") if layout.ticks else "Enter"
    steps = _walk(rows, rows.cursor, row, item=0)
    if layout.editor is not None:  # (the input known by what it shows)
        steps += [
            Step(keys=(opens,), cursor=row, cursor_text=label, expect=layout.editor),
            Step(paste=text, shows=(layout.editor,)),
            Step(keys=("Enter",), shows=(layout.editor,), expect=f"{label}:" if layout.saves else None),
        ]
        if layout.saves:
            expect = layout.review if layout.review_alone else None
            steps.append(Step(keys=("Enter",), cursor=row, cursor_text=f"{label}: {clean(text)}", expect=expect))
    else:  # (the input known by the help line below the rows)
        steps += [
            Step(keys=(opens,), cursor=row, cursor_text=label, typing=False, opens=True),
            Step(paste=text, typing=True),
            Step(keys=("Enter",), typing=True, typed=text),
        ]
        if layout.saves:
            steps.append(Step(keys=("Enter",), typing=False, typed=text))
    return Plan(steps + _review(layout, (item,), {0: []}), {}, text)


_NO_CURSOR = (
    "no row of this dialog is marked as the highlighted one (it may show it by colour alone): answer it in the terminal"
)


def boxes_readable(shown: Rows) -> bool:
    """Whether every option's row shows a box (a free-text row may have none, a row that submits has none)."""
    boxes = [on for i, on in enumerate(shown.checked) if i not in (shown.other, shown.commit)]
    return None not in boxes and len(shown.checked) == len(shown.texts)


def _walk(
    shown: Rows, at: int, to: int, ticked: tuple[int, ...] | None = None, item: int = 0, unread: tuple[int, ...] = ()
) -> list[Step]:
    """Up or Down one row at a time from row ``at`` to row ``to``, each key bound to the row it
    leaves (its text not read where ``unread``: a row toggled whose box is in its text), and,
    ``ticked``, to the boxes read ticked."""
    step = 1 if to > at else -1
    return [
        Step(
            keys=("Down" if step > 0 else "Up",), cursor=i, cursor_text=None if i in unread else shown.texts[i],
            checked=ticked, item=item,
        )
        for i in range(at, to, step)
    ]  # fmt: skip

# ---- the checks: the dialog is the question's, the record is the answer ----

_BOX = re.compile(r"^\[[^\]]\]")


def _named(name: str, text: str) -> bool:
    """Whether ``text`` names ``name`` as a whole (not as a part of a longer word)."""
    return re.search(rf"(?<!\w){re.escape(name)}(?!\w)", text) is not None


def _drawn_as(shown: str, drawn: str) -> bool:
    """Whether a row on screen is the row ``drawn``, in any state the dialog draws it in while it
    is answered: cut to the width, marked after its label (an editor open on it: " ✎", a
    text typed for it: ": text") or its check box toggled ("[x]" for "[ ]")."""
    if same_row(shown, drawn) or same_row(_BOX.sub("[ ]", shown, count=1), drawn):
        return True
    shown, drawn = clean(shown), clean(drawn)
    return shown.startswith((drawn + " ", drawn + ":"))


def bound(
    dialog: Dialog, question: Question, item: int | None, shows: tuple[str, ...] = (), untouched: bool = False
) -> str | None:
    """Why the dialog on screen is not (or no longer) ``question``'s, at its question ``item``
    (``None``: the form's review, known by what it ``shows``); ``None`` if it is: it shows that
    question's text and exactly its rows, in order, in whatever state answering puts them
    (``untouched``: as drawn before any key). This is what binds every key to the question it
    is for: a look-alike next question (the same rows, another text) is not it."""
    items = question.items or (question.first,)
    if item is None:
        missing = next((t for t in shows if not dialog.shows(t)), None)
        return None if missing is None else f"the dialog on screen does not show {clean(missing, 60)!r}"
    it = items[item] if item < len(items) else items[0]
    if not shows_text(dialog.lines, it.text):
        return "the dialog on screen does not show this question"
    if it.options:
        now = rows(dialog)
        shown = now.texts
        if dialog.variant == "list":  # (read by its labels: the same labels, in the order drawn)
            labels = [t for i, t in enumerate(shown) if i not in (now.other, now.commit)]  # (its options' rows)
            ok = sorted(labels) == sorted(o.label for o in it.options)
        else:
            own = drawn(LAYOUTS[dialog.variant], it).texts
            same = same_row if untouched else _drawn_as
            ok = len(shown) == len(own) and all(same(a, b) for a, b in zip(shown, own, strict=True))
        if not ok:
            return "the dialog on screen does not show this question's options"
    return None


def check_screen(dialog: Dialog, question: Question) -> str | None:
    """Why this dialog is not (or no longer) the untouched dialog of ``question`` at its first
    question (``None``: it is); a known layout's editor open is refused as such."""
    if dialog.variant != "list" and dialog.shows(_EDITOR):
        return "the dialog is in its text editor (answer it in the terminal)"
    if dialog.variant == "list" and dialog.typing:
        return "the dialog has a text input open (answer it in the terminal)"
    return bound(dialog, question, 0, untouched=True)


def names_alone(said: str, chosen: Sequence[tuple[str | None, ...]], others: Sequence[tuple[str | None, ...]]) -> bool:
    """Whether ``said`` names each chosen option (by one of its names: label, value) as a whole,
    and no other option (one whose name is part of a chosen one's is not counted)."""
    mine = [n for names in chosen for n in names if n]
    rest = [n for names in others for n in names if n and not any(n in m for m in mine)]
    each = all(any(_named(n, said) for n in names if n) for names in chosen)
    return each and not any(_named(n, said) for n in rest)


def _review_sections(lines: list[str], items: tuple[QuestionItem, ...]) -> list[str] | None:
    """What a review says of each question: its lines from the one naming it (header or text)
    to the next one's, those names taken out (``None``: a question is not named, in order)."""
    at = named_in_order(lines, [{squash(n) for n in (it.header, it.text) if n} for it in items], 0, len(lines))
    if at is None:
        return None
    sections = []
    for k, it in enumerate(items):
        said = " ".join(lines[at[k] : at[k + 1] if k + 1 < len(at) else len(lines)])
        for n in (it.header, it.text):
            said = said.replace(n, " ") if n else said
        sections.append(said)
    return sections


def review_mismatch(dialog: Dialog, question: Question, answers: tuple[tuple[int, ...], ...]) -> str | None:
    """Why ``dialog`` is not the form's review showing ``answers`` (each question's chosen rows),
    ``None`` if it is: a review (:func:`notifier.pi.screens.find_review`) where, between the line
    naming each question and the next one's (the last: its list), the options chosen for it are
    named, each whole, and no other option of it."""
    if dialog.variant != "review":
        return "the dialog on screen is not the form's review"
    items = question.items or (question.first,)
    lines = [clean(line) for line in dialog.lines[: len(dialog.lines) - len(dialog.labels)]]
    sections = _review_sections(lines, items)
    if sections is None:
        return "the form's review does not name every question"
    for k, (it, said) in enumerate(zip(items, sections, strict=True)):
        chosen = [(it.options[p].label,) for p in answers[k]]
        others = [(o.label,) for i, o in enumerate(it.options) if i not in answers[k]]
        if not names_alone(said, chosen, others):
            names = ", ".join(repr(clean(c, 40)) for (c,) in chosen)
            return f"the form's review does not show {names} alone for {clean(it.header or it.text, 40)!r}"
    return None


# ---- the dialog read: its plan, and whether a step may be sent to it now ----


def plan_for(dialog: Dialog, question: Question, choices: list[str], text: str | None) -> Plan:
    """The keys for the dialog as read: by its layout's facts where its help line is known, else by
    what a list's help line and tab bar say (:func:`plan_rows`)."""
    if dialog.variant == "review":
        raise Unsupported("the form is at its review step: answer it in the terminal (pi-notifier goto)")
    if dialog.variant == "list":
        if len(question.items) > 1 and not shows_text(dialog.lines, question.items[0].text):
            raise Unsupported("the form is not at its first question: answer it in the terminal (pi-notifier goto)")
        if text is not None and not dialog.helps:
            raise Unsupported(
                "this dialog draws no help line below its rows that pi-notifier can read, so whether its"
                " free-text row opens an input cannot be known: answer it in the terminal; nothing was typed"
            )
        return plan_list(
            question, choices or None, text, rows(dialog), dialog.toggles, dialog.toggle_key, dialog.submits,
            review=dialog.reviews,
        )  # fmt: skip
    return plan(dialog.variant, question, choices or None, text, rows(dialog))


def unready(dialog: Dialog, step: Step) -> str | None:
    """Why ``step`` may not be sent to ``dialog`` (this question's) in the state it is in
    (``None``: it may)."""
    for text in step.shows:
        if not dialog.shows(text):
            return f"the dialog does not show {clean(text, 60)!r}"
    if step.typing is not None and dialog.typing != step.typing:
        return "the dialog shows no open input for the text" if step.typing else "the dialog's input is still open"
    # (the text read in the open input: below the rows, or its free-text row; else wherever the dialog shows it)
    where = f"{_other_text(dialog)} {dialog.below}" if step.typing else f"{' '.join(dialog.lines)} {dialog.below}"
    if step.typed is not None and squash(step.typed) not in squash(where):
        return "the dialog does not show the text typed"
    if step.answers is not None and not dialog.labels:  # (a review with no list: Enter where it says so)
        return None if dialog.submits else "the form's review does not say that Enter submits it"
    return _rows_unready(rows(dialog), step)


def _other_text(dialog: Dialog) -> str:
    """What a list's free-text row reads, with the lines below it (an input open in the row itself
    shows the text there, wrapped), not its row that submits."""
    if dialog.variant != "list" or dialog.other_at is None:
        return ""
    return " ".join(line for n, line in enumerate(dialog.lines) if n >= dialog.other_at and n != dialog.commit_at)


def opened(dialog: Dialog, step: Step) -> bool:
    """Whether ``step``, the key that opens the free-text row's input, is not to be sent: that
    row is highlighted and its input already open (a row that opens it as it is highlighted)."""
    if not step.opens or not dialog.typing:
        return False
    now = rows(dialog)
    at_row = now.other is not None and now.cursor == now.other == step.cursor
    return at_row and _rows_unready(now, replace(step, cursor_text=None)) is None


def _rows_unready(now: Rows, step: Step) -> str | None:
    """Why the rows as drawn now are not in the state ``step`` expects: the boxes ticked, the
    highlighted row (on a form's review: the one that submits it)."""
    if step.checked is not None:
        if not boxes_readable(now):
            return "the dialog's rows show no check box to read"
        ticked = tuple(i for i, on in enumerate(now.checked) if on)
        if ticked != step.checked:
            shown = ", ".join(repr(clean(now.texts[i], 40)) for i in ticked) or "none"
            return f"the dialog's selection is not what this answer expects (ticked: {shown})"
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


# How pi's editor (pi-tui's, in pi's question and questionnaire dialogs) draws a text, from its
# render and paste code (0.73.1 and 1.6.0 alike): wrapped at words, this many columns of the
# pane left out (the dialog's indent, and one kept for the cursor); at most max(5, 30% of the
# terminal's rows) lines shown, the rest scrolled; a paste of over 1000 characters (UTF-16
# units) or over 10 lines shown as a one-line marker ("[paste #1 1234 chars]").
INPUT_MARGIN = 3
EDITOR_LINES = (5, 0.3)
PASTE_MARKER = (1000, 10)


def no_room(dialog: Dialog, plan: Plan, screen: str) -> str | None:
    """Why a terminal pane cannot show the question's dialog whole once the plan opens its text
    input (``None``: it can, or what that input adds is not known). A dialog at the bottom of a
    pane grows into the empty rows below pi's last line, then into the rows above it; past them
    its first lines, the question's text among them, scroll away, and no look can bind a key to
    the question any more: so nothing is typed."""
    layout = LAYOUTS.get(dialog.variant)
    texts = [step.paste for step in plan.steps if step.paste is not None]
    if layout is None or layout.input_rows is None or not texts:
        return None
    lines = screen.splitlines()
    inner = max(1, max(map(len, lines), default=0) - INPUT_MARGIN)
    least, share = EDITOR_LINES
    shown = max(min(_editor_lines(text, inner), max(least, int(len(lines) * share))) for text in texts)
    need = layout.input_rows + shown
    filled = max((i + 1 for i, line in enumerate(lines) if line.strip()), default=0)
    room = dialog.top + len(lines) - filled
    if room >= need:
        return None
    return (
        f"the pane ({len(lines)} rows) is too short for the question's dialog with its text input open"
        f" ({need} more rows, {room} free): make it taller, or answer in the terminal (pi-notifier goto)"
    )


def _editor_lines(text: str, width: int) -> int:
    """The lines pi's editor takes for ``text`` pasted into it, ``width`` columns wide: each line
    wrapped at words (a wide character: two columns); a large paste its marker's one."""
    chars, breaks = PASTE_MARKER
    if len(text.encode("utf-16-le")) // 2 > chars or text.count("\n") + 1 > breaks:
        return 1
    return sum(_wrapped(part, width) for part in text.split("\n"))


def _wrapped(line: str, width: int) -> int:
    columns = sum(2 if unicodedata.east_asian_width(ch) in "WF" else 1 for ch in line)
    return max(1, -(-columns // width), len(textwrap.wrap(line, width)))


def not_ours(dialog: Dialog | None, question: Question, step: Step) -> str | None:
    """Why the dialog seen is not ``question``'s at ``step`` (gone, or another's)."""
    if dialog is None:
        return "the question's dialog is no longer on screen"
    if step.answers is not None:
        return review_mismatch(dialog, question, step.answers)
    return bound(dialog, question, step.item, step.shows if step.item is None else ())


Items = tuple[QuestionItem, ...]
