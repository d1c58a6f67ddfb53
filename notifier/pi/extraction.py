"""What a question tool asks: its ``arguments``, in any shape of the catalog, read into a sanitized
``Question``.

The rules are those of ``docs/question-tools.md`` §3. Pure: it takes the ``arguments`` dict (or
JSON string) as pi saved it.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import replace
from typing import Any

from notifier.core.codec import loads
from notifier.core.model import GENERIC_QUESTION, Option, Question, QuestionItem
from notifier.core.text import clean

_TEXT_KEYS = ("question", "title", "prompt", "text", "message", "header", "label")
_LABEL_KEYS = ("label", "title", "text", "value", "name", "option")
_DESC_KEYS = ("description", "detail", "details")
# A chip beside the question; `title` only when the question is under another key (a short title
# beside it, never the question itself).
_HEADER_KEYS = ("header", "label", "questionTopic", "tab", "topic", "title", "id")
_INSTRUCTION_KEYS = ("instructions", "description", "intro", "context")  # a form's, under its title
ELSEWHERE = "Waits for a reply outside pi, not in its terminal ({tool})"
_MULTI_KEYS = ("multiSelect", "multi", "allowMultiple", "multiple", "multipleSelect")
_PLAN_ACTIONS = ("Execute", "Keep context", "Edit", "Cancel")
MAX_ITEMS = 50
MAX_OPTIONS = 50
MAX_JSON_ARG = 1 << 20  # an argument saved as a JSON string


def _maybe_json(value: Any) -> Any:
    """A string holding a JSON object or list, parsed (bounded: size and depth); else ``value``."""
    if isinstance(value, str):
        stripped = value.strip()
        if stripped[:1] in ("[", "{"):
            try:
                return loads(stripped, max_bytes=MAX_JSON_ARG)
            except ValueError:  # not JSON, too large or too deep (UnicodeDecodeError included)
                return value
    return value


def _first_text(q: Mapping[str, Any], keys: Iterable[str]) -> tuple[str | None, str | None]:
    for key in keys:
        value = q.get(key)
        if isinstance(value, str) and value.strip():
            text = clean(value)
            if text:
                return text, key
    return None, None


def _is_true(value: Any) -> bool:
    return value is True or (isinstance(value, str) and value.lower() == "true")


def _multi(q: Mapping[str, Any]) -> bool | None:
    for key in _MULTI_KEYS:
        if key in q and q[key] is not None:
            return _is_true(q[key])
    if q.get("selectionMode") == "multiple":
        return True
    kind = q.get("type")
    if isinstance(kind, str) and kind.lower() in ("multi", "multiselect", "checkbox"):
        return True
    if q.get("kind") == "multi":
        return True
    return None


def _options(q: Mapping[str, Any]) -> tuple[Option, ...]:
    raw = _maybe_json(q.get("options"))
    if raw is None:
        raw = _maybe_json(q.get("choices"))
    if isinstance(raw, Mapping):
        raw = [raw]
    if not isinstance(raw, list):
        if q.get("type") == "confirm" or _is_true(q.get("confirm")):
            return (Option("Yes"), Option("No"))
        return ()
    rec_index = q.get("recommended") if isinstance(q.get("recommended"), int) else None
    if rec_index is None and isinstance(q.get("recommendationIndex"), int):
        rec_index = q["recommendationIndex"]
    raw_indices = q.get("recommendedIndices")
    rec_indices: list[Any] = raw_indices if isinstance(raw_indices, list) else []
    recommendation = q.get("recommendation")
    rec_values = recommendation if isinstance(recommendation, list) else [recommendation]
    out: list[Option] = []
    for index, item in enumerate(raw[:MAX_OPTIONS]):
        description: str | None = None
        value: Any = None
        recommended = False
        if isinstance(item, str):
            label = clean(item)
        elif isinstance(item, Mapping):
            label = _first_text(item, _LABEL_KEYS)[0] or ""
            description = _first_text(item, _DESC_KEYS)[0]
            value = item.get("value", item.get("id"))
            recommended = item.get("recommended") is True
        elif isinstance(item, (int, float)) and not isinstance(item, bool):
            label = clean(item)
        else:
            continue
        # A label that is empty once cleaned ("\u200b") is still a row the dialog draws (and
        # numbers): it stays, or every later row's number would differ from the screen's.
        if (
            recommended
            or index == rec_index
            or index in rec_indices
            or (value is not None and isinstance(value, (str, int)) and value in rec_values)
            or label.endswith("(Recommended)")
        ):
            recommended = True
        raw_value = value if isinstance(value, str) else None
        out.append(Option(label, description, recommended, raw_value))
    return tuple(out)


def _recommended_first(options: tuple[Option, ...]) -> tuple[Option, ...]:
    """pi-ask's order: the options marked recommended first, the rest after, each in its order."""
    return tuple(o for o in options if o.recommended) + tuple(o for o in options if not o.recommended)


def _show_when(q: Mapping[str, Any]) -> tuple[str, str] | None:
    cond = q.get("showWhen")
    if isinstance(cond, Mapping) and isinstance(cond.get("questionId"), str) and isinstance(cond.get("equals"), str):
        return (cond["questionId"], cond["equals"])
    return None


def _item(q: Mapping[str, Any], form: Mapping[str, Any] | None = None, tool: str = "") -> QuestionItem | None:
    text, key = _first_text(q, _TEXT_KEYS)
    header: str | None = None
    detail: str | None = None
    if "tab" in q and not q.get("question") and isinstance(q.get("header"), str):
        # itc-steve: `header` is the question title and `tab` the short chip.
        text = clean(q["header"]) or text
        header = clean(q.get("tab")) or None
        key = "header"
    else:
        for hkey in _HEADER_KEYS:
            if hkey == "title" and key == "title":  # (the question itself)
                continue
            value = q.get(hkey)
            if isinstance(value, (str, int)) and not isinstance(value, bool) and str(value).strip():
                header = clean(value)
                break
    message = clean(q.get("message")) if key == "title" and isinstance(q.get("message"), str) else ""
    if message:
        # An adapter's short `title` beside its `message`: the dialog asks the message, the
        # title is its header.
        header, text, key = text, message, "message"
    if key in ("title", "header") and isinstance(q.get("prompt"), str):
        detail = clean(q["prompt"]) or None
    if detail is None:
        detail = _first_text(q, ("body", "context", "description"))[0]
    options = _options(q)
    if tool == "ask_user_question" and any(isinstance(o, Mapping) and "value" in o for o in _list(q.get("options"))):
        options = _recommended_first(options)  # pi-ask draws them so
    multi = _multi(q)
    if multi is None and form is not None:
        multi = _multi(form)
    if text is None and not options:
        return None
    if header is not None and (not header or header == text):
        header = None
    key = q.get("id") if isinstance(q.get("id"), str) else None
    return QuestionItem(
        text or GENERIC_QUESTION,
        header,
        detail,
        options,
        bool(multi),
        key=key,
        required=q.get("required") is not False,
        show_when=_show_when(q),
        other=q.get("allowOther") is not False,
    )


def _list(value: Any) -> list[Any]:
    value = _maybe_json(value)
    return value if isinstance(value, list) else []


def extract(tool: str, arguments: Any, call_id: str, asked_at: float, elsewhere: bool = False) -> Question:
    """Read a question tool call's arguments (any shape in the catalog, malformed ones included).
    ``elsewhere``: the tool waits for a human's reply outside pi (no dialog): said in the title."""
    args = _maybe_json(arguments)
    if not isinstance(args, Mapping):
        args = {}
    title = instructions = None
    if isinstance(args.get("questions"), (list, str)):  # a form: its title and instructions
        title = _first_text(args, ("title", "header"))[0]
        instructions = _first_text(args, _INSTRUCTION_KEYS)[0]
    if elsewhere:
        title = ELSEWHERE.format(tool=clean(tool, 60))
    items: list[QuestionItem] = []
    questions = _maybe_json(args.get("questions"))
    if questions is None and isinstance(args.get("prompts"), list):
        questions = args["prompts"]
    if isinstance(questions, Mapping):
        questions = [questions]
    if tool == "plan_mode":
        text, _ = _first_text(args, ("title",))
        steps = args.get("steps")
        detail = clean(args.get("description")) or None
        if isinstance(steps, list):
            step_titles = [
                clean(s.get("title")) if isinstance(s, Mapping) else clean(s) for s in steps[:MAX_OPTIONS]
            ]
            joined = "; ".join(t for t in step_titles if t)
            detail = f"{detail} — {joined}" if detail and joined else (detail or joined or None)
        items.append(
            QuestionItem(text or "Approve the plan", None, detail, tuple(Option(a) for a in _PLAN_ACTIONS))
        )
    elif isinstance(questions, list):
        for q in questions[:MAX_ITEMS]:
            if isinstance(q, Mapping):
                item = _item(q, args if len(questions) == 1 else None, tool)
            elif isinstance(q, str) and q.strip():
                item = QuestionItem(clean(q))
            else:
                item = None
            if item is not None:
                items.append(item)
    elif isinstance(questions, str) and questions.strip():
        if tool == "interview":
            items.append(QuestionItem(f"Interview form: {clean(questions, 200)}"))
        else:
            items.append(QuestionItem(clean(questions)))
    if not items:
        item = _item(args, tool=tool)
        if item is not None:
            items.append(item)
    if not items:
        fallback = "asks what to do next" if tool == "ask_next_action" else GENERIC_QUESTION
        items.append(QuestionItem(f"{fallback} ({clean(tool, 60)})"))
    if elsewhere:  # nothing to pick or type in pi: it is answered where it was sent
        items = [replace(it, options=(), other=False) for it in items]
    return Question(
        tool_call_id=call_id,
        tool=clean(tool, 80),
        items=tuple(items),
        asked_at=asked_at,
        title=title,
        instructions=instructions,
    )
