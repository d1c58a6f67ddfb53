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
from collections.abc import Iterable, Mapping, Sequence
from datetime import datetime, timezone
from typing import Any

from notifier.core.model import Question, SessionRef, SessionView, Snapshot, Transition, split_key
from notifier.core.question_obj import item_obj
from notifier.core.question_token import question_token
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


def dumps(obj: Any) -> str:
    """One line of valid UTF-8 JSON for anything our outputs hold. A name that is not UTF-8 (a
    str with lone surrogates, PEP 383) is written as ``\\udcXX`` escapes: ``json.loads`` gives
    back the same str, and ``os.fsencode`` of that the same bytes. NaN and infinities (which
    JSON cannot say) become ``null``."""
    try:
        text = json.dumps(obj, ensure_ascii=False, separators=(",", ":"), allow_nan=False)
    except ValueError:
        text = json.dumps(_finite(obj), ensure_ascii=False, separators=(",", ":"), allow_nan=False)
    # Surrogates only occur inside JSON strings, where "\udcff" is their own escape.
    return text.encode("utf-8", "backslashreplace").decode("utf-8")


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
    obj["token"] = question_token(q)  # additive (§3): what was shown of it, for answer --token
    return obj


def items_obj(q: Question) -> list[dict[str, Any]]:
    """Every item of a question in full, every field (the window shows them all; the contract's
    question object describes the first): :func:`notifier.core.question_obj.item_obj`."""
    return [item_obj(it) for it in q.items]


# ---- run --json (§2) and status --json (§3) ----

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
    """The order of ``status``: newest first, then by file (two stable sorts)."""
    out = sorted(sessions, key=lambda v: v.ref.key)
    out.sort(key=lambda v: v.updated_at, reverse=True)
    return out


def status_obj(snapshot: Snapshot) -> dict[str, Any]:
    """``status --json`` of a snapshot (before the command adds locations, silences and quiet
    hours)."""
    return {
        "sessions": [session_status_obj(v) for v in newest_first(snapshot.sessions)],
        "pending": snapshot.pending_count,
    }


def session_status_obj(v: SessionView) -> dict[str, Any]:
    """One session of ``status --json`` (the running app's reply and a scan of our own alike):
    :func:`session_obj`, its state, and ``"location": null`` (filled in by the command where
    a pi is found). Additive fields: each question's ``asked_at`` and the session's
    ``current_tool``, so that the text of ``status`` is rendered from this object too."""
    return {
        **session_obj(v.ref),
        "state": v.state,
        "alive": v.alive,
        "pending": [_waiting_obj(q) for q in v.pending],
        "abandoned": [_waiting_obj(q) for q in v.abandoned],
        "updated_at": iso(v.updated_at) if v.updated_at else None,
        "current_tool": clean(v.current_tool) or None if v.current_tool else None,
        "location": None,
    }


def _waiting_obj(q: Question) -> dict[str, Any]:
    """A question of ``status --json``: :func:`question_obj` and since when it waits."""
    return {**question_obj(q), "asked_at": iso(q.asked_at)}


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


def finite_number(value: object) -> float | None:
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
    waited = finite_number(r.get("waited_s"))
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
