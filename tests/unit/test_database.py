"""The SQLite database under the state store (notifier.store), written by the thread that changes it, on a small
schema of its own: what the hostile store tests do not reach (a lock held at start, a file gone
bad in place while running, a queue that outgrows its bound)."""

from __future__ import annotations

import logging
import sqlite3
from pathlib import Path

import pytest

from notifier import store
from notifier.store import Database

from ..conftest import wait_for

SCHEMA = """
CREATE TABLE IF NOT EXISTS seen (key TEXT PRIMARY KEY);
CREATE TABLE IF NOT EXISTS log (n INTEGER PRIMARY KEY);
"""


def opened(path: Path, write_wait_s: float = store.WRITE_WAIT_S) -> Database:
    return Database(str(path), SCHEMA, ("seen",), write_wait_s=write_wait_s)


def seen(db: Database) -> set[str]:
    return {k for (k,) in db._read("SELECT key FROM seen")}


def file_rows(path: Path, sql: str) -> list[tuple[object, ...]]:
    con = sqlite3.connect(path)
    try:
        return con.execute(sql).fetchall()
    finally:
        con.close()


def test_a_file_locked_at_start_is_read_in_and_written_once_free(
    tmp_path: Path, caplog: pytest.LogCaptureFixture, monkeypatch: pytest.MonkeyPatch
) -> None:
    caplog.set_level(logging.WARNING, "notifier.store")
    monkeypatch.setattr(store, "OPEN_WAIT_S", 0.05)
    path = tmp_path / "state.sqlite3"
    first = opened(path)
    first._run("seen", "INSERT INTO seen VALUES (?)", ("from the last run",))
    first.close()
    locker = sqlite3.connect(path, isolation_level=None)
    locker.execute("PRAGMA journal_mode=DELETE")  # (so that the lock keeps readers out too)
    locker.execute("BEGIN EXCLUSIVE")
    db = opened(path, write_wait_s=0.05)
    assert not db.persistent and seen(db) == set()  # the file could not be read: memory only
    db._run("seen", "INSERT INTO seen VALUES (?)", ("from this run",))
    db._run("log", "INSERT INTO log VALUES (?)", (1,))
    assert "keeping state in memory" in caplog.text
    locker.execute("COMMIT")
    locker.close()
    assert db.flush(10)
    assert db.persistent and seen(db) == {"from the last run", "from this run"}  # the file read in
    assert file_rows(path, "SELECT key FROM seen ORDER BY key") == [("from the last run",), ("from this run",)]
    assert file_rows(path, "SELECT n FROM log") == [(1,)]
    assert caplog.text.count("keeping state in memory") == 1 and "can be written again" in caplog.text
    db.close()


def test_a_file_gone_bad_in_place_is_set_aside_and_gets_the_copy(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """Only the pages of a table not kept are damaged: the file still opens, and fails when written."""
    caplog.set_level(logging.WARNING, "notifier.store")
    path = tmp_path / "state.sqlite3"
    db = opened(path)
    for n in range(50):
        db._run("seen", "INSERT INTO seen VALUES (?)", (f"key {n}",))
        db._run("log", "INSERT INTO log VALUES (?)", (n,))
    assert db.flush()
    other = sqlite3.connect(path)
    other.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    page_size = other.execute("PRAGMA page_size").fetchone()[0]
    (root,) = other.execute("SELECT rootpage FROM sqlite_master WHERE name = 'log'").fetchone()
    other.close()
    inode = path.stat().st_ino
    with open(path, "r+b") as f:  # the same file (no new inode), the log's page overwritten
        f.seek(page_size * (root - 1))
        f.write(b"\xff" * page_size)
    db._run("log", "INSERT INTO log VALUES (?)", (1000,))
    db._run("seen", "INSERT INTO seen VALUES (?)", ("after",))
    assert db.flush(10)
    assert path.stat().st_ino != inode and caplog.text.count("set it aside") == 1
    assert len(list(tmp_path.glob("state.sqlite3.corrupt-*"))) >= 1
    assert len(file_rows(path, "SELECT key FROM seen")) == 51  # everything the run kept
    assert file_rows(path, "SELECT n FROM log") == [(1000,)]
    db.close()


def test_changes_beyond_the_bound_keep_the_kept_tables_and_drop_the_oldest_others(
    tmp_path: Path, caplog: pytest.LogCaptureFixture, monkeypatch: pytest.MonkeyPatch
) -> None:
    caplog.set_level(logging.WARNING, "notifier.store")
    monkeypatch.setattr(store, "MAX_PENDING", 10)
    path = tmp_path / "state.sqlite3"
    db = opened(path, write_wait_s=0.05)
    locker = sqlite3.connect(path, isolation_level=None)
    locker.execute("BEGIN IMMEDIATE")  # no writer but this one
    for n in range(30):
        db._run("seen", "INSERT INTO seen VALUES (?)", (f"key {n}",))
        db._run("log", "INSERT INTO log VALUES (?)", (n,))
    wait_for(lambda: db.unwritten <= 5, 10, "the queue to be cut to its bound")
    assert "dropping the oldest history" in caplog.text
    locker.execute("COMMIT")
    locker.close()
    assert db.flush(10)
    assert len(file_rows(path, "SELECT key FROM seen")) == 30  # written whole from memory
    assert file_rows(path, "SELECT n FROM log ORDER BY n") == [(n,) for n in range(25, 30)]  # the newest
    db.close()


def test_commit_puts_a_change_in_the_file_at_once_and_leaves_it_waiting_under_a_lock(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """commit() writes what waits in the caller's thread: another connection reads it the moment
    it returns (a process killed then loses nothing). Under another process's lock it gives up
    within its wait, nothing lost: it is written once the lock is gone (one fault policy)."""
    import time

    caplog.set_level(logging.WARNING, "notifier.store")
    path = tmp_path / "state.sqlite3"
    db = opened(path)
    for n in range(20):  # (written by the change itself already: commit says it is in the file)
        db._run("seen", "INSERT INTO seen VALUES (?)", (f"now {n}",))
        assert db.commit()
        assert file_rows(path, f"SELECT key FROM seen WHERE key = 'now {n}'") == [(f"now {n}",)]
    locker = sqlite3.connect(path, isolation_level=None)
    locker.execute("BEGIN IMMEDIATE")  # (another process writing: readers go on, writers wait)
    db._run("seen", "INSERT INTO seen VALUES (?)", ("later",))
    started = time.monotonic()
    assert not db.commit(0.2)
    assert time.monotonic() - started < 3  # (bounded: not the writer's 5 s busy timeout)
    assert "later" in seen(db) and db.unwritten > 0  # (in memory, waiting for the file)
    locker.execute("COMMIT")
    locker.close()
    assert db.flush(10)
    assert file_rows(path, "SELECT key FROM seen WHERE key = 'later'") == [("later",)]
    db.close()


def test_a_change_is_in_the_file_when_the_call_returns_and_no_thread_waits(tmp_path: Path) -> None:
    """No writer thread: the thread that changes the store writes it (one WAL commit), so
    another connection reads it the moment the call returns; a retry's timer exists only while
    the file cannot be written."""
    import threading

    path = tmp_path / "state.sqlite3"
    before = set(threading.enumerate())
    db = opened(path)
    for n in range(5):
        db._run("log", "INSERT INTO log VALUES (?)", (n,))
        assert file_rows(path, f"SELECT n FROM log WHERE n = {n}") == [(n,)]
    assert db.unwritten == 0
    assert set(threading.enumerate()) - before == set()
    db.close()


def test_changes_made_together_reach_the_file_in_one_transaction(tmp_path: Path) -> None:
    """What a thread changes inside ``together()`` is read at once from memory, and reaches the
    file when it ends, all of it (a process killed inside leaves none of it); what another
    thread writes meanwhile does not take it along half made."""
    import threading

    path = tmp_path / "state.sqlite3"
    db = opened(path)
    with db.together():
        db._run("seen", "INSERT INTO seen VALUES (?)", ("first",))
        other = threading.Thread(target=db._run, args=("log", "INSERT INTO log VALUES (?)", (7,)))
        other.start()
        other.join()
        assert file_rows(path, "SELECT n FROM log") == [(7,)]  # (the other thread's own change)
        db._run("seen", "INSERT INTO seen VALUES (?)", ("second",))
        assert seen(db) == {"first", "second"} and file_rows(path, "SELECT key FROM seen") == []
    assert sorted(file_rows(path, "SELECT key FROM seen")) == [("first",), ("second",)]
    db.close()
