"""Machine-readable output (DESIGN §3): the ``run --json`` event lines and ``status --json``."""

from __future__ import annotations

import json
import math
import sys
import threading
from collections.abc import Callable, Sequence
from datetime import datetime, timezone
from typing import IO, Any

from notifier.core.model import Question, SessionRef, SessionView, Snapshot, Transition
from notifier.core.text import clean
from notifier.core.times import MAX_TIME, MIN_TIME


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
        datetime.fromtimestamp(seconds, timezone.utc).isoformat(timespec="milliseconds").replace("+00:00", "Z")
    )


def session_obj(ref: SessionRef) -> dict[str, Any]:
    return {
        "id": ref.id,
        "file": ref.key,
        "cwd": ref.cwd,
        "name": clean(ref.name) or None if ref.name else None,
    }


def question_obj(q: Question) -> dict[str, Any]:
    # Text, header and options are sanitized when extracted (plain text, not truncated).
    return {
        "tool_call_id": q.tool_call_id,
        "tool": q.tool,
        "text": q.text,
        "header": q.header,
        "options": list(q.options),
        "count": q.count,
        "kind": q.kind,  # additive (docs/contract.md §3): "question" | "dialog"
        **({"dialog": q.dialog} if q.kind == "dialog" else {}),
    }


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


def status_obj(snapshot: Snapshot) -> dict[str, Any]:
    sessions = sorted(snapshot.sessions, key=lambda v: (-v.updated_at, v.ref.key))  # newest first, stable
    return {
        "sessions": [session_status_obj(v) for v in sessions],
        "pending": snapshot.pending_count,
    }


def session_status_obj(v: SessionView) -> dict[str, Any]:
    obj = session_obj(v.ref)
    obj.update(
        {
            "state": v.state,
            "alive": v.alive,
            "pending": [question_obj(q) for q in v.pending],
            "abandoned": [question_obj(q) for q in v.abandoned],
            "updated_at": iso(v.updated_at) if v.updated_at else None,
        }
    )
    return obj


def dumps(obj: Any) -> str:
    """One line of valid UTF-8 JSON for anything our outputs hold. A name that is not UTF-8 (a
    str with lone surrogates, PEP 383) is written as ``\\udcXX`` escapes: ``json.loads`` gives
    back the same str, and ``os.fsencode`` of that the same bytes. NaN and infinities (which
    JSON cannot say) become ``null``."""
    try:
        text = json.dumps(obj, ensure_ascii=False, separators=(",", ":"), allow_nan=False)
    except ValueError:
        text = json.dumps(_finite(obj), ensure_ascii=False, separators=(",", ":"), allow_nan=False)
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


class JsonSink:
    """Prints one JSON object per line, flushed at once. Stops the app if stdout goes away."""

    def __init__(self, stream: IO[str] | None = None, on_broken: Callable[[], None] | None = None) -> None:
        self.stream = stream or sys.stdout
        self.on_broken = on_broken
        self._lock = threading.Lock()

    def _write(self, objs: Sequence[dict[str, Any]]) -> None:
        if not objs:
            return
        text = "".join(dumps(o) + "\n" for o in objs)
        with self._lock:
            try:
                self.stream.write(text)
                self.stream.flush()
            except (BrokenPipeError, ValueError, OSError):
                if self.on_broken is not None:
                    self.on_broken()

    def ready(self, info: Any, snapshot: Snapshot) -> None:
        from time import time

        self._write(
            [
                {
                    "event": "ready",
                    "at": iso(time()),
                    "sessions": info.sessions,
                    "pending": info.pending,
                    "scan_s": round(info.scan_s, 4),
                }
            ]
        )

    def transitions(self, items: Sequence[Transition], snapshot: Snapshot) -> None:
        self._write([event_obj(t) for t in items])
