"""Everything pi-notifier reads at run time ships inside the package, here, and is read through
:mod:`importlib.resources`, so a wheel installed anywhere (pipx, pip, a system package) is whole:

- ``glyph.png``, ``pi-notifier.png``: the artwork (drawn by ``assets/make_artwork.py``)
- ``demo/session.jsonl``: the recording ``pi-notifier demo`` replays
- ``autostart/``: the autostart templates (systemd unit, XDG entry, LaunchAgent, Startup script)
"""

from __future__ import annotations

import atexit
import contextlib
from importlib import resources
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from importlib.abc import Traversable

_files = contextlib.ExitStack()
atexit.register(_files.close)


# The id of the demo's recorded session (demo/session.jsonl): no pi runs it, so the window
# offers no answer buttons for it (they could only fail).
DEMO_SESSION_ID = "01a22a00-0000-7000-8000-00000000d3m0"


def read_text(name: str) -> str:
    """A resource's text (``name`` uses ``/`` between folders)."""
    text: str = _locate(name).read_text(encoding="utf-8")
    return text


def read_bytes(name: str) -> bytes:
    data: bytes = _locate(name).read_bytes()
    return data


def path(name: str) -> Path:
    """A real file for a resource, for the few consumers that need a path (a notification server
    loads the app icon by path). From a zipped install it is extracted once for this process."""
    return Path(_files.enter_context(resources.as_file(_locate(name))))


def _locate(name: str) -> Traversable:
    return resources.files(__name__).joinpath(*name.split("/"))


def app_icon() -> str:
    """The application icon as a file path (notification servers and desktop entries load it by path)."""
    return str(path("pi-notifier.png"))
