"""The secrets filter of the command line's log handlers (:data:`SECRETS`): push URLs' secret
parts never reach stderr or the log file, whoever logs them (apprise included)."""

from __future__ import annotations

import logging
from typing import Any

from notifier.core.text import Masker


class MaskSecrets(logging.Filter):
    """A logging filter for the command
    line's handlers: every record that reaches them, apprise's own included, has its message,
    traceback and stack masked (:mod:`notifier.core.text`): URLs keep their scheme and host,
    and the parts of the configured push URLs are hidden wherever they appear."""

    def __init__(self) -> None:
        super().__init__()
        self._mask = Masker()

    def add_urls(self, urls: Any) -> None:
        """Hide the secret parts of these URLs from now on."""
        if urls:
            self._mask.add(urls)

    def filter(self, record: logging.LogRecord) -> bool:
        mask = self._mask
        try:
            message = record.getMessage()
        except Exception:  # (logging reports a record it cannot format: not for us to raise)
            return True
        masked = mask(message)
        if masked != message:
            record.msg, record.args = masked, None
        if record.exc_info and not record.exc_text:
            record.exc_text = logging.Formatter().formatException(record.exc_info)
        if record.exc_text:
            record.exc_text = mask(record.exc_text)
        if record.stack_info:
            record.stack_info = mask(record.stack_info)
        return True


SECRETS = MaskSecrets()  # the one filter: the command line installs it, config and push feed it
