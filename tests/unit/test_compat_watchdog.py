"""The watchdog workaround applies to the versions it was checked on; events then reach the route
on the emitter's own thread, and an event the route does not take goes watchdog's usual way."""

from __future__ import annotations

import threading
from pathlib import Path

import pytest
from watchdog.events import FileCreatedEvent, FileSystemEvent, FileSystemEventHandler
from watchdog.observers.api import ObservedWatch

from notifier.compat import watchdog as compat

from ..conftest import wait_for


def test_only_checked_versions() -> None:
    assert compat.checked("7.1.0") and compat.checked("7.1.3")
    assert not compat.checked("7.2.0") and not compat.checked("6.0.0") and not compat.checked("17.1.0")
    assert compat.checked() == (compat.version() or "").startswith("7.1.")


class Seen(FileSystemEventHandler):
    def __init__(self) -> None:
        self.got: list[tuple[str, str]] = []  # (file name, thread)

    def on_created(self, event: FileSystemEvent) -> None:
        self.got.append((Path(str(event.src_path)).name, threading.current_thread().name))


def _run(tmp_path: Path, take: bool) -> tuple[list[str], Seen, str]:
    """Write s.jsonl (taken by the route if ``take``), then t.jsonl (never taken) in a watched
    folder; who got which event, on which thread. One emitter queues in order: once t's event
    is dispatched, s's would have been too, had it gone both ways."""
    routed: list[str] = []

    def route(event: FileSystemEvent, watch: ObservedWatch) -> bool:
        name = Path(str(event.src_path)).name
        if isinstance(event, FileCreatedEvent):
            routed.append(name + "@" + threading.current_thread().name)
        return take and name == "s.jsonl"

    observer = compat.inotify_observer(route)
    handler = Seen()
    observer.start()
    try:
        observer.schedule(handler, str(tmp_path), event_filter=[FileCreatedEvent])
        (tmp_path / "s.jsonl").write_bytes(b"{}\n")
        (tmp_path / "t.jsonl").write_bytes(b"{}\n")
        wait_for(lambda: any(name == "t.jsonl" for name, _ in handler.got), 5, "t.jsonl's event")
        return routed, handler, observer.name
    finally:
        observer.stop()
        observer.join(2)


@pytest.mark.skipif(not compat.checked(), reason="the workaround is only used on the versions it was checked on")
def test_a_taken_event_is_handed_on_from_the_emitters_thread(tmp_path: Path) -> None:
    routed, handler, observer_thread = _run(tmp_path, take=True)
    assert routed[0].startswith("s.jsonl@") and not routed[0].endswith("@" + observer_thread)
    assert handler.got == [("t.jsonl", observer_thread)]  # s.jsonl taken: not dispatched as well


@pytest.mark.skipif(not compat.checked(), reason="the workaround is only used on the versions it was checked on")
def test_an_event_not_taken_goes_the_usual_way(tmp_path: Path) -> None:
    routed, handler, observer_thread = _run(tmp_path, take=False)
    assert [r.split("@")[0] for r in routed] == ["s.jsonl", "t.jsonl"]
    assert handler.got == [("s.jsonl", observer_thread), ("t.jsonl", observer_thread)]


def test_other_versions_get_watchdogs_own_observer(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(compat, "CHECKED", ("0.0.",))
    observer = compat.inotify_observer(lambda event, watch: True)
    assert type(observer).__module__.startswith("watchdog.observers.")  # watchdog's own class
    observer.stop()
