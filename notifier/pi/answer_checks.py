"""The checks around answering a dialog by keys (pure: no I/O): before, that the dialog on screen
is the question's own, untouched (:func:`check_screen`); after, that the tool result pi recorded
is the answer the plan gave (:func:`result_mismatch`)."""

from __future__ import annotations

import re

from notifier.core.model import Question
from notifier.core.text import clean
from notifier.pi.keymaps import Plan, drawn_rows
from notifier.pi.screens import Dialog, names_line, rows, same_row, shows_text, squash

_BOX = re.compile(r"^\[[^\]]\]")


def _squash(text: str) -> str:
    return "".join(clean(text).casefold().split())


def _named(name: str, text: str) -> bool:
    """Whether ``text`` names ``name`` as a whole (not as a part of a longer word)."""
    return re.search(rf"(?<!\w){re.escape(name)}(?!\w)", text) is not None


def _whole_lines(text: str, lines: tuple[str, ...]) -> bool:
    """Whether ``text`` is what some run of whole lines shows (wrapped as the dialog wraps it):
    not merely a part of a longer question's text."""
    return shows_text(lines, text)


def _drawn_as(shown: str, drawn: str) -> bool:
    """Whether a row on screen is the row ``drawn``, in any state the dialog draws it in while it
    is answered: cut to the width, marked after its label (an editor open on it: " ✎", a
    text typed for it: ": text") or its check box toggled ("[x]" for "[ ]")."""
    if same_row(shown, drawn) or same_row(_BOX.sub("[ ]", shown, count=1), drawn):
        return True
    shown, drawn = clean(shown), clean(drawn)
    return shown.startswith((drawn + " ", drawn + ":"))


def bound(dialog: Dialog, question: Question, item: int | None, shows: tuple[str, ...] = ()) -> str | None:
    """Why the dialog on screen is not (or no longer) ``question``'s, at its question ``item``
    (``None``: the form's review, known by what it ``shows``); ``None`` if it is: it shows that
    question's text and exactly its rows, in order, in whatever state answering puts them.
    This is what binds every key to the question it is for: a look-alike next question (the
    same rows, another text) is not it."""
    items = question.items or (question.first,)
    if item is None:
        missing = next((t for t in shows if not dialog.shows(t)), None)
        return None if missing is None else f"the dialog on screen does not show {clean(missing, 60)!r}"
    it = items[item] if item < len(items) else items[0]
    if not _whole_lines(it.text, dialog.lines):
        return "the dialog on screen does not show this question"
    if it.options:
        now = rows(dialog)
        shown = now.texts
        if dialog.variant == "list":  # (read by its labels: the same labels, in the order drawn)
            labels = [t for i, t in enumerate(shown) if i != now.other]  # (not its free-text row)
            ok = sorted(labels) == sorted(o.label for o in it.options)
        else:
            drawn = drawn_rows(dialog.variant, it)
            ok = len(shown) == len(drawn) and all(_drawn_as(a, b) for a, b in zip(shown, drawn, strict=True))
        if not ok:
            return "the dialog on screen does not show this question's options"
    return None


def review_mismatch(dialog: Dialog, question: Question, answers: tuple[tuple[int, ...], ...]) -> str | None:
    """Why ``dialog`` is not the form's review showing ``answers`` (each question's chosen rows),
    ``None`` if it is: a review (:func:`notifier.pi.screens.find_review`) where, between the line
    naming each question and the next one's (the last: its list), the options chosen for it are
    named, each whole, and no other option of it."""
    if dialog.variant != "review":
        return "the dialog on screen is not the form's review"
    items = question.items or (question.first,)
    lines = [clean(line) for line in dialog.lines[: len(dialog.lines) - len(dialog.labels)]]
    names = [{squash(n) for n in (it.header, it.text) if n} for it in items]
    at: list[int] = []
    for want in names:
        start = at[-1] + 1 if at else 0
        found = next((n for n in range(start, len(lines)) if names_line(lines[n], want)), None)
        if found is None:
            return "the form's review does not name every question"
        at.append(found)
    for k, it in enumerate(items):
        end = at[k + 1] if k + 1 < len(at) else len(lines)
        said = " ".join(lines[at[k] : end])
        for n in (it.header, it.text):
            said = said.replace(n, " ") if n else said
        chosen = [it.options[p].label for p in answers[k]]
        others = [o.label for i, o in enumerate(it.options) if i not in answers[k]]
        others = [n for n in others if not any(n in c for c in chosen)]
        if not all(_named(c, said) for c in chosen) or any(_named(n, said) for n in others):
            names_ = ", ".join(repr(clean(c, 40)) for c in chosen)
            return f"the form's review does not show {names_} alone for {clean(it.header or it.text, 40)!r}"
    return None


def check_screen(dialog: Dialog, question: Question) -> str | None:
    """Why this dialog is not (or no longer) the untouched dialog of ``question``; ``None`` if it is:
    it shows the question, and exactly the rows this tool draws for it, in its order."""
    if dialog.variant == "list":
        return bound(dialog, question, 0)
    items = question.items or (question.first,)
    item = next((it for it in items if it.show_when is None), items[0])
    if not _squash(item.text) or _squash(item.text) not in _squash(" ".join(dialog.lines)):
        return "the dialog on screen does not show this question"
    if any("Your answer:" in line for line in dialog.lines):
        return "the dialog is in its text editor (answer it in the terminal)"
    if item.options:
        shown, drawn = rows(dialog).texts, drawn_rows(dialog.variant, item)
        if len(shown) != len(drawn) or not all(same_row(a, b) for a, b in zip(shown, drawn, strict=True)):
            return "the dialog on screen does not show this question's options as pi-notifier knows them"
    return None


def result_mismatch(variant: str, question: Question, done: Plan, text: str, details: object) -> str | None:
    """Why the tool result pi recorded is not the answer ``done`` gave (``None``: it is):
    ``text`` is the result's text, ``details`` its ``details``."""
    items = question.items or (question.first,)
    got = details if isinstance(details, dict) else {}
    typed = done.text.strip() if done.text is not None else None
    if variant == "list" and typed is not None:  # a tool whose record is not known: its text holds the text
        if squash(typed) in squash(text):
            return None
        return f"pi recorded {clean(text, 80)!r}, which does not hold the text typed"
    if variant == "list":  # a tool whose record is not known: its text must name the options chosen alone
        said = clean(text)
        for it in items:
            said = said.replace(it.text, " ")  # (the questions may name options themselves)
        picked = [it.options[p] for k, it in enumerate(items) for p in done.picks.get(k, [])]
        mine = {n for o in picked for n in (o.label, o.value) if n}
        others = {n for it in items for o in it.options if o not in picked for n in (o.label, o.value) if n}
        others = {n for n in others if not any(n in m for m in mine)}
        each = all(any(_named(n, said) for n in (o.label, o.value) if n) for o in picked)
        if each and not any(_named(n, said) for n in others):
            return None
        names = ", ".join(repr(clean(o.label, 40)) for o in picked)
        return f"pi recorded {clean(text, 80)!r}, which does not name {names} alone"
    if variant == "question":
        if typed is not None:
            return None if got.get("answer") == typed else "pi recorded another text than the one sent"
        (pick,) = done.picks[0]
        ok = (
            text.startswith(f"User selected: {pick + 1}. ")
            and clean(got.get("answer")) == items[0].options[pick].label
        )
        return None if ok else f"pi recorded {clean(text, 80)!r}, not option {pick + 1}"
    if variant == "questionnaire":
        answers: list[object] = got["answers"] if isinstance(got.get("answers"), list) else []
        if len(answers) != len(items):
            return "pi recorded another number of answers than were given"
        for i, entry in enumerate(answers):
            a = entry if isinstance(entry, dict) else {}
            if typed is not None:
                if not a.get("wasCustom") or a.get("label") != typed:
                    return "pi recorded another text than the one sent"
            elif a.get("wasCustom") or a.get("index") != done.picks[i][0] + 1:
                return f"pi recorded another answer for question {i + 1} than option {done.picks[i][0] + 1}"
        return None
    if variant == "pi-ask":
        if got.get("status") != "submitted":
            return "pi-ask did not record the form as submitted"
        answers = got["answers"] if isinstance(got.get("answers"), list) else []
        want: list[dict[str, object]] = []
        for i, picks in sorted(done.picks.items()):
            if picks:
                values = [items[i].options[p].value for p in sorted(picks)]
                want.append({"questionId": items[i].key, "selectedValues": values})
        if typed is not None:
            want = [{"questionId": items[0].key, "selectedValues": [], "customText": typed}]
        return None if answers == want else "pi-ask recorded other answers than the ones given"
    if variant == "dreki":
        answers = got["answers"] if isinstance(got.get("answers"), list) else []
        chosen = [[items[i].options[p].value for p in sorted(ps)] for i, ps in sorted(done.picks.items())]
        seen = [
            [o.get("value") for o in a.get("selectedOptions") or [] if isinstance(o, dict)]
            if isinstance(a, dict) else None
            for a in answers
        ]
        return None if seen == chosen else "the questionnaire recorded other answers than the ones given"
    return None
