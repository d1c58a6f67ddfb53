"""A SQLite database no caller waits for: its ``kept`` tables copied in memory, read and changed at
once, and its file, written by a thread of its own in one transaction per batch of changes (the
other tables, a history, are only written, and read from the file).

The file's faults are said once each way and lose nothing the run knew. While it cannot be written
(another process holds its lock, the disk is full, the folder may not be written) the changes wait
in memory and the writer keeps trying. A file deleted (with its folder) or replaced is made again;
one that is not a database any more (corrupt, truncated) is set aside, kept for the user, and a
fresh one made. Each time the writer opens the file it reads the file's rows into the copy (what a
lock hid at start), then writes the copy back whole."""

from __future__ import annotations

import contextlib
import logging
import os
import sqlite3
import threading
import time
from collections.abc import Iterable
from typing import Any

from notifier.core.text import clean
from notifier.state.sqltext import from_db, to_db
from notifier.system.paths import private_file

log = logging.getLogger(__name__)

OPEN_WAIT_S = 1.0  # at open: how long another process's lock is waited for before going on in memory
WRITE_WAIT_S = 5.0  # the writer thread: SQLite's busy timeout (it gets the lock once it is free)
RETRY_MIN_S, RETRY_MAX_S = 0.25, 5.0  # the writer's pause after a failed write, doubling
MAX_PENDING = 50_000  # changes waiting for the file; beyond this the oldest unkept ones are dropped

Row = tuple[Any, ...]
GONE = {
    "deleted": "the state store %s was deleted while running; recreated it with what this run knew",
    "replaced": "the state store %s was replaced while running; wrote what this run knew into it",
}


def _corrupt(exc: BaseException) -> bool:
    """The file is not a (sound) database: it cannot be used again as it is."""
    if not isinstance(exc, sqlite3.Error):
        return False
    if name := getattr(exc, "sqlite_errorname", ""):  # (Python 3.11+)
        return bool(name.startswith(("SQLITE_CORRUPT", "SQLITE_NOTADB")))
    return "malformed" in str(exc) or "not a database" in str(exc)


def _rows(cursor: sqlite3.Cursor) -> list[Row]:
    return [tuple(from_db(v) for v in row) for row in cursor.fetchall()]


def _copy_rows(db: sqlite3.Connection, table: str, rows: list[Row]) -> None:
    if rows:
        marks = ",".join("?" * len(rows[0]))
        db.executemany(f"INSERT OR IGNORE INTO {table} VALUES ({marks})", rows)  # noqa: S608


def _set_aside(path: str, exc: BaseException) -> None:
    """Keep the unusable file for the user under another name (with its -wal, which holds its last
    changes), never over one set aside before; a fresh one takes its place."""
    stamp = time.strftime("%Y%m%dT%H%M%S", time.gmtime())
    aside, n = f"{path}.corrupt-{stamp}", 1
    while os.path.lexists(aside):
        n += 1
        aside = f"{path}.corrupt-{stamp}-{n}"
    os.replace(path, aside)
    with contextlib.suppress(FileNotFoundError):
        os.replace(path + "-wal", aside + "-wal")
    with contextlib.suppress(FileNotFoundError):
        os.unlink(path + "-shm")
    log.warning("the state store %s could not be read (%s); set it aside as %s and started a fresh one",
                clean(path), clean(exc, 200), clean(os.path.basename(aside)))


class Database:
    """``schema``: the tables (``CREATE ... IF NOT EXISTS``); ``added``: ``(table, column
    definition)`` of columns newer than some files; ``kept``: the tables copied in memory.
    ``path`` None: memory only, for this run. ``write_wait_s``: how long the writer waits for
    another process's lock before it says the file cannot be written (it then keeps trying)."""

    def __init__(self, path: str | None, schema: str, kept: tuple[str, ...],
                 added: tuple[tuple[str, str], ...] = (), write_wait_s: float = WRITE_WAIT_S) -> None:
        self.path = path
        self.schema, self.kept, self.added, self.write_wait_s = schema, kept, added, write_wait_s
        self.persistent = False  # a file holds the state (else: memory only, for this run)
        self._lock = threading.Condition()  # the memory copy, the queue of changes and the flags
        self._file_lock = threading.Lock()  # the file's connection
        self._memory = sqlite3.connect(":memory:", check_same_thread=False, isolation_level=None)
        self._memory.executescript(schema)
        self._file: sqlite3.Connection | None = None
        self._ident: tuple[int, int] | None = None  # (device, inode) of the file opened
        self._pending: list[tuple[str, str, Row]] = []  # (table, sql, arguments) for the file
        self._resync = False  # the file must get the kept tables whole from memory
        self._failing = self._closed = False
        if path is None:
            return
        try:
            with self._file_lock:
                self._open(OPEN_WAIT_S)
        except (OSError, sqlite3.Error) as exc:  # locked, a full disk, a folder we may not write
            self._fail(str(exc))  # (the writer opens it once it can)
        threading.Thread(target=self._write_loop, name="pi-notifier-store", daemon=True).start()

    # ---- reading and changing (any thread, never waiting for the file) ----

    def _read(self, sql: str, args: Iterable[Any] = ()) -> list[Row]:
        """Rows of the memory copy."""
        with self._lock:
            return _rows(self._memory.execute(sql, tuple(to_db(a) for a in args)))

    def _query(self, sql: str, args: Iterable[Any] = ()) -> list[Row]:
        """Rows of the file once what waits is written (up to 2 s), or of memory without a file;
        none while the file cannot be read."""
        if self.path is None:
            return self._read(sql, args)
        self.flush(2.0)
        with self._file_lock:
            try:
                return _rows(self._file.execute(sql, tuple(to_db(a) for a in args))) if self._file else []
            except sqlite3.Error as exc:
                log.warning("cannot read the state store %s (%s)", clean(self.path), clean(exc, 200))
                return []

    def _run(self, table: str, sql: str, args: Iterable[Any] = ()) -> None:
        """Apply a change: to the memory copy at once (kept tables), to the file by the writer."""
        values = tuple(to_db(a) for a in args)  # any str, also names that are not UTF-8
        with self._lock:
            if table in self.kept or self.path is None:
                try:
                    self._memory.execute(sql, values)
                except sqlite3.Error as exc:  # (memory: a bug, not a fault of the disk)
                    log.warning("the state store refused a change (%s)", exc)
                    return
            if self.path is not None:
                self._pending.append((table, sql, values))
                self._lock.notify_all()

    @property
    def unwritten(self) -> int:
        """Changes still waiting for the file."""
        return len(self._pending)

    def flush(self, timeout: float = 5.0) -> bool:
        """Wait (at most ``timeout`` s) until every change is in the file: True if it is."""
        deadline = time.monotonic() + timeout
        with self._lock:
            while self._due():
                left = deadline - time.monotonic()
                if left <= 0 or self._closed:
                    return False
                self._lock.wait(left)
        return True

    def close(self, timeout: float = -1) -> None:
        """Write what waits and close the file; with a ``timeout``, give up after that many
        seconds (a write stuck on another process's lock, a full disk) and say what is lost."""
        if self.path is not None:
            with self._lock:  # deleted since the last write: keep what it knew for next time
                self._resync = self._resync or self._gone() is not None
                self._lock.notify_all()
            written = self.flush(10.0 if timeout < 0 else timeout)
            with self._lock:
                self._closed = True
                self._lock.notify_all()
                left = len(self._pending)
            if not written:
                log.warning("the state store %s could not be written before quitting: %d changes lost",
                            clean(self.path), left)
        if self._file_lock.acquire(timeout=0.5):  # (not while a write is stuck on a lock)
            self._close_file()
            self._file_lock.release()

    # ---- the file (the writer thread; at start, ``__init__``) ----

    def _due(self) -> bool:  # changes wait for the file (lock held)
        return bool(self._pending) or self._resync

    def _write_loop(self) -> None:
        delay = RETRY_MIN_S
        while True:
            with self._lock:
                while not (self._closed or self._due() or self._file is None):  # (None: to be read in)
                    self._lock.wait()
                if self._closed and not self._due():
                    return  # closed, and everything written
            if self._write():
                delay = RETRY_MIN_S
                continue
            with self._lock:
                if self._closed:
                    return  # close() gave up waiting: what is left stays unwritten
                self._shed()
                self._lock.wait(delay)
            delay = min(delay * 2, RETRY_MAX_S)

    def _write(self) -> bool:
        """Write what waits to the file in one transaction: True if it was written."""
        assert self.path is not None
        with self._file_lock:
            try:
                if gone := self._gone():
                    self._close_file()
                if self._file is None:  # (at start it could not be opened, or it went bad or away)
                    self._open(self.write_wait_s)
                    with self._lock:
                        self._resync = True
                    if gone:
                        log.warning(GONE[gone], clean(self.path))
                with self._lock:
                    batch, resync = list(self._pending), self._resync
                    kept = {t: self._memory.execute(f"SELECT * FROM {t}").fetchall() for t in self.kept if resync}  # noqa: S608
                db = self._file
                assert db is not None
                db.execute("BEGIN IMMEDIATE")
                with db:  # (committed, or rolled back on an error)
                    for table, rows in kept.items():
                        db.execute(f"DELETE FROM {table}")  # noqa: S608
                        _copy_rows(db, table, rows)
                    for table, sql, args in batch:
                        if not (resync and table in self.kept):  # (else in the copy already)
                            db.execute(sql, args)
            except (OSError, sqlite3.Error) as exc:
                if _corrupt(exc) and self._file is not None:  # gone bad while running: set aside, and
                    self._close_file()  # the next try makes a fresh one and writes the copy into it
                    with contextlib.suppress(OSError):
                        _set_aside(self.path, exc)
                self._fail(str(exc))
                return False
        if self._failing:  # (said before flush() can return)
            self._failing = False
            log.warning("the state store %s can be written again: %d kept changes written",
                        clean(self.path), len(batch))
        with self._lock:
            del self._pending[: len(batch)]
            self._resync = self._resync and not resync
            self._lock.notify_all()
        return True

    def _open(self, wait_s: float, fresh: bool = False) -> None:
        """Open the file (a fresh one in place of one that is not a database) and read its kept
        rows into the memory copy. File lock held."""
        assert self.path is not None
        private_file(self.path)  # 0600 in a 0700 folder; SQLite's side files inherit the mode
        db = sqlite3.connect(self.path, timeout=wait_s, check_same_thread=False, isolation_level=None)
        try:
            db.execute("PRAGMA journal_mode=WAL")
            db.execute("PRAGMA synchronous=NORMAL")
            db.executescript(self.schema)
            for table, column in self.added:
                if column.split()[0] not in {row[1] for row in db.execute(f"PRAGMA table_info({table})")}:
                    db.execute(f"ALTER TABLE {table} ADD COLUMN {column}")
            # (read here: a truncated file may open and fail only when read)
            rows = {t: db.execute(f"SELECT * FROM {t}").fetchall() for t in self.kept}  # noqa: S608
        except BaseException as exc:
            db.close()
            if fresh or not _corrupt(exc):
                raise
            _set_aside(self.path, exc)
            return self._open(wait_s, fresh=True)
        with self._lock:
            for table, found in rows.items():  # what the file knew, and what this run added
                _copy_rows(self._memory, table, found)
        st = os.stat(self.path)
        self._ident, self._file, self.persistent = (st.st_dev, st.st_ino), db, True

    def _gone(self) -> str | None:
        """'deleted' or 'replaced': the file open is no longer the one at ``path``."""
        if self._file is None or self.path is None:
            return None
        try:
            st = os.stat(self.path)
        except FileNotFoundError:
            return "deleted"
        except OSError:
            return None
        return None if (st.st_dev, st.st_ino) == self._ident else "replaced"

    def _close_file(self) -> None:
        if self._file is not None:
            self._file.close()
            self._file = None

    def _fail(self, why: str) -> None:
        if not self._failing:
            log.warning("cannot write the state store %s (%s); keeping state in memory and writing it there"
                        " once it can be written", clean(self.path or ""), clean(why, 200))
        self._failing = True

    def _shed(self) -> None:
        """Too many changes wait for the file: the kept tables will be written whole from memory
        instead, and the oldest other changes go. Lock held."""
        if len(self._pending) > MAX_PENDING:
            self._resync = True
            self._pending = [c for c in self._pending if c[0] not in self.kept]
            if len(self._pending) > MAX_PENDING // 2:  # (said once per MAX_PENDING // 2 dropped)
                log.warning("the state store %s has been unusable too long; dropping the oldest history",
                            clean(self.path or ""))
                del self._pending[: -MAX_PENDING // 2]
