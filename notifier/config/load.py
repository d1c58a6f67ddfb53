"""The TOML configuration: loading, merging and rendering it. Every value is checked against its
key's documented range (:mod:`notifier.config.keys`), and where it came from is kept
(default, config file, command line). Anything outside a key's range (wrong type, NaN/inf, huge
numbers, empty strings, too-long lists, bad syntax) is a one-line error naming the key and the
file (or "command line"), exit code 2 — never a traceback."""

from __future__ import annotations

import os
import re
import stat
import sys
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from notifier.config.checks import CONTROL_CHARS, MAX_LIST, Invalid, Unknown, is_tool_name
from notifier.config.keys import KEYS, SCHEMA, suggest
from notifier.core.planner import parse_quiet_hours
from notifier.core.text import clean, mask_url

__all__ = ["OPTIONS", "Config", "ConfigError", "apply_command_line", "load", "parse_quiet_hours", "render"]

MAX_FILE_BYTES = 1 << 20


class ConfigError(Exception):
    """A problem with the configuration or command line: shown as one line, exit code 2."""


def _defaults() -> dict[str, Any]:
    return {k.name: k.default for k in SCHEMA}


def _default_sources() -> dict[str, str]:
    return {k.name: "default" for k in SCHEMA}


@dataclass(slots=True)
class Config:
    """The settings in effect, and where each came from ("default", the file, or "command line")."""

    values: dict[str, Any] = field(default_factory=_defaults)
    sources: dict[str, str] = field(default_factory=_default_sources)
    file: str | None = None

    def __getitem__(self, key: str) -> Any:
        return self.values[key]

    def set(self, key: str, value: Any, source: str, shown: str | None = None) -> None:
        """Check ``value`` against ``key``'s range; ConfigError (one line naming ``shown`` or the
        key, and ``source``: the file or "command line") when it is outside."""
        try:
            checked = KEYS[key].check(value)
        except Unknown as exc:  # a key of one of the value's tables
            raise ConfigError(f"{source}: '{shown or key}': {exc.args[0]}{_table_hint(exc)}") from None
        except (Invalid, TypeError, ValueError, OverflowError, RecursionError) as exc:
            reason = exc.args[0] if isinstance(exc, Invalid) else KEYS[key].allowed
            raise ConfigError(f"{source}: '{shown or key}' must be {reason}") from None
        self.values[key] = checked
        self.sources[key] = source


TABLES: dict[str, list[str]] = {}  # the tables ([notifications], …) and their keys
for _key in KEYS:
    if "." in _key:
        TABLES.setdefault(_key.split(".", 1)[0], []).append(_key.split(".", 1)[1])
_AFTER = "a key after [{table}] is read as part of it: put top-level keys before the first [table]"


def _table_hint(exc: Unknown) -> str:
    close = suggest(exc.name, exc.known)
    if close:
        return f" (did you mean {close!r}?)"
    if exc.name in KEYS:
        return f" (did you mean the top-level {exc.name!r}? {_AFTER.format(table='[' + exc.table + ']')})"
    return f" (it takes {', '.join(exc.known)})"


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


_DEEP = r"[\[{](?:\s*[\[{]){15}"  # (compiled only for a config nested too deeply)


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
        data: dict[str, Any] = tomllib.loads(text)  # tomli may be absent where mypy runs: Any
        return data
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"{shown}: not valid TOML ({clean(exc, 200)})") from None
    except RecursionError:
        key = _key_at(text, re.search(_DEEP, text))
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
            raise ConfigError(f"{shown}: {_unknown(key)}")
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
        len(values) <= MAX_LIST and all(isinstance(v, str) and is_tool_name(v) for v in values)
    ):
        raise ConfigError(
            f"command line: '{option}' must be a tool name or a glob pattern: letters, digits and"
            f" _ . : / @ + - * ? [ ] !, 1–128 characters (at most {MAX_LIST} of them)"
        )
    if key == "sessions_dirs":
        if not all(isinstance(v, str) and v.strip() and not CONTROL_CHARS.search(v) for v in values):
            raise ConfigError(f"command line: '{option}' must be a folder path, not empty")
        values = [os.path.abspath(os.path.expanduser(v)) for v in values]
    config.set(key, values, "command line", shown=option)


def render(config: Config) -> str:
    """``pi-notifier config``: every key, its effective value and where it came from."""
    lines = [f"# config file: {clean(config.file) if config.file else '(none)'}"]
    for key in SCHEMA:
        value = config.values[key.name]
        if key.name == "push.urls":  # tokens, passwords, topics: scheme and host are enough to tell them
            value = [mask_url(url) for url in value]
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
    if isinstance(value, dict):
        return "{" + ", ".join(f"{k} = {_toml(v)}" for k, v in value.items() if v is not None) + "}"
    return str(value)
