"""Where things are: pi's sessions folder, and our per-OS config / state / runtime folders."""

from __future__ import annotations

import json
import logging
import os
from collections.abc import Mapping
from pathlib import Path

from notifier import APP_NAME
from notifier.core.text import clean

log = logging.getLogger(__name__)


def _expand(value: str, home: str) -> str:
    if value == "~":
        return home
    if value.startswith("~/") or value.startswith("~\\"):
        return os.path.join(home, value[2:])
    return value


def agent_dir(env: Mapping[str, str] = os.environ) -> str:
    home = env.get("HOME") or str(Path.home())
    custom = env.get("PI_CODING_AGENT_DIR")
    if custom:
        return os.path.abspath(_expand(custom, home))
    return os.path.join(home, ".pi", "agent")


def default_sessions_dir(env: Mapping[str, str] = os.environ) -> str:
    """pi's own precedence: PI_CODING_AGENT_SESSION_DIR, then ``sessionDir`` in the agent dir's
    settings.json, then ``<agent dir>/sessions`` (``~/.pi/agent/sessions`` by default)."""
    home = env.get("HOME") or str(Path.home())
    explicit = env.get("PI_CODING_AGENT_SESSION_DIR")
    if explicit:
        return os.path.abspath(_expand(explicit, home))
    base = agent_dir(env)
    settings = os.path.join(base, "settings.json")
    try:
        with open(settings, encoding="utf-8") as fh:
            data = json.load(fh)
        value = data.get("sessionDir") if isinstance(data, dict) else None
        if isinstance(value, str) and value.strip():
            value = _expand(value.strip(), home)
            return value if os.path.isabs(value) else os.path.abspath(os.path.join(base, value))
    except FileNotFoundError:
        pass
    except (OSError, ValueError) as exc:
        log.warning("cannot read %s (%s); using the default sessions folder", clean(settings), exc)
    return os.path.join(base, "sessions")


def _dirs() -> object:
    import platformdirs

    return platformdirs.PlatformDirs(APP_NAME, appauthor=False)


def config_dir() -> str:
    return str(_dirs().user_config_dir)  # type: ignore[attr-defined]


def config_file() -> str:
    return os.path.join(config_dir(), "config.toml")


def state_dir() -> str:
    return str(_dirs().user_state_dir)  # type: ignore[attr-defined]


def runtime_dir() -> str:
    """A user-only folder for the instance socket (XDG_RUNTIME_DIR on Linux)."""
    base = os.environ.get("XDG_RUNTIME_DIR")
    if base and os.path.isdir(base):
        return os.path.join(base, APP_NAME)
    return os.path.join(state_dir(), "run")
