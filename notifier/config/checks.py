"""The checks that hold a configuration value to its key's range (:mod:`.keys`): each returns the
value as the app uses it (lists deduplicated or sorted, one value taken as a list of one) or raises
:class:`Invalid`, whose message says what the key takes."""

from __future__ import annotations

import math
import os
import re
from collections.abc import Callable
from typing import Any

from notifier.core.planner import QUIET_HOURS_FORMAT, parse_quiet_hours
from notifier.core.text import clean


class Invalid(ValueError):
    """A value outside its key's range; the message says what the key takes."""


class Unknown(Invalid):
    """A key a table of the value does not have (``[[remotes]]`` table ``where``, 1-based): ``known``
    are the ones it has (for a did-you-mean)."""

    def __init__(self, name: str, table: str, where: int, known: tuple[str, ...]) -> None:
        super().__init__(f"unknown key {clean(name, 60)!r} in [[{table}]] {where}")
        self.name, self.table, self.known = name, table, known


MAX_LIST = 32
MAX_PATH = 4096
# (Patterns of values that are rarely set stay strings: compiled by ``re`` when first used.)
TOOL_NAME = r"[A-Za-z0-9_.:/@+*?!\[\]-]{1,128}"  # a name, or a glob pattern (`*`, `?`, `[…]`)
CONTROL_CHARS = re.compile(r"[\x00-\x1f\x7f-\x9f]")


def _list(value: Any, what: str, limit: int = MAX_LIST) -> list[Any]:
    if isinstance(value, (str, int, float)) and not isinstance(value, bool):
        value = [value]
    if not isinstance(value, list) or len(value) > limit:
        raise Invalid(f"a list of at most {limit} {what}")
    return value


def tool_names(value: Any) -> list[str]:
    what = "tool names or glob patterns (letters, digits and _ . : / @ + - * ? [ ] !, up to 128 characters)"
    items = _list(value, what)
    if not all(isinstance(v, str) and is_tool_name(v) for v in items):
        raise Invalid(f"a list of at most {MAX_LIST} {what}")
    return list(dict.fromkeys(items))


def is_tool_name(value: str) -> bool:
    """A tool name or a glob pattern of names (fnmatch's: ``*``, ``?``, ``[seq]``, ``[!seq]``,
    with its brackets balanced)."""
    if not re.fullmatch(TOOL_NAME, value):
        return False
    depth = 0
    for char in value:
        if char == "[":
            if depth:
                return False
            depth = 1
        elif char == "]" and depth:
            depth = 0
    return depth == 0


def folders(value: Any) -> list[str]:
    what = "absolute folder paths (or starting with ~)"
    items = _list(value, what)
    for v in items:
        if not isinstance(v, str) or not v.strip() or len(v) > MAX_PATH or CONTROL_CHARS.search(v):
            raise Invalid(f"a list of at most {MAX_LIST} {what}")
        if not (v.startswith("~") or os.path.isabs(v)):
            raise Invalid(f"a list of at most {MAX_LIST} {what}; {clean(v, 60)!r} is relative")
    return list(dict.fromkeys(items))


def _meant(value: Any, options: tuple[str, ...]) -> str:
    """" (did you mean 'gtk'?)" for a string close to one of ``options`` (case aside); else ""."""
    if not isinstance(value, str):
        return ""
    import difflib

    low = {o.lower(): o for o in options}
    close = difflib.get_close_matches(value.lower(), list(low), n=1, cutoff=0.6)
    return f" (did you mean {low[close[0]]!r}?)" if close else ""


def choice(*options: str) -> Callable[[Any], Any]:
    def check(value: Any) -> str:
        if not isinstance(value, str) or value not in options:
            raise Invalid("one of " + ", ".join(repr(o) for o in options) + _meant(value, options))
        return value

    return check


SOUND_NAME = r"[A-Za-z0-9][A-Za-z0-9._-]{0,63}"


def sound(value: Any) -> str:
    what = "'default', 'none', a sound name (letters, digits, - _ ., up to 64) or an absolute path to a sound file"
    if not isinstance(value, str):
        raise Invalid(what)
    if value.startswith(("/", "~")):
        if len(value) > MAX_PATH or CONTROL_CHARS.search(value):
            raise Invalid(what)
        return value
    if not re.fullmatch(SOUND_NAME, value):
        raise Invalid(what)
    return value


def whole(low: int, high: int) -> Callable[[Any], Any]:
    def check(value: Any) -> int:
        if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high:
            raise Invalid(f"a whole number from {low} to {high}")
        return value

    return check


def boolean(value: Any) -> bool:
    if not isinstance(value, bool):
        quoted = isinstance(value, str) and value.strip().lower() in ("true", "false")
        raise Invalid("true or false" + (f" (without quotes: {value.strip().lower()})" if quoted else ""))
    return value


REMIND_MIN, REMIND_MAX, REMIND_COUNT = 0.01, 10080, 10  # 0.01 min = 0.6 s


def minutes(value: Any) -> list[float]:
    what = f"a list of at most {REMIND_COUNT} numbers of minutes, each from {REMIND_MIN:g} to {REMIND_MAX}"
    items = _list(value, what, REMIND_COUNT)
    out = []
    for v in items:
        if isinstance(v, bool) or not isinstance(v, (int, float)):
            raise Invalid(what)
        if isinstance(v, int) and not REMIND_MIN <= v <= REMIND_MAX:  # before float(): no overflow
            raise Invalid(what)
        minutes = float(v)
        if not (math.isfinite(minutes) and REMIND_MIN <= minutes <= REMIND_MAX):
            raise Invalid(what)
        out.append(minutes)
    return sorted(set(out))


EXPIRE_MAX_S = 3600


def expire(value: Any) -> str | int:
    if value == "never":
        return "never"
    if isinstance(value, bool) or not isinstance(value, int) or not 1 <= value <= EXPIRE_MAX_S:
        raise Invalid(f"'never' or a whole number of seconds from 1 to {EXPIRE_MAX_S}")
    return value


def notify_on(value: Any) -> list[str]:
    allowed = ("needs_input", "idle", "failed")
    what = "a list of 'needs_input', 'idle', 'failed'"
    items = _list(value, what, 10)
    wrong = [v for v in items if not (isinstance(v, str) and v in allowed)]
    if wrong:
        raise Invalid(what + _meant(wrong[0], allowed))
    return sorted(set(items) | {"needs_input"})


def quiet(value: Any) -> str:
    if not isinstance(value, str) or len(value) > 64:
        raise Invalid(QUIET_HOURS_FORMAT)
    try:
        parse_quiet_hours(value)
    except ValueError:
        raise Invalid(QUIET_HOURS_FORMAT) from None
    return value.strip()


MAX_REMOTES, _REMOTE_NAME = 16, r"[A-Za-z0-9][A-Za-z0-9_.-]{0,63}"
_REMOTES = (
    f"a list of at most {MAX_REMOTES} tables, each with a unique 'name' (letters, digits, _ . -, up to"
    " 64) and either 'ssh' (an ssh destination) or 'command' (a list of strings), optionally"
    " 'ssh_options' (a list of strings)"
)


def _strings(value: Any, limit: int, length: int = MAX_PATH) -> list[str]:
    if not isinstance(value, list) or len(value) > limit:
        raise Invalid(f"a list of at most {limit} strings")
    if not all(isinstance(v, str) and 0 < len(v) <= length and not CONTROL_CHARS.search(v) for v in value):
        raise Invalid(f"a list of at most {limit} strings without control characters")
    return value


def remotes(value: Any) -> list[dict[str, Any]]:
    if not isinstance(value, list) or len(value) > MAX_REMOTES or not all(isinstance(v, dict) for v in value):
        raise Invalid(_REMOTES)
    out, names = [], set()
    known = ("name", "ssh", "command", "ssh_options")
    for n, item in enumerate(value, 1):
        name, ssh, command = item.get("name"), item.get("ssh"), item.get("command")
        for unknown in sorted(set(item) - set(known), key=str):
            raise Unknown(str(unknown), "remotes", n, known)
        if (ssh is None) == (command is None):
            raise Invalid(_REMOTES)
        if not isinstance(name, str) or not re.fullmatch(_REMOTE_NAME, name) or name in names:
            raise Invalid(_REMOTES)
        if ssh is not None and not (
            isinstance(ssh, str) and 0 < len(ssh) <= 255 and not ssh.startswith("-") and not CONTROL_CHARS.search(ssh)
        ):
            raise Invalid(_REMOTES + f"; the 'ssh' of {name!r} is not a destination")
        names.add(name)
        out.append({"name": name, "ssh": ssh, "command": _strings(command, 64) if command is not None else None,
                     "ssh_options": _strings(item.get("ssh_options", []), 32)})
        if command is not None and not command:
            raise Invalid(_REMOTES + f"; the 'command' of {name!r} is empty")
    return out


def push_urls(value: Any) -> list[str]:
    items = _strings(_list(value, "apprise URLs", 16), 16, 2048)
    if not all("://" in v for v in items):
        raise Invalid("a list of at most 16 apprise URLs such as 'ntfy://my-topic'")
    return items


def push_after(value: Any) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not 0 <= value <= REMIND_MAX:
        raise Invalid(f"a number of minutes from 0 to {REMIND_MAX}")
    return float(value)
