"""A session file whose read fails for a reason that may pass is read again on a back-off (the
project's one :class:`~notifier.system.supervisor.Backoff`), said once in the log, until it is
read or gone: a pi waiting for an answer writes nothing more, so no change would bring its
question. Real files; the error is a real one: the session's name reaches its file through a
symlink that loops (ELOOP) until it is pointed elsewhere, which changes nothing the session's
folder would report."""

from __future__ import annotations

import errno
import logging
import math
import os
import time
from pathlib import Path
from typing import Any

import pytest

from notifier.core.board import Board
from notifier.core.model import Transition
from notifier.sessions import BoardReader, EngineOptions
from notifier.system.supervisor import RESTART_MAX_S, RESTART_MIN_S

from ..writer import answer, append, ask, header, user


def point(link: Path, target: Path) -> None:
    """Make ``link`` a symlink to ``target`` in one step (a link to itself: a loop)."""
    new = link.with_name(link.name + ".new")
    new.symlink_to(target)
    os.replace(new, link)


def layout(tmp_path: Path) -> tuple[Path, Path, Path]:
    """``(the session's name, the hop its link goes through, the real file)``; the hop loops."""
    real, sessions = tmp_path / "real", tmp_path / "sessions"
    real.mkdir()
    sessions.mkdir()
    hop = tmp_path / "hop"
    point(hop, hop)
    session = sessions / "s.jsonl"
    session.symlink_to(hop / "s.jsonl")
    return session, hop, real


def session_files(tmp_path: Path) -> BoardReader:
    options = EngineOptions(roots=[str(tmp_path / "sessions")], liveness=False)
    return BoardReader(options, Board(liveness=False), time.time)


def said(caplog: pytest.LogCaptureFixture, text: str) -> int:
    return sum(text in r.getMessage() for r in caplog.records)


def test_an_unreadable_new_file_is_read_again_less_and_less_often_and_said_once(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO)
    session, hop, real = layout(tmp_path)
    append(real / "s.jsonl", header(), user(), ask("q1", "Which?"))
    files = session_files(tmp_path)
    began = time.monotonic()
    assert files.read(str(session)) == []
    due = files.next_retry
    assert due is not None and began < due <= time.monotonic() + RESTART_MIN_S
    assert files.retry(due - 0.001) == [] and files.next_retry == due  # (not due yet: not read)
    waits = []
    for _ in range(12):
        before = time.monotonic()
        assert files.retry(math.inf) == []
        after = files.next_retry
        assert after is not None
        waits.append(after - before)
    assert all(later > earlier * 1.5 for earlier, later in zip(waits[:6], waits[1:7], strict=True))  # (doubling)
    assert max(waits) <= RESTART_MAX_S + 0.1 and waits[-1] >= RESTART_MAX_S - 0.1  # (up to its most)
    assert said(caplog, "cannot read") == 1
    point(hop, real)
    out = files.retry(math.inf)
    assert [t.question.tool_call_id for t in out if t.kind == "needs_input"] == ["q1"]
    assert files.next_retry is None and said(caplog, "read again") == 1
    point(hop, hop)  # (failing again later: said again, once)
    append(real / "s.jsonl", ask("q2", "And?"))
    assert files.read(str(session)) == [] and files.next_retry is not None
    assert said(caplog, "cannot read") == 2


def test_a_followed_file_that_cannot_be_read_for_a_while_gives_its_question_then(tmp_path: Path) -> None:
    session, hop, real = layout(tmp_path)
    point(hop, real)
    append(real / "s.jsonl", header(), user())
    files = session_files(tmp_path)
    files.scan(str(tmp_path / "sessions"), initial=True)
    assert str(session) in files.tailers and files.next_retry is None
    point(hop, hop)
    append(real / "s.jsonl", ask("q1", "Which?"))  # (written while it cannot be read)
    assert files.read(str(session)) == [] and files.next_retry is not None
    point(hop, real)  # (nothing the session's folder reports: only the retry reads it)
    out = files.retry(math.inf)
    assert [t.question.tool_call_id for t in out if t.kind == "needs_input"] == ["q1"]
    assert files.next_retry is None


def test_a_file_gone_while_it_could_not_be_read_is_not_tried_again(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO)
    session, _, _ = layout(tmp_path)
    files = session_files(tmp_path)
    assert files.read(str(session)) == [] and files.next_retry is not None
    session.unlink()
    assert files.retry(math.inf) == [] and files.next_retry is None
    assert said(caplog, "read again") == 0


def test_a_fifo_named_like_a_session_is_not_tried_again(tmp_path: Path) -> None:
    (tmp_path / "sessions").mkdir()
    fifo = tmp_path / "sessions" / "f.jsonl"
    os.mkfifo(fifo)
    files = session_files(tmp_path)
    assert files.read(str(fifo)) == [] and files.next_retry is None  # (its kind changes only by a new file)


def test_a_failed_name_look_up_loses_no_question(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The question is on the board before the session's name is looked up (once, further back in
    the file): if that look fails, the question's needs_input is still handed out (not lost to
    the engine's restart, which would find nothing new)."""
    from notifier import sessions

    (tmp_path / "sessions").mkdir()
    f = tmp_path / "sessions" / "s.jsonl"
    append(f, header(), user())
    files = session_files(tmp_path)
    assert files.read(str(f)) == []

    def broken(*args: object) -> str | None:
        raise OSError(5, "Input/output error")

    monkeypatch.setattr(sessions, "look_up_name", broken)
    append(f, ask("q1", "Which?"))
    (t,) = files.read(str(f))
    assert t.kind == "needs_input" and t.question.tool_call_id == "q1"


def asked(out: list[Transition]) -> list[tuple[str, str, bool]]:
    return [(t.kind, t.question.tool_call_id, t.initial) for t in out]


def test_a_folder_that_cannot_be_listed_is_listed_again_on_the_same_back_off(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    """A folder whose listing fails (no descriptor left for a moment, EMFILE) at start-up: its
    session file is found when the folder's time comes, read as the start-up scan reads it (only
    the question still waiting, as found at start-up), without any change event."""
    caplog.set_level(logging.INFO)
    sub = tmp_path / "sessions" / "sub"
    append(sub / "s.jsonl", header(), user(), ask("q0", "Old?"), answer("q0"), ask("q1", "Which?"))
    real_scandir, failing = os.scandir, [True]

    def scandir(path: Any) -> Any:
        if failing[0] and os.fspath(path) == str(sub):
            raise OSError(errno.EMFILE, os.strerror(errno.EMFILE))
        return real_scandir(path)

    monkeypatch.setattr(os, "scandir", scandir)
    files = session_files(tmp_path)
    assert files.scan(str(tmp_path / "sessions"), initial=True) == []
    due = files.next_retry
    assert due is not None and files.retry(due - 0.001) == []
    assert files.retry(math.inf) == [] and files.next_retry is not None  # (still failing: later again)
    # the folder's own stat failing too at a retry (a mount gone bad: EIO, ESTALE) keeps it on the
    # back-off; only its removal ends that
    real_stat = os.stat
    monkeypatch.setattr(os, "stat", lambda p, *a, **k: _eio() if os.fspath(p) == str(sub) else real_stat(p, *a, **k))
    assert files.retry(math.inf) == [] and files.next_retry is not None
    monkeypatch.setattr(os, "stat", real_stat)
    assert said(caplog, "cannot read") == 1
    failing[0] = False
    assert asked(files.retry(math.inf)) == [("needs_input", "q1", True)]
    assert files.next_retry is None and said(caplog, "read again") == 1


def _eio() -> Any:
    raise OSError(errno.EIO, os.strerror(errno.EIO))


def test_a_file_the_start_up_scan_could_not_read_is_read_later_as_it_would_have_been(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Its questions answered before start-up are history, not news (no needs_input, no resolved
    for them): the retry is the start-up read (from the end, bounded), not a new file's full read."""
    from notifier import sessions, tail

    f = tmp_path / "sessions" / "s.jsonl"
    append(f, header(), user(), ask("q0", "Old?"), answer("q0"), ask("q1", "Which?"))
    failing = [True]

    def open_regular(path: str) -> tuple[int, os.stat_result]:
        if failing[0]:
            raise OSError(errno.EMFILE, os.strerror(errno.EMFILE))
        return tail.open_regular(path)

    monkeypatch.setattr(sessions, "open_regular", open_regular)
    files = session_files(tmp_path)
    assert files.scan(str(tmp_path / "sessions"), initial=True) == [] and files.next_retry is not None
    failing[0] = False
    assert asked(files.retry(math.inf)) == [("needs_input", "q1", True)]
    assert files.next_retry is None
    append(f, answer("q1"), ask("q2", "And?"))  # (followed on from there: what comes is news)
    assert asked(files.read(str(f))) == [("resolved", "q1", False), ("needs_input", "q2", False)]


def test_a_session_file_the_start_up_scan_could_not_stat_is_read_when_it_can_be(tmp_path: Path) -> None:
    """Found by name in its folder, but its link loops (ELOOP) at start-up: said once and tried
    again on the back-off; once it leads to the file, read as the start-up scan reads."""
    session, hop, real = layout(tmp_path)
    append(real / "s.jsonl", header(), user(), ask("q0", "Old?"), answer("q0"), ask("q1", "Which?"))
    files = session_files(tmp_path)
    assert files.scan(str(tmp_path / "sessions"), initial=True) == [] and files.next_retry is not None
    point(hop, real)
    assert asked(files.retry(math.inf)) == [("needs_input", "q1", True)]
    assert files.next_retry is None
