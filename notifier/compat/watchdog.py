"""watchdog across the releases the project accepts (``pyproject.toml``: 7.1.1 and newer on Python
3.11+, 4.0 and newer on 3.10, where 7.1 is not published).

- **Events lost.** watchdog 7.1.1 reports an inotify queue overflow as ``EventsLostEvent`` (its
  path is the watched folder: rescan it). Older releases drop the overflow without a word, so
  :func:`events_lost` is ``None`` there and nothing can be caught up (``doctor`` says so).
- **Stop race.** watchdog 7.0 and 7.1.0's inotify emitter can log "InotifyEmitter.queue_events()
  called when the thread is inactive" at ERROR as a watch stops (``on_thread_stop`` drops the
  watch group while the emitter thread is between ``should_keep_running()`` and
  ``queue_events()``). Nothing is lost: the emitter is stopping. Measured: 1 Ctrl-C of
  ``pi-notifier run`` in 15 printed it. 7.1.1 logs it at DEBUG.
- **A folder past the watch limit.** watchdog 7.1.1 logs "Unable to watch %r: %s" for each
  sub-folder it cannot watch; the app says it once for the whole folder
  (:mod:`notifier.watch`), so those records are dropped.

The records are dropped with a logging filter (public logging API; the messages are watchdog's)."""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from watchdog.events import FileSystemEvent


def events_lost() -> type[FileSystemEvent] | None:
    """watchdog's ``EventsLostEvent``, or None where this watchdog has none."""
    import watchdog.events  # (here, not at the top: the logging filter below is for every command)

    found: type[FileSystemEvent] | None = getattr(watchdog.events, "EventsLostEvent", None)
    return found

STOP_RACE = "InotifyEmitter.queue_events() called when the thread is inactive"
UNABLE_TO_WATCH = "Unable to watch %r: %s"


class _DropSaidElsewhere(logging.Filter):
    def filter(self, record: logging.LogRecord) -> bool:
        return record.msg not in (STOP_RACE, UNABLE_TO_WATCH)


_DROP = _DropSaidElsewhere()


def quiet_stop_race() -> None:
    """Drop watchdog's records that are harmless or said by the app in its own words."""
    logging.getLogger("watchdog.observers.inotify").addFilter(_DROP)
