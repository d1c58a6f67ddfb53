"""The config file, followed while the app runs: quiet hours follow the file at once, other keys
apply at the next start (said in the log); a bad edit keeps the last good config (said once)."""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Any

from notifier.config import (  # (in parentheses: the codemod leaves it whole)
    Config,
    ConfigError,
    load,
)
from notifier.core.text import clean
from notifier.system import paths
from notifier.watch.config_file import FileFollower

log = logging.getLogger(__name__)


class ConfigFollower:
    def __init__(self, config: Config, on_quiet_hours: Callable[[str], None]) -> None:
        """``on_quiet_hours(value)``: the quiet hours changed (``config`` holds the new value)."""
        self.config = config
        self.on_quiet_hours = on_quiet_hours
        self._values: dict[str, Any] = {}  # what the file said when last read well
        self._error = ""  # the last bad edit's reason (said once)
        self._follower: Any = None

    def start(self) -> None:
        path = self.config.file or paths.config_file()
        self._values = self._read(path) or {}
        self._follower = FileFollower(path, lambda: self._changed(path))
        self._follower.start()

    def stop(self) -> None:
        if self._follower is not None:
            self._follower.stop()

    def _read(self, path: str) -> dict[str, Any] | None:
        """The file's settings (a missing file: the defaults); None for a bad edit."""
        try:
            values = load(path, explicit=False).values
        except ConfigError as exc:
            if str(exc) != self._error:
                self._error = str(exc)
                log.warning("%s; keeping the last good config", exc)
            return None
        self._error = ""
        return values

    def _changed(self, path: str) -> None:
        """(The follower's thread.)"""
        values = self._read(path)
        if values is None:
            return
        before, self._values = self._values, values
        changed = sorted(k for k in values if values[k] != before.get(k))
        if "quiet_hours" in changed:
            quiet = values["quiet_hours"]
            self.config.set("quiet_hours", quiet, clean(path))
            log.info("config: quiet hours %s", quiet or "off")
            self.on_quiet_hours(quiet)
        later = [k for k in changed if k != "quiet_hours"]
        if later:
            log.info("config: %s changed; applies at the next start", ", ".join(later))
