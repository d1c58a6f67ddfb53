"""The notification server's signals as the D-Bus backend takes them, on the bus connection's
signal thread: clicks and inline replies of the server that owns the name now (ids are its own),
each click once, and the name changing owner (a server coming, going, restarted). Closes are not
listened to: a dismissed bubble stays dismissed, and a reminder raises a new one."""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable, Hashable
from dataclasses import dataclass, field
from typing import Any

from notifier.core.text import clean
from notifier.sinks.notify.name_owner import BUS_NAME, NOTIFICATIONS, PATH

# Lazy imports here: jeepney is a Linux-only dependency and this module loads on every OS.

log = logging.getLogger(__name__)

ONE_CLICK_S = 1.0  # the same action of the same notification again within this long: the same click


class Once:
    """Lets each key through once within ``window_s`` seconds (one click that arrives twice is one
    action). Thread-safe; time from ``clock``."""

    def __init__(self, window_s: float = ONE_CLICK_S, clock: Callable[[], float] = time.monotonic) -> None:
        self.window_s = window_s
        self.clock = clock
        self._seen: dict[Hashable, float] = {}
        self._lock = threading.Lock()

    def first(self, key: Hashable) -> bool:
        now = self.clock()
        with self._lock:
            self._seen = {k: t for k, t in self._seen.items() if now - t < self.window_s}
            if key in self._seen:
                return False
            self._seen[key] = now
            return True


@dataclass
class Signals:
    """``on_action(id, action)``, ``on_reply(id, text)`` (an inline reply): the current server's
    signals, each click once; ``on_server("up" | "down")``: the server's name changed owner."""

    on_action: Callable[[int, str], None] | None = None
    on_reply: Callable[[int, str], None] | None = None
    on_server: Callable[[str], None] | None = None
    once: Once = field(default_factory=Once)

    def take(self, msg: Any, owner: str) -> None:
        """One signal the bus passed on; ``owner``: the server's ``BUS-ID/UNIQUE-NAME`` now."""
        from jeepney import HeaderFields

        fields = msg.header.fields
        interface, member, body = (
            fields.get(HeaderFields.interface),
            fields.get(HeaderFields.member),
            msg.body,
        )
        if interface == NOTIFICATIONS and fields.get(HeaderFields.path) == PATH:
            # Only the server's own: a signal sent to us directly passes every match rule, and
            # GNOME's shell broadcasts each click that its notification service (the owner) sends
            # us again. Ids are the owner's.
            sender = fields.get(HeaderFields.sender)
            if not owner or sender != owner.rsplit("/", 1)[-1]:
                log.debug("ignored %s from %s (not the server)", clean(member, 40), clean(sender, 40))
                return
            then = {"ActionInvoked": self.on_action, "NotificationReplied": self.on_reply}.get(member)
            if then is not None and len(body) >= 2 and self.once.first((member, body[0], body[1])):
                then(int(body[0]), str(body[1]))
        elif (
            member == "NameOwnerChanged"
            and fields.get(HeaderFields.sender) == BUS_NAME
            and len(body) == 3
            and body[0] == NOTIFICATIONS
            and self.on_server
        ):
            self.on_server("up" if body[2] else "down")
