"""What pi recorded is the answer given (pure): the tool result pi wrote for a question answered
by keys, read back by the shape of its record, whatever tool wrote it (the tools that write
such records: docs/question-tools.md; how a result ended is decided apart,
:mod:`notifier.pi.outcomes`)."""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, replace

from notifier.core.model import Option, Question, QuestionItem
from notifier.core.text import clean
from notifier.pi.keys import Items, Plan, names_alone
from notifier.pi.screens import squash


def result_mismatch(question: Question, done: Plan, text: str, details: object) -> str | None:
    """Why the tool result pi recorded is not the answer ``done`` gave (``None``: it is):
    ``text`` is the result's text, ``details`` its ``details``. By the shape of the record, not by
    which tool wrote it: where the details hold answer records (:func:`_records`), each question's
    names exactly the options chosen for it (or the text typed); else the text does."""
    items = question.items or (question.first,)
    typed = done.text.strip() if done.text is not None else None
    records = _records(details)
    # (a record of the kind given: a text typed, or options picked; none in the details: the text is)
    if records is None or not any((r.typed or r.names) if typed else (r.names or r.index is not None) for r in records):
        return _text_record(items, done, typed, text)
    return _records_mismatch(items, done, typed, records, text)


def _text_record(items: Items, done: Plan, typed: str | None, text: str) -> str | None:
    """A record with no answer records in its details: its text holds the text typed, or names
    the options chosen alone (the questions' own words taken out: they may name options themselves)."""
    if typed is not None:
        if squash(typed) in squash(text):
            return None
        return f"pi recorded {clean(text, 80)!r}, which does not hold the text typed"
    said = clean(text)
    for it in items:
        said = said.replace(it.text, " ")
    picked = [it.options[p] for k, it in enumerate(items) for p in done.picks.get(k, [])]
    others = [(o.label, o.value) for it in items for o in it.options if o not in picked]
    if names_alone(said, [(o.label, o.value) for o in picked], others):
        return None
    names = ", ".join(repr(clean(o.label, 40)) for o in picked)
    return f"pi recorded {clean(text, 80)!r}, which does not name {names} alone"


# The shapes of an answer record in a tool result's details, as data (the tools that write them:
# docs/question-tools.md; how a result ended is decided apart, notifier.pi.outcomes):
# - a list of per-question records under one of these keys (pi's questionnaire, pi-ask, dreki-gg):
_RECORD_LISTS = ("answers", "responses", "results", "selections")
# - else the details themselves are the one question's record (pi's question: ``answer``).
# In a record: which question it answers, the options it names (their labels or values: a text,
# a list of texts, or records with a value and a label), their number from 1, a text typed, and
# a flag that says the answer is a text typed.
_RECORD_IDS = ("questionId", "question_id", "id", "key")
_RECORD_NAMES = (
    "selectedValues", "selectedOptions", "selectedLabel", "selected", "selection", "values", "labels", "value",
    "label", "answer", "choice", "choices",
)  # fmt: skip
_RECORD_INDEX = "index"
_RECORD_TYPED = ("customText", "otherText", "freeText", "customInput", "custom", "text")
_RECORD_CUSTOM = ("wasCustom", "wasOtherSelected", "isCustom", "isOther")
_OPTION_NAMES = ("value", "label")


@dataclass(frozen=True)
class _Record:
    """One question's answer as a result's details record it."""

    key: str | None
    names: tuple[str, ...]  # the options named (labels or values)
    index: int | None  # the option's number from 1, where recorded
    typed: tuple[str, ...]  # texts recorded as typed
    custom: bool | None  # the record says the answer is a text typed (None: it does not say)


def _texts(value: object, depth: int = 0) -> list[str]:
    """The option names a record's value holds: a text, a list of them, records of an option."""
    if isinstance(value, str):
        return [value]
    if depth < 2 and isinstance(value, list):
        return [t for v in value for t in _texts(v, depth + 1)]
    if depth < 2 and isinstance(value, dict):
        return [t for k in _OPTION_NAMES for t in _texts(value.get(k), 2)]
    return []


def _record(value: object) -> _Record | None:
    """A record read by its shape (``None``: it records no answer there is a key for)."""
    if isinstance(value, (str, list)):
        return _Record(None, tuple(_texts(value)), None, (), None)
    if not isinstance(value, dict):
        return None
    if not any(k in value for k in (*_RECORD_NAMES, _RECORD_INDEX, *_RECORD_TYPED, *_RECORD_CUSTOM)):
        return None
    key = next((value[k] for k in _RECORD_IDS if isinstance(value.get(k), str)), None)
    index = value.get(_RECORD_INDEX)
    custom = next((value[k] for k in _RECORD_CUSTOM if isinstance(value.get(k), bool)), None)
    return _Record(
        key,
        tuple(t for k in _RECORD_NAMES for t in _texts(value.get(k))),
        index if isinstance(index, int) and not isinstance(index, bool) else None,
        tuple(value[k] for k in _RECORD_TYPED if isinstance(value.get(k), str)),
        custom,
    )


def _records(details: object) -> list[_Record] | None:
    """The answer records in a result's details: one per question answered (``None``: none)."""
    if not isinstance(details, dict):
        return None
    for k in _RECORD_LISTS:
        listed = details.get(k)
        if isinstance(listed, list):
            records = [_record(v) for v in listed]
            return [r for r in records if r is not None] if all(records) else None
        if isinstance(listed, dict) and listed:  # (keyed by their question: its id or its text)
            keyed = [(question, _record(value)) for question, value in listed.items()]
            return [replace(r, key=r.key or q) for q, r in keyed if r] if all(r for _, r in keyed) else None
    one = _record({k: v for k, v in details.items() if k not in _RECORD_IDS})
    return [one] if one is not None else None


def _matched(items: Items, done: Plan, typed: str | None, records: list[_Record]) -> dict[int, _Record] | str:
    """Each question's record: by its id where the records name the questions, else in order
    (one per question, or one per question answered); a reason when they cannot be matched."""
    keys = {it.key: k for k, it in enumerate(items) if it.key} | {it.text: k for k, it in enumerate(items)}
    if records and all(r.key is not None and r.key in keys for r in records):
        return {keys[r.key]: r for r in records if r.key is not None}
    answered = [0] if typed is not None else [k for k in sorted(done.picks) if done.picks[k]]
    if len(records) == len(items):
        return dict(enumerate(records))
    if len(records) == len(answered):
        return dict(zip(answered, records, strict=True))
    return f"pi recorded {len(records)} answers, for {len(answered)} questions answered"


def _records_mismatch(items: Items, done: Plan, typed: str | None, records: list[_Record], text: str) -> str | None:
    """Why the records are not the answer given: each question answered names exactly the
    options chosen (an option named under one name that another option has too, by its
    number: the record's, else the one the result's ``text`` puts before that name), a question
    skipped names none, a text typed is recorded as typed."""
    matched = _matched(items, done, typed, records)
    if isinstance(matched, str):
        return matched
    if typed is not None:
        got = matched.get(0)
        texts = (*got.typed, *(got.names if got.custom is not False else ())) if got is not None else ()
        if got is None or got.custom is False or not any(squash(t) == squash(typed) for t in texts):
            return "pi recorded another text than the one sent"
        return None
    for k, it in enumerate(items):
        picks = done.picks.get(k, [])
        got = matched.get(k)
        if got is None:
            if picks:
                return f"pi recorded no answer for question {k + 1}"
            continue
        if got.index is None and len(items) == 1:  # ("User selected: 2. Keep": the number the text gives it)
            got = replace(got, index=_number_in(text, it, got.names))
        why = _names_mismatch(it, picks, got)
        if why:
            return f"pi recorded another answer for question {k + 1} ({why})"
    return None


def _names_mismatch(item: QuestionItem, picks: list[int], got: _Record) -> str | None:
    """Why one question's record does not name exactly the options ``picks`` (``None``: it does)."""
    if got.custom:
        return "a text typed"
    if not got.names:
        return _number_mismatch(picks, got.index)
    if not picks:
        return "an option, for a question skipped"
    chosen = [item.options[p] for p in picks]
    names = {clean(n) for n in got.names}  # (as the question's own were read: a label over two lines is one)
    if not names <= _names_of(chosen) or not all(_names_of([o]) & names for o in chosen):
        shown = ", ".join(repr(clean(n, 40)) for n in got.names[:4])
        return f"{shown}, not {', '.join(repr(clean(o.label, 40)) for o in chosen)}"
    others = [o for i, o in enumerate(item.options) if i not in picks]
    if names & _names_of(others) and _number_mismatch(picks, got.index) is not None:
        return "a name that another option has too, and no number that tells them apart"
    return None


def _number_in(text: str, item: QuestionItem, names: Sequence[str]) -> int | None:
    """The one option number ``text`` writes right before one of ``names`` as a whole ("2. Keep",
    "2) Keep"), the question's own words taken out (``None``: none, or several numbers)."""
    said = text.replace(item.text, " ") if item.text else text
    found = {
        int(m.group(1))
        for name in dict.fromkeys(n for n in names if n)
        for m in re.finditer(rf"(?<![\w.])(\d{{1,4}})[.)]\s*{re.escape(name)}(?!\w)", said)
    }
    return found.pop() if len(found) == 1 else None


def _names_of(options: Sequence[Option]) -> set[str]:
    """The names a record may give these options by: their labels and values (cleaned)."""
    return {clean(n) for o in options for n in (o.label, o.value) if n is not None}


def _number_mismatch(picks: list[int], index: int | None) -> str | None:
    """Why a record's option number is not the one option picked (``None``: it is)."""
    if not picks:
        return None if index is None else "an option, for a question skipped"
    if index is None or len(picks) != 1:
        return "no option named"
    return None if index == picks[0] + 1 else f"option {index}, not option {picks[0] + 1}"
