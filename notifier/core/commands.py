"""The one command vocabulary (pure): the commands the tray, the window, notification actions and
the control socket speak, and what SESSION on the command line names.

A command arrives either typed (tray, notification actions, in-process)
or as a JSON object (the socket, the window process), which :func:`parse` turns into the same
types once, checking every field; :func:`to_obj` is its inverse.
Times are absolute (seconds since the epoch), computed by whoever knows the clock.


**What SESSION names** on the command line: a session file, an id, a short id, an id prefix, a
session or project name, or ``next``; and the short id that tells sessions apart.

pi's ids are UUIDv7: their first 12 hex digits are the start time, so two pis started a minute
apart share their first 8. The short id is the id's *last* 8 hex digits (random bits)."""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import MISSING, asdict, dataclass, fields, replace
from typing import Any, get_args

from notifier.core.model import SessionView
from notifier.core.text import clean, last_folder, project_name

# ---- commands ----

MAX_FIELD = 4096  # longest file path, session key, project or call id accepted
MAX_LIST = 64  # longest list of folders or tool names in a status request
MAX_WAIT_S = 2.0  # longest a show request waits for a new window to confirm it opened


class CommandError(ValueError):
    """A request that is not a command (the message says what is wrong, in a few words)."""


@dataclass(frozen=True)
class Focus:
    """One question: its session file and tool call id."""

    file: str
    call: str


@dataclass(frozen=True)
class Ping:
    pass


@dataclass(frozen=True)
class Show:
    """Open (or raise) the window, at ``focus`` if given; ``wait``: seconds (at most
    :data:`MAX_WAIT_S`) to wait for a new window to confirm it opened, before replying."""

    focus: Focus | None = None
    wait: float = 0.0


@dataclass(frozen=True)
class Snooze:
    """Hold notifications back until ``until``: for one session, one project or (neither) all.
    ``until`` in the past resumes (for all: every snooze is lifted)."""

    until: float
    session: str | None = None
    project: str | None = None


@dataclass(frozen=True)
class Mute:
    project: str
    on: bool = True


@dataclass(frozen=True)
class Clear:
    """Forget abandoned questions: one (session and call), a session's, or (neither) all."""

    session: str | None = None
    call: str | None = None


@dataclass(frozen=True)
class Goto:
    """Bring the user to the terminal (tmux pane) of a session: ``session`` is its board key (a
    file, or ``@host:file`` for a remote one; None: the longest-waiting question's), ``call`` the
    question the user clicked (the window opens at it when the terminal cannot be focused)."""

    session: str | None = None
    call: str | None = None


MAX_CHOICES = 16  # a questionnaire's answers, or a multi-select's picks


@dataclass(frozen=True)
class Answer:
    """Answer one waiting question, as ``pi-notifier answer`` does: ``choices`` (option numbers
    from 1 or labels; one per question of a questionnaire, in order; several picks of a
    multi-select) or ``text`` (free text), never both."""

    session: str
    call: str
    choices: tuple[str, ...] = ()
    text: str | None = None
    token: str | None = None  # what the user was shown (codec.question_token): refused once it no longer waits


@dataclass(frozen=True)
class Status:
    """The app's status, if it watches these folders with these settings; ``brief``: only the
    status bar's summary (notifier.core.codec), small enough to ask for every second."""

    roots: tuple[str, ...] = ()
    liveness: str | None = None
    question_tools: tuple[str, ...] = ()
    brief: bool = False


@dataclass(frozen=True)
class Subscribe:
    """Keep the connection: the app pushes window snapshots and focus requests to it."""


@dataclass(frozen=True)
class Health:
    """How the app's parts are doing (engine, outputs, tray, notifications)."""


@dataclass(frozen=True)
class Quit:
    pass


Command = Ping | Show | Snooze | Mute | Clear | Goto | Answer | Status | Subscribe | Health | Quit
# Each command by its name on the wire: its class's name in lower case.
_TYPES: dict[str, type[Command]] = {cls.__name__.lower(): cls for cls in get_args(Command)}


def _answer_text(key: str, value: Any) -> str | None:
    """A string, or None; an answer's free text is any string ("" too: an input dialog may be answered empty)."""
    if value is not None and (not isinstance(value, str) or len(value) > MAX_FIELD):
        raise CommandError(f"{key} must be a string of at most {MAX_FIELD} characters")
    return value


def _text(key: str, value: Any) -> str | None:
    return _answer_text(key, value) or None


def _required(key: str, value: Any) -> str:
    text = _text(key, value)
    if text is None:
        raise CommandError(f"{key} is missing")
    return text


def _number(key: str, value: Any) -> float:
    if value is None:
        return 0.0
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise CommandError(f"{key} must be a number")
    if isinstance(value, float) and not math.isfinite(value):
        raise CommandError(f"{key} must be finite")
    return float(value) if abs(value) < 1e15 else (1e15 if value > 0 else -1e15)


def _flag(key: str, value: Any) -> bool:
    if not isinstance(value, bool):
        raise CommandError(f"{key} must be true or false")
    return value


def _strings(key: str, value: Any) -> tuple[str, ...]:
    value = value or []
    if not isinstance(value, (list, tuple)) or len(value) > MAX_LIST:
        raise CommandError(f"{key} must be a list of at most {MAX_LIST} strings")
    if not all(isinstance(v, str) and len(v) <= MAX_FIELD for v in value):
        raise CommandError(f"{key} must be a list of strings")
    return tuple(value)


def _focus(key: str, value: Any) -> Focus | None:
    if value is None:
        return None
    if isinstance(value, Mapping):
        value = [value.get("file"), value.get("call")]
    if (
        isinstance(value, (list, tuple))
        and len(value) == 2
        and all(isinstance(v, str) and 0 < len(v) <= MAX_FIELD for v in value)
    ):
        return Focus(value[0], value[1])
    raise CommandError(f"{key} must be [file, call id]")


# How each field is read: by its name where that is special, else by its type (as annotated).
Reader = Callable[[str, Any], Any]
_BY_NAME: dict[str, Reader] = {"text": _answer_text}
_BY_TYPE: dict[str, Reader] = {
    "str": _required,
    "str | None": _text,
    "float": _number,
    "bool": _flag,
    "tuple[str, ...]": _strings,
    "Focus | None": _focus,
}


def parse(obj: Any, now: float) -> Command:
    """A command from a decoded JSON object: ``{"cmd": NAME}`` and the fields of its class (a
    tuple as a list, a focus as ``[file, call]``, a field left out takes its default). Snooze
    takes ``until`` (absolute) or ``seconds`` (from ``now``; 0 or less resumes). Raises
    :class:`CommandError` for anything else."""
    if not isinstance(obj, Mapping):
        raise CommandError("a request is a JSON object")
    name = obj.get("cmd")
    cls = _TYPES.get(name) if isinstance(name, str) else None
    if cls is None:
        raise CommandError("unknown command")
    if cls is Snooze and "until" not in obj:
        seconds = _number("seconds", obj.get("seconds"))
        obj = {**obj, "until": now + seconds if seconds > 0 else 0.0}
    values: dict[str, Any] = {}
    for f in fields(cls):
        read = _BY_NAME.get(f.name) or _BY_TYPE[str(f.type)]
        values[f.name] = read(f.name, obj.get(f.name, None if f.default is MISSING else f.default))
    command = cls(**values)
    if isinstance(command, Show):
        return replace(command, wait=min(MAX_WAIT_S, max(0.0, command.wait)))
    if isinstance(command, Answer):
        if len(command.choices) > MAX_CHOICES or not all(command.choices):
            raise CommandError(f"choices must be at most {MAX_CHOICES} non-empty strings")
        if (command.text is None) == (not command.choices):
            raise CommandError("give choices or text, not both and not neither")
    return command


def to_obj(command: Command) -> dict[str, Any]:
    """The JSON object :func:`parse` reads back as ``command`` (a focus as ``{"file", "call"}``)."""
    return {"cmd": type(command).__name__.lower(), **asdict(command)}


# ---- what SESSION names ----

NEXT = "next"  # SESSION meaning the question waiting longest
SHORT = 8
_HEX = re.compile(r"[^0-9A-Za-z]")


def short_id(session_id: str | None) -> str | None:
    """The id's last 8 letters or digits (dashes dropped); None without an id."""
    if not session_id:
        return None
    plain = _HEX.sub("", session_id)
    return (plain[-SHORT:] or session_id[-SHORT:]).lower()


def label(view: SessionView) -> str:
    """How a candidate is named in a message: project and short id ("blog 9f2c1d3e")."""
    sid = short_id(view.ref.id)
    name = project_name(view.ref.name, view.ref.cwd, view.ref.host)
    return f"{name} {sid}" if sid else f"{name} ({clean(view.ref.file, 80)})"


def _said(name: str | None, spec: str, fold: bool = False) -> bool:
    """Whether ``spec`` is ``name``, as it is or as it is shown (cleaned); in any case if ``fold``."""
    said = (name, clean(name, 200)) if name else ()
    return spec.casefold() in [s.casefold() for s in said] if fold else spec in said


def _rule(v: SessionView, spec: str) -> int | None:
    """The first rule that names ``v`` by ``spec``, in order (an id beats a name): its id, its
    short id, a prefix of its id, a prefix of its short id (both short: 4 characters or more), its
    name or its folder (either is what "project" means on the command line, as for ``mute``),
    either in any case. (A session file is matched by the caller first: resolving paths is not
    pure.)"""
    vid, sid, low = v.ref.id or "", short_id(v.ref.id) or "", spec.lower()
    folder = last_folder(v.ref.cwd)
    hits = (
        bool(vid) and vid == spec,
        len(spec) >= 4 and sid == low,
        bool(vid) and vid.startswith(spec),
        len(spec) >= 4 and sid.startswith(low),
        _said(v.ref.name, spec) or _said(folder, spec),
        _said(v.ref.name, spec, fold=True) or _said(folder, spec, fold=True),
    )
    return next((i for i, hit in enumerate(hits) if hit), None)


def matches(views: Sequence[SessionView], spec: str) -> list[SessionView]:
    """The sessions ``spec`` (not a file) names, by the first rule that names any; where several,
    the ones waiting for an answer if any do, else the ones with a live pi if any have one
    (``blog`` is the blog session that waits, not its forty old files). Several left: ambiguous;
    none: no such session."""
    ranked = [(rule, v) for v in views if (rule := _rule(v, spec)) is not None]
    first = min((rule for rule, _ in ranked), default=None)
    found = [v for rule, v in ranked if rule == first]
    if len(found) > 1:
        waiting = [v for v in found if v.pending]
        live = [v for v in found if v.alive]
        found = waiting or live or found
    return found


def candidates_line(spec: str, found: Sequence[SessionView], shown: int = 5) -> str:
    """One line for an ambiguous SESSION: how many it matches, and which."""
    names = ", ".join(label(v) for v in sorted(found, key=lambda v: -v.updated_at)[:shown])
    more = f" and {len(found) - shown} more" if len(found) > shown else ""
    return f"{clean(spec, 80)!r} matches {len(found)} sessions: {names}{more}; give its short id or file"
