"""watchdog 7.1 workaround: each event handed on from the inotify emitter's own thread.

watchdog passes every event from the emitter thread that read it to the observer's dispatch
thread through a queue, and only that thread calls the handlers: one thread hop per event that
this app, whose handlers only put a message on the engine's queue, does not need. Measured here
(a write to a watched file until the handler has the event, 600 writes, on a loaded machine):
p50 204-257 µs through the dispatch thread, 141-196 µs handed on directly as here (133-206 µs with
the replaced event queue this took the place of). No API takes events without that
hop; the nearest upstream request is https://github.com/gorakhargosh/watchdog/issues/392.

:func:`inotify_observer` builds the inotify observer as ``InotifyObserver`` builds itself in 7.1
(a ``BaseObserver`` with an emitter class and the emitters' keyword arguments, one ``InotifyFD``),
with an emitter whose ``queue_event`` first offers the event to ``route``. No private attribute is
touched, but the way the pieces fit is 7.1's, so it is used only on the versions it was checked
against (``CHECKED``) and only where watchdog itself chose inotify; anywhere else it is watchdog's
own ``Observer`` and events take the usual way (said at debug level).
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from importlib import metadata
from typing import Any

from watchdog.events import FileSystemEvent
from watchdog.observers import Observer
from watchdog.observers.api import BaseObserver, ObservedWatch

from notifier.core.text import clean

log = logging.getLogger(__name__)
CHECKED = ("7.1.",)  # the versions this was written and tested for
_said: set[str] = set()

Route = Callable[[FileSystemEvent, ObservedWatch], bool]
"""Takes an event of a watch on the emitter's thread; False: not taken (the usual way then)."""


def version() -> str | None:
    try:
        return metadata.version("watchdog")
    except metadata.PackageNotFoundError:
        return None


def checked(found: str | None = None) -> bool:
    """Is this watchdog (or ``found``) one of the versions the workaround was checked against?"""
    v = version() if found is None else found
    return v is not None and v.startswith(CHECKED)


def inotify_observer(route: Route) -> BaseObserver:
    """An observer whose folder watches offer each event to ``route`` on the emitter's thread
    (watchdog 7.1 with inotify); else watchdog's own ``Observer``."""
    if checked() and _inotify_chosen():
        return _direct_observer(route)
    log.debug("watchdog %s: events go through its dispatch thread (checked on %s only)", version(), ", ".join(CHECKED))
    return Observer()


def _inotify_chosen() -> bool:
    """Did watchdog choose its inotify observer here?"""
    try:
        from watchdog.observers.inotify import InotifyObserver
    except Exception:  # (not Linux, or a libc without inotify)
        return False
    return Observer is InotifyObserver


def _direct_observer(route: Route) -> BaseObserver:
    from watchdog.observers.inotify import InotifyEmitter
    from watchdog.observers.inotify_c import InotifyFD

    class DirectEmitter(InotifyEmitter):
        def __init__(self, *args: Any, route: Route, **kwargs: Any) -> None:
            super().__init__(*args, **kwargs)
            self.route = route

        def queue_event(self, event: FileSystemEvent) -> None:
            wanted = self.watch.event_filter
            if wanted is not None and not any(isinstance(event, cls) for cls in wanted):
                return
            if self.watch.is_file:
                super().queue_event(event)  # (the observer filters a file watch's paths)
                return
            try:
                taken = self.route(event, self.watch)
            except Exception as exc:  # a bug costs this event, not the emitter's thread (the watch)
                if type(exc).__name__ not in _said:
                    _said.add(type(exc).__name__)
                    log.warning("a watch event could not be handed on (%s)", clean(exc))
                return
            if not taken:
                super().queue_event(event)

    class DirectObserver(BaseObserver):
        def __init__(self) -> None:
            self.inotify = InotifyFD()  # one inotify instance for all this observer's watches
            self.inotify.start()
            super().__init__(DirectEmitter, inotify_fd=self.inotify, route=route)

        def on_thread_stop(self) -> None:
            super().on_thread_stop()
            self.inotify.stop()
            self.inotify.join()

    return DirectObserver()
