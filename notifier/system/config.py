"""The TOML configuration: a schema of documented keys, each with a documented range, strict
validation, and where each value came from (default, config file, command line). Anything outside
a key's range (wrong type, NaN/inf, huge numbers, empty strings, too-long lists, bad syntax) is a
one-line error naming the key and the file (or "command line"), exit code 2 — never a traceback."""

from __future__ import annotations

import math
import os
import re
import stat
import sys
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from notifier.core.text import clean


class ConfigError(Exception):
    """A problem with the configuration or command line: shown as one line, exit code 2."""


class Invalid(ValueError):
    """A value outside its key's range; the message says what the key takes."""


@dataclass(frozen=True)
class Key:
    name: str
    default: Any
    doc: str
    check: Callable[[Any], Any]
    allowed: str  # the documented range (README table, error messages)


MAX_FILE_BYTES = 1 << 20
MAX_LIST = 32
MAX_PATH = 4096
_TOOL_NAME = re.compile(r"[A-Za-z0-9_.:/@+-]{1,128}")
_CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f]")


def _list(value: Any, what: str, limit: int = MAX_LIST) -> list[Any]:
    if isinstance(value, (str, int, float)) and not isinstance(value, bool):
        value = [value]
    if not isinstance(value, list) or len(value) > limit:
        raise Invalid(f"a list of at most {limit} {what}")
    return value


def _tool_names(value: Any) -> list[str]:
    what = "tool names (letters, digits and _ . : / @ + -, up to 128 characters)"
    items = _list(value, what)
    if not all(isinstance(v, str) and _TOOL_NAME.fullmatch(v) for v in items):
        raise Invalid(f"a list of at most {MAX_LIST} {what}")
    return list(dict.fromkeys(items))


def _folders(value: Any) -> list[str]:
    what = "absolute folder paths (or starting with ~)"
    items = _list(value, what)
    for v in items:
        if not isinstance(v, str) or not v.strip() or len(v) > MAX_PATH or _CONTROL.search(v):
            raise Invalid(f"a list of at most {MAX_LIST} {what}")
        if not (v.startswith("~") or os.path.isabs(v)):
            raise Invalid(f"a list of at most {MAX_LIST} {what}; {clean(v, 60)!r} is relative")
    return list(dict.fromkeys(items))


def _choice(*options: str) -> Callable[[Any], Any]:
    def check(value: Any) -> str:
        if not isinstance(value, str) or value not in options:
            raise Invalid("one of " + ", ".join(repr(o) for o in options))
        return value

    return check


def _whole(low: int, high: int) -> Callable[[Any], Any]:
    def check(value: Any) -> int:
        if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high:
            raise Invalid(f"a whole number from {low} to {high}")
        return value

    return check


def _bool(value: Any) -> bool:
    if not isinstance(value, bool):
        raise Invalid("true or false")
    return value


REMIND_MIN, REMIND_MAX, REMIND_COUNT = 0.01, 10080, 10  # 0.01 min = 0.6 s


def _minutes(value: Any) -> list[float]:
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


def _expire(value: Any) -> str | int:
    if value == "never":
        return "never"
    if isinstance(value, bool) or not isinstance(value, int) or not 1 <= value <= EXPIRE_MAX_S:
        raise TypeError(f"'never' or a whole number of seconds from 1 to {EXPIRE_MAX_S}")
    return value


def _notify_on(value: Any) -> list[str]:
    allowed = ("needs_input", "idle", "failed")
    what = "a list of 'needs_input', 'idle', 'failed'"
    items = _list(value, what, 10)
    if not all(isinstance(v, str) and v in allowed for v in items):
        raise Invalid(what)
    return sorted(set(items) | {"needs_input"})


_HHMM = re.compile(r"([01]?\d|2[0-3]):([0-5]\d)-([01]?\d|2[0-3]):([0-5]\d)")
_QUIET = "'HH:MM-HH:MM' such as '22:00-07:30' (start and end differ), or '' for none"


def parse_quiet_hours(value: str) -> tuple[int, int] | None:
    """'22:00-07:00' → (start minute, end minute) of the day; '' → None."""
    if not value:
        return None
    m = _HHMM.fullmatch(value.strip())
    if not m:
        raise Invalid(_QUIET)
    a, b, c, d = (int(x) for x in m.groups())
    if (a, b) == (c, d):
        raise Invalid(_QUIET)
    return a * 60 + b, c * 60 + d


def _quiet(value: Any) -> str:
    if not isinstance(value, str) or len(value) > 64:
        raise Invalid(_QUIET)
    parse_quiet_hours(value)
    return value.strip()


SCHEMA: tuple[Key, ...] = (
    Key(
        "sessions_dirs",
        [],
        "pi session folders to watch; empty = pi's own default",
        _folders,
        f"up to {MAX_LIST} absolute paths (or ~/…)",
    ),
    Key(
        "question_tools",
        [],
        "extra tool names to treat as questions (added to the built-in catalog)",
        _tool_names,
        f"up to {MAX_LIST} names: letters, digits, `_ . : / @ + -`, 1–128 characters",
    ),
    Key(
        "ignore_tools",
        [],
        "built-in question tool names to ignore",
        _tool_names,
        f"up to {MAX_LIST} names, as `question_tools`",
    ),
    Key(
        "liveness",
        "auto",
        "'auto': a question whose pi is no longer running is 'abandoned'; 'off'",
        _choice("auto", "off"),
        '`"auto"`, `"off"`',
    ),
    Key(
        "settle_ms",
        250,
        "a question answered within this many ms raises no notification",
        _whole(0, 60000),
        "whole number 0–60000",
    ),
    Key(
        "remind_after",
        [10, 30],
        "minutes after which a still-pending question is notified again",
        _minutes,
        f"up to {REMIND_COUNT} numbers, each {REMIND_MIN:g}–{REMIND_MAX} (a week); `[]` = no reminders",
    ),
    Key(
        "notify_on",
        ["needs_input"],
        "also notify when a turn finishes ('idle') or fails ('failed')",
        _notify_on,
        '`"needs_input"`, `"idle"`, `"failed"`',
    ),
    Key(
        "quiet_hours",
        "",
        "daily window without notifications, e.g. '22:00-07:00' (the icon still changes)",
        _quiet,
        '`"HH:MM-HH:MM"` (start ≠ end) or `""`',
    ),
    Key(
        "notifications.backend",
        "auto",
        "'auto', 'dbus', 'plyer', 'powershell' or 'none'",
        _choice("auto", "dbus", "plyer", "powershell", "none"),
        '`"auto"`, `"dbus"`, `"plyer"`, `"powershell"`, `"none"`',
    ),
    Key(
        "notifications.show_text",
        True,
        "false hides the question text in notifications (privacy)",
        _bool,
        "`true`, `false`",
    ),
    Key(
        "notifications.expire",
        "never",
        "'never': a question's notification stays until answered; or seconds before it closes",
        _expire,
        f'`"never"` or a whole number 1–{EXPIRE_MAX_S}',
    ),
    Key(
        "notifications.skip_when_focused",
        True,
        "no notification for a session whose terminal (and tmux pane) you are looking at; reminders still come",
        _bool,
        "`true`, `false`",
    ),
    Key(
        "tray.backend",
        "auto",
        "'auto', 'gtk', 'appindicator', 'xorg' or 'none'",
        _choice("auto", "gtk", "appindicator", "xorg", "none"),
        '`"auto"`, `"gtk"`, `"appindicator"`, `"xorg"`, `"none"`',
    ),
    Key(
        "history.retention_days",
        90,
        "days of question history to keep",
        _whole(1, 3650),
        "whole number 1–3650",
    ),
)
KEYS = {k.name: k for k in SCHEMA}


@dataclass
class Config:
    values: dict[str, Any] = field(default_factory=lambda: {k.name: k.default for k in SCHEMA})
    sources: dict[str, str] = field(default_factory=lambda: {k.name: "default" for k in SCHEMA})
    file: str | None = None

    def __getitem__(self, key: str) -> Any:
        return self.values[key]

    def set(self, key: str, value: Any, source: str, shown: str | None = None) -> None:
        """Check ``value`` against ``key``'s range; ConfigError (one line naming ``shown`` or the
        key, and ``source``: the file or "command line") when it is outside."""
        try:
            checked = KEYS[key].check(value)
        except (Invalid, TypeError, ValueError, OverflowError, RecursionError) as exc:
            reason = exc.args[0] if isinstance(exc, Invalid) else KEYS[key].allowed
            raise ConfigError(f"{source}: '{shown or key}' must be {reason}") from None
        self.values[key] = checked
        self.sources[key] = source


def _flatten(data: Mapping[str, Any]) -> dict[str, Any]:
    """Top-level keys and one level of tables (every key has at most one dot); a deeper table
    is reported as the unknown key it is."""
    out: dict[str, Any] = {}
    for key, value in data.items():
        if isinstance(value, dict) and key not in KEYS:
            for sub, inner in value.items():
                out[f"{key}.{sub}"] = inner
        else:
            out[key] = value
    return out


def _read(path: str, shown: str) -> str:
    try:
        with open(path, "rb") as fh:
            st = os.fstat(fh.fileno())
            if not stat.S_ISREG(st.st_mode):
                raise ConfigError(f"{shown}: not a regular file")
            data = fh.read(MAX_FILE_BYTES + 1)
    except (FileNotFoundError, ConfigError):
        raise
    except OSError as exc:
        raise ConfigError(f"{shown}: cannot read it ({clean(exc.strerror or exc, 120)})") from None
    if len(data) > MAX_FILE_BYTES:
        raise ConfigError(f"{shown}: larger than {MAX_FILE_BYTES // 1024} KiB; not a config file")
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise ConfigError(f"{shown}: not UTF-8 text (byte {exc.start})") from None


_DEEP = re.compile(r"[\[{](?:\s*[\[{]){15}")


def _parse(text: str, shown: str) -> dict[str, Any]:
    if sys.version_info >= (3, 11):  # imported here: most runs have no config file to parse
        import tomllib
    else:  # pragma: no cover
        import tomli as tomllib

    limit = getattr(sys, "get_int_max_str_digits", lambda: 0)()
    setter = getattr(sys, "set_int_max_str_digits", None)
    try:
        if setter is not None and limit:
            setter(100_000)  # a long number is read, then refused by its key's range (with the key's name)
        return tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"{shown}: not valid TOML ({clean(exc, 200)})") from None
    except RecursionError:
        key = _key_at(text, _DEEP.search(text))
        raise ConfigError(
            f"{shown}: " + (f"'{key}' is nested too deeply" if key else "not valid TOML (nested too deeply)")
        ) from None
    except (ValueError, MemoryError):  # a number too long to convert
        key = _key_at(text, re.search(r"\d{10000}", text))
        raise ConfigError(
            f"{shown}: " + (f"'{key}' holds a number far out of range" if key else "not valid TOML")
        ) from None
    finally:
        if setter is not None and limit:
            setter(limit)


def _key_at(text: str, match: re.Match[str] | None) -> str | None:
    """Best effort: the dotted key whose value holds ``match`` (for a one-line error)."""
    if match is None:
        return None
    table = ""
    for line in text[: match.start()].splitlines():
        header = re.fullmatch(r"\s*\[\s*([A-Za-z0-9_.\- ]+?)\s*\]\s*(?:#.*)?", line)
        if header:
            table = header.group(1).replace(" ", "") + "."
    line = text[: match.start()].rsplit("\n", 1)[-1]
    m = re.match(r"\s*([A-Za-z0-9_.\-]+)\s*=", line)
    return clean(table + m.group(1), 80) if m else None


def load(path: str | None, explicit: bool) -> Config:
    """Read ``path`` (the default config file when not ``explicit``: a missing one is fine)."""
    config = Config()
    if path is None:
        return config
    shown = clean(path)
    try:
        text = _read(path, shown)
    except FileNotFoundError:
        if explicit:
            raise ConfigError(f"config file {shown} does not exist") from None
        return config
    data = _parse(text, shown)
    config.file = path
    for key, value in _flatten(data).items():
        if key not in KEYS:
            close = [k for k in KEYS if k.split(".")[-1] == key.split(".")[-1]]
            hint = f" (did you mean '{close[0]}'?)" if close else ""
            raise ConfigError(f"{shown}: unknown key '{clean(key, 80)}'{hint}")
        config.set(key, value, shown)
    if config["sessions_dirs"]:
        config.values["sessions_dirs"] = [
            os.path.abspath(os.path.expanduser(d)) for d in config["sessions_dirs"]
        ]
    return config


# Command-line options and the keys they set.
OPTIONS = {"sessions_dirs": "--sessions-dir", "question_tools": "--question-tool", "liveness": "--liveness"}


def apply_command_line(config: Config, key: str, values: Any) -> None:
    """A command-line value gets the same checks as the config key it sets. ``--sessions-dir``
    may be relative (to the current folder), but not empty."""
    option = OPTIONS[key]
    if key == "question_tools" and not (
        len(values) <= MAX_LIST and all(isinstance(v, str) and _TOOL_NAME.fullmatch(v) for v in values)
    ):
        raise ConfigError(
            f"command line: '{option}' must be a tool name: letters, digits and _ . : / @ + -,"
            f" 1–128 characters (at most {MAX_LIST} of them)"
        )
    if key == "sessions_dirs":
        if not all(isinstance(v, str) and v.strip() and not _CONTROL.search(v) for v in values):
            raise ConfigError(f"command line: '{option}' must be a folder path, not empty")
        values = [os.path.abspath(os.path.expanduser(v)) for v in values]
    config.set(key, values, "command line", shown=option)


def render(config: Config) -> str:
    """``pi-notifier config``: every key, its effective value and where it came from."""
    lines = [f"# config file: {clean(config.file) if config.file else '(none)'}"]
    for key in SCHEMA:
        value = config.values[key.name]
        lines.append(f"{key.name} = {_toml(value)}    # {clean(config.sources[key.name])} — {key.doc}")
    return "\n".join(lines)


def _toml(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str):
        return '"' + value.replace("\\", "\\\\").replace('"', '\\"') + '"'
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    if isinstance(value, list):
        return "[" + ", ".join(_toml(v) for v in value) + "]"
    return str(value)
