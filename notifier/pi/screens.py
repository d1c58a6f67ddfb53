"""Reading a question tool's dialog off a terminal screen (pure: it takes the captured text).

What ``answer`` types is checked against what pi really draws, so the facts here come from each
tool's own rendering, checked against the real tool:

- ``question`` and ``questionnaire`` (pi's examples): a row is ``> N. label`` (the cursor) or
  ``  N. label``, a long label wrapped below it, a description indented five spaces; after the
  options a free-text row ("Type something.").
- ``ask_user_question`` (pi-ask): a row is ``> label`` or ``  label`` cut to the width, the
  recommended ones first with " (Recommended)" after the label, a description indented four
  spaces; the rows follow the line "Choose one", "Choose any that apply" or "Optional — press
  Enter to skip" and end with "Other — add your own answer". Its last tab is "Review your answers".
- ``questionnaire`` (dreki-gg): ``> [ ] label`` / ``  [x] label`` rows, "Other" last.

These are data (:data:`KNOWN`: one :class:`Drawn` a layout, its help lines and how its rows are
drawn) for one reader; any other dialog drawn as a list is read by its labels (:func:`find_list`).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import cached_property

from notifier.core.text import clean

_BORDER = re.compile(r"^─{8,}$")
_MAX_DIALOG_LINES = 80
PI_ASK_OTHER = "Other — add your own answer"


@dataclass(frozen=True)
class Drawn:
    """How a tool's own dialog is drawn: data for :func:`find_dialog` and the one reader of its
    rows (:func:`_own_rows`)."""

    help: re.Pattern[str]  # the help lines that identify it (every tab and editor of it)
    row: re.Pattern[str]  # a row: its ``mark`` ("> " on the highlighted one), its ``text``
    numbered: bool = False  # rows read "N. label" numbered 1, 2, … (a line out of that order is no row,
    # and a "> " at its start makes the highlighted row unknown)
    after: tuple[str, ...] = ()  # the rows follow one of these lines, and end at a blank line below them
    last: str | None = None  # the row that ends the list (its start)


_NUMBERED = re.compile(r"^(?P<mark>> |  )(?P<n>\d+)\.(?: (?P<text>.*))?$")
# Each layout known by its help line, whatever the tool that draws it is called (a copy of pi's
# example under another name draws the same dialog).
KNOWN: dict[str, Drawn] = {
    "question": Drawn(
        re.compile(r"↑↓ navigate • Enter to select • Esc to cancel|Enter to submit • Esc to go back"), _NUMBERED, True
    ),
    "questionnaire": Drawn(
        re.compile(
            r"↑↓ navigate • Enter select • Esc cancel|Tab/←→ navigate • ↑↓ select • Enter confirm"
            r"|Enter to submit • Esc to cancel"
        ),
        _NUMBERED,
        True,
    ),
    "pi-ask": Drawn(
        re.compile(
            r"Space select/toggle\s+•\s+Enter confirm|←→/Tab tabs\s+•\s+Enter submit\s+•\s+Esc dismiss"
            r"|Enter to save\s+•\s+Esc to cancel"
        ),
        re.compile(r"^(?:(?P<mark>> )|  (?!  ))(?P<text>.*)$"),
        after=("Choose one", "Choose any that apply", "Optional — press Enter to skip"),
        last=PI_ASK_OTHER,
    ),
    "dreki": Drawn(re.compile(r"Space select/edit • r review"), re.compile(r"^(?P<mark>> |  )(?P<text>\[.*)$")),
}


@dataclass(frozen=True)
class Dialog:
    variant: str  # a layout known by its help line ("question", "questionnaire", "pi-ask", "dreki"), "list", "review"
    raw: tuple[str, ...]  # the dialog's own lines on screen as captured (their columns kept)
    top: int = 0  # the screen line (from 0) of its first line
    labels: tuple[str, ...] = ()  # "list": the option labels its rows show (find_list); "review": its list's rows
    below: str = ""  # "list": what it draws below its rows (a help line, an open input), cleaned, on one line
    above: str = ""  # "list": what it draws above the question's text (a form's tab bar), cleaned, on one line
    other_at: int | None = None  # "list": its free-text row (a line of ``raw``), if drawn
    commit_at: int | None = None  # "list": its row that submits what is ticked ("Submit", "Next"), if drawn

    @cached_property
    def lines(self) -> tuple[str, ...]:
        """The same lines, cleaned."""
        return tuple(clean(line) for line in self.raw)

    def shows(self, text: str) -> bool:
        return clean(text).casefold() in " ".join(line for line in self.lines if line).casefold()

    # What a list's help line (``below``) and tab bar (``above``) say, as data for its keys:
    @property
    def toggles(self) -> bool:
        """Its help says Space selects (Enter alone does not choose)."""
        return bool(_SPACE_SELECTS.search(self.below))

    @property
    def toggle_key(self) -> str | None:
        """The key its help says ticks a row ("Space select", "x to toggle"), as tmux names it
        (``None``: the help names no such key, or two)."""
        found = {"Space" if m.group(1).casefold() == "space" else m.group(1) for m in _TOGGLE_HELP.finditer(self.below)}
        found.discard("Enter")
        return found.pop() if len(found) == 1 else None

    @property
    def submits(self) -> bool:
        """Its help says Enter submits what is chosen ("Enter submit", "Enter to confirm")."""
        return bool(_SUBMIT_HELP.search(self.below))

    @property
    def reviews(self) -> bool:
        """A form's tab bar names a step of its own that submits it ("□ Task  □ Release  ✓ Submit")."""
        return bool(_REVIEW_TAB.search(self.above))

    @property
    def helps(self) -> bool:
        """It draws a help line below its rows that speaks of them (moving, selecting)."""
        return bool(_LIST_HELP.search(self.below))

    @property
    def typing(self) -> bool:
        """It shows an open input: its help says Enter saves or submits the text, and no longer
        speaks of moving between or selecting rows; or it names the key that breaks a line of the
        text ("Shift+Enter for newline": an editor has the keys)."""
        return _typing(self.below)


@dataclass(frozen=True)
class Rows:
    """The option rows a dialog draws now: each row's text as shown (cleaned), and which one is
    highlighted (``None``: no row is, or more than one line looks highlighted)."""

    texts: tuple[str, ...]
    cursor: int | None
    checked: tuple[bool | None, ...] = ()  # "list": each row's radio or check box (None: none drawn)
    other: int | None = None  # "list": the row that opens a typed answer ("Other", "Type something"), if drawn
    commit: int | None = None  # "list": the row below the options that submits what is ticked ("Submit", "Next")


def find_dialog(screen: str) -> Dialog | None:
    """The dialog of a layout known by its help line (:data:`KNOWN`) at the bottom of a
    captured screen, or ``None``; whichever tool draws it (which question it shows is checked
    apart: :func:`notifier.pi.keys.check_screen`).

    The dialog is the block that ends with its help line, up to the border line above it (or
    at most 80 lines). Only the last help line on screen counts, and it must be among the last
    lines of the screen (below it only a border, pi's footer and blank lines)."""
    raw = screen.splitlines()
    lines = [clean(line) for line in raw]
    # pi's own rules start at column 0; an editor inside a dialog draws its rules indented
    border = [bool(_BORDER.match(line.rstrip())) for line in raw]
    found: tuple[int, str] | None = None  # (the line of the lowest help line, its layout)
    for variant, drawn in KNOWN.items():
        hits = [i for i, line in enumerate(lines) if drawn.help.search(line)]
        if hits and (found is None or hits[-1] > found[0]):
            found = (hits[-1], variant)
    if found is None:
        return None
    end, variant = found
    below = [line for i, line in enumerate(lines[end + 1 :], end + 1) if line and not border[i]]
    if len(below) > 3:
        return None  # something was drawn below it: that help line is history, not the live dialog
    start = end
    while start > 0 and end - start < _MAX_DIALOG_LINES and not border[start - 1]:
        start -= 1
    return Dialog(variant, tuple(raw[start : end + 1]), start)


def rows(dialog: Dialog) -> Rows:
    """The option rows the dialog shows (see the module's docstring for each tool's layout)."""
    if dialog.variant == "list":
        return _listed(dialog.raw, dialog.labels, dialog.other_at, dialog.commit_at)
    if dialog.variant == "review":  # (its list of steps is its last lines)
        return _listed(dialog.raw[len(dialog.raw) - len(dialog.labels) :], dialog.labels)
    return _own_rows(dialog.raw, KNOWN[dialog.variant])


def _own_rows(raw: tuple[str, ...], drawn: Drawn) -> Rows:
    """The rows of a tool's own dialog, read as ``drawn`` says it draws them."""
    texts: list[str] = []
    cursor: int | None = None
    cursors = 0
    inside = not drawn.after
    for line in raw:
        if not inside:
            inside = clean(line) in drawn.after
            continue
        if drawn.after and not line.strip():
            if texts:
                break
            continue
        m = drawn.row.match(line.rstrip() if drawn.numbered else line)
        if m is None or (drawn.numbered and int(m.group("n")) != len(texts) + 1):
            cursors += drawn.numbered and line.startswith("> ")
            continue
        if m.group("mark") == "> ":
            cursor = len(texts)
            cursors += 1
        text = clean(m.group("text") or "")
        texts.append(f"{m.group('n')}. {text}".rstrip() if drawn.numbered else text)
        if drawn.last is not None and text.startswith(drawn.last):
            break
    return Rows(tuple(texts), cursor if cursors == 1 else None)


def same_row(shown: str, drawn: str) -> bool:
    """Whether a row shown on screen is the row ``drawn`` (its full text): equal, or its start
    where the tool cut or wrapped it (at least one character of the label shown)."""
    shown, drawn = clean(shown), clean(drawn)
    if shown == drawn:
        return True
    return bool(shown) and drawn.startswith(shown) and len(shown) >= min(len(drawn), 8)


# ---- any dialog drawn as a list (find_list) ----
# A row as such dialogs draw it: a cursor mark on the highlighted row only, then a number and a state
# mark (a radio or a check box) in either order, the label. The cursor marks are data: what tells the highlighted
# row from the others is that it alone has one.
CURSOR_MARKS = "❯>›▶▸►→➜➤👉"
_STATE = r"(?:[☐☑☒✓✔●○◉◯◦•]|\[[ xX✓✔*]\]|\([ xX•*]\))"
_ROW = re.compile(
    rf"^(?P<prefix>\s*(?:[{CURSOR_MARKS}]\s*)?(?:{_STATE}\s*)?(?:\d+[.)]\s*)?(?:{_STATE}\s*)?)(?P<label>\S.*?)\s*$"
)
_CHECKED = re.compile(r"[☑☒✓✔●◉]|\[[xX✓✔*]\]|\([xX•*]\)")
_UNCHECKED = re.compile(r"[☐○◯◦]|\[ \]|\( \)")
_NOTES = (" (", " — ", " – ", " - ")  # what a tool draws after a label: "(Recommended)", "— what it means"
_SPACE_SELECTS = re.compile(r"\bspace\b(?: to)? (?:select|toggle|choose|pick)", re.IGNORECASE)
# A help line's words, as data: "<key> [to] toggle", "Enter [to] submit". The key is a named key or
# one printable character; what it does is one of these verbs.
_TOGGLE_VERBS = "select|toggle|check|tick|choose|pick|mark"
_SUBMIT_VERBS = "submit|confirm|done|finish|send|accept"
_TOGGLE_HELP = re.compile(rf"(?:^|[\s•·|,/])(space|\S)(?: to)? (?:{_TOGGLE_VERBS})\b", re.IGNORECASE)
_SUBMIT_HELP = re.compile(rf"\benter(?: to)? (?:\w+ ?/ ?)?(?:{_SUBMIT_VERBS})\b", re.IGNORECASE)  # ("next/submit")
_NUMBERED_TEXT = re.compile(r"^(?:q?\d+[.):]?)")
_TEXT_NOTE = re.compile(r"^(?:\[[^\]]*\]|\([^)]*\))$")  # after a question's text: "[single-select]"
_MAX_LIST_LINES = 60
# The row below the options that opens a typed answer, by what it reads (words as data).
_OTHER_ROW = re.compile(
    r"^(?:other\b|type (?:something|your own|an? answer)|something else|custom answer|write (?:in|your own))",
    re.IGNORECASE,
)
_MAX_OTHER_GAP = 6  # how many lines below the last option such a row may be (descriptions between)
# An open input's help: Enter saves or submits the text, and no row is navigated any more.
_INPUT_HELP = re.compile(r"\benter(?: to)? (?:save|submit|send|confirm)", re.IGNORECASE)
_LIST_HELP = re.compile(r"↑|↓|\bnavigate\b|\boptions?\b|\bselect\b|\btoggle\b", re.IGNORECASE)
# An editor's help: the key that breaks a line of the text ("Shift+Enter for newline"), named as a
# key (not a description's words: "adds a final newline").
_EDITING_HELP = re.compile(
    r"\b(?:shift|ctrl|alt|meta|option)\+(?:enter|return|j)\W*(?:(?:to|for|inserts?|adds?)\s+)*(?:an?\s+)?new ?line\b",
    re.IGNORECASE,
)
# A help line's shape, as data: parts set apart by "·", "•", "|"; each a key (a named one, arrows,
# a chord, one character), then what it does ("to select", "for newline", "toggle").
_HINT_SEPARATOR = re.compile(r"\s+[·•|]\s+")
_KEY_NAME = (
    r"(?:(?:ctrl|alt|shift|cmd|meta|option)\+\S+|enter|return|esc(?:ape)?|space|tab|backspace|delete|home|end"
    r"|pg ?up|pg ?down|[↑↓←→]+)"
)
_NAMED_KEY = re.compile(rf"^(?:press )?{_KEY_NAME}(?:/(?:{_KEY_NAME}|\S))*(?=[\s:]|$)", re.IGNORECASE)
_HINT_PART = re.compile(
    rf"^(?:press )?(?:{_KEY_NAME}(?:/(?:{_KEY_NAME}|\S))*:? (?:(?:to|for) )?\w|\S (?:to|for) \w)", re.IGNORECASE
)
# The row that submits what is ticked, by what it reads (words as data).
_COMMIT_ROW = re.compile(r"^(?:submit|next|done|continue|confirm|finish)(?: answers?)?$", re.IGNORECASE)
_CURSOR_ROW = re.compile(rf"^\s*[{CURSOR_MARKS}]")
_ANY_ROW = re.compile(
    rf"^(?P<prefix>\s*(?:[{CURSOR_MARKS}]\s*)?(?:{_STATE}\s*)?(?:\d+[.)]\s*)?(?:{_STATE}\s*)?)(?P<label>.*?)\s*$"
)


def _typing(below: str) -> bool:
    """Whether what a list draws below its rows shows an open input (:attr:`Dialog.typing`)."""
    return (bool(_INPUT_HELP.search(below)) and not _LIST_HELP.search(below)) or bool(_EDITING_HELP.search(below))


def noted(shown: str, label: str) -> bool:
    """Whether a row reads ``label`` with a note after it ("(Recommended)", "— what it means")."""
    if shown.startswith(label + " (") and shown.endswith(")"):
        return True
    return any(shown.startswith(label + n) for n in _NOTES[1:])


def _row_of(line: str, labels: tuple[str, ...]) -> tuple[int, str] | None:
    """(which label, the row's prefix) when ``line`` is the row of one of ``labels``."""
    m = _ROW.match(line)
    if m is None:
        return None
    label = clean(m.group("label"))
    found = [i for i, want in enumerate(labels) if label == want]
    if not found:  # a note the tool puts after a label ("Bug fix (Recommended)"), or a label cut short
        with_note = [i for i, want in enumerate(labels) if noted(label, want)]
        longest = max((len(labels[i]) for i in with_note), default=0)
        found = [i for i in with_note if len(labels[i]) == longest] or [
            i for i, want in enumerate(labels) if same_row(label, want)
        ]
    return (found[0], m.group("prefix")) if len(found) == 1 else None


def squash(text: str) -> str:
    """Text as compared across line breaks: cleaned, casefolded, without white space."""
    return "".join(clean(text).casefold().split())


def shows_text(lines: tuple[str, ...] | list[str], text: str) -> bool:
    """Whether some run of whole ``lines`` reads ``text`` (wrapped as a dialog wraps it, its
    number before it as a form numbers its questions, or not): not a part of a longer text."""
    want = squash(text)
    squashed = [squash(line) for line in lines]
    return bool(want) and any(_text_at(squashed, i, want) is not None for i in range(len(squashed)))


def _text_at(squashed: list[str], start: int, want: str) -> int | None:
    """The end of the lines from ``start`` that read ``want`` (its number before it, as a form
    numbers its questions, or not), else None."""
    for first in dict.fromkeys((squashed[start], _NUMBERED_TEXT.sub("", squashed[start], count=1))):
        got, end = first, start + 1
        while end < len(squashed) and len(got) < len(want):
            got += squashed[end]
            end += 1
        if got == want or (got.startswith(want) and _TEXT_NOTE.match(got[len(want) :])):
            return end
    return None


def find_list(screen: str, text: str, labels: tuple[str, ...]) -> Dialog | None:
    """A dialog of any tool that asks ``text`` and draws ``labels`` as a list, at the bottom of
    the screen: the last lines that show the question's text, then every label on a row of its
    own (in any order, each once, within 60 lines), then the rows of its own below them where
    drawn: a free-text row (:func:`_other_row`; or, its input open, :func:`_open_row`) and a row
    that submits what is ticked (:func:`_commit_row`). What it draws below them down to its bottom
    rule, and the help lines just under that rule, are ``below``. ``None`` when the screen does not
    show it so."""
    if not labels or not clean(text):
        return None
    raw = screen.splitlines()
    squashed = [squash(line) for line in raw]
    want = squash(text)
    for start in range(len(raw) - 1, -1, -1):
        end = _text_at(squashed, start, want)
        if end is None:
            continue
        seen: dict[int, int] = {}
        for n in range(end, min(len(raw), end + _MAX_LIST_LINES)):
            row = _row_of(raw[n], labels)
            if row is not None:
                if row[0] in seen:
                    return None  # a label on two rows: which is which cannot be read
                seen[row[0]] = n
        if len(seen) != len(labels):
            return None
        # (ending at its free-text row and at its row that submits the ticks, where it draws them)
        last = max(seen.values())
        other = _other_row(raw, last)
        if other is None and _typing(_said_below(raw, last)):  # (a free-text row that is the open input itself)
            other = _open_row(raw, last, labels)
        commit = _commit_row(raw, last if other is None else other, _indent(raw[last]))
        end = max(n for n in (last, other, commit) if n is not None)
        lines = tuple(raw[start : end + 1])
        below = _said_below(raw, end)
        above = " ".join(clean(line) for line in reversed(_to_border(raw[max(0, start - 8) : start][::-1])))
        at = {n: None if n is None else n - start for n in (other, commit)}
        return Dialog("list", lines, start, labels, below, above, at[other], at[commit])
    return None


def _said_below(raw: list[str], end: int) -> str:
    """What a list draws below its last row (``end``), cleaned, on one line: its lines down to its
    own bottom rule, then the help lines drawn just under that rule (:func:`_help_under`)."""
    tail = raw[end + 1 : end + 1 + _MAX_LIST_LINES]
    inside = _to_border(tail)
    return " ".join(clean(line) for line in [*inside, *_help_under(tail[len(inside) :])])


def _help_under(lines: list[str]) -> list[str]:
    """The help lines a dialog draws just under its bottom rule (``lines`` start at that rule):
    after blank lines, each line that reads as key hints (:func:`_key_hints`), down to the first
    that does not. Nothing where ``lines`` do not start at a rule."""
    if not lines or not _BORDER.match(lines[0].rstrip()):
        return []
    n = 1
    while n < len(lines) and n <= 2 and not clean(lines[n]):
        n += 1
    found = []
    while n < len(lines) and _key_hints(clean(lines[n])):
        found.append(lines[n])
        n += 1
    return found


def _key_hints(line: str) -> bool:
    """Whether a line reads as a help line of key hints: parts set apart by "·", "•" or "|",
    each a key and what it does ("Enter to select", "↑/↓ to navigate", "Space toggle", "n to add
    notes"; the last may be cut short with "…"), at least two, one naming a key by its name or
    an arrow."""
    parts = [p.strip() for p in _HINT_SEPARATOR.split(line.strip())]
    if parts and parts[-1].endswith("…"):
        parts.pop()
    if len(parts) < 2 or not all(_HINT_PART.match(p) for p in parts):
        return False
    return any(_NAMED_KEY.match(p) for p in parts)


def find_review(screen: str, names: tuple[tuple[str, ...], ...]) -> Dialog | None:
    """A form's review step at the bottom of the screen: a line naming each question (one of its
    ``names``: its header or its text), in the form's order, each on a line of its own with its
    answer below or after it, then either a list with one row that submits (``❯ 1. Submit
    answers``), its rows the last lines of the dialog read, or no list and a line that says Enter
    submits (``Press Enter to submit``: ``submits``). ``None`` when the screen does not show it so."""
    raw = screen.splitlines()
    wanted = [{squash(n) for n in each if clean(n)} for each in names]
    if not wanted or not all(wanted):
        return None
    for start in range(len(raw) - 1, -1, -1):
        end = min(len(raw), start + _MAX_LIST_LINES)
        at = named_in_order(raw, wanted, start, end) if names_line(raw[start], wanted[0]) else None
        if at is None:
            continue
        steps = _review_rows(raw, at[-1] + 1, end)
        if steps is None:
            return _review_without_list(raw, start, at[-1] + 1, end)
        first, labels = steps
        lines = tuple(raw[start : first + len(labels)])
        below = " ".join(clean(line) for line in _to_border(raw[first + len(labels) : first + len(labels) + 8]))
        return Dialog("review", lines, start, labels, below=below)
    return None


def _review_without_list(raw: list[str], start: int, begin: int, end: int) -> Dialog | None:
    """A review with no list of its own: down to the line below the answers that says Enter
    submits (and no row with a cursor mark at its start between: a list not read is not guessed at)."""
    for n in range(begin, end):
        lead = raw[n][:2].strip()
        if lead and lead[0] in CURSOR_MARKS:
            return None
        if _SUBMIT_HELP.search(clean(raw[n])):
            return Dialog("review", tuple(raw[start : n + 1]), start, below=clean(raw[n]))
    return None


def named_in_order(lines: list[str], wanted: list[set[str]], begin: int, end: int) -> list[int] | None:
    """The lines from ``begin`` to ``end`` that name each question in turn (``wanted``: each one's
    names, squashed), each below the one before; ``None``: a question is not named so."""
    at: list[int] = []
    for want in wanted:
        found = next((n for n in range(at[-1] + 1 if at else begin, end) if names_line(lines[n], want)), None)
        if found is None:
            return None
        at.append(found)
    return at


def names_line(line: str, want: set[str]) -> bool:
    """Whether a review's line names a question (``want``: its header and text, squashed): after
    the marks before it, that alone, or with a colon and its answer after it."""
    squashed = squash(_ROW_MARKS.sub("", line))
    return any(squashed == w or squashed.startswith(w + ":") for w in want)


def _review_rows(raw: list[str], begin: int, end: int) -> tuple[int, tuple[str, ...]] | None:
    """(the first line, the labels) of the review's list: the one run of row lines, at one label
    column, that holds exactly one row reading as a submit step (``None``: none, or several)."""
    found: list[tuple[int, tuple[str, ...]]] = []
    n = begin
    while n < end:
        run: list[str] = []
        column = None
        while n < end:
            m = _ROW.match(raw[n])
            if m is None or (column is not None and m.start("label") != column) or not _ROWISH.match(m.group("prefix")):
                break
            column = m.start("label")
            run.append(clean(m.group("label")))
            n += 1
        if sum(bool(_SUBMIT_ROW.match(label)) for label in run) == 1 and len(set(run)) == len(run):
            found.append((n - len(run), tuple(run)))
        n += 1 if not run else 0
    return found[-1] if len(found) == 1 else None


def submit_row(text: str) -> bool:
    """Whether a row reads as the step that submits a form ("Submit answers", "Confirm")."""
    return bool(_SUBMIT_ROW.match(clean(text)))


# A review's words, as data: a tab that names the step, a row that submits.
_REVIEW_TAB = re.compile(r"(?:^|\s)(?:[✓✔☐□■●○]\s*)?(?:submit|review|confirm)\b", re.IGNORECASE)
_SUBMIT_ROW = re.compile(r"^(?:submit|confirm|send|finish|done)\b", re.IGNORECASE)
_ROW_MARKS = re.compile(rf"^[\s{CURSOR_MARKS}●○•◦·→\-–—*]*")  # (before a name or an answer in a review)
# a row's prefix: a cursor and a number, or spaces
_ROWISH = re.compile(rf"^\s*(?:[{CURSOR_MARKS}]\s*)?(?:\d+[.)]\s*)?$")


def _to_border(lines: list[str]) -> list[str]:
    """The lines down to a rule at column 0 (the dialog's own border: pi's footer is below it;
    an input inside the dialog draws its rules indented)."""
    end = next((i for i, line in enumerate(lines) if _BORDER.match(line.rstrip())), len(lines))
    return lines[:end]


def _open_row(raw: list[str], last: int, labels: tuple[str, ...]) -> int | None:
    """The screen line of a free-text row that is the open input itself, just below the last
    option's row: the one row there with a cursor mark, that reads no option (it shows the text
    typed, or nothing yet)."""
    for n in range(last + 1, min(len(raw), last + 1 + _MAX_OTHER_GAP)):
        if _BORDER.match(raw[n].rstrip()):
            return None
        if _CURSOR_ROW.match(raw[n]) and _row_of(raw[n], labels) is None:
            return n
    return None


def _indent(line: str) -> int:
    """Where a row's own text starts, its cursor mark (and the blanks around it) not counted."""
    return len(line) - len(line.lstrip(" " + CURSOR_MARKS))


def _commit_row(raw: list[str], after: int, indent: int) -> int | None:
    """The screen line of the row that submits what is ticked ("Submit", "Next"), drawn just
    below the free-text row (else the last option's row), without a box of its own, as a row:
    starting where the options' rows do (``indent``), not a line of an option's description."""
    for n in range(after + 1, min(len(raw), after + 1 + _MAX_OTHER_GAP)):
        if _BORDER.match(raw[n].rstrip()):
            return None
        m = _ROW.match(raw[n])
        if (
            m is not None
            and _indent(raw[n]) == indent
            and _COMMIT_ROW.match(clean(m.group("label")))
            and not re.search(_STATE, m.group("prefix"))
        ):
            return n
    return None


def _other_row(raw: list[str], last: int) -> int | None:
    """The screen line of the row that opens a typed answer, just below the last option's row."""
    for n in range(last + 1, min(len(raw), last + 1 + _MAX_OTHER_GAP)):
        m = _ROW.match(raw[n])
        if m is not None and _OTHER_ROW.match(clean(m.group("label"))):
            return n
    return None


def _listed(
    raw: tuple[str, ...], labels: tuple[str, ...], other_at: int | None = None, commit_at: int | None = None
) -> Rows:
    """The rows of a list dialog in screen order (its options' rows, then its free-text row and
    its row that submits, at those lines where drawn); the highlighted one is the one row whose
    prefix has a cursor mark (none or several: not known)."""
    extra = {n for n in (other_at, commit_at) if n is not None}
    found = [
        (labels[row[0]], row[1])
        for row in (_row_of(line, labels) for n, line in enumerate(raw) if n not in extra)
        if row is not None
    ]
    other = commit = None
    for n in sorted(extra):
        m = _ANY_ROW.match(raw[n])
        assert m is not None  # (it matches any line)
        if n == other_at:
            other = len(found)
        else:
            commit = len(found)
        found.append((clean(m.group("label")), m.group("prefix")))
    marked = [i for i, (_, prefix) in enumerate(found) if any(c in prefix for c in CURSOR_MARKS)]
    checked = tuple(True if _CHECKED.search(p) else False if _UNCHECKED.search(p) else None for _, p in found)
    return Rows(tuple(t for t, _ in found), marked[0] if len(marked) == 1 else None, checked, other, commit)
