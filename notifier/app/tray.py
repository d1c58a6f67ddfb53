"""The app's tray icon: the backend the config and this desktop allow, or none."""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import TYPE_CHECKING

from notifier.core.commands import Command
from notifier.core.model import Snapshot
from notifier.core.text import clean
from notifier.system.config import Config

if TYPE_CHECKING:
    from notifier.ui.tray import Tray

log = logging.getLogger(__name__)


def make_tray(
    config: Config, act: Callable[[Command], object], snapshot: Callable[[], Snapshot]
) -> Tray | None:
    """A tray icon whose menu calls ``act`` and which shows ``snapshot()``; ``None`` when no
    tray can be shown here (said in the log). A backend that fails to start never raises."""
    from notifier.ui.tray import Tray, choose_backend

    backend, why = choose_backend(config["tray.backend"])
    if backend is None:
        log.info("no tray icon: %s", why)
        return None
    try:
        tray = Tray(backend, act, snapshot)
    except Exception as exc:  # pystray or its toolkit cannot start here
        log.warning("no tray icon (%s backend failed: %s)", backend, clean(exc, 200))
        return None
    log.debug("tray: %s — %s", backend, why)
    return tray
