"""Where the window gets its data and sends its commands: the ``Source`` protocol, and the running
app over the local channel (``RemoteSource``). An engine of the window's own is ``app/runtime.py``'s."""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any, Protocol

from notifier import control as control_client
from notifier.control import request
from notifier.core import commands
from notifier.core.commands import Answer, Command

ASK_TIMEOUT_S = 60.0  # an answer is confirmed from the session file within its own deadline


class Source(Protocol):
    """Where the window gets its data and sends its commands."""

    def start(self, push: Callable[[dict[str, Any]], None]) -> None: ...

    def command(self, command: Command) -> None: ...

    def close(self) -> None: ...

    # Optional: ``ask(command)`` carries out a Goto or Answer and returns the reply
    # (``{"ok", "said"}``; None: nobody answered); blocking, called off the Tk thread.


def ask_reply(source: Source, command: Command, failed: str) -> dict[str, Any]:
    """Carry out a Goto or Answer through ``source`` (blocking) and say what came of it: the window's
    inbox message (``said``; ``answered`` for an Answer). ``failed`` starts the line when it failed."""
    ask = getattr(source, "ask", None)
    if ask is None:
        source.command(command)
        reply: dict[str, Any] | None = {"ok": True, "said": "sent"}
    else:
        reply = ask(command)
    if reply is None:
        said = f"{failed}: pi-notifier does not answer"
    elif reply.get("ok"):
        said = str(reply.get("said") or "done")
        said = said[:1].upper() + said[1:]
    else:
        said = f"{failed}: {reply.get('said') or reply.get('error') or 'no reason given'}"
    reply_msg: dict[str, Any] = {"said": said}
    if isinstance(command, Answer):
        reply_msg["answered"] = bool(reply and reply.get("ok"))
    return reply_msg


class RemoteSource:
    """The running app, over the local channel."""

    def __init__(self) -> None:
        self._stop = threading.Event()

    def start(self, push: Callable[[dict[str, Any]], None]) -> None:
        def listen() -> None:
            for msg in control_client.subscribe({"cmd": "subscribe"}):
                if self._stop.is_set():
                    return
                push(msg)
            push({"gone": True})

        threading.Thread(target=listen, name="pi-notifier-window-feed", daemon=True).start()

    def command(self, command: Command) -> None:
        threading.Thread(target=request, args=(commands.to_obj(command),), daemon=True).start()

    def ask(self, command: Command) -> dict[str, Any] | None:
        """A Goto or Answer carried out by the app; its reply (None: the app did not answer)."""
        return request(commands.to_obj(command), timeout=ASK_TIMEOUT_S)

    def close(self) -> None:
        self._stop.set()
