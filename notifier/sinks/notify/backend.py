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
    # The server's unique bus name, which its notification ids belong to ("" where there is none).
    owner: str
    found: str  # what looking for the server found (:class:`~.dbus.DBusBackend`; "" where none looks)

    @property
    def connected(self) -> bool:
        """A session-bus connection is up that reports the server coming and going."""
        ...

    def show(self, message: Message, replaces: int) -> int: ...

    def close(self, server_id: int) -> None: ...

    def shutdown(self) -> None: ...

    def went_away(self) -> None:
        """The server (or the bus) is gone: offline until :meth:`probe` finds one."""
        ...

    def probe(self) -> bool:
        """Ask the server who it is again (a new owner of its name); True if it answered."""
        ...

    def describe(self) -> str: ...


class Plain:
    """What a backend that does not follow a server answers (no bus name, nothing looked for)."""

    name = "plain"
    online = False
    owner = ""
    found = ""
    connected = False

    def went_away(self) -> None:
        self.online = False

    def probe(self) -> bool:
        return self.online

    def describe(self) -> str:
        return self.name


class NullBackend(Plain):
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
