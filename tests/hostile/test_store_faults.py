"""The state store's faults: another process holding its lock, a file that is not a database
(garbage, truncated), a file gone bad while running. No caller waits for the file; what the run
knew reaches the file as soon as it can be written; an unreadable file is set aside once."""

from __future__ import annotations

import logging
import os
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest

from notifier.core.model import Question, QuestionItem, SessionRef, Transition
from notifier.store import Store

from ..app_process import AppProcess
from ..conftest import wait_for
from ..writer import append, ask, header

LOCKER = """
import sqlite3, sys
db = sqlite3.connect(sys.argv[1], isolation_level=None)
db.execute("BEGIN EXCLUSIVE")
print("locked", flush=True)
sys.stdin.readline()  # held until the test says so
db.execute("COMMIT")
"""


def asked(n: int) -> Transition:
    q = Question(f"call-{n}", "question", (QuestionItem(f"question {n}?"),), 1_700_000_000.0 + n)
    return Transition("needs_input", SessionRef(f"/s/{n}.jsonl", None, "/p", None), q, 1_700_000_000.0 + n)


def file_rows(path: Path, sql: str) -> list[tuple[object, ...]]:
    db = sqlite3.connect(path, timeout=0.1)
    try:
        return db.execute(sql).fetchall()
    except sqlite3.OperationalError:
        return []  # (still locked)
    finally:
        db.close()


def test_a_locked_store_blocks_no_caller_and_is_written_once_free(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.WARNING, "notifier.store")
    path = tmp_path / "state.sqlite3"
    store = Store(str(path), write_wait_s=1.0)
    store.mark_notified([("/s/before.jsonl", "c0")], now=1.0)
    assert store.flush()
    locker = subprocess.Popen(
        [sys.executable, "-c", LOCKER, str(path)], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True
    )
    try:
        assert locker.stdout is not None and locker.stdout.readline().strip() == "locked"
        slowest = 0.0
        for n in range(1, 41):  # what the engine (history) and the notifier (notified) write
            began = time.monotonic()
            store.record([asked(n)])
            store.mark_notified([(f"/s/{n}.jsonl", f"call-{n}")], now=2.0)
            slowest = max(slowest, time.monotonic() - began)
        assert slowest < 0.5, f"a write waited {slowest:.3f} s for the lock (the busy wait is 1 s)"
        assert ("/s/40.jsonl", "call-40") in store.notified()  # read back at once, from memory
        wait_for(
            lambda: "keeping state in memory" in caplog.text, 10, "the store to say it keeps state in memory"
        )
        assert store.unwritten > 0
    finally:
        assert locker.stdin is not None
        locker.stdin.write("\n")
        locker.stdin.close()
        locker.wait(10)
    # free again: what was kept is written without any new write asking for it
    wait_for(lambda: len(file_rows(path, "SELECT * FROM notified")) == 41, 10, "the kept rows in the file")
    wait_for(lambda: "can be written again" in caplog.text, 5, "the store to say it writes again")
    assert len(file_rows(path, "SELECT * FROM history")) == 40
    assert caplog.text.count("keeping state in memory") == 1
    assert "survive a restart" not in caplog.text
    store.close()
    again = Store(str(path))  # the next start knows every question notified during the lock
    assert len(again.notified()) == 41
    again.close()


@pytest.mark.parametrize("damage", ["garbage", "truncated", "empty header"])
def test_an_unreadable_store_is_set_aside_once_and_a_fresh_one_made(
    tmp_path: Path, caplog: pytest.LogCaptureFixture, damage: str
) -> None:
    caplog.set_level(logging.WARNING, "notifier.store")
    path = tmp_path / "state.sqlite3"
    store = Store(str(path))
    for n in range(300):
        store.record([asked(n)])
        store.mark_notified([(f"/s/{n}.jsonl", f"call-{n}")], now=1.0)
    store.close()
    size = path.stat().st_size
    if damage == "garbage":
        path.write_bytes(os.urandom(size))
    elif damage == "truncated":
        with open(path, "r+b") as f:
            f.truncate(size // 3)
    else:
        path.write_bytes(b"SQLite format 3\x00" + b"\xff" * 84)
    damaged = path.read_bytes()
    store = Store(str(path))
    store.mark_notified([("/s/new.jsonl", "c")], now=2.0)
    store.record([asked(1000)])
    store.close()
    aside = [
        p
        for p in tmp_path.iterdir()
        if p.name.startswith("state.sqlite3.corrupt-") and not p.name.endswith("-wal")
    ]
    assert len(aside) == 1 and aside[0].read_bytes() == damaged  # kept for the user, as it was
    assert caplog.text.count("set it aside") == 1
    assert "survive a restart" not in caplog.text
    caplog.clear()
    again = Store(str(path))  # the next start: the fresh file, nothing said
    assert ("/s/new.jsonl", "c") in again.notified() and again.persistent
    assert [row["call_id"] for row in again.history()] == ["call-1000"]
    again.close()
    assert caplog.text == ""


def test_a_store_gone_bad_while_running_is_replaced_with_what_the_run_knew(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.WARNING, "notifier.store")
    path = tmp_path / "state.sqlite3"
    store = Store(str(path))
    store.mark_notified([("/s/a.jsonl", "c1")], now=1.0)
    store.mute("shop", True)
    assert store.flush()
    other = sqlite3.connect(path)
    other.execute("PRAGMA wal_checkpoint(TRUNCATE)")  # (else SQLite would read the pages from the WAL)
    other.close()
    garbage = tmp_path / "garbage"
    garbage.write_bytes(os.urandom(8192))
    os.replace(garbage, path)  # another program put something else in its place
    store.mark_notified([("/s/b.jsonl", "c2")], now=2.0)
    assert store.flush(10)
    assert caplog.text.count("set it aside") == 1 and "was replaced while running" in caplog.text
    store.close()
    again = Store(str(path))
    assert again.notified() == {("/s/a.jsonl", "c1"), ("/s/b.jsonl", "c2")} and again.silences(0.0).muted == {"shop"}
    again.close()


def state_file() -> Path:
    return Path(os.environ["XDG_STATE_HOME"]) / "pi-notifier" / "state.sqlite3"


def app_on(sessions: Path) -> AppProcess:
    return AppProcess(
        "run", "--json", "--no-tray", "--no-notify", "--liveness", "off", "--sessions-dir", str(sessions)
    )


def test_the_app_under_a_locked_store_reports_at_once_and_writes_history_after(tmp_path: Path) -> None:
    sessions = tmp_path / "sessions"
    f = sessions / "--home-dev-shop--" / "s.jsonl"
    append(f, header("/home/dev/shop"))
    with app_on(sessions) as app:
        app.wait("ready")
        wait_for(lambda: file_rows(state_file(), "SELECT count(*) FROM history") == [(0,)], 10, "the store")
        locker = subprocess.Popen(
            [sys.executable, "-c", LOCKER, str(state_file())],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
        )
        try:
            assert locker.stdout is not None and locker.stdout.readline().strip() == "locked"
            for n in range(3):
                began = time.monotonic()
                append(f, ask(f"q{n}", f"Locked {n}?"))
                app.wait("needs_input", n + 1)
                took = time.monotonic() - began
                assert took < 1.0, f"reported after {took:.2f} s with the store locked (5.5 s before)"
        finally:
            assert locker.stdin is not None
            locker.stdin.write("\n")
            locker.stdin.close()
            locker.wait(10)
        wait_for(
            lambda: file_rows(state_file(), "SELECT count(*) FROM history") == [(3,)], 20, "the history rows"
        )
    assert not any("survive a restart" in line or "carrying on in memory" in line for line in app.stderr)


def test_the_app_sets_a_corrupt_store_aside_once(tmp_path: Path) -> None:
    sessions = tmp_path / "sessions"
    sessions.mkdir()
    state_file().parent.mkdir(parents=True, mode=0o700)
    state_file().write_bytes(b"this is not a database\n" * 100)
    state_file().chmod(0o600)
    with app_on(sessions) as app:
        app.wait("ready")
        app.log_has("set it aside", 10)
    with app_on(sessions) as again:
        again.wait("ready")
    for run in (app, again):
        assert not any("survive a restart" in line for line in run.stderr)
    assert not any("set it aside" in line for line in again.stderr)
    assert len(list(state_file().parent.glob("state.sqlite3.corrupt-*"))) == 1


def test_a_full_store_keeps_changes_in_memory_until_there_is_room(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """SQLite's own "database or disk is full" (SQLITE_FULL, what a full disk gives), made by
    capping the file's pages on the store's connection."""
    caplog.set_level(logging.WARNING, "notifier.store")
    path = tmp_path / "state.sqlite3"
    store = Store(str(path))
    store.mark_notified([("/s/0.jsonl", "c0")], now=1.0)
    assert store.flush()
    with store._file_lock:
        assert store._file is not None
        pages = store._file.execute("PRAGMA page_count").fetchone()[0]
        store._file.execute(f"PRAGMA max_page_count = {pages}")
    big = "x" * 3000
    for n in range(1, 200):
        store.record([asked(n)])
        store.mark_notified([(f"/s/{n}.jsonl", big)], now=2.0)
    wait_for(lambda: "disk is full" in caplog.text, 10, "the store to say the file is full")
    assert len(store.notified()) == 200  # all of it known, in memory
    with store._file_lock:
        assert store._file is not None
        store._file.execute("PRAGMA max_page_count = 1073741823")  # room again
    assert store.flush(20)
    assert "can be written again" in caplog.text and caplog.text.count("keeping state in memory") == 1
    store.close()
    again = Store(str(path))
    assert len(again.notified()) == 200 and len(again.history()) == 199
    again.close()


def test_a_store_that_cannot_write_retries_later_each_time_however_long_it_has_run(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The store's retries use the one back-off: each failed retry waits longer (to its most),
    also for a store made an hour ago (a back-off that a long run starts over would retry every
    0.25 s for as long as the file stays locked), and a success starts it over."""
    import threading
    import types

    from notifier.system import supervisor

    waits: list[float] = []
    retries: list[threading.Timer] = []

    class Recorded(threading.Timer):  # the retry's timer: its wait recorded, fired by the test
        def start(self) -> None:
            waits.append(self.interval)
            retries.append(self)

    monkeypatch.setattr("notifier.store.threading.Timer", Recorded)
    path = tmp_path / "state.sqlite3"
    store = Store(str(path), write_wait_s=0.01)
    store.mark_notified([("/s/a.jsonl", "c0")], now=1.0)
    assert store.flush()
    later = time.monotonic() + 3600.0  # the store was made an hour ago
    monkeypatch.setattr(supervisor, "time", types.SimpleNamespace(monotonic=lambda: later))
    locker = sqlite3.connect(path, isolation_level=None)
    locker.execute("BEGIN EXCLUSIVE")
    try:
        store.mark_notified([("/s/b.jsonl", "c1")], now=2.0)  # cannot be written: retried later
        wait_for(lambda: len(waits) == 1, 5, "the first retry set")
        for n in range(2, 7):
            retries[-1].function()  # (the timer fires: the file is still locked)
            assert len(waits) == n
        assert waits == [0.25, 0.5, 1.0, 2.0, 4.0, 5.0]
    finally:
        locker.execute("COMMIT")
        locker.close()
    retries[-1].function()  # written now
    assert ("/s/b.jsonl", "c1") in {(f, c) for f, c in file_rows(path, "SELECT file, call_id FROM notified")}
    locker = sqlite3.connect(path, isolation_level=None)
    locker.execute("BEGIN EXCLUSIVE")
    try:
        store.mark_notified([("/s/c.jsonl", "c2")], now=3.0)
        wait_for(lambda: len(waits) == 7, 5, "a retry after the next failure")
        assert waits[-1] == 0.25  # (started over by the success)
    finally:
        locker.execute("COMMIT")
        locker.close()
    store.close()
