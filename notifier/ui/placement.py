"""Where the window opens: a comfortable size, centred in the desktop's work area (never under a panel)."""

from __future__ import annotations

import logging
from typing import Any

from notifier.core.text import clean
from notifier.system.desktop import open_display

# Lazy imports here: Xlib is a Linux-only dependency and this module loads on every OS.

log = logging.getLogger(__name__)


def work_area() -> tuple[int, int, int, int] | None:
    """The desktop's work area (x, y, width, height: the screen without its panels), from the
    window manager's ``_NET_WORKAREA`` for the current desktop; None where none says."""
    disp = open_display()
    if disp is None:
        return None
    try:
        from Xlib import X

        root = disp.screen().root
        prop = root.get_full_property(disp.intern_atom("_NET_WORKAREA"), X.AnyPropertyType)
        if prop is None or len(prop.value) < 4:
            return None
        current = root.get_full_property(disp.intern_atom("_NET_CURRENT_DESKTOP"), X.AnyPropertyType)
        n = int(current.value[0]) if current is not None and len(current.value) else 0
        values = [int(v) for v in prop.value]
        at = n * 4 if len(values) >= n * 4 + 4 else 0
        x, y, w, h = values[at : at + 4]
        return (x, y, w, h) if w > 0 and h > 0 else None
    except Exception as exc:
        log.debug("no work area: %s", clean(exc, 200))
        return None
    finally:
        disp.close()


def placement(root: Any) -> str:
    """The window's geometry: a comfortable size, centred in the work area (never under a panel)."""
    area = work_area() or (0, 0, int(root.winfo_screenwidth()), int(root.winfo_screenheight()))
    x, y, w, h = area
    width = max(min(1100, int(w * 0.9)), min(640, w))
    height = max(min(620, int(h * 0.8)), min(360, h))
    return f"{width}x{height}+{x + max(0, (w - width) // 2)}+{y + max(0, (h - height) // 3)}"
