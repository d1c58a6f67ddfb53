"""The optional companion pi extension, seen from pi-notifier (issue 11).

- :mod:`notifier.companion.protocol` (pure): typed events from the extension's socket, requests to it
- :mod:`notifier.companion.sockets`: where the sockets are, :func:`list_sockets`
- :mod:`notifier.companion.channel`: connect to one socket (same user only), :func:`answer_dialog`
- :mod:`notifier.companion.watcher`: finds sockets as pi processes start, one connection each

The extension itself ships as the folder ``notifier/resources/pi-extension/pi-notifier/`` (``index.ts``,
``protocol.ts``); installing it is
:mod:`notifier.cli.pi_extension`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from notifier.system.lazy import lazy_names

if TYPE_CHECKING:
    from notifier.companion.channel import AnswerResult, answer_dialog
    from notifier.companion.protocol import Closed, Dialog, Hello, Result, Screen
    from notifier.companion.sockets import list_sockets

# Each name → the module it is from, imported when the name is first used: looking for sockets
# (``status``, where there are usually none) does not import the socket client and the protocol.
_FROM = {
    "AnswerResult": "channel",
    "answer_dialog": "channel",
    "Closed": "protocol",
    "Dialog": "protocol",
    "Hello": "protocol",
    "Result": "protocol",
    "Screen": "protocol",
    "list_sockets": "sockets",
}

__getattr__ = lazy_names(__name__, _FROM, globals())


__all__ = ["AnswerResult", "Closed", "Dialog", "Hello", "Result", "Screen", "answer_dialog", "list_sockets"]
