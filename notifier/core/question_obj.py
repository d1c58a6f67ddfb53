"""A question as a plain JSON-able object and back, with every field it has: what the start-up
scan cache keeps of a pending question (:func:`notifier.core.reducer.summarize`) and what the
window is handed of its items (:func:`notifier.core.formats.items_obj`). Pure.

``from_obj(to_obj(q)) == q`` for every question; :func:`from_obj` takes only what
:func:`to_obj` writes (exactly its fields, each of its type) and raises :class:`ValueError` on
anything else, so a summary read back from disk is checked by the same code that reads it."""

from __future__ import annotations

import math
from typing import Any, NamedTuple, get_args

from notifier.core.model import DialogKind, Option, Question, QuestionItem, QuestionKind

_KINDS = frozenset(get_args(QuestionKind))
_DIALOGS = frozenset(get_args(DialogKind))
QUESTION_FIELDS = frozenset(
    {"tool_call_id", "tool", "asked_at", "title", "instructions", "kind", "dialog", "items"}
)
ITEM_FIELDS = frozenset(
    {"text", "header", "detail", "multi", "options", "key", "required", "show_when", "other"}
)
OPTION_FIELDS = frozenset({"label", "description", "recommended", "value"})


def to_obj(q: Question) -> dict[str, Any]:
    """Every field of ``q``, as JSON can say it (``show_when`` as a two-string list)."""
    return {
        "tool_call_id": q.tool_call_id,
        "tool": q.tool,
        "asked_at": q.asked_at,
        "title": q.title,
        "instructions": q.instructions,
        "kind": q.kind,
        "dialog": q.dialog,
        "items": [item_obj(it) for it in q.items],
    }


def item_obj(it: QuestionItem) -> dict[str, Any]:
    """One item of a question, every field (its options as objects)."""
    return {
        "text": it.text,
        "header": it.header,
        "detail": it.detail,
        "multi": it.multi,
        "options": [
            {"label": o.label, "description": o.description, "recommended": o.recommended, "value": o.value}
            for o in it.options
        ],
        "key": it.key,
        "required": it.required,
        "show_when": list(it.show_when) if it.show_when is not None else None,
        "other": it.other,
    }


def from_obj(obj: object, max_text: int | None = None, max_list: int | None = None) -> Question:
    """The question :func:`to_obj` made ``obj`` of. ``max_text``, ``max_list``: the most
    characters of any string and entries of any list taken. Raises :class:`ValueError` on
    anything :func:`to_obj` never writes (a missing or extra field, a wrong type, a time that is
    not finite, an unknown kind)."""
    d = _fields(obj, QUESTION_FIELDS)
    at = d["asked_at"]
    if type(at) not in (int, float) or not math.isfinite(at):
        raise ValueError("a question's time is not a finite number")
    kind, dialog = d["kind"], d["dialog"]
    if kind not in _KINDS or not (dialog is None or dialog in _DIALOGS):
        raise ValueError("a question of an unknown kind")
    limit = _Limit(max_text, max_list)
    return Question(
        tool_call_id=_str(d["tool_call_id"], limit),
        tool=_str(d["tool"], limit),
        items=tuple(_item(it, limit) for it in _list(d["items"], limit)),
        asked_at=float(at),
        title=_opt(d["title"], limit),
        kind=kind,
        dialog=dialog,
        instructions=_opt(d["instructions"], limit),
    )


def _item(obj: object, limit: _Limit) -> QuestionItem:
    d = _fields(obj, ITEM_FIELDS)
    show_when = d["show_when"]
    if show_when is not None:
        if type(show_when) is not list or len(show_when) != 2:
            raise ValueError("a question object holds a wrong condition")
        show_when = (_str(show_when[0], limit), _str(show_when[1], limit))
    return QuestionItem(
        text=_str(d["text"], limit),
        header=_opt(d["header"], limit),
        detail=_opt(d["detail"], limit),
        options=tuple(_option(o, limit) for o in _list(d["options"], limit)),
        multi=_bool(d["multi"]),
        key=_opt(d["key"], limit),
        required=_bool(d["required"]),
        show_when=show_when,
        other=_bool(d["other"]),
    )


def _option(obj: object, limit: _Limit) -> Option:
    d = _fields(obj, OPTION_FIELDS)
    return Option(
        _str(d["label"], limit),
        _opt(d["description"], limit),
        _bool(d["recommended"]),
        _opt(d["value"], limit),
    )


class _Limit(NamedTuple):
    text: int | None
    list: int | None


def _fields(obj: object, names: frozenset[str]) -> dict[str, Any]:  # (exactly these, any order)
    if not isinstance(obj, dict) or obj.keys() != names:
        raise ValueError("a question object has the wrong fields")
    return obj


def _list(value: object, limit: _Limit) -> list[Any]:
    if type(value) is not list or (limit.list is not None and len(value) > limit.list):
        raise ValueError("a question object holds a wrong or oversized list")
    return value


def _str(value: object, limit: _Limit) -> str:
    if type(value) is not str or (limit.text is not None and len(value) > limit.text):
        raise ValueError("a question object holds a wrong or oversized string")
    return value


def _opt(value: object, limit: _Limit) -> str | None:
    return None if value is None else _str(value, limit)


def _bool(value: object) -> bool:
    if type(value) is not bool:
        raise ValueError("a question object holds a wrong flag")
    return value
