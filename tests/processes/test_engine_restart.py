"""A restart of the engine loses nothing it had in hand: the messages taken off its queue and not
handled yet (calls: the companion's dialogs, a remote's next batch, Clear, a headless run's
take-over), the files changed and not read yet, and the transitions made and not handed out.
The real engine, its real thread and watcher, real files; one step made to fail."""

from __future__ import annotations

import threading
from collections.abc import Callable
from pathlib import Path

import pytest

from notifier.core.model import Transition
from notifier.engine import _Call
from notifier.sessions import BLAME_LIMIT, StartupCache
from notifier.watch import FileChanged, FolderAppeared

from ..conftest import wait_for
from ..harness import Harness
from ..writer import append, ask, header, user


class Boom(BaseException):
    """Not an Exception: what no ``except Exception`` on the way contains."""


def noting(ran: list[str], what: str) -> Callable[[], list[Transition]]:
    """A call that notes it ran."""

    def call() -> list[Transition]:
        ran.append(what)
        return []

    return call


def _hold(h: Harness) -> threading.Event:
    """Keep the engine thread busy in a call until the event returned is set: what is queued
    meanwhile is taken as one batch."""
    busy, release = threading.Event(), threading.Event()

    def hold() -> list[Transition]:
        busy.set()
        release.wait(10)
        return []

    h.engine.call(hold)
    wait_for(busy.is_set, 10, "the engine in the holding call")
    return release


def test_calls_and_questions_of_a_batch_whose_file_read_fails_are_not_lost(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    broken, fine = tmp_path / "broken.jsonl", tmp_path / "fine.jsonl"
    with Harness([tmp_path]) as h:
        engine = h.engine
        real_read = engine.reader.read
        armed = {"left": 1}

        def read(path: str) -> list[Transition]:
            if path == str(broken) and armed["left"]:
                armed["left"] -= 1
                raise Boom("a bug meeting odd data")
            return real_read(path)

        monkeypatch.setattr(engine.reader, "read", read)
        release = _hold(h)
        append(fine, header(), user(), ask("qf", "Read before the failure?"))
        append(broken, header(), user())
        ran: list[str] = []
        engine.queue.put(FileChanged(str(fine)))  # (what the watcher puts, in this order)
        engine.queue.put(FileChanged(str(broken)))
        engine.queue.put(_Call(noting(ran, "call")))
        release.set()
        wait_for(lambda: ran, 10, "the call queued behind the failing read")
        assert engine.restarts == 1 and ran == ["call"]  # (run once)
        # the question read before the failure, in the batch that failed, is handed out after it
        (t,) = h.wait("needs_input", 1)
        assert t.question.tool_call_id == "qf"


def test_a_call_that_fails_the_engine_is_run_once_and_those_behind_it_still_run(tmp_path: Path) -> None:
    with Harness([tmp_path]) as h:
        engine = h.engine
        release = _hold(h)
        ran: list[str] = []

        def stopping() -> list[Transition]:
            ran.append("stopping")
            raise Boom("a call that raises what no except Exception catches")

        engine.call(stopping)
        engine.call(noting(ran, "behind"))
        release.set()
        wait_for(lambda: "behind" in ran, 10, "the call behind the failing one")
        assert ran == ["stopping", "behind"] and engine.restarts == 1
        append(tmp_path / "s.jsonl", header(), user(), ask("q1", "Still telling?"))
        h.wait("needs_input", 1)
        assert ran == ["stopping", "behind"]  # (the failing call is not run again)


def test_a_watch_event_that_keeps_failing_is_dropped_after_the_blame_limit(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The message in hand goes back first in line after a restart (a folder's scan is run again:
    harmless), but one that fails every time is dropped after BLAME_LIMIT tries."""
    folder = tmp_path / "p"
    with Harness([tmp_path]) as h:
        engine = h.engine
        real_scan = engine.reader.scan
        scans: list[str] = []

        def scan(
            path: str, initial: bool, cache: StartupCache | None = None, out: list[Transition] | None = None
        ) -> list[Transition]:
            if path == str(folder):
                scans.append(path)
                raise Boom("always")
            return real_scan(path, initial, cache, out)

        monkeypatch.setattr(engine.reader, "scan", scan)
        release = _hold(h)
        ran: list[str] = []
        engine.queue.put(FolderAppeared(str(folder)))
        engine.call(noting(ran, "behind"))
        release.set()
        wait_for(lambda: ran, 20, "the call behind the failing event")
        assert len(scans) == BLAME_LIMIT and engine.restarts == BLAME_LIMIT
        append(tmp_path / "s.jsonl", header(), user(), ask("q1", "Still telling?"))
        h.wait("needs_input", 1)
        assert len(scans) == BLAME_LIMIT
