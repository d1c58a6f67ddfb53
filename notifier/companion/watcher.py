"""Finds companion extension sockets as they appear in the runtime folder (the app's one watchdog
Observer, :func:`notifier.watch.watch_folder`: inotify on Linux; no polling loop), keeps one
connection per pi, and hands every event to a callback: ``(socket_path, event)`` where event is a
protocol event or :class:`Disconnected` (that pi quit or reloaded: forget its dialogs)."""

from __future__ import annotations

import contextlib
import logging
import os
import threading
from collections.abc import Callable
from dataclasses import dataclass

from notifier.channel import MAX_PEERS
from notifier.companion import Channel, ChannelError, Event, connect, is_socket_name, list_sockets, socket_folder
from notifier.core.text import clean
from notifier.system import paths
from notifier.system.log import LogOnce
from notifier.watch import Watch, unschedule, watch_folder

log = logging.getLogger(__name__)
say_once = LogOnce(log)


@dataclass(frozen=True)
class Disconnected:
    path: str


Callback = Callable[[str, "Event | Disconnected"], None]


class CompanionWatcher:
    def __init__(self, callback: Callback, folder: str | None = None) -> None:
        self.callback = callback
        self.folder = folder or socket_folder()
        self._lock = threading.Lock()
        self._channels: dict[str, Channel | None] = {}  # None: connecting
        self._watch: Watch | None = None
        self._stopped = False

    def start(self) -> None:
        paths.own_folder(self.folder, parents=True)  # (NotOurs: no watch in another user's folder)
        self._watch = watch_folder(self.folder, self._found)
        for path in list_sockets(self.folder):  # after the watch starts: nothing falls between
            self._found(path)

    def stop(self) -> None:
        self._stopped = True
        watch, self._watch = self._watch, None
        unschedule(watch)
        with self._lock:
            channels = [c for c in self._channels.values() if c is not None]
        for chan in channels:
            chan.close()

    def connected(self) -> list[str]:
        with self._lock:
            return sorted(p for p, c in self._channels.items() if c is not None)

    def _found(self, path: str) -> None:
        if self._stopped or not is_socket_name(os.path.basename(path)):
            return
        with self._lock:
            if path in self._channels:
                return
            if len(self._channels) >= MAX_PEERS:  # (one thread each: bounded)
                say_once("companion", "peers", "more than %d companion sockets; ignoring the rest", MAX_PEERS)
                return
            self._channels[path] = None
        threading.Thread(target=self._serve, args=(path,), name="pi-notifier-companion", daemon=True).start()

    def _serve(self, path: str) -> None:
        chan: Channel | None = None
        try:
            try:
                chan = connect(path)
            except ChannelError as exc:
                log.debug("companion socket %s: %s", clean(path), exc)
                return
            chan.settimeout(None)
            with self._lock:
                if self._stopped:
                    return
                self._channels[path] = chan
            for event in chan.events():
                if self._stopped:
                    return
                try:
                    self.callback(path, event)
                except Exception:  # a sink's bug must not end the connection
                    log.exception("companion event handler failed")
        finally:
            if chan is not None:
                chan.close()
            with self._lock:
                known = self._channels.pop(path, None) is not None
            if known and not self._stopped:
                with contextlib.suppress(Exception):
                    self.callback(path, Disconnected(path))
