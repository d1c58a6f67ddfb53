"""Loggers that cost nothing until they write. ``logging`` (with what it imports) is about 10 ms
of a one-shot command's start-up (``status`` over thousands of sessions, docs/contract.md §7),
and such a command usually says nothing: the modules on its path take their logger from here.

Until the command line defers the set-up (:func:`defer`), every call goes to the real logger, as
``logging.getLogger(name)`` would. After it, a message below the level the command line chose is
dropped without importing ``logging`` (as ``logging`` would drop it); the first one at or above
it imports ``logging``, runs the set-up, and from then on every call goes to the real logger."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

DEBUG, INFO, WARNING, ERROR = 10, 20, 30, 40

_below = 0  # while the set-up waits: messages below this level need no logging
_setup: Callable[[], None] | None = None  # the command line's set-up, not run yet


def defer(level: int, setup: Callable[[], None]) -> None:
    """Run ``setup`` (which configures ``logging``) only when a message at ``level`` or above
    is written; below it, messages are dropped until then."""
    global _below, _setup
    _below, _setup = level, setup


def _logging() -> Any:
    global _setup
    import logging

    setup, _setup = _setup, None
    if setup is not None:
        setup()
    return logging


class Logger:
    """The part of ``logging.Logger`` this program uses."""

    __slots__ = ("_real", "name")

    def __init__(self, name: str) -> None:
        self.name = name
        self._real: Any = None

    def _get(self, level: int) -> Any:
        real = self._real
        if real is None:
            if _setup is not None and level < _below:
                return None
            real = self._real = _logging().getLogger(self.name)
        return real

    def isEnabledFor(self, level: int) -> bool:  # noqa: N802 (logging's name)
        real = self._get(level)
        return real is not None and bool(real.isEnabledFor(level))

    def log(self, level: int, msg: object, *args: Any, **kwargs: Any) -> None:
        real = self._get(level)
        if real is not None:
            real.log(level, msg, *args, **kwargs)

    def debug(self, msg: object, *args: Any, **kwargs: Any) -> None:
        self.log(DEBUG, msg, *args, **kwargs)

    def info(self, msg: object, *args: Any, **kwargs: Any) -> None:
        self.log(INFO, msg, *args, **kwargs)

    def warning(self, msg: object, *args: Any, **kwargs: Any) -> None:
        self.log(WARNING, msg, *args, **kwargs)

    def error(self, msg: object, *args: Any, **kwargs: Any) -> None:
        self.log(ERROR, msg, *args, **kwargs)

    def exception(self, msg: object, *args: Any, **kwargs: Any) -> None:
        kwargs.setdefault("exc_info", True)
        self.log(ERROR, msg, *args, **kwargs)


def get(name: str) -> Logger:
    """The logger called ``name`` (a module's ``__name__``)."""
    return Logger(name)


class MaskSecrets:
    """A logging filter (``logging`` takes any object with a ``filter`` method) for the command
    line's handlers: every record that reaches them, apprise's own included, has its message,
    traceback and stack masked (:mod:`notifier.core.secrets`): URLs keep their scheme and host,
    and the parts of the configured push URLs are hidden wherever they appear."""

    def __init__(self) -> None:
        self._masker: Any = None

    def _mask(self) -> Any:
        if self._masker is None:
            from notifier.core.secrets import Masker

            self._masker = Masker()
        return self._masker

    def add_urls(self, urls: Any) -> None:
        """Hide the secret parts of these URLs from now on."""
        if urls:
            self._mask().add(urls)

    def filter(self, record: Any) -> bool:
        mask = self._mask()
        try:
            message = record.getMessage()
        except Exception:  # (logging reports a record it cannot format: not for us to raise)
            return True
        masked = mask(message)
        if masked != message:
            record.msg, record.args = masked, None
        if record.exc_info and not record.exc_text:
            import logging

            record.exc_text = logging.Formatter().formatException(record.exc_info)
        if record.exc_text:
            record.exc_text = mask(record.exc_text)
        if record.stack_info:
            record.stack_info = mask(record.stack_info)
        return True


SECRETS = MaskSecrets()  # the one filter: the command line installs it, config and push feed it
