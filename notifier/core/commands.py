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
from dataclasses import dataclass
from typing import Any

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
    token: str | None = None  # what the user was shown (core.question_token): refused once it no longer waits


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
    """How the app's parts are doing (engine, sinks, tray, notifications)."""


@dataclass(frozen=True)
class Quit:
    pass


Command = Ping | Show | Snooze | Mute | Clear | Goto | Answer | Status | Subscribe | Health | Quit

_NAMES: dict[type, str] = {
    Ping: "ping",
    Show: "show",
    Snooze: "snooze",
    Mute: "mute",
    Clear: "clear",
    Goto: "goto",
    Answer: "answer",
    Status: "status",
    Subscribe: "subscribe",
    Health: "health",
    Quit: "quit",
}


def _text(obj: Mapping[str, Any], key: str, required: bool = False) -> str | None:
    value = obj.get(key)
    if value is None or value == "":
        if required:
            raise CommandError(f"{key} is missing")
        return None
    if not isinstance(value, str):
        raise CommandError(f"{key} must be a string")
    if len(value) > MAX_FIELD:
        raise CommandError(f"{key} is too long")
    return value


def _required(obj: Mapping[str, Any], key: str) -> str:
    value = _text(obj, key, required=True)
    assert value is not None
    return value


def _number(obj: Mapping[str, Any], key: str) -> float:
    value = obj.get(key)
    if value is None:
        return 0.0
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise CommandError(f"{key} must be a number")
    if isinstance(value, float) and not math.isfinite(value):
        raise CommandError(f"{key} must be finite")
    return float(value) if abs(value) < 1e15 else (1e15 if value > 0 else -1e15)


def _strings(obj: Mapping[str, Any], key: str) -> tuple[str, ...]:
    value = obj.get(key) or []
    if not isinstance(value, list) or len(value) > MAX_LIST:
        raise CommandError(f"{key} must be a list of at most {MAX_LIST} strings")
    if not all(isinstance(v, str) and len(v) <= MAX_FIELD for v in value):
        raise CommandError(f"{key} must be a list of strings")
    return tuple(value)


def _focus(value: Any) -> Focus | None:
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
    raise CommandError("focus must be [file, call id]")


def _from_now(seconds: float, now: float) -> float:
    return now + seconds if seconds > 0 else 0.0


def _act(obj: Mapping[str, Any], now: float, morning: float | None) -> Command:
    """The tray's verbs, sent over the socket: ``{"cmd": "act", "verb": …, "arg": …}``."""
    verb, arg = obj.get("verb"), obj.get("arg")
    if verb == "show":
        return Show(_focus(arg))
    if verb == "clear":
        if arg is None:
            return Clear()
        if not (isinstance(arg, list) and len(arg) == 2):
            raise CommandError("arg must be [session, call] or null")
        pair = {"session": arg[0], "call": arg[1]}
        return Clear(_text(pair, "session"), _text(pair, "call"))
    if verb == "snooze":  # every session: seconds (0 resumes) or "tomorrow"
        if arg == "tomorrow":
            if morning is None:
                raise CommandError("no time for 'tomorrow'")
            return Snooze(morning)
        return Snooze(_from_now(_number(obj, "arg"), now))
    if verb == "unmute":
        return Mute(_required(obj, "arg"), on=False)
    if verb == "quit":
        return Quit()
    raise CommandError("unknown verb")


def _show(obj: Mapping[str, Any], now: float, morning: float | None) -> Command:
    wait = min(MAX_WAIT_S, max(0.0, _number(obj, "wait")))
    return Show(_focus(obj.get("focus")), wait)


def _snooze(obj: Mapping[str, Any], now: float, morning: float | None) -> Command:
    until = _number(obj, "until") if "until" in obj else _from_now(_number(obj, "seconds"), now)
    return Snooze(until, _text(obj, "session"), _text(obj, "project"))


def _mute(obj: Mapping[str, Any], now: float, morning: float | None) -> Command:
    on = obj.get("on", True)
    if not isinstance(on, bool):
        raise CommandError("on must be true or false")
    return Mute(_required(obj, "project"), on)


def _answer(obj: Mapping[str, Any], now: float, morning: float | None) -> Command:
    session, call = _required(obj, "session"), _required(obj, "call")
    choices = _strings(obj, "choices")
    if len(choices) > MAX_CHOICES or not all(choices):
        raise CommandError(f"choices must be at most {MAX_CHOICES} non-empty strings")
    text = obj.get("text")
    if text is not None and (not isinstance(text, str) or len(text) > MAX_FIELD):
        raise CommandError("text must be a string")
    if (text is None) == (not choices):
        raise CommandError("give choices or text, not both and not neither")
    return Answer(session, call, choices, text, _text(obj, "token"))


def _status(obj: Mapping[str, Any], now: float, morning: float | None) -> Command:
    brief = obj.get("brief", False)
    if not isinstance(brief, bool):
        raise CommandError("brief must be true or false")
    return Status(_strings(obj, "roots"), _text(obj, "liveness"), _strings(obj, "question_tools"), brief)


Parser = Callable[[Mapping[str, Any], float, float | None], Command]
# Each command's reader, by its name on the wire; a command without fields is made as it is.
_PARSERS: dict[str, Parser] = {
    "show": _show,
    "snooze": _snooze,
    "mute": _mute,
    "clear": lambda obj, now, morning: Clear(_text(obj, "session"), _text(obj, "call")),
    "goto": lambda obj, now, morning: Goto(_text(obj, "session"), _text(obj, "call")),
    "answer": _answer,
    "status": _status,
    "act": _act,
}
_BARE: dict[str, Command] = {"ping": Ping(), "subscribe": Subscribe(), "health": Health(), "quit": Quit()}


def parse(obj: Any, now: float, morning: float | None = None) -> Command:
    """A command from a decoded JSON object. Snooze takes ``until`` (absolute) or ``seconds``
    (from ``now``; 0 or less resumes). ``morning``: when "until tomorrow" ends (the caller knows
    the local calendar). Raises :class:`CommandError` for anything else."""
    if not isinstance(obj, Mapping):
        raise CommandError("a request is a JSON object")
    name = obj.get("cmd")
    if not isinstance(name, str):
        raise CommandError("unknown command")
    bare = _BARE.get(name)
    if bare is not None:
        return bare
    parser = _PARSERS.get(name)
    if parser is None:
        raise CommandError("unknown command")
    return parser(obj, now, morning)


def to_obj(command: Command) -> dict[str, Any]:
    """The JSON object :func:`parse` reads back as ``command``."""
    obj: dict[str, Any] = {"cmd": _NAMES[type(command)]}
    if isinstance(command, Show):
        obj["focus"] = [command.focus.file, command.focus.call] if command.focus else None
        if command.wait:
            obj["wait"] = command.wait
    elif isinstance(command, Snooze):
        obj.update(until=command.until, session=command.session, project=command.project)
    elif isinstance(command, Mute):
        obj.update(project=command.project, on=command.on)
    elif isinstance(command, (Clear, Goto)):
        obj.update(session=command.session, call=command.call)
    elif isinstance(command, Answer):
        obj.update(session=command.session, call=command.call, choices=list(command.choices), text=command.text)
        obj.update({"token": command.token} if command.token is not None else {})
    elif isinstance(command, Status):
        obj.update(roots=list(command.roots), liveness=command.liveness, question_tools=list(command.question_tools))
        if command.brief:
            obj["brief"] = True
    return obj


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


def folder_name(view: SessionView) -> str | None:
    """The last folder of the session's cwd (what "project" means on the command line)."""
    return last_folder(view.ref.cwd)


def label(view: SessionView) -> str:
    """How a candidate is named in a message: project and short id ("blog 9f2c1d3e")."""
    sid = short_id(view.ref.id)
    name = project_name(view.ref.name, view.ref.cwd, view.ref.host)
    return f"{name} {sid}" if sid else f"{name} ({clean(view.ref.file, 80)})"


# Each rule, tried in order: the first that matches any session decides (an id beats a name).
# (A session file is matched by the caller first: resolving paths is not pure.)
Rule = Callable[[SessionView, str], bool]


def _by_id(v: SessionView, spec: str) -> bool:
    return bool(v.ref.id) and v.ref.id == spec


def _by_short_id(v: SessionView, spec: str) -> bool:
    return len(spec) >= 4 and short_id(v.ref.id) == spec.lower()


def _by_id_prefix(v: SessionView, spec: str) -> bool:
    return bool(v.ref.id) and v.ref.id.startswith(spec)  # type: ignore[union-attr]


def _by_short_prefix(v: SessionView, spec: str) -> bool:
    sid = short_id(v.ref.id)
    return len(spec) >= 4 and sid is not None and sid.startswith(spec.lower())


def _by_name(v: SessionView, spec: str) -> bool:
    return v.ref.name is not None and (v.ref.name == spec or clean(v.ref.name, 200) == spec)


def _by_project(v: SessionView, spec: str) -> bool:
    folder = folder_name(v)
    return folder is not None and (folder == spec or clean(folder, 200) == spec)  # (as it is shown too)


def _by_name_any_case(v: SessionView, spec: str) -> bool:
    low = spec.casefold()
    names = (v.ref.name or "", folder_name(v) or "")
    return any(n.casefold() == low or clean(n, 200).casefold() == low for n in names)


RULES: tuple[Rule, ...] = (
    _by_id,
    _by_short_id,
    _by_id_prefix,
    _by_short_prefix,
    _by_name,
    _by_project,
    _by_name_any_case,
)


def matches(views: Sequence[SessionView], spec: str) -> list[SessionView]:
    """The sessions ``spec`` (not a file) names, by the first rule that names any; where several,
    the ones waiting for an answer if any do, else the ones with a live pi if any have one
    (``blog`` is the blog session that waits, not its forty old files). Several left: ambiguous;
    none: no such session."""
    for rule in RULES:
        found = [v for v in views if rule(v, spec)]
        if found:
            break
    else:
        return []
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
