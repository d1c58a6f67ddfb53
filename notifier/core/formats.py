"""The one serialisation of a session and a question, and every JSON output built on it
(docs/contract.md §2–§5): ``run --json`` events, ``status --json``, ``history --json``, the
history record the state store keeps, and the base of the window's view model. Pure.

A session is ``{"id", "file", "cwd", "name"}``; a question is ``{"tool_call_id", "tool", "text",
"header", "options", "count"}`` (:func:`session_fields`, :func:`question_fields`). Other outputs
add fields to these objects, never change them (the contract: change only by adding fields).
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable, Iterable, Mapping, Sequence
from datetime import datetime, timezone
from operator import attrgetter, itemgetter
from typing import Any

from notifier.core.model import Question, SessionRef, SessionView, Snapshot, Transition, split_key
from notifier.core.text import clean
from notifier.core.times import MAX_TIME, MIN_TIME

# ---- text ----


def iso(ts: object) -> str:
    """ISO-8601 UTC with milliseconds, for any value: times outside [2000, 2200) (history rows
    written by older versions, broken clocks) are clamped to that range; a value that is not a
    number at all (NaN, a string) shows as the start of the range."""
    if isinstance(ts, bool) or not isinstance(ts, (int, float)):
        seconds = MIN_TIME
    elif isinstance(ts, int):
        seconds = float(min(max(ts, int(MIN_TIME)), int(MAX_TIME)))
    else:
        seconds = min(max(ts, MIN_TIME), MAX_TIME) if ts == ts else MIN_TIME
    return (
        datetime.fromtimestamp(seconds, timezone.utc)
        .isoformat(timespec="milliseconds")
        .replace("+00:00", "Z")
    )


# json.dumps with these options builds a new encoder on every call; this one is reused (it
# keeps no state between calls, so any thread may use it).
_ENCODER = json.JSONEncoder(ensure_ascii=False, separators=(",", ":"), allow_nan=False)


def dumps(obj: Any) -> str:
    """One line of valid UTF-8 JSON for anything our outputs hold. A name that is not UTF-8 (a
    str with lone surrogates, PEP 383) is written as ``\\udcXX`` escapes: ``json.loads`` gives
    back the same str, and ``os.fsencode`` of that the same bytes. NaN and infinities (which
    JSON cannot say) become ``null``."""
    try:
        text = _ENCODER.encode(obj)
    except ValueError:
        text = _ENCODER.encode(_finite(obj))
    return _utf8(text)


def _utf8(text: str) -> str:
    """JSON text from ``_ENCODER`` as valid UTF-8: lone surrogates as their ``\\udcXX`` escape."""
    if not text.isascii():
        try:
            text.encode("utf-8")
        except UnicodeEncodeError:
            # Surrogates only occur inside JSON strings, where "\udcff" is their own escape.
            text = text.encode("utf-8", "backslashreplace").decode("utf-8")
    return text


def _finite(obj: Any) -> Any:
    if isinstance(obj, float):
        return obj if math.isfinite(obj) else None
    if isinstance(obj, dict):
        return {k: _finite(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [_finite(v) for v in obj]
    return obj


# ---- a session and a question ----


def session_fields(
    id: str | None, file: str | None, cwd: str | None, name: str | None, host: str | None = None
) -> dict[str, Any]:
    """The session object. The name is a user's label (plain text, null when empty); the file
    and cwd are paths, kept exactly (also when not UTF-8); ``host`` names the remote machine the
    session runs on (null: this one)."""
    return {"id": id, "file": file, "cwd": cwd, "name": clean(name) or None if name else None, "host": host}


def question_fields(
    tool_call_id: str | None,
    tool: str | None,
    text: str | None,
    header: str | None,
    options: Sequence[str],
    count: int | None,
) -> dict[str, Any]:
    """The question object (contract §5: text, header and options are plain text, sanitized
    when extracted, not truncated)."""
    return {
        "tool_call_id": tool_call_id,
        "tool": tool,
        "text": text,
        "header": header,
        "options": list(options),
        "count": count,
    }


def session_obj(ref: SessionRef) -> dict[str, Any]:
    return session_fields(ref.id, ref.file, ref.cwd, ref.name, ref.host)


def question_obj(q: Question) -> dict[str, Any]:
    obj = question_fields(q.tool_call_id, q.tool, q.text, q.header, q.options, q.count)
    obj["kind"] = q.kind  # additive (docs/contract.md §3): "question" | "dialog"
    if q.kind == "dialog":
        obj["dialog"] = q.dialog  # "select" | "confirm" | "input" | "editor" | "custom"
    return obj


def items_obj(q: Question) -> list[dict[str, Any]]:
    """Every item of a question in full (the window shows them all; the contract's question
    object describes the first)."""
    return [
        {
            "text": it.text,
            "header": it.header,
            "detail": it.detail,
            "multi": it.multi,
            "options": [
                {"label": o.label, "description": o.description, "recommended": o.recommended}
                for o in it.options
            ],
        }
        for it in q.items
    ]


# ---- run --json (§2) and status --json (§3) ----

_FILE = attrgetter("ref.key")
_UPDATED = attrgetter("updated_at")


def event_obj(t: Transition) -> dict[str, Any]:
    obj: dict[str, Any] = {"event": t.kind, "at": iso(t.at)}
    if t.kind == "needs_input":
        obj["initial"] = t.initial
    obj["session"] = session_obj(t.session)
    obj["question"] = question_obj(t.question)
    if t.kind == "resolved":
        obj["outcome"] = t.outcome
        obj["answer"] = t.answer
        obj["waited_s"] = round(t.waited_s or 0.0, 3)
    return obj


def newest_first(sessions: Iterable[SessionView]) -> list[SessionView]:
    """The order of ``status``: newest first, then by file (two stable sorts on plain attributes,
    no key tuple per session)."""
    out = sorted(sessions, key=_FILE)
    out.sort(key=_UPDATED, reverse=True)
    return out


def _stamps() -> Callable[[float], str]:
    """:func:`iso`, each time formatted once (many sessions share a time)."""
    memo: dict[float, str] = {}

    def stamp(ts: float) -> str:
        text = memo.get(ts)
        if text is None:
            text = memo[ts] = iso(ts)
        return text

    return stamp


def status_obj(snapshot: Snapshot) -> dict[str, Any]:
    stamp = _stamps()
    return {
        "sessions": [session_status_obj(v, stamp) for v in newest_first(snapshot.sessions)],
        "pending": snapshot.pending_count,
    }


_esc = json.encoder.encode_basestring  # (C) a str as ``_ENCODER`` writes it (ensure_ascii off)
_LITERAL = {None: "null", True: "true", False: "false"}


# A session of ``status --json`` (:func:`status_text`): ``(file, updated_at, view, id, cwd, name,
# state, alive)``. ``view`` is None for a session of this machine that asks nothing: its fields
# say all there is (a one-shot scan has thousands, Board.status_rows makes no view of them);
# any other session comes with its view.
StatusRow = tuple[str, float, "SessionView | None", "str | None", "str | None", "str | None", str, "bool | None"]
_ROW_FILE, _ROW_UPDATED = itemgetter(0), itemgetter(1)


def row_of_view(v: SessionView) -> StatusRow:
    """A view as a row of :func:`status_text`."""
    ref = v.ref
    plain = ref.host is None and not v.pending and not v.abandoned
    return (ref.key, v.updated_at, None if plain else v, ref.id, ref.cwd, ref.name, v.state, v.alive)


def view_of_row(row: StatusRow) -> SessionView:
    """The view a row stands for."""
    file, updated_at, view, sid, cwd, name, state, alive = row
    if view is not None:
        return view
    return SessionView(SessionRef(file, sid, cwd, name), state, (), (), alive, updated_at)  # type: ignore[arg-type]


def newest_rows_first(rows: Iterable[StatusRow]) -> list[StatusRow]:
    """:func:`newest_first` of rows."""
    out = sorted(rows, key=_ROW_FILE)
    out.sort(key=_ROW_UPDATED, reverse=True)
    return out


def _asks_nothing(row: StatusRow, stamp: Callable[[float], str]) -> str | None:
    """The text of :func:`session_status_obj` (with ``"location": null``) of a row without a
    view; ``None`` if a field holds a value of another type than a session's (then the session
    is encoded as any value is)."""
    file, updated_at, _, sid, cwd, name, state, alive = row
    if alive is not None and type(alive) is not bool:
        return None
    label = clean(name) or None if name else None
    at = stamp(updated_at) if updated_at else None
    try:
        return (
            f'{{"id":{"null" if sid is None else _esc(sid)},"file":{_esc(file)},'
            f'"cwd":{"null" if cwd is None else _esc(cwd)},'
            f'"name":{"null" if label is None else _esc(label)},"host":null,'
            f'"state":{_esc(state)},"alive":{_LITERAL[alive]},"pending":[],"abandoned":[],'
            f'"updated_at":{"null" if at is None else _esc(at)},"location":null}}'
        )
    except TypeError:  # (encode_basestring takes only a str)
        return None


def status_text(
    rows: Sequence[StatusRow], pending: int, whole: Mapping[int, dict[str, Any]], extra: Mapping[str, Any] | None = None
) -> str:
    """``status --json`` as one line: :func:`dumps` of :func:`status_obj` for ``rows`` (in this
    order, see :func:`newest_rows_first`), each session with ``"location": null`` except those in
    ``whole`` (index → the session's object, its location filled in). The same text, written at
    once: a session that asks nothing, the most common by far, goes straight to text instead of
    a dict that is encoded next (a third of the time of a ``status`` over thousands). ``extra``:
    further top-level fields, after ``pending``."""
    stamp = _stamps()
    parts = []
    for i, row in enumerate(rows):
        obj = whole.get(i)
        if obj is None:
            text = _asks_nothing(row, stamp) if row[2] is None else None
            if text is not None:
                parts.append(text)
                continue
            obj = session_status_obj(view_of_row(row), stamp)
            obj["location"] = None
        parts.append(dumps(obj))
    more = "".join(f",{_ENCODER.encode(k)}:{dumps(v)}" for k, v in (extra or {}).items())
    return _utf8(f'{{"sessions":[{",".join(parts)}],"pending":{_ENCODER.encode(pending)}{more}}}')


def session_status_obj(v: SessionView, stamp: Callable[[float], str] = iso) -> dict[str, Any]:
    """One session of ``status --json``: :func:`session_fields` and its state (built at once:
    ``status`` makes thousands)."""
    ref = v.ref
    name = ref.name
    return {
        "id": ref.id,
        "file": ref.file,
        "cwd": ref.cwd,
        "name": clean(name) or None if name else None,
        "host": ref.host,
        "state": v.state,
        "alive": v.alive,
        "pending": [question_obj(q) for q in v.pending] if v.pending else [],
        "abandoned": [question_obj(q) for q in v.abandoned] if v.abandoned else [],
        "updated_at": stamp(v.updated_at) if v.updated_at else None,
    }


# ---- history: the stored record (one flat row per question) and history --json (§4) ----

OPTION_SEPARATOR = "\x1f"  # between option labels in a history row (sanitized labels hold none)
HISTORY_COLUMNS = (
    "file",
    "call_id",
    "session_id",
    "cwd",
    "name",
    "tool",
    "text",
    "header",
    "options",
    "count",
    "asked_at",
    "resolved_at",
    "outcome",
    "waited_s",
    "answer",
)


def history_row(t: Transition) -> dict[str, Any]:
    """The history record of the question of ``t`` as it is asked (the first ten of
    :data:`HISTORY_COLUMNS`; the store adds the times and the outcome)."""
    s, q = session_obj(t.session), question_obj(t.question)
    return {
        "file": t.session.key,  # the board's key: a remote session's names its host (split_key)
        "call_id": q["tool_call_id"],
        "session_id": s["id"],
        "cwd": s["cwd"],
        "name": s["name"],
        "tool": q["tool"],
        "text": q["text"],
        "header": q["header"],
        "options": OPTION_SEPARATOR.join(q["options"]),
        "count": q["count"],
    }


def _text(value: object) -> str | None:
    return value if isinstance(value, str) else None


def _number(value: object) -> float | None:
    """A stored number that JSON can say (rows of older versions may hold NaN, inf or junk)."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    try:
        number = float(value)
    except OverflowError:
        return None
    return number if math.isfinite(number) else None


def history_entry(r: Mapping[str, object]) -> dict[str, Any]:
    """One question of ``history --json`` from a history row. Any stored row renders: times out
    of range are clamped, numbers that are not finite are null, names that are not UTF-8 come
    back as they were, a field of the wrong type is null."""
    waited = _number(r.get("waited_s"))
    waited = waited if waited is not None and 0 <= waited < 1e10 else None
    count = r.get("count")
    resolved_at = r.get("resolved_at")
    host, file = split_key(_text(r.get("file")) or "")  # a remote session's key names its host
    return {
        "session": session_fields(
            _text(r.get("session_id")), file or None, _text(r.get("cwd")), _text(r.get("name")), host
        ),
        "question": question_fields(
            _text(r.get("call_id")),
            _text(r.get("tool")),
            _text(r.get("text")),
            _text(r.get("header")),
            [o for o in (_text(r.get("options")) or "").split(OPTION_SEPARATOR) if o],
            count if isinstance(count, int) and not isinstance(count, bool) else None,
        ),
        "asked_at": iso(r.get("asked_at")),
        "resolved_at": iso(resolved_at) if resolved_at is not None else None,
        "outcome": _text(r.get("outcome")),
        "waited_s": round(waited, 3) if waited is not None else None,
        "answer": _text(r.get("answer")),
    }


def history_obj(rows: Iterable[Mapping[str, object]]) -> dict[str, Any]:
    """``history --json``: the questions of ``rows`` (history rows) and a summary of the waits."""
    questions = [history_entry(r) for r in rows]
    waits: list[float] = sorted(q["waited_s"] for q in questions if q["waited_s"] is not None)
    median = None
    if waits:
        mid = len(waits) // 2
        median = waits[mid] if len(waits) % 2 else round((waits[mid - 1] + waits[mid]) / 2, 3)
    return {
        "questions": questions,
        "summary": {
            "count": len(questions),
            "median_wait_s": median,
            "longest_wait_s": waits[-1] if waits else None,
        },
    }
