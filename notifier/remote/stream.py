"""The ``run --json`` stream of another machine, read back (pure): one line → one typed event.

The stream is the protocol (docs/contract.md §2): a remote is any command that prints it. Every
line is untrusted: parsed with the one bounded parse (core/codec.py), strings bounded and
cleaned, and anything that is not a well-formed event is a :class:`StreamError` (the caller skips
it with one log line, like a bad session line).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from notifier.core import codec as jsonbound
from notifier.core.codec import parse_iso
from notifier.core.model import (
    GENERIC_QUESTION,
    Option,
    Outcome,
    Question,
    QuestionItem,
    SessionRef,
    remote_key,
)
from notifier.core.text import clean

MAX_LINE = 1 << 20  # bytes in one event line (a question's text is not truncated by the sender)
MAX_PATH = 4096
# A question from another machine is bounded in bytes (a host that floods with huge questions
# must not make this app grow by their size): its text, header and options are cut to these.
MAX_TEXT = 4000
MAX_HEADER = 300
MAX_OPTIONS = 20
MAX_OPTION = 200
MAX_COUNT = 100  # questions of one questionnaire
OUTCOMES: tuple[Outcome, ...] = ("answered", "cancelled", "aborted", "unavailable", "error", "superseded")
MORE = "(one more question: see the session)"


class StreamError(ValueError):
    """A line that is not a usable event (the message says why, briefly)."""


@dataclass(frozen=True)
class Ready:
    """The remote finished its start-up scan: every question pending there has been sent."""


@dataclass(frozen=True)
class RemoteAsked:
    session: SessionRef
    question: Question
    initial: bool
    at: float


@dataclass(frozen=True)
class RemoteEnded:
    """Resolved (``outcome`` set) or abandoned (``outcome`` None) on the remote."""

    session: SessionRef
    question: Question
    at: float
    outcome: Outcome | None = None
    answer: str | None = None
    waited_s: float | None = None


StreamEvent = Ready | RemoteAsked | RemoteEnded


def parse_line(line: bytes, host: str, now: float) -> StreamEvent | None:
    """One line of a remote's stream → an event (``None`` for a blank line or an event kind this
    version does not know: the stream may grow, see contract.md). ``now`` bounds the times the
    remote reports (its clock may be wrong)."""
    if not line.strip():
        return None
    try:
        obj = jsonbound.loads(line, max_bytes=MAX_LINE)
    except UnicodeDecodeError:
        raise StreamError("not UTF-8") from None
    except ValueError as exc:
        raise StreamError(clean(exc, 80)) from None
    if not isinstance(obj, dict):
        raise StreamError("not a JSON object")
    obj = jsonbound.shrink(obj)
    kind = obj.get("event")
    if kind == "ready":
        return Ready()
    if kind not in ("needs_input", "resolved", "abandoned"):
        if isinstance(kind, str):
            return None
        raise StreamError("no event name")
    at = _time(obj.get("at"), now)
    session = _session(obj.get("session"), host)
    question = _question(obj.get("question"), at)
    if kind == "needs_input":
        return RemoteAsked(session, question, obj.get("initial") is True, at)
    if kind == "abandoned":
        return RemoteEnded(session, question, at)
    outcome = obj.get("outcome")
    if outcome not in OUTCOMES:
        raise StreamError("unknown outcome")
    answer = obj.get("answer")
    waited = obj.get("waited_s")
    return RemoteEnded(
        session,
        question,
        at,
        outcome,
        clean(answer, 2000) if isinstance(answer, str) else None,
        float(waited) if _number(waited) and 0 <= waited <= 1e9 else None,
    )


def _number(v: Any) -> bool:
    return isinstance(v, (int, float)) and not isinstance(v, bool) and v == v  # NaN is not


def _time(value: Any, now: float) -> float:
    ts = parse_iso(value)
    return now if ts is None else min(ts, now)


def _opt_str(value: Any, limit: int) -> str | None:
    if isinstance(value, str) and value and len(value) <= limit:
        return value
    return None


def _session(value: Any, host: str) -> SessionRef:
    if not isinstance(value, dict):
        raise StreamError("no session")
    file = _opt_str(value.get("file"), MAX_PATH)
    if file is None:
        raise StreamError("no session file")
    return SessionRef(
        remote_key(host, file),
        _opt_str(value.get("id"), 200),
        _opt_str(value.get("cwd"), MAX_PATH),
        clean(value.get("name"), 200) or None if isinstance(value.get("name"), str) else None,
        host,
    )


def _question(value: Any, at: float) -> Question:
    if not isinstance(value, dict):
        raise StreamError("no question")
    cid = _opt_str(value.get("tool_call_id"), 512)
    tool = _opt_str(value.get("tool"), 128)
    if cid is None or tool is None:
        raise StreamError("no question id or tool")
    text = clean(value.get("text"), MAX_TEXT) if isinstance(value.get("text"), str) else ""
    header = clean(value.get("header"), MAX_HEADER) if isinstance(value.get("header"), str) else ""
    raw_options = value.get("options")
    labels = raw_options if isinstance(raw_options, list) else []
    options = tuple(
        Option(clean(o, MAX_OPTION)) for o in labels[:MAX_OPTIONS] if isinstance(o, str) and clean(o, MAX_OPTION)
    )
    raw_count: Any = value.get("count")
    count = min(int(raw_count), MAX_COUNT) if _number(raw_count) and 1 <= raw_count <= 1e15 else 1
    first = QuestionItem(text or GENERIC_QUESTION, header or None, options=options)
    items = (first,) + tuple(QuestionItem(MORE) for _ in range(count - 1))
    return Question(clean(cid, 512), clean(tool, 128) or "?", items, at)
