"""The engine's parts on their own: liveness scheduling, restarts, the watch-limit poll, following one file."""

from __future__ import annotations

import os
import threading
from pathlib import Path

import pytest

from notifier.core.board import Board
from notifier.core.model import Transition
from notifier.core.owners import Proc
from notifier.core.reducer import Header, ToolEnd, ToolStart
from notifier.engine import LIVENESS_SOON_S, RECHECK_MAX_S, Liveness
from notifier.pi.parse import QuestionCatalog, extract
from notifier.sessions import OneFileReader
from notifier.system.processes import start_time
from notifier.system.supervisor import FailureLog, Supervisor
from notifier.watch import WatchLimit

from ..writer import answer, append, ask, header, user


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def _liveness(clock: Clock, interval: float = 3.0, found: list[list[Proc]] | None = None) -> Liveness:
    """``found``: what each read of the process table finds (the first, then the next; default: no pi)."""
    lists = found if found is not None else []
    return Liveness(True, interval, FailureLog(), processes=lambda: lists.pop(0) if lists else [], clock=clock)


def _asked(board: Board, key: str, cid: str) -> list[Transition]:
    q = extract("question", {"question": cid + "?"}, cid, 100.0)
    return board.local.apply(key, [Header("s-" + key, "/p/" + key), ToolStart(100.0, cid, "question", q)], 100.0)


def _looked(live: Liveness, board: Board, clock: Clock) -> list[Transition]:
    """The engine's timer fires when due: the process table is read and applied."""
    assert live.next_due is not None
    clock.now = live.next_due
    return live.due(board, clock.now, clock.now)


def test_an_abandoned_question_is_looked_at_again_less_and_less_often() -> None:
    clock, board = Clock(), Board(liveness=True)
    live = _liveness(clock)
    live.drop_gone_askers(_asked(board, "f", "q1"), board)
    assert live.next_due == pytest.approx(clock.now)  # its pi not known yet: looked for at once
    assert [t.kind for t in _looked(live, board, clock)] == ["abandoned"]
    delays = []
    for _ in range(6):
        assert live.next_due is not None
        delays.append(live.next_due - clock.now)
        assert _looked(live, board, clock) == []
    assert delays == pytest.approx([3.0, 6.0, 12.0, 24.0, RECHECK_MAX_S, RECHECK_MAX_S])
    # A new question of a pi known to wait for a human (a running process, paired with the
    # session by the last list): looked at soon, and the back-off starts again.
    from .test_board import asked_ab, pane, uuid7

    me = (os.getpid(), start_time(os.getpid(), 0.0))
    at = me[1] + 1.0
    asked = board.local.apply("g", [Header(uuid7(me[1] + 0.3), "/p/g"), asked_ab("q2", "Second?", at)], at)
    board.local.set_processes([Proc("/p/g", me[1], me[0], None, pane("Second?"), None, None, True)], at + 0.1)
    assert board.local.asker("g") == me
    live.drop_gone_askers(asked, board)
    assert board.local.asker("g") == me
    assert live.next_due == pytest.approx(clock.now + LIVENESS_SOON_S)
    assert [t.kind for t in _looked(live, board, clock)] == ["abandoned"]
    assert live.next_due == pytest.approx(clock.now + 3.0)
    assert _looked(live, board, clock) == []
    assert live.next_due == pytest.approx(clock.now + 6.0)


def test_an_asker_that_quit_since_the_last_list_is_not_known() -> None:
    """The pi last seen waiting for a human in this file is gone (another, maybe ``pi -p``, asks
    in it now): the session's view names no asker (the notifier reads askers from it), and the
    process table is read at once."""
    from .test_board import asked_ab, pane, uuid7

    clock, board = Clock(), Board(liveness=True)
    live = _liveness(clock)
    board.local.apply("f", [Header(uuid7(50.3), "/p"), asked_ab("q1", "First?", 100.0)], 100.0)
    gone = (os.getpid(), 50.0)  # (its pid now another process's: started at another time)
    board.local.set_processes([Proc("/p", gone[1], gone[0], None, pane("First?"), None, None, True)], 100.1)
    assert board.snapshot(100.1).sessions[0].asker == gone
    asked = board.local.apply("f", [ToolEnd(101.0, "q1", "question"), asked_ab("q2", "Second?", 102.0)], 102.0)
    assert board.local.asker("f") == gone  # (as the board last saw it)
    live.drop_gone_askers(asked, board)
    assert board.local.asker("f") is None and live.next_due == pytest.approx(clock.now)
    assert board.snapshot(102.0).sessions[0].asker is None


def test_a_question_whose_pi_runs_keeps_being_checked_at_the_interval() -> None:
    clock, board = Clock(), Board(liveness=True)
    live = _liveness(clock, found=[[Proc("/p/f", 50.0)]])
    _asked(board, "f", "q1")
    live.schedule(0.0)
    assert live.due(board, clock.now, 101.0) == []
    assert live.next_due == pytest.approx(clock.now + 3.0)


def test_the_process_table_is_read_only_when_due_and_only_if_anything_depends_on_it() -> None:
    clock, board = Clock(), Board(liveness=True)
    reads: list[str] = []

    def processes() -> list[Proc]:
        reads.append("read")
        return []

    live = Liveness(True, 3.0, FailureLog(), processes=processes, clock=clock)
    live.schedule(1.0)
    assert live.due(board, clock.now + 1.0, clock.now) == [] and reads == []  # due, but no question waits
    _asked(board, "f", "q1")
    live.schedule(1.0)
    assert live.due(board, clock.now, clock.now) == [] and reads == []  # not due yet
    assert live.next_due is not None
    assert [t.kind for t in live.due(board, clock.now + 1.0, clock.now + 1.0)] == ["abandoned"]
    assert reads == ["read"]


def test_a_question_asked_while_the_table_is_read_is_not_judged_on_that_read() -> None:
    """The mark is taken before the read: a question the board saw after it stays pending."""
    clock, board = Clock(), Board(liveness=True)
    _asked(board, "f", "q1")

    def processes() -> list[Proc]:
        _asked(board, "g", "q2")  # (seen while the table is read: its pi may have started after)
        return []

    live = Liveness(True, 3.0, FailureLog(), processes=processes, clock=clock)
    live.schedule(0.0)
    gone = live.due(board, clock.now, clock.now)
    assert [(t.kind, t.question.tool_call_id) for t in gone] == [("abandoned", "q1")]
    assert [q.tool_call_id for _, q in board.snapshot(clock.now).pending] == ["q2"]


class Boom(BaseException):
    """Not an Exception: what an ``except Exception`` would let through."""


class Flaky:
    """A part's work that fails ``times`` times (the second time with a BaseException), then stops."""

    def __init__(self, times: int, stop: threading.Event) -> None:
        self.times, self.stop = times, stop
        self.runs = self.recovered = 0

    def run(self) -> None:
        self.runs += 1
        if self.runs <= self.times:
            raise (Boom if self.runs == 2 else RuntimeError)(f"boom {self.runs}")
        self.stop.set()

    def recover(self) -> None:
        self.recovered += 1


def test_a_failing_part_runs_again_with_its_failures_recorded(caplog: pytest.LogCaptureFixture) -> None:
    stop = threading.Event()
    sup = Supervisor("notifier", stop)
    target = Flaky(times=3, stop=stop)
    sup.run(target.run, target.recover)
    assert target.runs == 4 and target.recovered == 3 and sup.restarts == 3 and sup.failed is None
    report = sup.health.report()["notifier"]
    assert report["count"] == 3 and report["recovered"] and "boom 3" in report["error"]
    assert report["doing"] == "restarted 3×"
    # said with its traceback once per kind of failure (RuntimeError, Boom), in one line after
    traced = [r for r in caplog.records if r.exc_info]
    assert [r.exc_info[0] for r in traced if r.exc_info] == [RuntimeError, Boom]
    assert any("the notifier failed again (boom 3)" in r.getMessage() for r in caplog.records)


def test_stopping_during_the_back_off_ends_the_supervisor() -> None:
    stop = threading.Event()
    sup = Supervisor("engine", stop)
    target = Flaky(times=5, stop=stop)
    sup.run(target.run, stop.set)  # stopped while waiting to run again
    assert target.runs == 1 and sup.restarts == 0 and isinstance(sup.failed, RuntimeError)
    assert not sup.health.report()["engine"].get("recovered")


class Watches:
    def __init__(self, missing: list[str], refused: bool) -> None:
        self.missing, self.refused = missing, refused

    def unwatched(self, root: str, dirs: list[str]) -> list[str]:
        return [d for d in dirs if d in self.missing]

    def limit_reached(self, missing: list[str]) -> bool:
        return self.refused


def test_folders_past_the_watch_limit_are_polled_and_said_once(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    root = tmp_path / "sessions"
    (root / "--a--").mkdir(parents=True)
    (root / "--b--").mkdir()
    (root / "--a--" / "s.jsonl").write_bytes(b"")
    (root / "--a--" / "notes.txt").write_bytes(b"")
    (root / "--b--" / "t.jsonl").write_bytes(b"")
    limit = WatchLimit([str(root)])
    watches = Watches([str(root / "--a--")], refused=True)
    limit.appeared(str(root / "--a--"))
    limit.appeared(str(root / "--b--"))
    limit.appeared(str(tmp_path / "elsewhere"))  # (in no root: nothing to check)
    checked: list[str] = []

    class Counting(Watches):
        def unwatched(self, root: str, dirs: list[str]) -> list[str]:
            checked.append(root)
            return super().unwatched(root, dirs)

    counting = Counting(watches.missing, refused=True)
    limit.check_appeared(counting)
    assert checked == [str(root)]  # (two folders appeared: their root looked at once)
    limit.check_appeared(counting)
    assert checked == [str(root)]  # (nothing appeared since)
    limit.check(str(root), watches)
    assert len([r for r in caplog.records if "watch limit" in r.getMessage()]) == 1
    assert limit.next_poll is not None
    assert limit.due(limit.next_poll - 0.5) == []
    due = limit.next_poll
    assert limit.due(due) == [str(root / "--a--" / "s.jsonl")]
    assert limit.next_poll is not None and limit.next_poll > due
    limit.check(str(root), Watches([str(root / "--a--")], refused=False))  # only being added: no limit
    assert limit.due(limit.next_poll) == [] and limit.next_poll is None


def test_folders_still_being_watched_are_looked_at_again_until_the_limit_shows(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """A burst of new folders: the look comes while watchdog still adds their watches (the
    limit not reached yet), and it reaches the limit after, with no event left to tell. The
    root is looked at again, and the limit said and polled; a folder nothing can watch for
    another reason is looked at again a few times only."""
    from notifier.watch import RECHECKS_S

    root = tmp_path / "sessions"
    (root / "--a--").mkdir(parents=True)
    limit = WatchLimit([str(root)])
    limit.appeared(str(root / "--a--"))
    limit.check_appeared(Watches([str(root / "--a--")], refused=False), mono=100.0)  # (being added)
    assert limit.next_check == 100.0 + RECHECKS_S[0] and limit.next_poll is None
    limit.check_appeared(Watches([str(root / "--a--")], refused=True), mono=100.0 + RECHECKS_S[0] / 2)
    assert not [r for r in caplog.records if "watch limit" in r.getMessage()]  # (not due yet)
    limit.check_appeared(Watches([str(root / "--a--")], refused=True), mono=limit.next_check)
    assert len([r for r in caplog.records if "watch limit" in r.getMessage()]) == 1
    assert limit.next_poll is not None and limit.next_check is None
    # never the limit: looked at again len(RECHECKS_S) times, then left
    other = WatchLimit([str(root)])
    other.appeared(str(root / "--a--"))
    mono, looks = 0.0, 0
    other.check_appeared(Watches([str(root / "--a--")], refused=False), mono=mono)
    while other.next_check is not None:
        mono, looks = other.next_check, looks + 1
        other.check_appeared(Watches([str(root / "--a--")], refused=False), mono=mono)
    assert looks == len(RECHECKS_S) and other.next_poll is None


def test_a_followed_file_tells_what_changed_and_what_waits(tmp_path: Path) -> None:
    f = tmp_path / "s.jsonl"
    append(f, header("/p"), user(), ask("q1", "First?"))
    followed = OneFileReader(str(f), QuestionCatalog())
    view = followed.view()
    assert view is not None and [q.tool_call_id for q in view.pending] == ["q1"]
    assert followed.read() == []
    append(f, answer("q1"))
    (t,) = followed.read()
    assert t.kind == "resolved" and t.question.tool_call_id == "q1"
    view = followed.view()
    assert view is not None and view.pending == ()
    f.unlink()
    assert followed.read() == [] and followed.view() is None


def test_what_failed_is_handed_to_listeners_as_it_changes() -> None:
    """The tray is handed the health's lines when a part fails and when it runs again (it never
    asks for them while drawing)."""
    health, seen = FailureLog(), list[tuple[str, ...]]()
    health.listen(seen.append)
    assert seen == []  # (nothing failed: nothing to hand)
    health.failed("engine", RuntimeError("disk gone"), "restarted 1×")
    assert seen == [("engine failed once (RuntimeError: disk gone); restarted 1×",)]
    health.recovered("engine")
    health.failed("engine", RuntimeError("disk gone"), "restarted 2×")
    assert len(seen) == 3 and seen[-1] == health.lines() == ("engine failed 2× (RuntimeError: disk gone); restarted 2×",)
