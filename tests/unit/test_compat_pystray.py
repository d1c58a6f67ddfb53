"""The pystray workarounds apply to the versions they were checked on, and only to the xorg icon."""

from __future__ import annotations

from typing import Any

from notifier import compat


def test_only_checked_versions() -> None:
    assert compat.checked("0.19.5") and compat.checked("0.19.0")
    assert not compat.checked("0.20.0") and not compat.checked("1.19.5")
    assert compat.checked() == (compat.version() or "").startswith("0.19.")


class NotXorg:
    """An icon of another backend: no X window, no dock routine."""

    def __init__(self) -> None:
        self.calls: list[Any] = []


def test_other_backends_are_left_alone() -> None:
    icon = NotXorg()
    compat.dock_once(icon)
    compat.accept_clicks(icon)
    assert compat.window_id(icon) is None
    assert vars(icon) == {"calls": []}


class FakeXorg:
    """Just the private parts dock_once relies on (pystray 0.19's xorg icon)."""

    def __init__(self) -> None:
        self._display = object()
        self._window = object()
        self._systray_manager: object | None = None
        self.docked = 0

    def _dock_window(self) -> None:
        self.docked += 1
        self._systray_manager = object()


def test_dock_once_asks_again_only_when_undocked() -> None:
    icon = FakeXorg()
    compat.dock_once(icon)
    if not compat.checked():
        assert icon.docked == 0 and "_dock_window" not in vars(icon)
        return
    for _ in range(5):
        icon._dock_window()
    assert icon.docked == 1
    icon._systray_manager = None  # the tray host went away
    icon._dock_window()
    assert icon.docked == 2
