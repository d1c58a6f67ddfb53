"""What the commands share: one-line failures."""

from __future__ import annotations

import sys

from notifier import APP_NAME
from notifier.core.text import clean


def fail(code: int, message: object) -> int:
    """Say ``message`` as one line on stderr; return the exit ``code``."""
    sys.stderr.write(f"{APP_NAME}: {clean(message)}\n")
    return code
