"""The configuration: every key with its default, documentation and range (:data:`SCHEMA`), one
checker that holds any value to its key's row (:meth:`Key.check`), and loading, merging and rendering
the TOML file. Where each value came from is kept (default, config file, command line).

Each key's range is data in its row: a type, a numeric range or a length, the words it takes
as they are, a pattern, whether a path is taken, how many values a list holds and how they are
kept, the keys of its tables. Anything outside it (wrong type, NaN/inf, huge numbers, empty
strings, too-long lists, bad syntax) is a one-line :class:`ConfigError` naming the key and the
file (or "command line"), exit code 2 — never a traceback. docs/configuration.md lists the keys."""

from __future__ import annotations

import json
import os
import re
import stat
import sys
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from notifier.core.planner import QUIET_HOURS_FORMAT, parse_quiet_hours
from notifier.core.text import clean, mask_url

__all__ = ["KEYS", "OPTIONS", "SCHEMA", "Config", "ConfigError", "Key", "config_text", "load"]

# difflib is imported where a misspelt key or value needs it: status loads this module (1 ms).

MAX_FILE_BYTES = 1 << 20
MAX_LIST = 32
MAX_PATH = 4096
REMIND_MIN, REMIND_MAX, REMIND_COUNT = 0.01, 10080, 10  # 0.01 min = 0.6 s
EXPIRE_MAX_S = 3600
MAX_REMOTES = 16
CONTROL_CHARS = re.compile(r"[\x00-\x1f\x7f-\x9f]")
# A tool name, or a glob pattern of names (fnmatch's `*`, `?`, `[seq]`, `[!seq]`, brackets balanced).
# (Patterns stay strings: compiled by ``re`` when first used, as most keys are rarely set.)
_NAME_CHARS = r"A-Za-z0-9_.:/@+*?!-"
TOOL_NAME = rf"(?:[\]{_NAME_CHARS}]|\[[{_NAME_CHARS}]*\])+"  # (`-` last in each class)
SOUND_NAME = r"[A-Za-z0-9][A-Za-z0-9._-]{0,63}"
REMOTE_NAME = r"[A-Za-z0-9][A-Za-z0-9_.-]{0,63}"


class ConfigError(Exception):
    """A problem with the configuration or command line: shown as one line, exit code 2."""


class Invalid(ValueError):
    """A value outside its key's range; the message says what the key takes."""


class Unknown(Invalid):
    """A key a table of the value does not have; the message names it, with what it may mean."""


def _quiet(value: str) -> str:
    if len(value) > 64:
        raise ValueError(QUIET_HOURS_FORMAT)
    parse_quiet_hours(value)
    return value.strip()


def _one_way_each(table: dict[str, Any], before: list[dict[str, Any]]) -> str | None:
    """A ``[[remotes]]`` table: a name none before it has, and either ``ssh`` or a ``command`` that
    is not empty."""
    if table["name"] in (None, *(t["name"] for t in before)) or (table["ssh"] is None) == (table["command"] is None):
        return ""
    return f"; the 'command' of {table['name']!r} is empty" if table["command"] == [] else None


@dataclass(frozen=True, slots=True)
class Key:
    """One configuration key (or one key of its tables): its documentation, and its range as
    data that :meth:`check` reads. ``kind`` is the type of one value (``float``: any number,
    kept as a float; ``dict``: a table of ``fields``); ``low``–``high`` the range of a number;
    ``length`` the longest string (a string is never empty, nor holds control characters);
    ``choices`` the strings taken as they are (alone: the only ones, with a did-you-mean);
    ``pattern`` what any other string matches in full; ``path``: an absolute path (or ``~…``)
    is taken too (alone: only that); ``convert`` reads a string its own way (ValueError: out of
    range). ``many``: a list of at most that many values (in the file, a single value is a list of
    one), its values kept (``keep``) as given, ``"unique"`` or ``"sorted"`` (and unique), with
    ``always`` in it; ``rule``: a check of a list's value against those before it (None: fine;
    else what to add to ``said``). ``said`` is what an error says the value must be; ``allowed``
    the documented range."""

    name: str
    default: Any
    doc: str
    allowed: str
    said: str
    kind: type = str
    low: float = 0
    high: float = 0
    length: int = MAX_PATH
    choices: tuple[str, ...] = ()
    pattern: str | None = None
    path: bool = False
    convert: Callable[[str], str] | None = None
    many: int = 0
    keep: str = ""
    always: tuple[str, ...] = ()
    fields: tuple[Key, ...] = ()
    rule: Callable[[Any, list[Any]], str | None] | None = None

    def check(self, value: Any, top: bool = True) -> Any:
        """``value`` held to this row: as the app uses it (lists deduplicated or sorted, a single
        value of the file taken as a list of one; ``top``: a value of the file, not of one of its
        tables), or :class:`Invalid` saying what the key takes."""
        if not self.many:
            return _one(self, value)
        if top and isinstance(value, (str, int, float)) and not isinstance(value, bool):
            value = [value]
        if not isinstance(value, list) or len(value) > self.many:
            raise Invalid(self.said)
        items: list[Any] = []
        for n, v in enumerate(value, 1):
            item = _one(self, v, n)
            wrong = self.rule(item, items) if self.rule is not None else None
            if wrong is not None:
                raise Invalid(self.said + wrong)
            items.append(item)
        if self.keep == "sorted":
            return sorted(set(items) | set(self.always))
        return list(dict.fromkeys(items)) if self.keep == "unique" else items


def _choice(name: str, default: str, doc: str, *choices: str) -> Key:
    allowed = ", ".join(f'`"{c}"`' for c in choices)
    return Key(name, default, doc, allowed, "one of " + ", ".join(repr(c) for c in choices), choices=choices)


def _whole(name: str, default: int, doc: str, low: int, high: int) -> Key:
    return Key(name, default, doc, f"whole number {low}–{high}", f"a whole number from {low} to {high}",
               kind=int, low=low, high=high)


def _boolean(name: str, default: bool, doc: str) -> Key:
    return Key(name, default, doc, "`true`, `false`", "true or false", kind=bool)


_TOOLS_SAID = ("tool names or glob patterns (letters, digits and _ . : / @ + - * ? !, a set in [ ], up to 128"
               " characters)")
_REMOTES = (
    f"a list of at most {MAX_REMOTES} tables, each with a unique 'name' (letters, digits, _ . -, up to"
    " 64) and either 'ssh' (an ssh destination) or 'command' (a list of strings), optionally"
    " 'ssh_options' (a list of strings)"
)
_STRINGS = "a list of at most {} strings without control characters"

SCHEMA: tuple[Key, ...] = (
    Key("sessions_dirs", [], "pi session folders to watch; empty = pi's own default",
        f"up to {MAX_LIST} absolute paths (or ~/…)",
        f"a list of at most {MAX_LIST} absolute folder paths (or starting with ~)",
        path=True, many=MAX_LIST, keep="unique"),
    Key("question_tools", [], "extra tool names (or glob patterns: 'mcp__*__ask*') to treat as questions",
        f"up to {MAX_LIST} names or glob patterns: letters, digits, `_ . : / @ + - * ? !`, a set in `[ ]`,"
        " 1–128 characters",
        f"a list of at most {MAX_LIST} {_TOOLS_SAID}", pattern=TOOL_NAME, length=128, many=MAX_LIST, keep="unique"),
    Key("ignore_tools", [], "question tool names (or glob patterns) never to treat as questions",
        f"up to {MAX_LIST} names, as `question_tools`",
        f"a list of at most {MAX_LIST} {_TOOLS_SAID}", pattern=TOOL_NAME, length=128, many=MAX_LIST, keep="unique"),
    _choice("liveness", "auto", "'auto': a question whose pi is no longer running is 'abandoned'; 'off'",
            "auto", "off"),
    _whole("settle_ms", 250, "a question answered within this many ms raises no notification", 0, 60000),
    Key("remind_after", [10, 30], "minutes after which a still-pending question is notified again",
        f"up to {REMIND_COUNT} numbers, each {REMIND_MIN:g}–{REMIND_MAX} (a week); `[]` = no reminders",
        f"a list of at most {REMIND_COUNT} numbers of minutes, each from {REMIND_MIN:g} to {REMIND_MAX}",
        kind=float, low=REMIND_MIN, high=REMIND_MAX, many=REMIND_COUNT, keep="sorted"),
    Key("notify_on", ["needs_input"], "also notify when a turn finishes ('idle') or fails ('failed')",
        '`"needs_input"`, `"idle"`, `"failed"`', "a list of 'needs_input', 'idle', 'failed'",
        choices=("needs_input", "idle", "failed"), many=10, keep="sorted", always=("needs_input",)),
    Key("quiet_hours", "", "daily window without notifications, e.g. '22:00-07:00' (the icon still changes)",
        '`"HH:MM-HH:MM"` (start ≠ end) or `""`', QUIET_HOURS_FORMAT, convert=_quiet),
    _choice("notifications.backend", "auto", "'auto', 'dbus', 'plyer', 'powershell' or 'none'",
            "auto", "dbus", "plyer", "powershell", "none"),
    _boolean("notifications.show_text", True, "false hides the question text in notifications (privacy)"),
    Key("notifications.expire", "never",
        "'never': a question's notification stays until answered; or seconds before it closes",
        f'`"never"` or a whole number 1–{EXPIRE_MAX_S}',
        f"'never' or a whole number of seconds from 1 to {EXPIRE_MAX_S}",
        kind=int, low=1, high=EXPIRE_MAX_S, choices=("never",)),
    _boolean("notifications.skip_when_focused", True,
             "no notification for a session whose terminal (and tmux pane) you are looking at; reminders still come"),
    Key("notifications.sound", "default",
        "the sound of a notification that needs an answer: 'default' (the sound theme's "
        "message-new-instant), 'none', a sound name of the theme, or a sound file (the server plays it)",
        '`"default"`, `"none"`, a sound name (letters, digits, `-` `_` `.`, up to 64) or an absolute path',
        "'default', 'none', a sound name (letters, digits, - _ ., up to 64) or an absolute path to a sound file",
        choices=("default", "none"), pattern=SOUND_NAME, path=True),
    _choice("tray.backend", "auto", "'auto', 'gtk', 'appindicator', 'xorg' or 'none'",
            "auto", "gtk", "appindicator", "xorg", "none"),
    _whole("history.retention_days", 90, "days of question history to keep", 1, 3650),
    Key("remotes", [], "other machines whose pi sessions join the board ([[remotes]] tables)",
        f"up to {MAX_REMOTES} tables: `name` + `ssh` (destination) or `command` (list); `ssh_options` (list)",
        _REMOTES, kind=dict, many=MAX_REMOTES, rule=_one_way_each, fields=(
            Key("name", None, "", "", _REMOTES, pattern=REMOTE_NAME),
            Key("ssh", None, "", "", "an ssh destination", length=255, pattern=r"[^-].*"),
            Key("command", None, "", "", _STRINGS.format(64), many=64),
            Key("ssh_options", [], "", "", _STRINGS.format(32), many=32),
        )),
    Key("push.urls", [], "apprise URLs a still-unanswered question is pushed to (phone, chat)",
        "up to 16 URLs such as `\"ntfy://my-topic\"`", "a list of at most 16 apprise URLs such as 'ntfy://my-topic'",
        length=2048, pattern=r".*://.*", many=16),
    Key("push.after", 5.0, "minutes a question waits unanswered before it is pushed (0 = at once)",
        f"a number 0–{REMIND_MAX}", f"a number of minutes from 0 to {REMIND_MAX}",
        kind=float, low=0, high=REMIND_MAX),
    _choice("push.when", "always", "'always', or 'away': only while the desktop is idle or locked",
            "always", "away"),
)
KEYS = {k.name: k for k in SCHEMA}


def _one(key: Key, value: Any, where: int = 1) -> Any:
    if isinstance(value, str) and value in key.choices:
        return value
    if key.kind is bool:
        if isinstance(value, bool):
            return value
        quoted = isinstance(value, str) and value.strip().lower() in ("true", "false")
        raise Invalid(key.said + (f" (without quotes: {value.strip().lower()})" if quoted else ""))
    if key.kind in (int, float):
        wanted = int if key.kind is int else (int, float)
        if isinstance(value, bool) or not isinstance(value, wanted) or not key.low <= value <= key.high:
            raise Invalid(key.said)  # (compared before float(): a huge int does not overflow; NaN fails)
        return float(value) if key.kind is float else value
    if key.kind is dict:
        return _table(key, value, where)
    return _string(key, value)


def _string(key: Key, value: Any) -> str:
    if not isinstance(value, str):
        raise Invalid(key.said)
    if key.convert is not None:
        try:
            converted: str = key.convert(value)
        except ValueError:
            raise Invalid(key.said) from None
        return converted
    if len(value) > key.length or not value.strip() or CONTROL_CHARS.search(value):
        raise Invalid(key.said)
    if key.path and value.startswith(("/", "~")):
        return value
    if key.pattern is not None:
        if re.fullmatch(key.pattern, value):
            return value
        raise Invalid(key.said)
    if key.path:
        raise Invalid(f"{key.said}; {clean(value, 60)!r} is relative")
    if key.choices:
        raise Invalid(key.said + _meant(value, key.choices))
    return value


def _table(key: Key, value: Any, where: int) -> dict[str, Any]:
    """One table of a list of tables: each of ``key.fields`` checked (absent: its default)."""
    if not isinstance(value, dict):
        raise Invalid(key.said)
    known = tuple(f.name for f in key.fields)
    for unknown in sorted(map(str, set(value) - set(known))):
        hint = _table_hint(unknown, key.name, known)
        raise Unknown(f"unknown key {clean(unknown, 60)!r} in [[{key.name}]] {where}{hint}")
    out = {}
    for f in key.fields:
        try:
            out[f.name] = f.default if value.get(f.name) is None else f.check(value[f.name], top=False)
        except Invalid as exc:
            said = str(exc)
            raise Invalid(said if said == key.said else f"{key.said}; '{f.name}' in [[{key.name}]] {where}"
                          f" must be {said}") from None
    return out


def _meant(value: str, options: tuple[str, ...]) -> str:
    """" (did you mean 'gtk'?)" for a string close to one of ``options`` (case aside); else ""."""
    import difflib

    low = {o.lower(): o for o in options}
    close = difflib.get_close_matches(value.lower(), list(low), n=1, cutoff=0.6)
    return f" (did you mean {low[close[0]]!r}?)" if close else ""


def suggest(key: str, known: Iterable[str]) -> str | None:
    """The known key a misspelled ``key`` most likely means ("quiet_hour" → "quiet_hours",
    "show_txt" → "notifications.show_text", "notification.sound" → "notifications.sound"), or
    None when none is close."""
    import difflib

    known = list(known)
    last = key.rsplit(".", 1)[-1]
    same_name = [k for k in known if k.rsplit(".", 1)[-1] == last]
    if same_name:
        return same_name[0]
    close = difflib.get_close_matches(key, known, n=1, cutoff=0.75)
    if close:
        return close[0]
    by_name = {k.rsplit(".", 1)[-1]: k for k in known}
    close = difflib.get_close_matches(last, list(by_name), n=1, cutoff=0.75)
    return by_name[close[0]] if close else None


@dataclass(slots=True)
class Config:
    """The settings in effect, and where each came from ("default", the file, or "command line")."""

    values: dict[str, Any] = field(default_factory=lambda: {k.name: k.default for k in SCHEMA})
    sources: dict[str, str] = field(default_factory=lambda: dict.fromkeys(KEYS, "default"))
    file: str | None = None

    def __getitem__(self, key: str) -> Any:
        return self.values[key]

    def set(self, key: str, value: Any, source: str, shown: str | None = None, said: str | None = None) -> None:
        """Check ``value`` against ``key``'s range; ConfigError (one line naming ``shown`` or the
        key, and ``source``: the file or "command line"; ``said``: what it takes, if not the
        key's own words) when it is outside."""
        try:
            checked = KEYS[key].check(value)
        except Unknown as exc:  # a key of one of the value's tables
            raise ConfigError(f"{source}: '{shown or key}': {exc.args[0]}") from None
        except (TypeError, ValueError, OverflowError, RecursionError) as exc:  # (Invalid is a ValueError)
            reason = said or (exc.args[0] if isinstance(exc, Invalid) else KEYS[key].allowed)
            raise ConfigError(f"{source}: '{shown or key}' must be {reason}") from None
        self.values[key] = checked
        self.sources[key] = source


TABLES: dict[str, list[str]] = {}  # the tables ([notifications], …) and their keys
for _head, _, _name in (k.partition(".") for k in KEYS if "." in k):
    TABLES.setdefault(_head, []).append(_name)
_AFTER = "a key after [{table}] is read as part of it: put top-level keys before the first [table]"


def _table_hint(name: str, table: str, known: tuple[str, ...]) -> str:
    close = suggest(name, known)
    if close:
        return f" (did you mean {close!r}?)"
    if name in KEYS:
        return f" (did you mean the top-level {name!r}? {_AFTER.format(table=f'[{table}]')})"
    return f" (it takes {', '.join(known)})"


def _unknown(key: str) -> str:
    """What an unknown key was meant to be, in one line: a table written as a value, a top-level
    key written below a table's header, or the key it probably misspells."""
    if key in TABLES:
        return f"'{key}' must be a table: [{key}] with keys such as {', '.join(TABLES[key][:3])}"
    table, _, name = key.partition(".")
    if table in TABLES and name in KEYS:
        return f"unknown key '{clean(key, 80)}' (did you mean '{name}'? {_AFTER.format(table=table)})"
    close = suggest(key, KEYS)
    hint = f" (did you mean '{close}'?)" if close else ""
    return f"unknown key '{clean(key, 80)}'{hint}"


def _flatten(data: Mapping[str, Any]) -> dict[str, Any]:
    """Top-level keys and one level of tables (every key has at most one dot); a deeper table
    is reported as the unknown key it is."""
    out: dict[str, Any] = {}
    for key, value in data.items():
        if isinstance(value, dict) and key not in KEYS:
            out.update({f"{key}.{sub}": inner for sub, inner in value.items()})
        else:
            out[key] = value
    return out


def _read(path: str, shown: str) -> str:
    try:
        with open(path, "rb") as fh:
            if not stat.S_ISREG(os.fstat(fh.fileno()).st_mode):
                raise ConfigError(f"{shown}: not a regular file")
            data = fh.read(MAX_FILE_BYTES + 1)
    except FileNotFoundError:
        raise
    except OSError as exc:
        raise ConfigError(f"{shown}: cannot read it ({clean(exc.strerror or exc, 120)})") from None
    if len(data) > MAX_FILE_BYTES:
        raise ConfigError(f"{shown}: larger than {MAX_FILE_BYTES // 1024} KiB; not a config file")
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise ConfigError(f"{shown}: not UTF-8 text (byte {exc.start})") from None


_DEEP = r"[\[{](?:\s*[\[{]){15}"  # (compiled only for a config nested too deeply)


def _parse(text: str, shown: str) -> dict[str, Any]:
    if sys.version_info >= (3, 11):  # imported here: most runs have no config file to parse
        import tomllib
    else:  # pragma: no cover
        import tomli as tomllib

    try:
        data: dict[str, Any] = tomllib.loads(text)  # tomli may be absent where mypy runs: Any
        return data
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"{shown}: not valid TOML ({clean(exc, 200)})") from None
    except (RecursionError, ValueError, MemoryError) as exc:  # too deep, or a number too long to convert
        deep = isinstance(exc, RecursionError)
        said = "is nested too deeply" if deep else "holds a number far out of range"
        key = _key_at(text, re.search(_DEEP if deep else r"\d{640}", text))  # (640: Python's least limit)
        raise ConfigError(f"{shown}: " + (f"'{key}' {said}" if key else f"not valid TOML (a value {said})")) from None


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


def load(path: str, explicit: bool) -> Config:
    """Read ``path`` (the default config file when not ``explicit``: a missing one is fine)."""
    config = Config()
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
            raise ConfigError(f"{shown}: {_unknown(key)}")
        config.set(key, value, shown)
    config.values["sessions_dirs"] = [os.path.abspath(os.path.expanduser(d)) for d in config["sessions_dirs"]]
    return config


# Command-line options: the key each sets, and what an error says it takes (None: the key's words);
# each gets the same checks as its key (parser.effective_config).
OPTIONS: dict[str, tuple[str, str | None]] = {
    "sessions_dirs": ("--sessions-dir", "a folder path, not empty, without control characters"),
    "question_tools": (
        "--question-tool",
        "a tool name or a glob pattern: letters, digits and _ . : / @ + - * ? !, a set in [ ] (each [ closed),"
        " 1–128 characters"
        f" (at most {MAX_LIST} of them)",
    ),
    "liveness": ("--liveness", None),
}


def config_text(config: Config) -> str:
    """``pi-notifier config``: every key, its effective value and where it came from."""
    lines = [f"# config file: {clean(config.file) if config.file else '(none)'}"]
    for key in SCHEMA:
        value = config.values[key.name]
        if key.name == "push.urls":  # tokens, passwords, topics: scheme and host are enough to tell them
            value = [mask_url(url) for url in value]
        lines.append(f"{key.name} = {_toml(value)}    # {clean(config.sources[key.name])} — {key.doc}")
    return "\n".join(lines)


def _toml(value: Any) -> str:
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    if isinstance(value, list):
        return "[" + ", ".join(_toml(v) for v in value) + "]"
    if isinstance(value, dict):
        return "{" + ", ".join(f"{k} = {_toml(v)}" for k, v in value.items() if v is not None) + "}"
    return json.dumps(value, ensure_ascii=False)  # (true, false, numbers and strings are written alike)
