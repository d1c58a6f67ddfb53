"""The checks around answering a dialog by keys (pure: no I/O): before, that the dialog on screen
is the question's own, untouched (:func:`check_screen`); after, that the tool result pi recorded
is the answer the plan gave (:func:`result_mismatch`)."""

from __future__ import annotations

from notifier.core.model import Question
from notifier.core.text import clean
from notifier.pi.keymaps import Plan, drawn_rows
from notifier.pi.screens import Dialog, rows, same_row


def _squash(text: str) -> str:
    return "".join(clean(text).casefold().split())


def check_screen(dialog: Dialog, question: Question) -> str | None:
    """Why this dialog is not (or no longer) the untouched dialog of ``question``; ``None`` if it is:
    it shows the question, and exactly the rows this tool draws for it, in its order."""
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
