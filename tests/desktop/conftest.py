"""Desktop fixtures: one Xvfb and private session bus per test session; dunst per test.

These tests skip when the tools are missing, except with NOTIFIER_REQUIRE_DESKTOP=1 (set by
.ci/run after it installed them), which turns a missing tool into a failure."""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest

from .services import Dunst, Monitor, start_bus, start_xvfb, stop

TOOLS = ("Xvfb", "dbus-daemon", "dbus-send", "dunst", "dunstctl")


def require(*tools: str) -> None:
    """Skip (or, with NOTIFIER_REQUIRE_DESKTOP=1, fail) unless the tools exist; "tkinter" means
    the Python Tk module the window needs."""
    missing = []
    for t in tools:
        if t == "tkinter":
            try:
                import tkinter  # noqa: F401
            except ImportError:
                missing.append("tkinter (python3-tk)")
        elif not shutil.which(t):
            missing.append(t)
    if missing:
        message = "desktop tools missing: " + ", ".join(missing)
        if os.environ.get("NOTIFIER_REQUIRE_DESKTOP") == "1":
            pytest.fail(message + " (NOTIFIER_REQUIRE_DESKTOP=1)")
        pytest.skip(message)


@pytest.fixture(scope="session")
def desktop_session(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, str]]:
    require(*TOOLS)
    tmp = tmp_path_factory.mktemp("desktop")
    xvfb, display = start_xvfb()
    bus, address = start_bus(tmp)
    env = dict(os.environ, DISPLAY=display, DBUS_SESSION_BUS_ADDRESS=address, NO_AT_BRIDGE="1")
    saved = {k: os.environ.get(k) for k in ("DISPLAY", "DBUS_SESSION_BUS_ADDRESS", "NO_AT_BRIDGE")}
    os.environ.update(DISPLAY=display, DBUS_SESSION_BUS_ADDRESS=address, NO_AT_BRIDGE="1")
    try:
        yield env
    finally:
        for k, v in saved.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v
        stop(bus)
        stop(xvfb)


@pytest.fixture
def desktop(desktop_session: dict[str, str]) -> dict[str, str]:
    """The environment of this test: the shared display and bus, this test's own HOME and XDG
    folders (a copy taken once per session would hand every test the same ones)."""
    return dict(os.environ)


@pytest.fixture
def dunst(desktop: dict[str, str], tmp_path: Path) -> Iterator[Dunst]:
    d = Dunst(desktop, tmp_path)
    try:
        yield d
    finally:
        d.stop()


@pytest.fixture
def monitor(desktop: dict[str, str]) -> Iterator[Monitor]:
    m = Monitor()
    try:
        yield m
    finally:
        m.close()


@pytest.fixture
def trayer(desktop: dict[str, str]) -> Iterator[None]:
    require("trayer", "xdotool", "import")
    from .services import start_trayer

    proc = start_trayer(desktop)
    try:
        yield None
    finally:
        stop(proc)


@pytest.fixture(autouse=True)
def _tk_garbage_collected_here() -> Iterator[None]:
    """Windows made in this process (tkinter) hold reference cycles; collected later on another
    thread (an engine's, in a later test), Tcl aborts the whole process ("async handler deleted by
    the wrong thread"). Each test's garbage is collected here, on the thread that made it."""
    import gc

    yield
    gc.collect()
