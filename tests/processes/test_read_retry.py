"""A question written while its session file could not be read reaches the outputs once it can:
the engine reads the file again on its own timer (a pi waiting for an answer writes nothing
more). The real engine, watcher and files; a real read error (ELOOP: the session's name is a
symlink through a hop that loops, re-pointed later outside the watched folder: no change event)."""

from __future__ import annotations

import logging
import os
from collections.abc import Callable
from pathlib import Path
from typing import TypeVar

import pytest

from notifier.core.model import Transition
from notifier.watch import FileChanged

from ..conftest import wait_for
from ..harness import Harness
from ..writer import answer, append, ask, header, user

T = TypeVar("T")


def point(link: Path, target: Path) -> None:
    new = link.with_name(link.name + ".new")
    new.symlink_to(target)
    os.replace(new, link)


def on_the_engine(h: Harness, look: Callable[[], T]) -> T:
    """``look()`` on the engine thread (which alone touches its files), after what is queued before."""
    seen: list[T] = []

    def call() -> list[Transition]:
        seen.append(look())
        return []

    h.engine.call(call)
    wait_for(lambda: seen, 10, "the engine to reach the call")
    return seen[0]


def test_a_question_in_a_file_that_could_not_be_read_is_seen_without_a_change_event(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO)
    sessions, real, hop = tmp_path / "sessions", tmp_path / "real", tmp_path / "hop"
    sessions.mkdir()
    real.mkdir()
    point(hop, hop)
    append(real / "s.jsonl", header(), user(), ask("q1", "Which one?"))
    with Harness([sessions]) as h:
        (sessions / "s.jsonl").symlink_to(hop / "s.jsonl")  # (the watcher's event: read, and it fails)
        h.engine.queue.put(FileChanged(str(sessions / "s.jsonl")))  # (the same, now: the read is behind it)
        assert on_the_engine(h, lambda: h.engine.reader.next_retry) is not None  # (read, and it failed)
        point(hop, real)
        (t,) = h.wait("needs_input", 1, timeout=10)
        assert t.question.tool_call_id == "q1" and h.engine.restarts == 0
        assert on_the_engine(h, lambda: h.engine.reader.next_retry) is None  # (no more retries)
    assert sum("cannot read" in r.getMessage() for r in caplog.records) == 1


def test_a_session_the_start_up_scan_could_not_read_comes_later_as_it_would_have_then(tmp_path: Path) -> None:
    """Its link loops while the app starts: the engine's timer reads it once it leads to the file,
    as the start-up scan reads (the question still waiting, as initial; the one answered before
    start-up is history: no transition of it)."""
    sessions, real, hop = tmp_path / "sessions", tmp_path / "real", tmp_path / "hop"
    sessions.mkdir()
    real.mkdir()
    point(hop, hop)
    append(real / "s.jsonl", header(), user(), ask("q0", "Old?"), answer("q0"), ask("q1", "Which one?"))
    (sessions / "s.jsonl").symlink_to(hop / "s.jsonl")
    with Harness([sessions]) as h:
        assert on_the_engine(h, lambda: h.engine.reader.next_retry) is not None  # (found, and it failed)
        point(hop, real)
        (t,) = h.wait("needs_input", 1, timeout=10)
        assert t.question.tool_call_id == "q1" and t.initial
        assert on_the_engine(h, lambda: h.engine.reader.next_retry) is None
        assert [x.question.tool_call_id for x in h.collected.items] == ["q1"]
