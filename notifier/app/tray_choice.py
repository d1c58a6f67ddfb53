"""The app's tray icon: the backend the config and this desktop allow, or none; and the tray host
it shows in, followed while the app runs (``tray_follower.py``)."""

from __future__ import annotations

import logging
import os
import sys
from collections.abc import Callable

from notifier.app.tray_follower import HostFollower
from notifier.app.tray_hosts import NO_HOST_WHY, HostLog, Hosts, look
from notifier.config import Config
from notifier.core.commands import Command
from notifier.core.text import clean
from notifier.system.desktop import has_display
from notifier.ui.state import UiState
from notifier.ui.tray import Tray, tray_backend

log = logging.getLogger(__name__)


def make_tray(
    config: Config, act: Callable[[Command], object], state: Callable[[], UiState]
) -> Tray | None:
    """A tray icon whose menu calls ``act`` and which shows ``state()``; ``None`` when no
    tray can be shown here (said in the log). A backend that fails to start never raises. With
    no tray host the icon waits for one: the app carries on with notifications and the window."""
    follower: HostFollower | None = None
    hosts = Hosts()
    if config["tray.backend"] != "none" and has_display() and os.name == "posix" and not _apple():
        follower = HostFollower(HostLog())
        hosts = follower.start()
    backend, why = tray_backend(config["tray.backend"], sni_host=hosts.sni is not None, one_host=hosts.one)
    if backend is None:
        log.info("no tray icon: %s", why)
        if follower is not None:
            follower.close()
        return None
    try:
        tray = Tray(backend, act, state, hosts=follower)
    except Exception as exc:  # pystray or its toolkit cannot start here
        log.warning("no tray icon (%s backend failed: %s)", backend, clean(exc, 200))
        if follower is not None:
            follower.close()
        return None
    log.debug("tray: %s — %s", backend, why)
    return tray


def _apple() -> bool:
    return sys.platform == "darwin"


def doctor_line(config: Config) -> str:
    """``doctor``'s tray line: the backend, and the tray host really found (the X selection's
    owner, the StatusNotifierWatcher's owner, both asked now). OK only when a host that backend
    can show in answered."""
    hosts, unasked = (Hosts(), []) if not has_display() or _apple() else look()
    backend, why = tray_backend(config["tray.backend"], sni_host=hosts.sni is not None, one_host=hosts.one)
    head = f"tray: {backend or 'none'} — {why}"
    if backend is None or backend == "native":
        return f"[{'ok  ' if backend else 'note'}] {head}"
    usable = hosts.xembed if backend in ("xorg", "gtk") else hosts.xembed or hosts.sni
    if usable:
        return f"[ok  ] {head}; tray host: {hosts.describe()}"
    if hosts.sni:  # an SNI watcher only, and a backend that cannot talk to it
        return (
            f"[FAIL] {head}; tray host: {hosts.describe()} only, which the {backend} backend cannot"
            " use (install the 'gtk' extra and the Ayatana AppIndicator typelib)"
        )
    detail = "; ".join(unasked) if unasked else NO_HOST_WHY
    return f"[note] {head}; tray host: none ({detail}): the icon appears when one starts"
