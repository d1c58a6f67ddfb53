"""watchdog 7 workaround: its inotify emitter has a race on stop. ``on_thread_stop`` drops the
emitter's watch group while its thread may be between ``should_keep_running()`` and
``queue_events()``, which then logs "InotifyEmitter.queue_events() called when the thread is
inactive" at ERROR and returns (``watchdog/observers/inotify.py``, 7.1.0). Nothing is lost: the
emitter is stopping (the app's shutdown, or a watch of a folder let go as the folder it waited
for appeared). Measured: 1 Ctrl-C of ``pi-notifier run`` in 15 printed it on the terminal. The
record is dropped (public logging API; the message is watchdog 7's)."""

from __future__ import annotations

import logging

STOP_RACE = "InotifyEmitter.queue_events() called when the thread is inactive"


class _DropStopRace(logging.Filter):
    def filter(self, record: logging.LogRecord) -> bool:
        return record.msg != STOP_RACE


_DROP = _DropStopRace()


def quiet_stop_race() -> None:
    logging.getLogger("watchdog.observers.inotify").addFilter(_DROP)
