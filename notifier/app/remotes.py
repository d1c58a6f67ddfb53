"""Remote hosts and pushes, wired into the running app.

Each configured remote runs as a :class:`notifier.remote.link.Link` (a thread and a process);
what its stream says is applied to the board on the engine thread (``Engine.call``), so remote
questions become the same transitions as local ones and every sink (run --json, history,
notifications, tray, window, push) just works. ``goto`` and ``answer`` on a remote
session: :mod:`notifier.actions.goto`.
"""

from __future__ import annotations

import logging
import threading
import time
from functools import partial
from typing import Any

from notifier.actions.goto import configured
from notifier.config import Config
from notifier.core.model import Transition
from notifier.core.text import clean
from notifier.engine import Sink
from notifier.outputs.push import PushSink
from notifier.remote.inbox import Down, Inbox, Item
from notifier.remote.link import Link
from notifier.remote.stream import Ready, RemoteAsked, RemoteEnded, StreamEvent
from notifier.store import Store
from notifier.system.log import LogOnce

log = logging.getLogger(__name__)
say_once = LogOnce(log)
SSH_TIMEOUT_S = 15.0


class Hub:
    """The remotes' links and the push sink of one app."""

    def __init__(self, config: Config, store: Store | None = None) -> None:
        """``store``: the app's state store, where pushed questions are remembered."""
        self.config = config
        self.remotes = configured(config)
        self.links: list[Link] = []
        self.engine: Any = None
        self._still: dict[str, set[tuple[str, str]]] = {}  # engine thread: re-sent since connecting
        self._stop = threading.Event()
        self.push: Any = None
        if config["push.urls"]:
            self.push = PushSink(config, store)

    def sinks(self) -> list[Sink]:
        return [self.push] if self.push is not None else []

    def start(self, engine: Any) -> None:
        """Links start once the engine is ready (its board is the one that stays)."""
        self.engine = engine
        if self.push is not None:
            self.push.start()
        if not self.remotes:
            return
        self.boxes = {r.name: Inbox() for r in self.remotes}
        self.links = [Link(r, self._on_event, self._on_down) for r in self.remotes]

        def later() -> None:
            while not engine.ready_event.wait(0.5):
                if self._stop.is_set():
                    return
            for link in self.links:
                if not self._stop.is_set():
                    link.start()

        threading.Thread(target=later, name="pi-notifier-remotes", daemon=True).start()

    def stop(self) -> None:
        self._stop.set()
        for link in self.links:
            link.stop()
        for box in getattr(self, "boxes", {}).values():
            box.close()
        if self.push is not None:
            self.push.stop()

    # ---- link threads → engine thread ----

    def _on_event(self, host: str, event: StreamEvent) -> None:
        self._put(host, event)

    def _on_down(self, host: str) -> None:
        self._put(host, Down())

    def _put(self, host: str, item: Item) -> None:
        """Into the host's inbox; the engine is asked to take it when no such call is out."""
        if self.boxes[host].put(item):
            self.engine.call(partial(self._take, host))

    # ---- engine thread ----

    def _take(self, host: str) -> list[Transition]:
        """Apply a batch of what the host sent: one set of transitions (the engine hands them to
        every sink); ask for the next batch behind whatever else the engine has to do."""
        box = self.boxes[host]
        items, more = box.take()
        try:
            out: list[Transition] = []
            for item in items:
                out += self._apply(host, item)
            for (who, why), count in self.engine.board.remote.take_refused().items():
                limit = "sessions" if why == "sessions" else "questions in one session"
                say_once(who, why, "remote %s has more %s than are kept; ignoring the rest (%d so far)",
                         clean(who), limit, count)
            if box.folded:
                say_once(host, "folded", "remote %s sends faster than it is looked at: questions asked "
                         "and ended in between are folded (%d so far)", clean(host), box.folded)
            return out
        finally:
            if more:  # (also after a failure: the rest must not wait for the next event)
                self.engine.call(partial(self._take, host))

    def _apply(self, host: str, event: Item) -> list[Transition]:
        board, now = self.engine.board, time.time()
        if isinstance(event, Down):
            self._still.pop(host, None)
            board.remote.offline(host, now)
            return []
        if isinstance(event, Ready):
            out: list[Transition] = board.remote.synced(host, self._still.pop(host, set()), now)
            return out
        if isinstance(event, RemoteAsked):
            still = self._still.setdefault(host, set())
            if len(still) < MAX_STILL:
                still.add((event.session.key, event.question.tool_call_id))
            return list(board.remote.asked(event.session, event.question, now, event.initial))
        if isinstance(event, RemoteEnded):
            return list(board.remote.ended(
                event.session, event.question, now, event.outcome, event.answer, event.waited_s
            ))
        return []


MAX_STILL = 20_000  # questions re-sent since connecting that are remembered (bounded like the board)
