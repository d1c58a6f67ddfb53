"""The companion pi extension's socket protocol (notifier/resources/pi-extension/pi-notifier/protocol.ts):
typed events parsed from its JSON lines, and the requests that answer a dialog.

Pure: bytes in, typed values out (and the other way). Strings are kept as the extension sent them
(bounded); whoever shows or logs them passes them through :func:`notifier.core.text.clean`.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any, Literal

from notifier.companion.sockets import SOCKET_PREFIX as SOCKET_PREFIX
from notifier.companion.sockets import SOCKET_SUFFIX as SOCKET_SUFFIX
from notifier.companion.sockets import is_socket_name as is_socket_name
from notifier.core import codec as jsonbound

PROTOCOL = 1
MAX_LINE = 1 << 20  # one announcement (titles, options, a mirrored screen) stays far below this

KINDS = ("select", "confirm", "input", "editor", "custom")
Kind = Literal["select", "confirm", "input", "editor", "custom"]
HOW = ("answered", "cancelled", "remote")

# Key names a caller may use instead of raw terminal input (what a terminal sends for the key).
KEYS: dict[str, str] = {
    "up": "\x1b[A",
    "down": "\x1b[B",
    "right": "\x1b[C",
    "left": "\x1b[D",
    "enter": "\r",
    "escape": "\x1b",
    "tab": "\t",
    "backspace": "\x7f",
    "space": " ",
}


class ProtocolError(ValueError):
    """A line that is not a well-formed message of this protocol."""


@dataclass(frozen=True)
class Dialog:
    """A dialog pi shows. ``remote`` says how it can be answered from here: ``"value"`` (select,
    confirm, input: exactly), ``"keys"`` (custom: keys forwarded to its component) or ``None``.
    ``waits``: known to wait for a human (False: a loader shown while an extension calls the model,
    a custom dialog that takes no input, or one announced only by pi's prompt events).
    ``session_file`` is ``None`` before pi has a session (a start-up dialog: project trust); the
    pi is known by ``pid`` and ``cwd`` then, and ``session_dir`` says where its sessions go."""

    id: str
    kind: Kind
    title: str | None
    options: tuple[str, ...] | None
    tool: str | None
    tool_call_id: str | None
    tool_input: Any
    session_file: str | None
    cwd: str | None
    pid: int | None
    at: float | None  # seconds since the epoch, when pi opened it
    remote: Literal["value", "keys"] | None
    screen: tuple[str, ...] | None  # a custom dialog's text, as the terminal shows it
    waits: bool = True
    session_dir: str | None = None

    @property
    def command(self) -> str | None:
        """The shell command a gate asks about, when the gated tool call is a bash call."""
        if isinstance(self.tool_input, dict):
            value = self.tool_input.get("command")
            if isinstance(value, str):
                return value
        return None


@dataclass(frozen=True)
class Hello:
    protocol: int
    pi_version: str | None
    pid: int | None
    session_file: str | None
    session_id: str | None
    cwd: str | None
    mode: str  # "wrap": every dialog, answerable; "events": announced from pi's prompt events only
    dialogs: tuple[Dialog, ...]


@dataclass(frozen=True)
class Closed:
    """``answer``: what the dialog returned (a choice, a text; a confirm's "Yes" / "No"), ``None``
    for nothing; ``timed_out``: closed by its timeout or abort signal (then ``how`` is cancelled)."""

    id: str
    how: str  # answered | cancelled | remote
    answer: str | None = None
    timed_out: bool = False

    @property
    def outcome(self) -> Literal["answered", "cancelled"]:
        return "cancelled" if self.how == "cancelled" or self.timed_out else "answered"


@dataclass(frozen=True)
class Bye:
    """pi closes its session (quit, ``/new``, ``/resume``, ``/reload``): a connection lost without
    it means pi died (killed, crashed) in the middle of its session."""

    reason: str | None


@dataclass(frozen=True)
class Screen:
    id: str
    lines: tuple[str, ...]


@dataclass(frozen=True)
class Result:
    request: str | None
    id: str | None
    ok: bool
    error: str | None = None
    closed: bool = False
    screen: tuple[str, ...] | None = None


Event = Hello | Dialog | Closed | Screen | Result | Bye


def _str(obj: dict[str, Any], key: str, required: bool = False) -> str | None:
    value = obj.get(key)
    if isinstance(value, str):
        return value
    if value is None and not required:
        return None
    raise ProtocolError(f"{key} is not a string")


def _int(obj: dict[str, Any], key: str) -> int | None:
    value = obj.get(key)
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def _lines(value: Any) -> tuple[str, ...] | None:
    if isinstance(value, list):
        return tuple(v for v in value if isinstance(v, str))
    return None


def dialog_from(obj: dict[str, Any]) -> Dialog:
    kind = obj.get("kind")
    if kind not in KINDS:
        raise ProtocolError("unknown dialog kind")
    options = obj.get("options")
    if options is None and kind == "confirm":
        options = ["Yes", "No"]  # (an older extension's confirm: pi shows these two)
    if options is not None and not (isinstance(options, list) and all(isinstance(o, str) for o in options)):
        raise ProtocolError("options is not a list of strings")
    at = obj.get("at")
    remote = obj.get("remote")
    return Dialog(
        id=_str(obj, "id", required=True) or "",
        kind=kind,
        title=_str(obj, "title"),
        options=tuple(options) if options is not None else None,
        tool=_str(obj, "tool"),
        tool_call_id=_str(obj, "tool_call_id"),
        tool_input=obj.get("tool_input"),
        session_file=_str(obj, "session_file"),
        cwd=_str(obj, "cwd"),
        pid=_int(obj, "pid"),
        at=at / 1000.0 if isinstance(at, (int, float)) and not isinstance(at, bool) else None,
        remote=remote if remote in ("value", "keys") else None,
        screen=_lines(obj.get("screen")),
        waits=obj.get("waits") is not False,
        session_dir=_str(obj, "session_dir"),
    )


def parse(line: bytes | str) -> Event | None:
    """One line from the extension as a typed event; ``None`` for an event this version does not
    know (new events are additive). Raises :class:`ProtocolError` for a malformed line."""
    try:
        obj = jsonbound.loads(line, max_bytes=MAX_LINE)
    except (ValueError, UnicodeDecodeError) as exc:
        raise ProtocolError(str(exc)) from exc
    if not isinstance(obj, dict):
        raise ProtocolError("not an object")
    event = obj.get("event")
    if event == "dialog":
        return dialog_from(obj)
    if event == "closed":
        return Closed(
            id=_str(obj, "id", required=True) or "",
            how=_str(obj, "how") or "answered",
            answer=obj.get("answer") if isinstance(obj.get("answer"), str) else None,
            timed_out=obj.get("timed_out") is True,
        )
    if event == "bye":
        return Bye(reason=_str(obj, "reason"))
    if event == "screen":
        return Screen(id=_str(obj, "id", required=True) or "", lines=_lines(obj.get("lines")) or ())
    if event == "result":
        error = obj.get("error")
        return Result(
            request=_str(obj, "request"),
            id=_str(obj, "id"),
            ok=obj.get("ok") is True,
            error=error if isinstance(error, str) else None,
            closed=obj.get("closed") is True,
            screen=_lines(obj.get("screen")),
        )
    if event == "hello":
        protocol = _int(obj, "protocol")
        raw = obj.get("dialogs")
        dialogs = tuple(dialog_from(d) for d in raw if isinstance(d, dict)) if isinstance(raw, list) else ()
        return Hello(
            protocol=protocol if protocol is not None else 0,
            pi_version=_str(obj, "pi_version"),
            pid=_int(obj, "pid"),
            session_file=_str(obj, "session_file"),
            session_id=_str(obj, "session_id"),
            cwd=_str(obj, "cwd"),
            mode=_str(obj, "mode") or "events",
            dialogs=dialogs,
        )
    return None


def _line(obj: dict[str, Any]) -> bytes:
    return (json.dumps(obj, ensure_ascii=False, separators=(",", ":")) + "\n").encode("utf-8")


def answer_request(dialog_id: str, value: str | bool | None) -> bytes:
    return _line({"answer": {"id": dialog_id, "value": value}})


def keys_request(dialog_id: str, keys: list[str]) -> bytes:
    return _line({"keys": {"id": dialog_id, "keys": keys}})


def key_sequence(keys: list[str]) -> list[str]:
    """Key names (``"down"``, ``"enter"``…) as terminal input; anything else is typed as text."""
    return [KEYS.get(k.lower(), k) if len(k) > 1 else k for k in keys]


def check_answer(
    dialog: Dialog, value: str | bool | None = None, keys: list[str] | None = None
) -> str | None:
    """Why this answer cannot be given to this dialog (``None``: it can). The extension checks the
    same again; this lets a caller refuse without a round trip and say why."""
    if dialog.kind == "editor":
        return "an editor dialog cannot be answered from here; answer it in the terminal"
    if dialog.remote is None:
        return "this pi announces dialogs only (its companion extension could not take them over)"
    if keys is not None:
        if dialog.remote != "keys":
            return f"a {dialog.kind} dialog is answered with a value, not keys"
        return None if keys else "no keys"
    if dialog.remote != "value":
        return f"a {dialog.kind} dialog is answered with keys"
    if dialog.kind == "select":
        if value is None or (
            isinstance(value, str) and dialog.options is not None and value in dialog.options
        ):
            return None
        return "not one of the options"
    if dialog.kind == "confirm":
        return None if isinstance(value, bool) else "a confirm dialog takes yes or no"
    return None if value is None or isinstance(value, str) else "an input dialog takes a text"
