"""What the window shows beyond the snapshot: where each pi runs (its "Where"), and what is snoozed.

Where they run takes a process table read (tens of ms): it is looked up on a thread of its own when
the questions changed (or every LOCATE_AGAIN_S), and the window is pushed again once it is known
(``on_found``), so a push never waits for it.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable
from typing import Any

from notifier.actions.goto import window_locations
from notifier.core.planner import Preferences
from notifier.core.text import clean
from notifier.window.view import mark_snoozes

log = logging.getLogger(__name__)
LOCATE_AGAIN_S = 5.0  # the window's "Where" of unchanged questions is looked up again this often


class WindowDecoration:
    def __init__(
        self,
        preferences: Callable[[], Preferences],
        on_found: Callable[[], None],
        stop_event: threading.Event,
    ) -> None:
        self.preferences = preferences
        self.on_found = on_found
        self.stop_event = stop_event
        self._locations: tuple[tuple[Any, ...], float, dict[Any, Any]] | None = None  # the window's "Where"
        self._lock = threading.Lock()
        self._wanted: tuple[tuple[Any, ...], list[dict[str, Any]]] | None = None
        self._locating = False

    def __call__(self, obj: dict[str, Any]) -> dict[str, Any]:
        """The window's object with each question's last known location and the snooze marks."""
        now = time.time()
        questions = obj.get("questions", [])
        keys = tuple(tuple(q["key"]) for q in questions)
        with self._lock:
            cached = self._locations
            if cached is None or cached[0] != keys or now - cached[1] >= LOCATE_AGAIN_S:
                self._wanted = (keys, [dict(q) for q in questions])
                if not self._locating:
                    self._locating = True
                    threading.Thread(target=self._locate, name="pi-notifier-locate", daemon=True).start()
        found = cached[2] if cached is not None else {}
        for q in questions:
            q["location"] = found.get(tuple(q["key"]))
        return mark_snoozes(obj, self.preferences(), now)

    def _locate(self) -> None:
        while True:
            with self._lock:
                wanted, self._wanted = self._wanted, None
                if wanted is None or self.stop_event.is_set():
                    self._locating = False
                    return
            keys, questions = wanted
            try:
                window_locations({"questions": questions})
            except Exception as exc:  # the window shows no "Where" then, nothing worse
                log.debug("cannot locate the sessions: %s", clean(exc, 200))
            with self._lock:
                self._locations = (keys, time.time(), {tuple(q["key"]): q.get("location") for q in questions})
            self.on_found()  # pushed again, now with where each pi runs
