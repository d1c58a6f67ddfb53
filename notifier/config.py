"""The TOML configuration: a schema of documented keys, strict validation, and where each value
came from (default, config file, command line). Bad config is a one-line error, exit code 2."""

from __future__ import annotations

import os
import re
import sys
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

from notifier.core.text import clean


class ConfigError(Exception):
    """A problem with the configuration or command line: shown as one line, exit code 2."""


@dataclass(frozen=True)
class Key:
    name: str
    default: Any
    doc: str
    check: Callable[[Any], Any]


def _str_list(value: Any) -> list[str]:
    if isinstance(value, str):
        value = [value]
    if not isinstance(value, list) or not all(isinstance(v, str) and v for v in value):
        raise TypeError("a list of non-empty strings")
    return list(value)


def _choice(*options: str) -> Callable[[Any], Any]:
    def check(value: Any) -> str:
        if value not in options:
            raise TypeError("one of " + ", ".join(repr(o) for o in options))
        return str(value)

    return check


def _int_min(minimum: int) -> Callable[[Any], Any]:
    def check(value: Any) -> int:
        if isinstance(value, bool) or not isinstance(value, int) or value < minimum:
            raise TypeError(f"a whole number ≥ {minimum}")
        return value

    return check


def _bool(value: Any) -> bool:
    if not isinstance(value, bool):
        raise TypeError("true or false")
    return value


def _minutes(value: Any) -> list[float]:
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        value = [value]
    if not isinstance(value, list) or not all(
        isinstance(v, (int, float)) and not isinstance(v, bool) and v > 0 for v in value
    ):
        raise TypeError("a list of positive numbers of minutes")
    return sorted(float(v) for v in value)


EXPIRE_MAX_S = 3600


def _expire(value: Any) -> str | int:
    if value == "never":
        return "never"
    if isinstance(value, bool) or not isinstance(value, int) or not 1 <= value <= EXPIRE_MAX_S:
        raise TypeError(f"'never' or a whole number of seconds from 1 to {EXPIRE_MAX_S}")
    return value


def _notify_on(value: Any) -> list[str]:
    items = _str_list(value)
    allowed = {"needs_input", "idle", "failed"}
    bad = [v for v in items if v not in allowed]
    if bad:
        raise TypeError("a list of 'needs_input', 'idle', 'failed'")
    return sorted(set(items) | {"needs_input"})


_HHMM = re.compile(r"^([01]?\d|2[0-3]):([0-5]\d)-([01]?\d|2[0-3]):([0-5]\d)$")


def parse_quiet_hours(value: str) -> tuple[int, int] | None:
    """'22:00-07:00' → (start minute, end minute) of the day; '' → None."""
    if not value:
        return None
    m = _HHMM.match(value.strip())
    if not m:
        raise TypeError("'HH:MM-HH:MM' such as '22:00-07:30', or '' for none")
    a, b, c, d = (int(x) for x in m.groups())
    return a * 60 + b, c * 60 + d


def _quiet(value: Any) -> str:
    if not isinstance(value, str):
        raise TypeError("'HH:MM-HH:MM' such as '22:00-07:30', or '' for none")
    parse_quiet_hours(value)
    return value.strip()


SCHEMA: tuple[Key, ...] = (
    Key("sessions_dirs", [], "pi session folders to watch; empty = pi's own default", _str_list),
    Key(
        "question_tools",
        [],
        "extra tool names to treat as questions (added to the built-in catalog)",
        _str_list,
    ),
    Key("ignore_tools", [], "built-in question tool names to ignore", _str_list),
    Key(
        "liveness",
        "auto",
        "'auto': a question whose pi is no longer running is 'abandoned'; 'off'",
        _choice("auto", "off"),
    ),
    Key("settle_ms", 250, "a question answered within this many ms raises no notification", _int_min(0)),
    Key("remind_after", [10, 30], "minutes after which a still-pending question is notified again", _minutes),
    Key(
        "notify_on",
        ["needs_input"],
        "also notify when a turn finishes ('idle') or fails ('failed')",
        _notify_on,
    ),
    Key(
        "quiet_hours",
        "",
        "daily window without notifications, e.g. '22:00-07:00' (the icon still changes)",
        _quiet,
    ),
    Key(
        "notifications.backend",
        "auto",
        "'auto', 'dbus', 'plyer', 'powershell' or 'none'",
        _choice("auto", "dbus", "plyer", "powershell", "none"),
    ),
    Key(
        "notifications.expire",
        "never",
        f"'never': a question's notification stays until answered; or seconds (1–{EXPIRE_MAX_S}) before it closes",
        _expire,
    ),
    Key("notifications.show_text", True, "false hides the question text in notifications (privacy)", _bool),
    Key(
        "notifications.skip_when_focused",
        True,
        "no notification for a session whose terminal (and tmux pane) you are looking at; reminders still come",
        _bool,
    ),
    Key(
        "tray.backend",
        "auto",
        "'auto', 'gtk', 'appindicator', 'xorg' or 'none'",
        _choice("auto", "gtk", "appindicator", "xorg", "none"),
    ),
    Key("history.retention_days", 90, "days of question history to keep", _int_min(1)),
)
KEYS = {k.name: k for k in SCHEMA}


@dataclass
class Config:
    values: dict[str, Any] = field(default_factory=lambda: {k.name: k.default for k in SCHEMA})
    sources: dict[str, str] = field(default_factory=lambda: {k.name: "default" for k in SCHEMA})
    file: str | None = None

    def __getitem__(self, key: str) -> Any:
        return self.values[key]

    def set(self, key: str, value: Any, source: str) -> None:
        self.values[key] = KEYS[key].check(value)
        self.sources[key] = source


def _flatten(data: Mapping[str, Any], prefix: str = "") -> dict[str, Any]:
    out: dict[str, Any] = {}
    for key, value in data.items():
        name = prefix + key
        if isinstance(value, dict) and name not in KEYS:
            out.update(_flatten(value, name + "."))
        else:
            out[name] = value
    return out


def load(path: str | None, explicit: bool) -> Config:
    """Read ``path`` (the default config file when not ``explicit``: a missing one is fine)."""
    config = Config()
    if path is None:
        return config
    shown = clean(path)
    try:
        with open(path, "rb") as fh:
            data = tomllib.load(fh)
    except FileNotFoundError:
        if explicit:
            raise ConfigError(f"config file {shown} does not exist") from None
        return config
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"{shown}: not valid TOML ({clean(exc)})") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise ConfigError(f"{shown}: cannot read it ({clean(exc)})") from None
    config.file = path
    for key, value in _flatten(data).items():
        if key not in KEYS:
            close = [k for k in KEYS if k.split(".")[-1] == key.split(".")[-1]]
            hint = f" (did you mean '{close[0]}'?)" if close else ""
            raise ConfigError(f"{shown}: unknown key '{clean(key)}'{hint}")
        try:
            config.set(key, value, shown)
        except TypeError as exc:
            raise ConfigError(f"{shown}: '{key}' must be {exc}") from None
    if config["sessions_dirs"]:
        base = os.path.dirname(os.path.abspath(path))
        config.values["sessions_dirs"] = [
            os.path.abspath(os.path.join(base, os.path.expanduser(d))) for d in config["sessions_dirs"]
        ]
    return config


def render(config: Config) -> str:
    """``pi-notifier config``: every key, its effective value and where it came from."""
    lines = [f"# config file: {clean(config.file) if config.file else '(none)'}"]
    for key in SCHEMA:
        value = config.values[key.name]
        lines.append(f"{key.name} = {_toml(value)}    # {config.sources[key.name]} — {key.doc}")
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
