"""What the app remembers across runs, in one SQLite file in the per-OS state folder (the one way
anything here reads or writes it): which questions were already notified (and how often
reminded) and pushed, the notifications on screen, snoozes and mutes, and the question history.

One connection, one lock, WAL: a change is written on the thread that makes it, at once (one
WAL commit, ~0.06 ms), never waiting for another process's lock; its ``kept`` tables are also
copied in memory, read at once (the other table, the history, is only written, and read from the
file). So what is on screen, recorded around a Notify, is in the file before or with the call
(:meth:`Database.commit` says whether it is). ``status`` and ``snooze`` read the saved snoozes and
mutes without opening the store (:func:`saved_silences`: read only, nothing created).

One fault policy, for every SQLite file of the app (this store, and the scan cache of
:mod:`notifier.sessions`), all opened by :func:`connect`: a lock, a full disk, a folder that may
not be written are no damage (:func:`is_damage`) and discard nothing; a file that is not a
database any more is replaced by a fresh one, said once (:func:`replace_damaged`). For the
store: every fault of the file is said once each way and loses nothing the run knew: while it
cannot be written (another process holds its lock, the disk is full, the folder may not
be written) the changes wait in memory and are tried again after the one back-off (a timer,
only while the file cannot be written: no thread waits on a healthy store) and with the next
change; a file deleted (with its folder) or replaced is made again; one that is not a database
any more (corrupt, truncated) is set aside, kept for the user, and a fresh one made. Each time the
file is opened its rows are read into the copy (what a lock hid at start), then the copy is
written back whole. A read that fails answers nothing (no rows), said once until a read succeeds
again.

Any str is stored, also names that are not UTF-8: a file name with bytes that are not UTF-8 is a
str with lone surrogates (PEP 383), and so is a JSON ``"\\udXXX"`` escape. SQLite text must be
UTF-8: such a str is stored as a BLOB of its "surrogatepass" bytes instead, which reads back to
the very same str (:func:`to_db`, :func:`from_db`)."""

from __future__ import annotations

import contextlib
import logging
import math
import os
import sqlite3
import threading
import time
from collections.abc import Iterable, Iterator, Mapping
from typing import Any, Protocol

from notifier.core.codec import HISTORY_COLUMNS, history_entry, history_row, sane_time
from notifier.core.model import Option, Question, QuestionItem, Snapshot, Transition
from notifier.core.planner import Silences
from notifier.core.text import clean
from notifier.pi.parse import judge_result, parse_time
from notifier.system.log import LogOnce
from notifier.system.paths import private_file
from notifier.system.supervisor import Backoff
from notifier.tail import result_entry

log = logging.getLogger(__name__)
_once = LogOnce(log)  # (path, "read"): a read that fails, said once until one succeeds

FILE_NAME = "state.sqlite3"  # in the state folder


# ---- any str as SQLite text ----


def to_db(value: object) -> object:
    """A value for an SQL parameter: any str is accepted (see above)."""
    if isinstance(value, str) and not value.isascii():
        try:
            value.encode("utf-8")
        except UnicodeEncodeError:
            return value.encode("utf-8", "surrogatepass")
    return value


def from_db(value: object) -> object:
    """A column value back: BLOBs written by :func:`to_db` are str again."""
    if isinstance(value, bytes):
        return value.decode("utf-8", "surrogatepass")
    return value


OPEN_WAIT_S = 1.0  # at open: how long another process's lock is waited for before going on in memory
WRITE_WAIT_S = 5.0  # a retry (on its timer): SQLite's busy timeout (it gets the lock once it is free)
COMMIT_WAIT_S = 0.5  # a caller that must know it is written (commit): how long it waits for the file
READ_WAIT_S = 0.5  # a read on the engine's thread: how long another thread's write to the file is waited for
RETRY_MIN_S, RETRY_MAX_S = 0.25, 5.0  # the pause before retrying a failed write, doubling
MAX_PENDING = 50_000  # changes waiting for the file; beyond this the oldest unkept ones are dropped

Row = tuple[Any, ...]
GONE = {
    "deleted": "the state store %s was deleted while running; recreated it with what this run knew",
    "replaced": "the state store %s was replaced while running; wrote what this run knew into it",
}


def is_damage(exc: BaseException) -> bool:
    """The fault of a file that is not a (sound) database: it cannot be used again as it is.
    Anything else (another process's lock, a full disk, a folder we may not write) is no damage:
    nothing is discarded for it."""
    if not isinstance(exc, sqlite3.Error):
        return False
    if name := getattr(exc, "sqlite_errorname", ""):  # (Python 3.11+)
        return bool(name.startswith(("SQLITE_CORRUPT", "SQLITE_NOTADB")))
    return "malformed" in str(exc) or "not a database" in str(exc)


def connect(path: str, wait_s: float, read_only: bool = False) -> sqlite3.Connection:
    """Open one of the app's SQLite files (the state store, the scan cache): the one way any is
    opened. Private (0600 in a 0700 folder; SQLite's side files inherit the mode), autocommit
    (each transaction is said), for any thread (each use under its owner's lock); ``wait_s``:
    how long another process's lock is waited for. ``read_only``: nothing is created or changed."""
    if not read_only:
        private_file(path)
    target = f"file:{path}?mode=ro" if read_only else path
    return sqlite3.connect(target, uri=read_only, timeout=wait_s, check_same_thread=False, isolation_level=None)


def replace_damaged(path: str, why: str, what: str = "the state store", keep: bool = True) -> None:
    """A file that is damage (:func:`is_damage`, or holds what this program never writes) goes out
    of the way for a fresh one, said in one line. ``keep``: set aside for the user under another
    name (with its -wal, which holds its last changes), never over one set aside before; else
    deleted (a cache: what it holds is read again from the files it summarises)."""
    if not keep:
        for suffix in ("", "-journal", "-wal", "-shm"):
            with contextlib.suppress(OSError):
                os.unlink(path + suffix)
        log.warning("%s %s could not be read (%s); deleted it: it is rebuilt", what, path, why)
        return
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
    log.warning("%s %s could not be read (%s); set it aside as %s and started a fresh one",
                what, path, why, os.path.basename(aside))


def select(db: sqlite3.Connection | None, sql: str, args: Iterable[Any] = (), path: str = "") -> list[Row]:
    """The rows of a query, every value as it was stored (:func:`from_db`): the one way rows are
    read. A file (``path``) that cannot be read answers no rows, said once until it can."""
    try:
        if db is None:
            return []
        rows = [tuple(from_db(v) for v in row) for row in db.execute(sql, tuple(to_db(a) for a in args))]
    except sqlite3.Error as exc:
        _once(path or "the state store", "read", "cannot read the state store (%s)", exc)
        return []
    _once.forget(path or "the state store", "read")
    return rows


def _copy_rows(db: sqlite3.Connection, table: str, rows: list[Row]) -> None:
    if rows:
        marks = ",".join("?" * len(rows[0]))
        db.executemany(f"INSERT OR IGNORE INTO {table} VALUES ({marks})", rows)  # noqa: S608


class Database:
    """``schema``: the tables (``CREATE ... IF NOT EXISTS``); ``added``: ``(table, column
    definition)`` of columns newer than some files; ``kept``: the tables copied in memory.
    ``path`` None: memory only, for this run. ``write_wait_s``: how long a retry waits for
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
        self._retry: threading.Timer | None = None  # while the file cannot be written
        self._held = threading.local()  # ``changes``: those of :meth:`together`, on this thread
        # the pause before the next retry: doubling while retries fail, the least again once one succeeds
        self._backoff = Backoff(RETRY_MIN_S, RETRY_MAX_S, healthy_s=math.inf)
        if path is None:
            return
        try:
            with self._file_lock:
                self._open(OPEN_WAIT_S)
        except (OSError, sqlite3.Error) as exc:  # locked, a full disk, a folder we may not write
            self._fail(str(exc))
            self._try_later()  # (opened once it can be)

    # ---- reading and changing (any thread, never waiting for the file) ----

    def _read(self, sql: str, args: Iterable[Any] = ()) -> list[Row]:
        """Rows of the memory copy."""
        with self._lock:
            return select(self._memory, sql, args)

    def _query(self, sql: str, args: Iterable[Any] = (), wait: bool = True) -> list[Row]:
        """Rows of the file once what waits is written (up to 2 s; ``wait`` False: as it is now,
        once another thread's write ends, none if that takes over :data:`READ_WAIT_S`), or of memory
        without a file; none while the file cannot be read."""
        if self.path is None:
            return self._read(sql, args)
        if wait:
            self.flush(2.0)
        if not self._file_lock.acquire(timeout=-1 if wait else READ_WAIT_S):
            return []
        try:
            return select(self._file, sql, args, self.path)
        finally:
            self._file_lock.release()

    @contextlib.contextmanager
    def together(self) -> Iterator[None]:
        """The changes this thread makes inside reach the file in one transaction, as it ends (a
        process killed meanwhile leaves all of them or none). The memory copy has each at once."""
        if getattr(self._held, "changes", None) is not None:
            yield  # (inside one already: it writes them)
            return
        held: list[tuple[str, str, Row]] = []
        self._held.changes = held
        try:
            yield
        finally:
            self._held.changes = None
            if held:
                with self._lock:
                    self._pending.extend(held)
                self._save()

    def _run(self, table: str, sql: str, args: Iterable[Any] = ()) -> None:
        """Apply a change: to the memory copy (kept tables) and to the file, at once, on this thread
        (:meth:`_save`; with the others of :meth:`together`)."""
        values = tuple(to_db(a) for a in args)  # any str, also names that are not UTF-8
        with self.together(), self._lock:
            if table in self.kept or self.path is None:
                try:
                    self._memory.execute(sql, values)
                except sqlite3.Error as exc:  # (memory: a bug, not a fault of the disk)
                    log.warning("the state store refused a change (%s)", exc)
                    return
            if self.path is not None:
                self._held.changes.append((table, sql, values))

    def _save(self) -> None:
        """Write what waits, on this thread, never waiting for another process's lock: while the
        file cannot be written it waits for the retry (and the next change). Another thread
        writing now takes it along (it looks again once done)."""
        while self._file_lock.acquire(blocking=False):
            try:
                if self._file is None or self._retry is not None:
                    return  # (not opened yet, or failing: the retry's)
                written = self._write_locked(0.0)
            finally:
                self._file_lock.release()
            if not written:
                self._try_later()
                return
            with self._lock:
                if not self._due():
                    return

    @property
    def unwritten(self) -> int:
        """Changes still waiting for the file. For the tests: nothing in the app asks."""
        return len(self._pending)

    def flush(self, timeout: float = 5.0) -> bool:
        """Write every change that waits, waiting (at most ``timeout`` s) for the file: True once
        it is all in the file."""
        if self.path is None:
            return True
        deadline = time.monotonic() + timeout
        while True:
            with self._lock:
                if not self._due():
                    return True
            left = deadline - time.monotonic()
            if left <= 0 or not self._file_lock.acquire(timeout=left):
                return False
            try:
                written = self._write_locked(max(0.0, deadline - time.monotonic()))
            finally:
                self._file_lock.release()
            if not written:
                self._try_later()
                with self._lock:
                    self._lock.wait(min(RETRY_MIN_S, max(0.0, deadline - time.monotonic())))

    def commit(self, wait_s: float = COMMIT_WAIT_S) -> bool:
        """:meth:`flush` for a caller that must know a change is in the file before it goes on."""
        return self.flush(wait_s)

    def close(self, timeout: float = -1) -> bool:
        """Write what waits and close the file; with a ``timeout``, give up after that many
        seconds (a write stuck on another process's lock, a full disk) and say what is lost.
        True: every change is in the file (or the store is memory only)."""
        written = True
        if self.path is not None:
            with self._lock:  # deleted since the last write: keep what it knew for next time
                self._resync = self._resync or self._gone() is not None
            written = self.flush(10.0 if timeout < 0 else timeout)
            with self._lock:
                self._closed = True
                retry, self._retry = self._retry, None
                left = len(self._pending)
            if retry is not None:
                retry.cancel()
            if not written:
                log.warning("the state store %s could not be written before quitting: %d changes lost",
                            self.path, left)
        if self._file_lock.acquire(timeout=0.5):  # (not while a write is stuck on a lock)
            self._close_file()
            self._file_lock.release()
        return written

    @property
    def written_path(self) -> str | None:
        """The file every process's change to this store is written to as it is made (WAL: the
        ``-wal`` file; the database file itself only at checkpoints): what to follow for the
        changes of others. None: memory only."""
        return None if self.path is None else self.path + "-wal"

    def reread(self, tables: tuple[str, ...]) -> bool:
        """The memory copy of ``tables`` (kept ones) replaced by what the file holds now: what
        another process wrote there (the command line). Not while changes of this run wait for
        the file (the copy is what counts then), nor while it cannot be read. True: re-read."""
        done = self._reread(tables)
        self._save()  # (a change made meanwhile: its writer left the file to this thread)
        return done

    def _reread(self, tables: tuple[str, ...]) -> bool:
        if self.path is None or not self._file_lock.acquire(timeout=COMMIT_WAIT_S):
            return False
        try:
            if self._file is None:
                return False
            try:
                found = {t: self._file.execute(f"SELECT * FROM {t}").fetchall() for t in tables}  # noqa: S608
            except sqlite3.Error as exc:
                _once(self.path, "read", "cannot read the state store (%s)", exc)
                return False
            _once.forget(self.path, "read")
            with self._lock:
                if self._due():
                    return False
                for table, rows in found.items():
                    self._memory.execute(f"DELETE FROM {table}")  # noqa: S608
                    _copy_rows(self._memory, table, rows)
            return True
        finally:
            self._file_lock.release()

    # ---- the file ----

    def _due(self) -> bool:  # changes wait for the file (lock held)
        return bool(self._pending) or self._resync

    def _try_later(self) -> None:
        """The file could not be written (or opened): try again after the one back-off, doubling,
        on a timer (a thread only while the file cannot be written)."""
        with self._lock:
            if self._retry is not None or self._closed:
                return
            self._shed()
            self._retry = threading.Timer(self._backoff.next(), self._retry_now)
            self._retry.name, self._retry.daemon = "pi-notifier-store-retry", True
            self._retry.start()

    def _retry_now(self) -> None:
        """(The retry's timer.) This one may wait for another process's lock (``write_wait_s``)."""
        with self._file_lock:
            written = self._write_locked(None)
        with self._lock:
            self._retry = None
            if written:
                self._backoff.reset()
        if written:
            self._save()  # (what came meanwhile)
        else:
            self._try_later()

    def _write_locked(self, busy_s: float | None) -> bool:
        """Write what waits to the file in one transaction, the file lock held: True if it was
        written. ``busy_s``: how long to wait for another process's lock this time (None:
        :attr:`write_wait_s`)."""
        assert self.path is not None
        try:
            if gone := self._gone():
                self._close_file()
            if self._file is None:  # (at start it could not be opened, or it went bad or away)
                self._open(self.write_wait_s if busy_s is None else busy_s)
                with self._lock:
                    self._resync = True
                if gone:
                    log.warning(GONE[gone], self.path)
            with self._lock:
                if not self._due():  # (another write took it meanwhile)
                    return True
                batch, resync = list(self._pending), self._resync
                kept = {t: self._memory.execute(f"SELECT * FROM {t}").fetchall() for t in self.kept if resync}  # noqa: S608
            self._transaction(busy_s, kept, batch, resync)
        except (OSError, sqlite3.Error) as exc:
            if is_damage(exc) and self._file is not None:  # gone bad while running: set aside, and
                self._close_file()  # the next try makes a fresh one and writes the copy into it
                with contextlib.suppress(OSError):
                    replace_damaged(self.path, str(exc))
            self._fail(str(exc))
            return False
        if self._failing:  # (said before flush() can return)
            self._failing = False
            log.warning("the state store %s can be written again: %d kept changes written",
                        self.path, len(batch))
        with self._lock:  # (file lock still held: no other write took the same batch)
            del self._pending[: len(batch)]
            self._resync = self._resync and not resync
            self._lock.notify_all()
        return True

    def _transaction(self, busy_s: float | None, kept: dict[str, list[Any]], batch: list[Any], resync: bool) -> None:
        """One transaction on the file: the kept tables copied whole (``resync``: the file was
        opened again), then the batch's statements. File lock held."""
        db = self._file
        assert db is not None
        if busy_s is not None:
            db.execute(f"PRAGMA busy_timeout = {int(max(busy_s, 0) * 1000)}")
        try:
            db.execute("BEGIN IMMEDIATE")
            with db:  # (committed, or rolled back on an error)
                for table, rows in kept.items():
                    db.execute(f"DELETE FROM {table}")  # noqa: S608
                    _copy_rows(db, table, rows)
                for table, sql, args in batch:
                    if not (resync and table in self.kept):  # (else in the copy already)
                        db.execute(sql, args)
        finally:
            if busy_s is not None:
                db.execute(f"PRAGMA busy_timeout = {int(self.write_wait_s * 1000)}")

    def _open(self, wait_s: float, fresh: bool = False) -> None:
        """Open the file (a fresh one in place of one that is not a database) and read its kept
        rows into the memory copy. File lock held."""
        assert self.path is not None
        db = connect(self.path, wait_s)
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
            if fresh or not is_damage(exc):
                raise
            replace_damaged(self.path, str(exc))
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
                        " once it can be written", self.path or "", why)
        self._failing = True

    def _shed(self) -> None:
        """Too many changes wait for the file: the kept tables will be written whole from memory
        instead, and the oldest other changes go. Lock held."""
        if len(self._pending) > MAX_PENDING:
            self._resync = True
            self._pending = [c for c in self._pending if c[0] not in self.kept]
            if len(self._pending) > MAX_PENDING // 2:  # (said once per MAX_PENDING // 2 dropped)
                log.warning("the state store %s has been unusable too long; dropping the oldest history",
                            self.path or "")
                del self._pending[: -MAX_PENDING // 2]


# ---- what the app remembers ----

SCHEMA = """
CREATE TABLE IF NOT EXISTS notified (file TEXT NOT NULL, call_id TEXT NOT NULL, at REAL NOT NULL,
                                     reminders INTEGER NOT NULL DEFAULT 0,
                                     PRIMARY KEY (file, call_id));
CREATE TABLE IF NOT EXISTS pushed (file TEXT NOT NULL, call_id TEXT NOT NULL, at REAL NOT NULL,
                                   PRIMARY KEY (file, call_id));
CREATE TABLE IF NOT EXISTS snoozes (scope TEXT PRIMARY KEY, until REAL NOT NULL);
CREATE TABLE IF NOT EXISTS mutes (project TEXT PRIMARY KEY, at REAL NOT NULL);
CREATE TABLE IF NOT EXISTS history (
  file TEXT NOT NULL, call_id TEXT NOT NULL, session_id TEXT, cwd TEXT, name TEXT,
  tool TEXT, text TEXT, header TEXT, options TEXT, count INTEGER,
  asked_at REAL NOT NULL, resolved_at REAL, outcome TEXT, waited_s REAL, answer TEXT, kind TEXT,
  PRIMARY KEY (file, call_id));
CREATE INDEX IF NOT EXISTS history_asked ON history (asked_at);
CREATE TABLE IF NOT EXISTS bubbles (owner TEXT NOT NULL, id INTEGER NOT NULL, file TEXT NOT NULL,
                                    call_id TEXT NOT NULL, PRIMARY KEY (owner, id, file, call_id));
"""
# Columns that stores of older versions lack: reminders were not kept across restarts, answers
# were not recorded, nor a question's kind (a question tool's call, or an extension's dialog).
# (Tables they lack, such as pushed, are made by the schema.)
ADDED = (("notified", "reminders INTEGER NOT NULL DEFAULT 0"), ("history", "answer TEXT"), ("history", "kind TEXT"))
# The tables the running app reads back, kept in memory. History is only written (``pi-notifier
# history`` reads the file).
KEPT = ("notified", "pushed", "snoozes", "mutes", "bubbles")
# Bounds of one history row (a question's text is not cut in run --json, but the store keeps a
# record, not a copy: a hostile or huge question must not make the state folder grow by its size).
ROW_LIMITS = {"text": 4000, "options": 2000, "header": 500, "name": 500, "cwd": 2000, "session_id": 200, "tool": 128,
              "file": 4096, "call_id": 512, "answer": 4000}


def _row_key(t: Transition) -> tuple[str, str]:
    """A question's history row: its (file, call_id), cut as the row's columns are."""
    return t.session.key[: ROW_LIMITS["file"]], t.question.tool_call_id[: ROW_LIMITS["call_id"]]


RESOLVED = ("UPDATE history SET resolved_at = ?, outcome = ?, waited_s = ?, answer = ?"
            " WHERE file = ? AND call_id = ? AND resolved_at IS NULL")
ABANDONED = "UPDATE history SET outcome = 'abandoned' WHERE file = ? AND call_id = ? AND resolved_at IS NULL"
OPEN = (f"SELECT {', '.join(HISTORY_COLUMNS)} FROM history"  # noqa: S608
        " WHERE resolved_at IS NULL AND outcome IS NULL AND kind = 'question' ORDER BY asked_at DESC LIMIT 1000")
SETTLED_AT_START = 20  # the open questions a start looks up in their files (each: a read of its end)
SETTLE_TAIL = 2 << 20  # the end of a file read for one (at most 40 MB a start, on the engine's thread)

ALL = "*"  # a snooze's scope: one session (its file), one project ("project:<name>"), or all
PROJECT = "project:"


SNOOZES = "SELECT scope, until FROM snoozes WHERE until > ?"
MUTES = "SELECT project FROM mutes"


def _silences(snoozes: list[Row], mutes: list[Row]) -> Silences:
    """The snoozes and the muted projects of rows of :data:`SNOOZES` (those still running) and :data:`MUTES`."""
    silences = Silences(muted=frozenset(p for (p,) in mutes))
    for scope, until in snoozes:
        project = scope[len(PROJECT) :] if scope.startswith(PROJECT) else None
        session = None if scope == ALL or project is not None else scope
        silences = silences.snoozed(until, session, project)
    return silences


def saved_silences(state_dir: str, now: float) -> Silences:
    """The snoozes and mutes saved in the store of ``state_dir``, still running at ``now``, read
    without opening the store (``status`` and ``snooze`` read them beside the app, or without
    it): read only, nothing created. Nothing saved yet, or a store that cannot be read: none."""
    path = os.path.join(state_dir, FILE_NAME)
    if not os.path.isfile(path):
        return Silences()
    try:
        db = connect(path, 2.0, read_only=True)
    except sqlite3.Error:
        return Silences()
    try:
        return _silences(select(db, SNOOZES, (now,), path), select(db, MUTES, (), path))
    finally:
        db.close()


def _time(at: float) -> float:
    """A question's time as stored: one from a broken clock or another source is 'now'."""
    sane = sane_time(at)
    return time.time() if sane is None else sane


class Published(Protocol):
    """What the engine hands its outputs (``engine.Batch``), as far as the history reads it."""

    @property
    def transitions(self) -> tuple[Transition, ...]: ...


class Store(Database):
    """The app's state (the tables above); ``path`` None: in memory, for this run."""

    def __init__(self, path: str | None, write_wait_s: float = WRITE_WAIT_S) -> None:
        super().__init__(path, SCHEMA, KEPT, ADDED, write_wait_s)

    # ---- notified ----

    def notified(self) -> set[tuple[str, str]]:
        return {(f, c) for f, c in self._read("SELECT file, call_id FROM notified")}

    def mark_notified(self, keys: Iterable[tuple[str, str]], now: float | None = None) -> None:
        at = time.time() if now is None else now
        sql = "INSERT OR IGNORE INTO notified (file, call_id, at) VALUES (?, ?, ?)"
        self._each("notified", sql, [(file, call_id, at) for file, call_id in keys])

    def _each(self, table: str, sql: str, rows: Iterable[Row]) -> None:
        """``sql`` for each of ``rows``, in one transaction."""
        with self.together():
            for args in rows:
                self._run(table, sql, args)

    def reminders(self) -> dict[tuple[str, str], int]:
        """How many reminders each notified question already had (only those with some)."""
        rows = self._read("SELECT file, call_id, reminders FROM notified WHERE reminders > 0")
        return {(f, c): int(n) for f, c, n in rows}

    def mark_reminded(self, counts: Mapping[tuple[str, str], int]) -> None:
        """Record reminder counts of questions already notified (never lowers one)."""
        sql = "UPDATE notified SET reminders = MAX(reminders, ?) WHERE file = ? AND call_id = ?"
        self._each("notified", sql, [(n, file, call_id) for (file, call_id), n in counts.items()])

    # ---- bubbles: the notifications on screen, by server, so that after a crash the next run
    # can re-use or close them ----

    def bubbles(self) -> dict[tuple[str, int], set[tuple[str, str]]]:
        """``{(server key, notification id): the questions it shows}`` (the server key is
        ``Backend.server_key``, in the column ``owner``)."""
        out: dict[tuple[str, int], set[tuple[str, str]]] = {}
        for server, nid, file, call_id in self._read("SELECT owner, id, file, call_id FROM bubbles"):
            if isinstance(server, str) and isinstance(nid, int) and isinstance(file, str) and isinstance(call_id, str):
                out.setdefault((server, nid), set()).add((file, call_id))
        return out

    def put_bubble(self, server_key: str, nid: int, keys: Iterable[tuple[str, str]]) -> None:
        with self.together():
            self.drop_bubbles(server_key, nid)
            sql = "INSERT OR IGNORE INTO bubbles (owner, id, file, call_id) VALUES (?, ?, ?, ?)"
            self._each("bubbles", sql, [(server_key, nid, file, call_id) for file, call_id in keys])

    def drop_bubbles(self, server_key: str, nid: int | None = None) -> None:
        """Forget one notification of the server ``server_key`` (``nid``), or all of them."""
        self._run("bubbles", "DELETE FROM bubbles WHERE owner = ? AND (? IS NULL OR id = ?)", (server_key, nid, nid))

    def keep_bubbles_of(self, server_key: str) -> None:
        """Forget the notifications of every server but ``server_key`` (gone with their server)."""
        self._run("bubbles", "DELETE FROM bubbles WHERE owner != ?", (server_key,))

    # ---- pushed (outputs/push.py): a question is pushed once, also across restarts ----

    def pushed(self) -> set[tuple[str, str]]:
        return {(f, c) for f, c in self._read("SELECT file, call_id FROM pushed")}

    def mark_pushed(self, file: str, call_id: str, now: float | None = None) -> None:
        at = time.time() if now is None else now
        self._run("pushed", "INSERT OR IGNORE INTO pushed (file, call_id, at) VALUES (?, ?, ?)", (file, call_id, at))

    # ---- snoozes and mutes ----

    def snooze(self, until: float, session: str | None = None, project: str | None = None) -> None:
        """Snooze a session, a project, or (neither given) everything until ``until``."""
        scope = PROJECT + project if project else session or ALL
        self._run("snoozes", "INSERT OR REPLACE INTO snoozes VALUES (?, ?)", (scope, until))

    def clear_snoozes(self) -> None:
        self._run("snoozes", "DELETE FROM snoozes")

    def silences(self, now: float, reread: bool = False) -> Silences:
        """The snoozes still running at ``now`` and the muted projects, as one value; ``reread``:
        as the file holds them now (another process may have changed them: :meth:`reread`)."""
        if reread:
            self.reread(("snoozes", "mutes"))
        return _silences(self._read(SNOOZES, (now,)), self._read(MUTES))

    def mute(self, project: str, on: bool) -> None:
        if on:
            self._run("mutes", "INSERT OR REPLACE INTO mutes VALUES (?, ?)", (project, time.time()))
        else:
            self._run("mutes", "DELETE FROM mutes WHERE project = ?", (project,))

    # ---- history ----

    def _asked(self, t: Transition) -> None:
        row = history_row(t)  # the one serialisation of a question (core/codec.py)
        for column, limit in ROW_LIMITS.items():
            if isinstance(row.get(column), str):
                row[column] = row[column][:limit]
        row["asked_at"], row["kind"] = _time(t.question.asked_at), t.question.kind
        self._run(
            "history",
            f"INSERT OR IGNORE INTO history ({', '.join(row)}) VALUES ({','.join('?' * len(row))})",  # noqa: S608
            row.values(),
        )

    # The history is one of the engine's outputs: every batch's transitions, recorded on the
    # engine thread (a change is written by the thread that makes it).
    def ready(self, info: object, snapshot: Snapshot) -> None:
        self.settle(snapshot)

    def settle(self, snapshot: Snapshot) -> None:
        """The questions the history has open whose session, as the start-up read found it, no
        longer asks them ended while no app watched: each is recorded as pi wrote its end (the
        toolResult of its call: how it ended, when, the answer). One without a toolResult there
        (a call pi superseded, or one followed by more than :data:`SETTLE_TAIL` of the file) stays
        open, and so does an extension's dialog (the gated tool's result is not its end). Only the
        newest :data:`SETTLED_AT_START` are looked up: each is a read of its file's end."""
        local = {s.ref.key: s for s in snapshot.sessions if s.ref.host is None}
        rows = self._query(OPEN, wait=False)  # (the engine's thread: not held up by a file that hangs)
        looked = 0
        with self.together():
            for row in rows:
                file, call_id, asked = row[0], row[1], _time(row[HISTORY_COLUMNS.index("asked_at")])
                view = local.get(file) if isinstance(file, str) and isinstance(call_id, str) else None
                if view is None or any(q.tool_call_id == call_id for q in (*view.pending, *view.abandoned)):
                    continue
                if (looked := looked + 1) > SETTLED_AT_START:
                    break
                entry = result_entry(file, call_id, SETTLE_TAIL)
                if entry is None:
                    continue
                q = history_entry(dict(zip(HISTORY_COLUMNS, row, strict=True)))["question"]
                item = QuestionItem(q["text"], options=tuple(Option(o) for o in q["options"]))
                outcome, answer = judge_result(entry["message"], Question(call_id, q["tool"] or "", (item,), asked))
                waited = max(0.0, parse_time(entry.get("timestamp"), asked) - asked)
                answer = answer[: ROW_LIMITS["answer"]] if answer is not None else None
                self._run("history", RESOLVED, (asked + waited, outcome, waited, answer, file, call_id))

    def publish(self, batch: Published) -> None:
        self.record(batch.transitions)

    def record(self, transitions: Iterable[Transition]) -> None:
        with self.together():
            for t in transitions:
                key = _row_key(t)
                if t.kind == "abandoned":
                    self._run("history", ABANDONED, key)
                    continue
                self._asked(t)  # (resolved: asked before we were watching, recorded now)
                if t.kind == "resolved":
                    answer = clean(t.answer)[: ROW_LIMITS["answer"]] if t.answer is not None else None
                    waited = t.waited_s if isinstance(t.waited_s, (int, float)) and 0 <= t.waited_s < 1e10 else 0.0
                    resolved_at = _time(t.question.asked_at) + waited
                    self._run("history", RESOLVED, (resolved_at, t.outcome, waited, answer, *key))

    def history(self, since: float | None = None) -> list[dict[str, Any]]:
        """History rows (:data:`~notifier.core.codec.HISTORY_COLUMNS`), oldest first, for
        :func:`~notifier.core.codec.history_obj`."""
        sql = f"SELECT {', '.join(HISTORY_COLUMNS)} FROM history WHERE asked_at >= ? ORDER BY asked_at"  # noqa: S608
        args = (float("-inf") if since is None else since,)  # all rows, also those of broken clocks
        rows = self._query(sql, args)
        return [dict(zip(HISTORY_COLUMNS, row, strict=True)) for row in rows]

    def prune(self, older_than: float) -> None:
        with self.together():
            for table, column in (("history", "asked_at"), ("notified", "at"), ("pushed", "at")):
                self._run(table, f"DELETE FROM {table} WHERE {column} < ?", (older_than,))  # noqa: S608
            self._run("snoozes", "DELETE FROM snoozes WHERE until < ?", (time.time(),))
