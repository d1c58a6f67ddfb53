"""The app's logging: what its handlers let through, and saying each problem once.

:data:`SECRETS`, the filter of the command line's log handlers (stderr and the log file), sees
every record that reaches them, apprise's own included: each argument of the record is
sanitised (and cut to a bound) with the one sanitizer (:func:`notifier.core.text.clean`: a file
name, a question, a peer's error message logged as an argument cannot put an escape sequence or
a line break in the log; each line of a traceback is sanitised likewise), and the message,
traceback and stack are masked (:mod:`notifier.core.text`): URLs keep their scheme and host, the
parts of the configured push URLs are hidden wherever they appear.
A caller logs untrusted values as arguments (``log.warning("cannot read %s", path)``) and needs
no ``clean()`` of its own for that.

:class:`LogOnce` says a problem once: one log line per (subject, kind of problem), never per line
or per try. A subject (a session file, a folder, a backend) that recovers can be forgotten, so
its next problem is said again."""

from __future__ import annotations

import logging
import threading
from typing import Any

from notifier.core.text import Masker, clean

MAX_REMEMBERED = 10_000  # beyond this, the oldest problems may be said again (memory stays bounded)
MAX_ARGUMENT = 2000  # characters of one log argument (a huge question or error is cut, not logged whole)
_PLAIN = (int, float, type(None))  # arguments that cannot carry text (bool is an int)


def _sanitised(arg: object) -> object:
    """A log argument as it may reach the log: numbers as they are (for ``%d``, ``%x``, ``%.1f``),
    anything else as sanitised text, cut to :data:`MAX_ARGUMENT`."""
    return arg if isinstance(arg, _PLAIN) else clean(arg, MAX_ARGUMENT)


class MaskSecrets(logging.Filter):
    """The filter of the command line's handlers (see the module's docstring)."""

    def __init__(self) -> None:
        super().__init__()
        self._mask = Masker()

    def add_urls(self, urls: Any) -> None:
        """Hide the secret parts of these URLs from now on."""
        if urls:
            self._mask.add(urls)

    def filter(self, record: logging.LogRecord) -> bool:
        args = record.args
        if isinstance(args, tuple) and args:
            record.args = tuple(_sanitised(a) for a in args)
        elif isinstance(args, dict) and args:  # (``log.info("%(name)s", {"name": ...})``)
            record.args = {k: _sanitised(v) for k, v in args.items()}
        try:
            message = record.getMessage()
        except Exception:  # (logging reports a record it cannot format: not for us to raise)
            record.args = args
            return True
        masked = self._mask(message)
        if masked != message:
            record.msg, record.args = masked, None
        if record.exc_info and not record.exc_text:
            record.exc_text = logging.Formatter().formatException(record.exc_info)
        if record.exc_text:
            record.exc_text = self._mask(_lines(record.exc_text))
        if record.stack_info:
            record.stack_info = self._mask(_lines(record.stack_info))
        return True


def _lines(text: str) -> str:
    """A traceback or stack, each of its lines sanitised (its indentation kept): an exception's
    message puts no escape sequence or control character in the log (one over several lines
    stays several lines of the traceback)."""
    return "\n".join(line[: len(line) - len(line.lstrip(" "))] + clean(line) for line in text.splitlines())


SECRETS = MaskSecrets()  # the one filter: the command line installs it, config and push feed it


class LogOnce:
    """Say each problem once (see the module's docstring). Subjects are untrusted (file names):
    they are sanitised here."""

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
        if args:  # (a % in a file name is not a format)
            prefix = prefix.replace("%", "%%")
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
