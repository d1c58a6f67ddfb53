"""What a ``Notify`` call asks of the notification server besides the title and body (pure): the
actions (as this server can show them), the hints (category, desktop entry, reply, urgency,
resident, sound) and how long the notification stays."""

from __future__ import annotations

import os
from typing import Any

from notifier import APP_NAME
from notifier.sinks.notify.backend import expire_ms
from notifier.sinks.notify.render import SOUND_NEEDS_ANSWER, Message
from notifier.sinks.notify.servers import REPLY, REPLY_HINTS, Server, choose

Hints = dict[str, tuple[str, Any]]  # name → (D-Bus signature, value)


def notify_args(message: Message, shows: Server, expire: str | int, sound: str) -> tuple[list[str], Hints, int]:
    """The actions (flat: key, label, key, label…), hints and expire timeout (ms; -1: the server's
    default) of ``message`` on a server that ``shows`` so, with ``notifications.expire`` and
    ``notifications.sound``."""
    chosen = choose(message.actions, shows, message.takes_text)
    actions = [x for pair in chosen for x in pair]
    timeout = -1  # the server's default for what needs no answer
    hints: Hints = {"category": ("s", "im.received"), "desktop-entry": ("s", APP_NAME)}
    if any(a == REPLY for a, _ in chosen):
        hints.update({k: ("s", v) for k, v in REPLY_HINTS.items()})
    critical = message.critical
    if message.sticky:
        timeout = expire_ms(expire)
        if timeout == 0:
            # stays until answered: servers that ignore expire_timeout (GNOME) keep only critical
            # notifications on screen, and 'resident' keeps it there after an action
            hints["resident"] = ("b", True)
            critical = True
    hints["urgency"] = ("y", 2 if critical else 1)
    if message.sticky:  # needs an answer: its own sound (notifications.sound)
        hints.update(sound_hints(sound))
    return actions, hints, timeout


def sound_hints(sound: str) -> Hints:
    """The freedesktop sound hints for ``notifications.sound``: "default" → the sound theme's
    "message-new-instant"; "none" → silence (``suppress-sound``); a path → ``sound-file``;
    anything else → that ``sound-name``. Servers that play no sounds ignore them."""
    if sound == "none":
        return {"suppress-sound": ("b", True)}
    if sound == "default":
        return {"sound-name": ("s", SOUND_NEEDS_ANSWER)}
    if sound.startswith(("/", "~")):
        return {"sound-file": ("s", os.path.expanduser(sound))}
    return {"sound-name": ("s", sound)}
