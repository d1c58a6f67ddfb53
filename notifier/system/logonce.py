"""Say each problem once: one log line per (subject, kind of problem), never per line or per try.

A subject (a session file, a folder, a backend) that recovers can be forgotten, so its next
problem is said again. Subjects are untrusted (file names): they are sanitized here."""

from __future__ import annotations

import logging
import threading
from typing import Any

from notifier.core.text import clean

MAX_REMEMBERED = 10_000  # beyond this, the oldest problems may be said again (memory stays bounded)


class LogOnce:
    def __init__(self, logger: logging.Logger, level: int = logging.WARNING) -> None:
        self.logger = logger
        self.level = level
        self._said: dict[tuple[str, str], None] = {}
        self._lock = threading.Lock()

    def __call__(self, subject: str, kind: str, message: str, *args: Any, level: int | None = None) -> bool:
        """Log ``"<subject>: <message>"`` unless this (subject, kind) was said already; True if logged."""
        if not self.first(subject, kind):
            return False
        prefix = f"{clean(subject, 300)}: " if subject else ""
        self.logger.log(self.level if level is None else level, prefix + message, *args)
        return True

    def first(self, subject: str, kind: str) -> bool:
        """True the first time this (subject, kind) comes (for a caller that says it its own way:
        with a traceback the first time, in one line after)."""
        key = (subject, kind)
        with self._lock:
            if key in self._said:
                return False
            if len(self._said) >= MAX_REMEMBERED:
                self._said.pop(next(iter(self._said)))
            self._said[key] = None
        return True

    def forget(self, subject: str, kind: str | None = None) -> None:
        """``subject`` recovered (or is gone): its next problem is said again."""
        with self._lock:
            for key in [k for k in self._said if k[0] == subject and (kind is None or k[1] == kind)]:
                del self._said[key]
