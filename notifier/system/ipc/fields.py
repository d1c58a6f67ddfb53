"""Request fields: handlers type-check what a client sends. A field of the wrong type or shape
raises :class:`BadRequest`, whose message the client gets as its error."""

from __future__ import annotations

import math
from typing import Any


class BadRequest(ValueError):
    """A request field of the wrong type or shape; the client gets the message as its error."""


def opt_str(req: dict[str, Any], key: str, limit: int = 4096) -> str | None:
    """``req[key]``: a string (at most ``limit`` characters) or absent/null."""
    value = req.get(key)
    if value is None:
        return None
    if not isinstance(value, str) or len(value) > limit:
        raise BadRequest(f"{key} must be a string of at most {limit} characters")
    return value


def opt_number(req: dict[str, Any], key: str, default: float = 0.0) -> float:
    """``req[key]``: a finite number (not a boolean), or ``default`` when absent/null."""
    value = req.get(key)
    if value is None:
        return default
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        raise BadRequest(f"{key} must be a number")
    return float(value)


def opt_bool(req: dict[str, Any], key: str, default: bool) -> bool:
    value = req.get(key)
    if value is None:
        return default
    if not isinstance(value, bool):
        raise BadRequest(f"{key} must be true or false")
    return value


def opt_str_list(req: dict[str, Any], key: str, max_items: int = 256) -> list[str] | None:
    """``req[key]``: a list of strings, or absent/null."""
    value = req.get(key)
    if value is None:
        return None
    if (
        not isinstance(value, list)
        or len(value) > max_items
        or not all(isinstance(v, str) and len(v) <= 4096 for v in value)
    ):
        raise BadRequest(f"{key} must be a list of strings")
    return value


def focus_arg(value: Any, what: str = "focus") -> list[str] | None:
    """A window focus: ``[session file, tool call id]`` or null."""
    if value is None:
        return None
    if (
        not isinstance(value, list)
        or len(value) != 2
        or not all(isinstance(v, str) and 0 < len(v) <= 4096 for v in value)
    ):
        raise BadRequest(f"{what} must be [session, call] or null")
    return value
