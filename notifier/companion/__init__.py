"""The optional companion pi extension, seen from pi-notifier (issue 11).

- :mod:`notifier.companion.protocol` (pure): typed events from the extension's socket, requests to it
- :mod:`notifier.companion.channel`: connect to one socket (same user only), :func:`answer_dialog`
- :mod:`notifier.companion.watcher`: finds sockets as pi processes start, one connection each

The extension itself ships as ``notifier/resources/pi-extension/pi-notifier.ts``; installing it is
:mod:`notifier.cli.pi_extension`.
"""

from __future__ import annotations

from notifier.companion.channel import AnswerResult, answer_dialog, list_sockets
from notifier.companion.protocol import Closed, Dialog, Hello, Result, Screen

__all__ = ["AnswerResult", "Closed", "Dialog", "Hello", "Result", "Screen", "answer_dialog", "list_sockets"]
