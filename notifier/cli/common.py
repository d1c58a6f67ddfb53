"""What the commands share: one-line failures, and what the running app said about its window."""

from __future__ import annotations

import sys
from typing import Any

from notifier import APP_NAME
from notifier.core.text import clean


def fail(code: int, message: object) -> int:
    """Say ``message`` as one line on stderr; return the exit ``code``."""
    sys.stderr.write(f"{APP_NAME}: {clean(message)}\n")
    return code


def window_said(reply: dict[str, Any]) -> str:
    """The running app's reply to ``show``, in words."""
    window = reply.get("window")
    if window == "opened":
        return "its window was opened"
    if window == "raised":
        return "its window (already open) was raised"
    if window == "starting":
        return "its window is starting (not confirmed yet)"
    if window == "no-display":
        return "it runs without a display, so no window was opened"
    if window == "failed":
        return "its window could not be opened (see its log)"
    if not reply.get("ok"):
        return f"it refused to open its window ({clean(reply.get('error'), 100)})"
    return "it was asked to open its window"
