"""The UI thread (outputs/tray.Redraw) on its own: it draws the snapshot the engine sent it with the
silences and health it was handed, and a drawing that fails is the supervisor's (recorded, said once) —
the next change draws again."""

from __future__ import annotations

import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from notifier.app import WindowProcess
from notifier.config import Config
from notifier.core.model import Snapshot
from notifier.core.planner import Silences
from notifier.engine import Batch
from notifier.outputs.tray import Redraw, UiState
from notifier.system.supervisor import FailureLog, Worker

from ..conftest import wait_for


class Tray:
    """Stands in for ``ui/tray.Tray``: what it was asked to draw; the first drawing fails."""

    def __init__(self) -> None:
        self.drawn: list[tuple[UiState, str]] = []
        self.failures = 1

    def update(self, state: UiState, quiet_hours: str) -> None:
        if self.failures:
            self.failures -= 1
            raise RuntimeError("drawing broke")
        self.drawn.append((state, quiet_hours))


def test_a_failed_drawing_is_recorded_and_the_next_change_draws_again(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    stop, health, tray = threading.Event(), FailureLog(), Tray()
    config = Config()
    config.values["quiet_hours"] = "22:00-07:00"
    worker = Worker("outputs", stop, health)  # (the app's one outputs thread)
    redraw = Redraw(WindowProcess(str(tmp_path / "unused.sock")), config, health, stop, worker)
    redraw.tray = tray  # (wired once, before it starts)
    redraw.set_silences(Silences(muted=frozenset({"shop"})))  # (handed, as their owner does)
    worker.start()
    try:
        wait_for(lambda: health.report().get("outputs", {}).get("recovered"), 10, "the UI thread again")
        # the failure is a change of what the tray shows: drawn again, saying so
        wait_for(lambda: tray.drawn and tray.drawn[-1][0].health == health.lines(), 10, "the failure shown")
        assert "outputs failed once" in tray.drawn[-1][0].health[0]
        sent, silences = Snapshot(taken_at=5.0), Silences(snooze_all_until=1e12)
        redraw.set_silences(silences)
        redraw.publish(Batch((), sent))  # the engine hands it the snapshot: drawn as it was sent
        wait_for(lambda: tray.drawn[-1][0].snapshot is sent and tray.drawn[-1][0].silences is silences, 10, "drawn")
        assert tray.drawn[-1] == (UiState(sent, silences, health.lines()), "22:00-07:00")  # as handed, nothing pulled
        report = health.report()["outputs"]
        assert report["count"] == 1 and "drawing broke" in report["error"]
        assert len([r for r in caplog.records if "the outputs failed" in r.getMessage()]) == 1
    finally:
        stop.set()
        redraw.changed()


class WindowFeed:
    subscribers = 1

    def __init__(self) -> None:
        self.pushed: list[Snapshot] = []

    def push(self, snapshot: Snapshot, silences: Silences) -> None:
        self.pushed.append(snapshot)


class Between(threading.Event):
    """The redraw's "something changed" flag, with a snapshot published by another thread just
    after the flag is looked at (the engine runs on its own thread: that moment can come)."""

    def __init__(self, publish: Callable[[], None]) -> None:
        super().__init__()
        self.publish: Callable[[], None] | None = publish

    def is_set(self) -> bool:
        seen = super().is_set()
        publish, self.publish = self.publish, None
        if publish is not None:
            publish()
        return seen


@pytest.mark.parametrize("flag", [False, True])
def test_a_snapshot_published_while_the_age_tick_draws_reaches_the_window(tmp_path: Path, flag: bool) -> None:
    """The age tick draws the tray only; a snapshot published as it starts must still be pushed
    to the window (by this wake or the next one the publish asks for)."""
    stop, health, window = threading.Event(), FailureLog(), WindowFeed()
    redraw = Redraw(window, Config(), health, stop, Worker("outputs", stop, health))  # type: ignore[arg-type]
    redraw.tray = Tray()
    redraw.tray.failures = 0
    new = Snapshot(taken_at=7.0)
    between = Between(lambda: redraw.publish(Batch((), new)))
    if flag:
        between.set()  # an earlier change waits too
    redraw._dirty = between
    redraw._due = 0.0  # the age tick is due
    redraw.run_due()
    redraw.run_due()  # the round the publish woke the worker for
    assert window.pushed and window.pushed[-1] is new


@pytest.fixture
def own_pystray() -> Iterator[None]:
    """pystray picks its backend once, at its first import: the dummy one loaded here is dropped
    afterwards, so a later test in this process gets the backend it asks for."""
    mine = ("pystray", "pystray.")
    saved = {name: module for name, module in sys.modules.items() if name.startswith(mine)}
    for name in saved:
        del sys.modules[name]
    yield
    for name in [name for name in sys.modules if name.startswith(mine)]:
        del sys.modules[name]
    sys.modules.update(saved)


@pytest.mark.usefixtures("own_pystray")
def test_a_menu_built_anew_at_each_change_is_sent_only_when_a_question_comes_or_goes(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """outputs/tray.Tray on pystray's dummy backend (like Windows' and macOS', a new label there
    is a new menu: one open closes), on a clock of the test's: drawn 100 times with nothing new
    (as the UI thread did once a second before), the menu is sent once; the question turning its
    first minute sends nothing (the menu says when it was asked, not its age); a new question
    sends it once more."""
    import types

    from notifier.outputs import tray as tray_module
    from notifier.outputs.tray import Tray

    from .test_view_icons import board_with

    clock = [1_800_000_000.0]
    fake_time = types.SimpleNamespace(
        time=lambda: clock[0], monotonic=lambda: clock[0], localtime=time.localtime, strftime=time.strftime
    )
    monkeypatch.setattr(tray_module, "time", fake_time)
    asked = clock[0] - 58.0  # a minute old in two seconds
    state = UiState(board_with(("s1", "/home/u/p", "Deploy?", asked)).snapshot(clock[0]))
    tray = Tray("dummy", lambda command: None)
    assert not tray.ages
    sent: list[float] = []
    tray.icon.update_menu = lambda: sent.append(clock[0])  # (the dummy backend draws nothing)

    def labels() -> list[str]:
        return [str(item.text) for item in tray.icon.menu.items]

    for _ in range(100):
        tray.update(state)
        clock[0] += 0.019  # (1.9 s in all: still under a minute old)
    said = f"p — Deploy? (asked {time.strftime('%H:%M', time.localtime(asked))})"
    assert len(sent) == 1 and labels()[0] == said
    clock[0] = asked + 60.0  # its first minute
    for _ in range(100):
        tray.update(state)
    assert len(sent) == 1 and labels()[0] == said
    state = UiState(board_with(("s1", "/home/u/p", "Deploy?", asked), ("s2", "/home/u/q", "Ship?", clock[0])).snapshot(clock[0]))
    for _ in range(100):
        tray.update(state)
    assert len(sent) == 2 and any("Ship?" in label for label in labels())


def test_a_show_being_handled_as_the_app_quits_leaves_no_window(monkeypatch: pytest.MonkeyPatch) -> None:
    """A Show still being handled when the app closes its window (the control channel stopped,
    its handler still at work) opened a window after the quit (5 of 5): the one it starts is
    closed with the rest, and none opens after."""
    import notifier.app as app

    entered, release = threading.Event(), threading.Event()
    started: list[Any] = []

    class Process:  # (a window's process: started, terminated)
        def __init__(self, cmd: list[str], **kwargs: Any) -> None:
            self.ended = False
            started.append(self)

        def poll(self) -> int | None:
            return 0 if self.ended else None

        def terminate(self) -> None:
            self.ended = True

    def display() -> tuple[dict[str, str], str]:  # (a look at the display, taking a while)
        entered.set()
        release.wait(10)
        return {}, "a display"

    monkeypatch.setattr(app, "window_display", display)
    monkeypatch.setattr(subprocess, "Popen", Process)
    window = WindowProcess("/nonexistent/control.sock")
    shown = threading.Thread(target=window.show)
    shown.start()
    assert entered.wait(10)
    closing = threading.Thread(target=window.close)
    closing.start()
    release.set()
    shown.join(10)
    closing.join(10)
    assert len(started) <= 1 and all(p.ended for p in started)
    assert window.show() == "failed" and len(started) <= 1


def test_a_window_is_handed_the_board_read_once_it_is_pushed_to() -> None:
    """A window that subscribes gets the board read after it is among the windows pushed to: a
    snapshot pushed between the read and the subscription would be missed (and one read before
    could replace a newer one still queued), leaving the window on an older board."""
    sent: list[Any] = []

    class Conn:
        closed = False

        def send(self, message: Any, kind: str | None = None) -> bool:
            sent.append(message)
            return True

    window = WindowProcess("/nonexistent/control.sock")
    conn: Any = Conn()
    read_when: list[bool] = []

    def current() -> tuple[Snapshot, Silences]:
        read_when.append(any(c is conn for c in window.subscribers))
        return Snapshot(taken_at=7.0), Silences()

    window.subscribe(conn, current)
    assert read_when == [True] and "window" in sent[0]
