"""SIGINT, SIGTERM and SIGHUP end the app cleanly."""

from __future__ import annotations

import contextlib
import os
import signal
import threading
from types import FrameType


def install_signals(stop: threading.Event) -> None:
    """SIGINT, SIGTERM and SIGHUP set ``stop``.

    A signal may be delivered to any thread, while Python runs handlers only in the main thread,
    which sleeps in an untimed wait (no polling). So the interpreter's own wakeup fd carries the
    signal: its C-level handler writes to a pipe whichever thread was hit, and a relay thread sets
    ``stop``. (Setting the event inside a Python handler could also deadlock on its lock.)"""
    r, w = os.pipe()
    os.set_blocking(w, False)

    def relay() -> None:
        try:
            os.read(r, 1)
        except OSError:
            return
        stop.set()

    threading.Thread(target=relay, name="pi-notifier-signals", daemon=True).start()
    try:
        signal.set_wakeup_fd(w, warn_on_full_buffer=False)
    except (ValueError, OSError):  # not the main thread: Python handlers still work there
        pass

    def handler(signum: int, frame: FrameType | None) -> None:
        with contextlib.suppress(OSError):
            os.write(w, b"s")

    for sig in (signal.SIGINT, signal.SIGTERM, getattr(signal, "SIGHUP", None)):
        if sig is not None:
            with contextlib.suppress(ValueError, OSError):
                signal.signal(sig, handler)
