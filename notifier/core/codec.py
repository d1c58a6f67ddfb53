"""The one JSON codec (pure): every model type to and from JSON, bounded.

**Reading foreign JSON.** Every untrusted source (session lines, control requests, cache rows,
remote streams) is parsed by :func:`loads`: a size cap and a nesting-depth cap, checked before
the decoder runs, so no input can exhaust memory or the interpreter's recursion limit;
:func:`shrink` bounds what a parsed value may carry further (string lengths, list lengths, a
total budget). Times from untrusted sources are kept inside a sane window (:func:`sane_time`,
:func:`parse_iso`); no clock is read here.

**Model values in full.** :func:`encode` / :func:`decode`: any frozen model value (a question,
a session) as a plain JSON-able object and back, every field (what the start-up scan cache keeps
of a pending question, what the window is handed). ``decode(Question, encode(q)) == q`` for
every question; :func:`decode` takes only what :func:`encode` writes (exactly its fields, each of
its type) and raises :class:`ValueError` on anything else, so what is read back from disk is
checked by the same table that writes it.

**The outputs of the contract** (docs/contract.md §2–§5): ``run --json`` events, ``status
--json``, ``history --json``, the history record the store keeps, and the base of the window's
view model. A session is ``{"id", "file", "cwd", "name"}``; a question is ``{"tool_call_id",
"tool", "text", "header", "options", "count"}`` (:func:`session_fields`,
:func:`question_fields`). Other outputs add fields to these objects, never change them.

**Status bars.** A small summary of the board that the running app sends for each refresh (a
status bar asks every second), and what a bar shows of it: a tmux status-line segment ("π 2", or
nothing) and one JSON line for waybar, polybar or i3blocks (``text``, ``tooltip``, ``class``)."""

from __future__ import annotations

import contextlib
import functools
import hashlib
import json
import math
import re
import sys
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, fields, is_dataclass
from datetime import datetime, timezone
from types import UnionType
from typing import Any, Literal, NamedTuple, TypeVar, Union, get_args, get_origin, get_type_hints

from notifier.core.model import (
    Question,
    SessionRef,
    SessionView,
    Snapshot,
    Transition,
    split_key,
)
from notifier.core.text import UNSEEN, UNSEEN_ASTRAL, clean, duration, markup, project_name

# ---- the outputs of the contract ----

def iso(ts: object) -> str:
    """ISO-8601 UTC with milliseconds, for any value: times outside [2000, 2200) (history rows
    written by older versions, broken clocks) are clamped to that range; a value that is not a
    number at all (NaN, a string) shows as the start of the range."""
    seconds = MIN_TIME
    if isinstance(ts, (int, float)) and not isinstance(ts, bool) and ts == ts:
        seconds = float(min(max(ts, MIN_TIME), MAX_TIME))
    return (
        datetime.fromtimestamp(seconds, timezone.utc)
        .isoformat(timespec="milliseconds")
        .replace("+00:00", "Z")
    )


# What a terminal would act on or a reader would not see, written as escapes by :func:`dumps`: C1
# controls (an 8-bit CSI), line separators, the zero-width joiners, and every character the
# sanitizer drops as invisible (bidi controls, tag characters…: core.text's UNSEEN sets).
_UNSHOWN = re.compile("[\x7f-\x9f\u200b-\u200f\u2028\u2029" + UNSEEN + UNSEEN_ASTRAL + "]")


def _escape(match: re.Match[str]) -> str:
    """JSON's own escape of one character (a pair of UTF-16 surrogates outside the BMP)."""
    code = ord(match.group())
    if code <= 0xFFFF:
        return f"\\u{code:04x}"
    code -= 0x10000
    return f"\\u{0xD800 + (code >> 10):04x}\\u{0xDC00 + (code & 0x3FF):04x}"


def dumps(obj: Any) -> str:
    """One line of valid UTF-8 JSON for anything our outputs hold, safe on a terminal. A name
    that is not UTF-8 (a str with lone surrogates, PEP 383) is written as ``\\udcXX`` escapes:
    ``json.loads`` gives back the same str, and ``os.fsencode`` of that the same bytes. So is
    every character of :data:`_UNSHOWN` (anyone's: a folder name, a tool call id), where
    ``json.loads`` gives back the same too. NaN and infinities (which JSON cannot say) become
    ``null``."""
    try:
        text = json.dumps(obj, ensure_ascii=False, separators=(",", ":"), allow_nan=False)
    except ValueError:
        text = json.dumps(_finite(obj), ensure_ascii=False, separators=(",", ":"), allow_nan=False)
    # Surrogates only occur inside JSON strings, where "\udcff" is their own escape; so do the others.
    text = text.encode("utf-8", "backslashreplace").decode("utf-8")
    if text.isascii():  # (the common case, a look at C speed: of those characters only DEL is ASCII)
        return text.replace("\x7f", "\\u007f")
    return _UNSHOWN.sub(_escape, text)


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
    tool_call_id: str | None, tool: str | None, text: str | None, header: str | None, options: Sequence[str],
    count: int | None,
) -> dict[str, Any]:
    """The question object (contract §5: text, header and options are plain text, sanitized
    when extracted, not truncated)."""
    return {"tool_call_id": tool_call_id, "tool": tool, "text": text, "header": header, "options": list(options),
            "count": count}  # fmt: skip


def session_obj(ref: SessionRef) -> dict[str, Any]:
    return session_fields(ref.id, ref.file, ref.cwd, ref.name, ref.host)


def question_token(q: Question) -> str:
    """A question as the user was shown it, in 16 hex digits: a digest of its tool call id, when it
    was asked (to the millisecond, as :func:`iso` writes it), its tool, and each of its questions'
    text and option labels, in order.

    Every way of answering from outside pi carries the token of what its user saw (the window, a
    notification's button, ``answer --token`` from ``status --json``) and is refused when the
    question waiting has another. The same call id with another text never happens in pi, but a
    digest of what was shown says so without relying on that; and a model that gives the next
    call the same id and the same question (some providers number their calls per turn) asks it
    at another time: an answer meant for the first never goes to the second."""
    parts = [q.tool_call_id, iso(q.asked_at), q.tool]
    for item in q.items:
        parts += ["\x1e", item.text, *(o.label for o in item.options)]
    data = "\x1f".join(parts).encode("utf-8", "backslashreplace")
    return hashlib.sha256(data).hexdigest()[:16]


def question_obj(q: Question) -> dict[str, Any]:
    obj = question_fields(q.tool_call_id, q.tool, q.text, q.header, q.options, q.count)
    obj["kind"] = q.kind  # additive (docs/contract.md §3): "question" | "dialog"
    if q.kind == "dialog":
        obj["dialog"] = q.dialog  # "select" | "confirm" | "input" | "editor" | "custom"
    obj["token"] = question_token(q)  # additive (§3): what was shown of it, for answer --token
    return obj


# ---- run --json (§2) and status --json (§3) ----

def event_obj(t: Transition) -> dict[str, Any]:
    obj: dict[str, Any] = {"event": t.kind, "at": iso(t.at)}
    if t.kind == "needs_input":
        obj["initial"] = t.initial
    obj["session"] = session_obj(t.session)
    obj["question"] = _waiting_obj(t.question)  # (asked_at: additive; a remote's stream carries it)
    if t.kind == "resolved":
        obj["outcome"] = t.outcome
        obj["answer"] = t.answer
        obj["waited_s"] = round(t.waited_s or 0.0, 3)
    return obj


def status_obj(snapshot: Snapshot) -> dict[str, Any]:
    """``status --json`` of a snapshot (before the command adds locations, silences and quiet
    hours), newest first, then by file (two stable sorts)."""
    views = sorted(snapshot.sessions, key=lambda v: v.ref.key)
    views.sort(key=lambda v: v.updated_at, reverse=True)
    return {
        "sessions": [session_status_obj(v) for v in views],
        "pending": snapshot.pending_count,
    }


def session_status_obj(v: SessionView) -> dict[str, Any]:
    """One session of ``status --json`` (the running app's reply and a scan of our own alike):
    :func:`session_obj`, its state, and ``"location": null`` (filled in by the command where
    a pi is found). Additive fields: each question's ``asked_at``, the session's
    ``current_tool``, and a remote's questions while its link is down (``offline``, since
    ``offline_since``), so that the text of ``status`` is rendered from this object too."""
    obj = session_obj(v.ref)  # (filled in place, in the order of the contract: one per session)
    obj["state"] = v.state
    obj["alive"] = v.alive
    obj["pending"] = [_waiting_obj(q) for q in v.pending] if v.pending else []  # (most have none: no loop)
    obj["abandoned"] = [_waiting_obj(q) for q in v.abandoned] if v.abandoned else []
    if v.offline_since is not None:  # additive (§3): a remote's questions while its link is down
        obj["offline"] = [_waiting_obj(q) for q in v.offline]
        obj["offline_since"] = iso(v.offline_since)
    obj["updated_at"] = iso(v.updated_at) if v.updated_at else None
    obj["current_tool"] = clean(v.current_tool) or None if v.current_tool else None
    obj["location"] = None
    return obj


def _waiting_obj(q: Question) -> dict[str, Any]:
    """A question of ``status --json``: :func:`question_obj` and since when it waits."""
    return {**question_obj(q), "asked_at": iso(q.asked_at)}


# ---- history: the stored record (one flat row per question) and history --json (§4) ----

OPTION_SEPARATOR = "\x1f"  # between option labels in a history row (sanitized labels hold none)
HISTORY_COLUMNS = (
    "file", "call_id", "session_id", "cwd", "name", "tool", "text", "header", "options", "count",  # (history_row's)
    "asked_at", "resolved_at", "outcome", "waited_s", "answer",
)  # fmt: skip


def history_row(t: Transition) -> dict[str, Any]:
    """The history record of the question of ``t`` as it is asked (the first ten of
    :data:`HISTORY_COLUMNS`; the store adds the times and the outcome)."""
    s, q = session_obj(t.session), question_obj(t.question)
    values = (
        t.session.key,  # the board's key: a remote session's names its host (split_key)
        q["tool_call_id"], s["id"], s["cwd"], s["name"], q["tool"], q["text"], q["header"],
        OPTION_SEPARATOR.join(q["options"]), q["count"],
    )  # fmt: skip
    return dict(zip(HISTORY_COLUMNS, values, strict=False))


def finite_number(value: object) -> float | None:
    """A stored number that JSON can say (rows of older versions may hold NaN, inf or junk)."""
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not -MAX_FLOAT <= value <= MAX_FLOAT:
        return None  # (NaN compares False; an int past floats is out of range)
    return float(value)


def history_entry(r: Mapping[str, object]) -> dict[str, Any]:
    """One question of ``history --json`` from a history row. Any stored row renders: times out
    of range are clamped, numbers that are not finite are null, names that are not UTF-8 come
    back as they were, a field of the wrong type is null."""
    t = {column: text if isinstance(text := r.get(column), str) else None for column in HISTORY_COLUMNS}
    waited = finite_number(r.get("waited_s"))
    count = r.get("count")
    host, file = split_key(t["file"] or "")  # a remote session's key names its host
    options = [o for o in (t["options"] or "").split(OPTION_SEPARATOR) if o]
    return {
        "session": session_fields(t["session_id"], file or None, t["cwd"], t["name"], host),
        "question": question_fields(
            t["call_id"], t["tool"], t["text"], t["header"], options,
            count if isinstance(count, int) and not isinstance(count, bool) else None,
        ),  # fmt: skip
        "asked_at": iso(r.get("asked_at")),
        "resolved_at": iso(r["resolved_at"]) if r.get("resolved_at") is not None else None,
        "outcome": t["outcome"],
        "waited_s": round(waited, 3) if waited is not None and 0 <= waited < 1e10 else None,
        "answer": t["answer"],
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


# ---- model values, in full ----
#
# One way for every frozen dataclass of the model: its fields are the table. A value is written
# as an object of every field (tuples as lists); it is read back only from exactly that shape,
# each field of the type its annotation says (str, bool, int, a finite float, a Literal, an optional,
# a tuple of values or of a fixed length, a nested dataclass), strings and lists bounded. Each
# type's reader is made once from its annotations (:func:`_reader`).

T = TypeVar("T")
MAX_FLOAT = sys.float_info.max


class _Limit(NamedTuple):
    text: int | None
    list: int | None


Reader = Callable[[Any, _Limit], Any]


def encode(value: Any) -> Any:
    """A model value as JSON can say it: a dataclass as an object of every field, a tuple as a list."""
    kind: Any = type(value)
    if kind in _PLAIN:
        return value
    if kind is tuple:
        return [encode(v) for v in value]
    names = _fields(kind)
    return {name: encode(getattr(value, name)) for name in names} if names else value


_PLAIN = frozenset({str, float, bool, int, type(None)})


@functools.cache
def _fields(cls: Any) -> tuple[str, ...]:
    """The field names of a dataclass (else none)."""
    return tuple(f.name for f in fields(cls)) if is_dataclass(cls) else ()


def decode(cls: type[T], obj: object, max_text: int | None = None, max_list: int | None = None) -> T:
    """The ``cls`` value :func:`encode` made ``obj`` of. ``max_text``, ``max_list``: the most
    characters of any string and entries of any list taken. Raises :class:`ValueError` on
    anything :func:`encode` never writes (a missing or extra field, a wrong type, a number that
    is not finite, a value its Literal does not list, a string or list past the limits)."""
    kind: Any = cls
    value: T = _reader(kind)(obj, _Limit(max_text, max_list))
    return value


@functools.cache
def _reader(hint: Any) -> Reader:
    """How to read (and check) a value of type ``hint``."""
    origin, args = get_origin(hint), get_args(hint)
    if origin is Union or origin is UnionType:  # (the model's unions are optionals)
        inner = _reader(next(a for a in args if a is not type(None)))
        return lambda value, limit: None if value is None else inner(value, limit)
    if origin is Literal:
        return functools.partial(_one_of, frozenset(args))
    if origin is tuple:
        each = [_reader(a) for a in args if a is not Ellipsis]
        if args[-1] is Ellipsis:
            return lambda value, limit: tuple([each[0](v, limit) for v in _list(value, limit)])
        fixed = len(each)
        return lambda value, limit: tuple([r(v, limit) for r, v in zip(each, _list(value, limit, fixed), strict=True)])
    if isinstance(hint, type) and is_dataclass(hint):
        table = tuple((name, _reader(h)) for name, h in get_type_hints(hint).items())
        return functools.partial(_object, hint, {name: None for name, _ in table}.keys(), table)
    scalar = _SCALARS.get(hint)
    if scalar is None:
        raise TypeError(f"no JSON for {hint}")
    return scalar


def _str(value: Any, limit: _Limit) -> str:
    if type(value) is not str or (limit.text is not None and len(value) > limit.text):
        raise ValueError("a wrong or oversized string")
    return value


def _float(value: Any, limit: _Limit) -> float:
    if type(value) not in (int, float) or not -MAX_FLOAT <= value <= MAX_FLOAT:  # (NaN, inf, an int past floats)
        raise ValueError("a wrong number")
    return float(value)


def _exactly(kind: type) -> Reader:
    """A reader of values of type ``kind`` itself (a bool is no int here)."""
    def read(value: Any, limit: _Limit) -> Any:
        if type(value) is not kind:
            raise ValueError(f"not a {kind.__name__}")
        return value

    return read


_SCALARS: dict[Any, Reader] = {str: _str, bool: _exactly(bool), float: _float, int: _exactly(int)}


def _one_of(allowed: frozenset[str], value: Any, limit: _Limit) -> str:
    if type(value) is not str or value not in allowed:
        raise ValueError("a value of an unknown kind")
    return value


def _list(value: Any, limit: _Limit, length: int | None = None) -> list[Any]:
    """``value`` if it is a list within the limit (of ``length`` entries, where that is fixed)."""
    if type(value) is not list or (limit.list is not None and len(value) > limit.list):
        raise ValueError("a wrong or oversized list")
    if length is not None and len(value) != length:
        raise ValueError("a list of the wrong length")
    return value


def _object(cls: type, keys: Any, table: tuple[tuple[str, Reader], ...], value: Any, limit: _Limit) -> Any:
    if type(value) is not dict or value.keys() != keys:
        raise ValueError(f"an object of the wrong fields for {cls.__name__}")
    return cls(*[read(value[name], limit) for name, read in table])


# ---- bounded parsing ----

MAX_DEPTH = 64  # pi's own entries nest < 12 levels; tool arguments a few more
_NOT_OPENERS = bytes(b for b in range(256) if b not in b"[{")
# What may matter for the nesting: brackets, quotes, backslashes and the letters that follow a
# backslash in an escape (so a backslash is next to its escape's letter still); and then only
# brackets and quotes.
_NOT_SKELETON = bytes(b for b in range(256) if b not in b'[]{}"\\/bfnrtu')
_NOT_BRACKETS_QUOTES = bytes(b for b in range(256) if b not in b'[]{}"')
_PAIR = re.compile(rb"\[\]|\{\}")
_raw_decode = json.JSONDecoder().raw_decode  # (json.loads's decoder, without its whitespace scans)


class BoundedJSONError(ValueError):
    """The input is not JSON, too large or too deeply nested (the message says which)."""


def _too_deep(raw: bytes, max_depth: int) -> str | None:
    """Why ``raw`` must not reach the decoder (too deep, or brackets that cannot be JSON), else
    ``None``. Only C-speed bytes operations, linear in ``len(raw)``:

    1. keep only the bytes that can matter: brackets, quotes, backslashes and the letters of
       escapes (``\\n``, ``\\u00e9``…: a backslash stays next to what it escapes), a third of a
       line of text or less;
    2. drop escape pairs (``\\\\`` then ``\\"``), so the only quotes left delimit strings;
    3. keep what lies outside strings (every other piece between quotes), then only its brackets;
    4. strip innermost ``[]``/``{}`` pairs: a balanced sequence of depth d is gone after d passes.

    Exact for valid JSON; for invalid JSON the brackets the decoder would see before failing are
    a prefix of what is checked here, so the decoder never recurses deeper than ``max_depth``
    (tests/hostile/test_tail.py checks it against a plain loop over the bytes).

    First the common case in one pass: no more opening brackets in all of ``raw`` (inside
    strings or not) than ``max_depth``, so it cannot nest deeper (what does not balance, the
    decoder refuses). Most lines and rows are that: about 0.2 µs instead of 2.4 µs for a line of
    pi's, 85 µs instead of 620 µs for a tool result of 300 KB."""
    if len(raw.translate(None, _NOT_OPENERS)) <= max_depth:
        return None
    skeleton = raw.translate(None, _NOT_SKELETON).replace(b"\\\\", b"").replace(b'\\"', b"")
    brackets = b"".join(skeleton.translate(None, _NOT_BRACKETS_QUOTES).split(b'"')[::2])
    for _ in range(max_depth):
        if not brackets:
            return None
        shorter = _PAIR.sub(b"", brackets)
        if len(shorter) == len(brackets):
            return "brackets do not balance (not JSON)"
        brackets = shorter
    return None if not brackets else f"nested deeper than {max_depth} levels"


def loads(data: bytes | str, max_bytes: int | None = None, max_depth: int = MAX_DEPTH) -> Any:
    """``json.loads`` with bounds. Raises :class:`BoundedJSONError` (a ``ValueError``) for
    anything that is not acceptable JSON, and ``UnicodeDecodeError`` for bytes that are not UTF-8."""
    raw = data.encode("utf-8", "surrogatepass") if isinstance(data, str) else data
    if max_bytes is not None and len(raw) > max_bytes:
        raise BoundedJSONError(f"longer than {max_bytes} bytes")
    reason = _too_deep(raw, max_depth)
    if reason is not None:
        raise BoundedJSONError(reason)
    text = raw.decode("utf-8")
    # The common case, a value that fills the text, straight to the decoder; anything else
    # (whitespace around it, not JSON) through json.loads, which says why. (No RecursionError:
    # the depth check above excludes it.)
    with contextlib.suppress(ValueError):
        value, end = _raw_decode(text)
        if end == len(text):
            return value
    try:
        return json.loads(text)
    except ValueError as exc:  # includes integers longer than sys.get_int_max_str_digits()
        raise BoundedJSONError(f"not JSON ({exc.args[0] if exc.args else exc})") from exc


# ---- bounding a parsed value ----

MAX_STR = 16_384  # characters in one string
MAX_ITEMS = 1_000  # entries in one list or object
BUDGET_CHARS = 512 << 10  # characters in all strings together
BUDGET_NODES = 20_000  # values in all


@dataclass(slots=True)
class Budget:
    """What :func:`shrink` may still copy; share one between calls to bound their sum."""

    chars: int = BUDGET_CHARS
    nodes: int = BUDGET_NODES


def shrink(
    value: Any,
    budget: Budget | None = None,
    max_str: int = MAX_STR,
    max_items: int = MAX_ITEMS,
    max_depth: int = MAX_DEPTH,
) -> Any:
    """A copy of a parsed JSON value that is bounded whatever the input: strings cut to
    ``max_str`` characters, lists and objects to ``max_items`` entries, nothing deeper than
    ``max_depth`` (replaced by ``None``), and no more characters and values in all than
    ``budget`` allows (what does not fit is left out). The work done is bounded the same way,
    so it is safe on any value. Numbers, booleans and ``None`` are kept."""
    return _shrink(value, budget or Budget(), max_str, max_items, max_depth)


def _shrink(value: Any, budget: Budget, max_str: int, max_items: int, depth: int) -> Any:
    budget.nodes -= 1
    if isinstance(value, str):
        keep = max(0, min(len(value), max_str, budget.chars))
        budget.chars -= keep
        return value if keep == len(value) else value[:keep]
    if value is None or isinstance(value, (bool, int, float)):
        return value
    if depth <= 0:
        return None
    if isinstance(value, list):
        out: list[Any] = []
        for item in value[:max_items]:
            if budget.nodes <= 0:
                break
            out.append(_shrink(item, budget, max_str, max_items, depth - 1))
        return out
    if isinstance(value, Mapping):
        obj: dict[str, Any] = {}
        for count, (key, item) in enumerate(value.items()):
            if count >= max_items or budget.nodes <= 0:
                break
            if not isinstance(key, str) or len(key) > max_str:
                continue
            budget.chars -= len(key)
            obj[key] = _shrink(item, budget, max_str, max_items, depth - 1)
        return obj
    return None


# ---- times from untrusted sources ----

# Times outside this window come from a broken clock or a hostile file: they are ignored (the
# time the entry was seen is used instead), so no later arithmetic, storage or rendering breaks.
MIN_TIME = 946684800.0  # 2000-01-01T00:00:00Z
MAX_TIME = 7258118400.0  # 2200-01-01T00:00:00Z


def sane_time(value: object) -> float | None:
    """``value`` as epoch seconds if it is a real number inside [MIN_TIME, MAX_TIME], else None."""
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not MIN_TIME <= value <= MAX_TIME:
        return None  # (NaN compares False; ints are compared exactly, also those past floats)
    return float(value)


def parse_iso(text: object) -> float | None:
    """An ISO-8601 time (ours: :func:`iso`; pi's entries) as epoch
    seconds, or None when it is not one or lies outside [MIN_TIME, MAX_TIME]. ``Z`` is UTC, and
    so is a time without a zone."""
    if not isinstance(text, str) or not 0 < len(text) <= 64:
        return None
    if text[-1] in ("Z", "z"):
        text = text[:-1] + "+00:00"  # (Python 3.10's fromisoformat does not take Z)
    try:
        parsed = datetime.fromisoformat(text)
        if parsed.tzinfo is None:
            parsed = parsed.replace(tzinfo=timezone.utc)
        return sane_time(parsed.timestamp())
    except (ValueError, OverflowError, OSError):
        return None


# ---- status bars ----

MARK = "π"
LISTED = 8  # questions a tooltip lists


def bar_summary(snapshot: Snapshot, now: float, snoozed_until: float | None = None, quiet: str = "") -> dict[str, Any]:
    """``{"pending", "abandoned", "snoozed_until", "quiet", "questions": [{"project", "id",
    "text", "waited_s"}…]}``: the questions waiting longest first, at most :data:`LISTED` of
    them. ``snoozed_until``: when the snooze of everything ends (the user's choice, not the
    board's); ``quiet``: the quiet hours in effect ("quiet hours until 07:30", or "")."""
    from notifier.core.commands import short_id  # (here: the command vocabulary is for commands)

    waiting = sorted(snapshot.pending, key=lambda sq: sq[1].asked_at)
    snoozed = snoozed_until if snoozed_until and snoozed_until > now else None
    return {
        "pending": snapshot.pending_count,
        "abandoned": len(snapshot.abandoned),
        "snoozed_until": snoozed,
        "quiet": quiet,
        "questions": [
            {
                "project": project_name(v.ref.name, v.ref.cwd, v.ref.host),
                "id": short_id(v.ref.id),
                "text": clean(q.text, 80),
                "waited_s": max(0.0, now - q.asked_at),
            }
            for v, q in waiting[:LISTED]
        ],
    }


def _count(s: dict[str, Any]) -> int:
    n = s.get("pending")
    return n if isinstance(n, int) and not isinstance(n, bool) and n > 0 else 0


def tmux_segment(s: dict[str, Any]) -> str:
    """"π 2" while questions wait ("π 2 z" while snoozed), else nothing (the segment vanishes)."""
    n = _count(s)
    if not n:
        return ""
    return f"{MARK} {n}" + (" z" if s.get("snoozed_until") else "")


def bar_obj(s: dict[str, Any], now: float) -> dict[str, str]:
    """waybar's custom module JSON (polybar and i3blocks read ``text``): ``class`` is
    ``needs``, ``snoozed``, ``abandoned`` or ``idle``, for the bar's CSS; the ``tooltip`` is
    markup-escaped (waybar renders it as Pango markup). (The summary crossed a socket: a field of
    the wrong type counts as missing.)"""
    n = _count(s)
    questions = s.get("questions")
    lines = []
    for q in questions if isinstance(questions, list) else ():
        if isinstance(q, dict):
            sid = f" {markup(q.get('id'), 8)}" if q.get("id") else ""
            waited = duration(finite_number(q.get("waited_s")) or 0.0)
            lines.append(f"{markup(q.get('project'), 40)}{sid}: {markup(q.get('text'), 80)} ({waited})")
    if n > len(lines):
        lines.append(f"… {n - len(lines)} more")
    snoozed = finite_number(s.get("snoozed_until"))
    snoozed = snoozed if snoozed is not None and snoozed > now else None
    if snoozed is not None:
        lines.append(f"snoozed for {duration(snoozed - now)}")
    abandoned = finite_number(s.get("abandoned")) or 0
    if abandoned > 0:
        lines.append(f"{int(abandoned)} abandoned (their pi stopped)")
    klass = "snoozed" if snoozed and n else "needs" if n else "abandoned" if abandoned > 0 else "idle"
    lines = lines or ["no pi is waiting for an answer"]
    if isinstance(s.get("quiet"), str) and s["quiet"]:
        lines.append(f"{markup(s['quiet'], 60)}: no notifications")
    return {
        "text": tmux_segment({"pending": n, "snoozed_until": snoozed}),
        "tooltip": "\n".join(lines),
        "class": klass,
    }
