"""What every notification backend offers, the one that shows nothing, and their errors."""

from __future__ import annotations

import platform
import sys
from typing import Protocol

from notifier.sinks.notify.render import Message


class Backend(Protocol):
    name: str
    markup: bool
    online: bool  # can deliver right now

    def show(self, message: Message, replaces: int) -> int: ...

    def close(self, server_id: int) -> None: ...

    def shutdown(self) -> None: ...


class NullBackend:
    name = "none"
    markup = False
    online = False

    def show(self, message: Message, replaces: int) -> int:
        return 0

    def close(self, server_id: int) -> None:
        pass

    def shutdown(self) -> None:
        pass


class BackendError(Exception):
    pass


class ServerGone(BackendError):
    """The notification server (``what == "server"``) or the whole session bus (``"bus"``) is gone."""

    def __init__(self, what: str, detail: str) -> None:
        super().__init__(detail)
        self.what = what


def expire_ms(expire: str | int) -> int:
    """The Notify ``expire_timeout`` for a needs-answer notification: 0 = until closed."""
    return 0 if expire == "never" else int(expire) * 1000


def is_wsl() -> bool:
    return sys.platform.startswith("linux") and "microsoft" in platform.release().lower()
