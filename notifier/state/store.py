"""Small persistent state in SQLite (WAL) in the per-OS state folder: which questions were
already notified (and pushed), snoozes and mutes, and the question history.

No caller ever waits for the file. What the running app needs to read back (notified, pushed,
reminders, snoozes, mutes, bubbles) lives in an in-memory copy, read and changed at once; every
change is also queued for the file, which a writer thread of the store's own applies in one
transaction per batch. While the file cannot be written (another process holds its lock, the disk
is full, the folder was deleted) the changes wait in memory and the writer keeps trying: as soon as
the file is usable again they are written, and it is said once each way. A file that is not a
database any more (corrupt, truncated) is set aside under a new name, kept for the user, and a
fresh one made, said once; what the run knew is written into it."""

from __future__ import annotations

import logging
import os
import sqlite3
import threading
import time
from collections.abc import Iterable, Mapping
from typing import Any

from notifier.core.formats import HISTORY_COLUMNS, history_row
from notifier.core.model import Transition
from notifier.core.preferences import Preferences
from notifier.core.text import clean
from notifier.core.times import sane_time
from notifier.system.paths import from_db, private_file, to_db

log = logging.getLogger(__name__)

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
  asked_at REAL NOT NULL, resolved_at REAL, outcome TEXT, waited_s REAL, answer TEXT,
  PRIMARY KEY (file, call_id));
CREATE INDEX IF NOT EXISTS history_asked ON history (asked_at);
CREATE TABLE IF NOT EXISTS bubbles (owner TEXT NOT NULL, id INTEGER NOT NULL, file TEXT NOT NULL,
                                    call_id TEXT NOT NULL, PRIMARY KEY (owner, id, file, call_id));
"""
ALL = "*"  # the snooze scope meaning every session
_PROJECT = "project:"
# The tables the running app reads back: copied into memory at open, written back whole when the
# file had to be replaced. History is only written (``pi-notifier history`` reads the file).
KEPT = ("notified", "pushed", "snoozes", "mutes", "bubbles")
HISTORY = "history"
OPEN_WAIT_S = 1.0  # at open: how long another process's lock is waited for before going on in memory
WRITE_WAIT_S = 5.0  # the writer thread: SQLite's busy timeout (it gets the lock once it is free)
RETRY_MIN_S = 0.25  # after a failed write (disk full, I/O error): doubling to RETRY_MAX_S
RETRY_MAX_S = 5.0
MAX_PENDING = 50_000  # changes waiting for the file; beyond this the oldest history rows are dropped
# Bounds of one history row (a question's text is not cut in run --json, but the store keeps a
# record, not a copy: a hostile or huge question must not make the state folder grow by its size).
ROW_LIMITS = {"text": 4000, "options": 2000, "header": 500, "name": 500, "cwd": 2000, "session_id": 200, "tool": 128}


def _add_reminders_column(db: sqlite3.Connection) -> None:
    """Stores from before reminders survived a restart lack ``notified.reminders``, and those
    from before answers were recorded ``history.answer``."""
    columns = {row[1] for row in db.execute("PRAGMA table_info(notified)")}
    if "reminders" not in columns:
        db.execute("ALTER TABLE notified ADD COLUMN reminders INTEGER NOT NULL DEFAULT 0")
    if "answer" not in {row[1] for row in db.execute("PRAGMA table_info(history)")}:
        db.execute("ALTER TABLE history ADD COLUMN answer TEXT")


def _time(at: float) -> float:
    """A question's time as stored: one from a broken clock or another source is 'now'."""
    sane = sane_time(at)
    return time.time() if sane is None else sane


def _wait(seconds: float | None) -> float:
    return seconds if isinstance(seconds, (int, float)) and 0 <= seconds < 1e10 else 0.0


def _corrupt(exc: sqlite3.Error) -> bool:
    """The file is not a (sound) database: it cannot be used again as it is."""
    name = getattr(exc, "sqlite_errorname", "") or ""
    if name:
        return name.startswith(("SQLITE_CORRUPT", "SQLITE_NOTADB"))
    text = str(exc)
    return "malformed" in text or "not a database" in text


def _connect(path: str, wait_s: float) -> sqlite3.Connection:
    private_file(path)  # 0600 in a 0700 folder; SQLite's side files inherit the mode
    db = sqlite3.connect(path, timeout=wait_s, check_same_thread=False, isolation_level=None)
    try:
        db.execute("PRAGMA journal_mode=WAL")
        db.execute("PRAGMA synchronous=NORMAL")
        db.executescript(SCHEMA)
        _add_reminders_column(db)
    except BaseException:
        db.close()
        raise
    return db


def _memory() -> sqlite3.Connection:
    db = sqlite3.connect(":memory:", check_same_thread=False, isolation_level=None)
    db.executescript(SCHEMA)
    return db


class Store:
    def __init__(self, path: str | None, write_wait_s: float = WRITE_WAIT_S) -> None:
        """``write_wait_s``: how long the writer thread waits for another process's lock before
        it says the file cannot be written (it then keeps trying)."""
        self.path = path
        self.write_wait_s = write_wait_s
        self._lock = threading.Condition()  # the memory copy and the queue of changes
        self._file_lock = threading.Lock()  # the file's connection (the writer thread, open, close)
        self._db = _memory()
        self._file: sqlite3.Connection | None = None
        self._ident: tuple[int, int] | None = None
        self._pending: list[tuple[str, str, tuple[Any, ...]]] = []  # (table, sql, args) for the file
        self._resync = False  # the file must get every kept table from memory (it was replaced)
        self._merge = False  # the file could not be read at open: its rows are read in when it can
        self._failing: str | None = None  # why the file cannot be written now (said once)
        self._dropped = 0  # history changes dropped while the file was unusable too long
        self._closed = False
        self._writer: threading.Thread | None = None
        self.persistent = False  # a file holds the state (else: memory only, for this run)
        if path:
            self._open_file(path)

    # ---- the file ----

    def _open_file(self, path: str) -> None:
        db: sqlite3.Connection | None = None
        try:
            db = self._connect_or_set_aside(path, OPEN_WAIT_S)
            rows = {table: db.execute(f"SELECT * FROM {table}").fetchall() for table in KEPT}  # noqa: S608
        except (OSError, sqlite3.Error) as exc:
            if db is not None:
                db.close()
            # locked by another process, a full disk, a folder we may not write: go on in
            # memory; the writer reads the file in and writes to it once it can
            self._merge = True
            self._fail(f"{exc}")
            self._start_writer()
            return
        for table, found in rows.items():
            self._copy_rows(self._db, table, found)
        self._attach(path, db)

    def _connect_or_set_aside(self, path: str, wait_s: float) -> sqlite3.Connection:
        try:
            db = _connect(path, wait_s)
            for table in KEPT:  # a truncated file may open and fail only when read
                db.execute(f"SELECT count(*) FROM {table}").fetchall()  # noqa: S608
            return db
        except sqlite3.DatabaseError as exc:
            if not _corrupt(exc):
                raise
            self._set_aside(path, exc)
            return _connect(path, wait_s)

    def _set_aside(self, path: str, exc: sqlite3.Error) -> None:
        """Keep the unusable file for the user under another name; a fresh one takes its place."""
        stamp = time.strftime("%Y%m%dT%H%M%S", time.gmtime())
        aside, n = f"{path}.corrupt-{stamp}", 1
        while os.path.lexists(aside):  # (never over one set aside before)
            n += 1
            aside = f"{path}.corrupt-{stamp}-{n}"
        os.replace(path, aside)
        for side in ("-wal", "-shm"):
            try:
                if side == "-wal":
                    os.replace(path + side, aside + side)  # (holds the last changes: kept with it)
                else:
                    os.unlink(path + side)
            except FileNotFoundError:
                pass
        log.warning(
            "the state store %s could not be read (%s); set it aside as %s and started a fresh one",
            clean(path), clean(exc, 200), clean(os.path.basename(aside)),
        )

    def _attach(self, path: str, db: sqlite3.Connection) -> None:
        st = os.stat(path)
        self._ident = (st.st_dev, st.st_ino)
        self._file = db
        self.persistent = True

    def _vanished(self) -> bool:
        """The database file was deleted (with its folder, perhaps) or replaced under us."""
        if self._file is None or self.path is None:
            return False
        try:
            st = os.stat(self.path)
        except FileNotFoundError:
            return True
        except OSError:
            return False
        return (st.st_dev, st.st_ino) != self._ident

    def _fail(self, why: str) -> None:
        if self._failing is None:
            log.warning(
                "cannot write the state store %s (%s); keeping state in memory and writing it "
                "there once it can be written",
                clean(self.path or ""), clean(why, 200),
            )
        self._failing = why

    # ---- reading and changing (any thread, never waiting for the file) ----

    def _read(self, sql: str, args: Iterable[Any] = ()) -> list[tuple[Any, ...]]:
        with self._lock:
            rows = self._db.execute(sql, tuple(to_db(a) for a in args)).fetchall()
        return [tuple(from_db(v) for v in row) for row in rows]

    def _run(self, table: str, sql: str, args: Iterable[Any] = ()) -> None:
        """Apply a change: to the memory copy at once (kept tables), to the file by the writer."""
        values = tuple(to_db(a) for a in args)  # any str, also names that are not UTF-8
        with self._lock:
            if table in KEPT or self.path is None:
                try:
                    self._db.execute(sql, values)
                except sqlite3.Error as exc:  # (memory: a bug, not a fault of the disk)
                    log.warning("the state store's memory copy refused a change (%s)", exc)
            if self.path is None:
                return
            self._pending.append((table, sql, values))
            if len(self._pending) > MAX_PENDING:
                self._shed()
            self._lock.notify_all()
        self._start_writer()

    def _shed(self) -> None:
        """Too many changes wait for the file: the kept tables will be written whole from memory
        instead, and the oldest history changes go (said once). Lock held."""
        self._resync = True
        self._pending = [p for p in self._pending if p[0] == HISTORY]
        extra = len(self._pending) - MAX_PENDING // 2
        if extra > 0:
            del self._pending[:extra]
            if not self._dropped:
                log.warning(
                    "the state store %s has been unusable too long; dropping the oldest history rows",
                    clean(self.path or ""),
                )
            self._dropped += extra

    def _start_writer(self) -> None:
        if self.path is None or self._writer is not None:
            return
        with self._lock:
            if self._writer is None and not self._closed:
                self._writer = threading.Thread(target=self._write_loop, name="pi-notifier-store", daemon=True)
                self._writer.start()

    # ---- the writer thread ----

    def _write_loop(self) -> None:
        delay = RETRY_MIN_S
        while True:
            with self._lock:
                while not (self._pending or self._resync or self._merge) and not self._closed:
                    self._lock.wait()
                if self._closed and not (self._pending or self._resync or self._merge):
                    return
            if self._write_once():
                delay = RETRY_MIN_S
                continue
            with self._lock:
                if self._closed:
                    return  # close() gave up waiting: what is left stays unwritten
                self._lock.wait(delay)
            delay = min(delay * 2, RETRY_MAX_S)

    def _write_once(self) -> bool:
        """Write what waits to the file: True if it was written (or nothing was to be)."""
        assert self.path is not None
        with self._file_lock:
            try:
                self._ensure_file()
                with self._lock:
                    batch = list(self._pending)
                    resync = self._resync
                    kept = {t: self._db.execute(f"SELECT * FROM {t}").fetchall() for t in KEPT} if resync else {}  # noqa: S608
                assert self._file is not None
                db = self._file
                db.execute("BEGIN IMMEDIATE")
                try:
                    for table, rows in kept.items():
                        db.execute(f"DELETE FROM {table}")  # noqa: S608
                        self._copy_rows(db, table, rows)
                    for table, sql, args in batch:
                        if not (resync and table in KEPT):  # (already in the copy)
                            db.execute(sql, args)
                    db.execute("COMMIT")
                except BaseException:
                    if db.in_transaction:
                        db.execute("ROLLBACK")
                    raise
            except (OSError, sqlite3.Error) as exc:
                if isinstance(exc, sqlite3.DatabaseError) and _corrupt(exc) and self._file is not None:
                    self._replace_corrupt(exc)
                    return False
                self._fail(str(exc))
                return False
        with self._lock:
            del self._pending[: len(batch)]
            if resync:
                self._resync = False
        if self._failing is not None:
            self._failing = None
            log.warning(
                "the state store %s can be written again: %d kept changes written", clean(self.path), len(batch)
            )
        return True

    def _ensure_file(self) -> None:
        """The file open and in place: (re)created if deleted, read in if it could not be at open.
        File lock held."""
        assert self.path is not None
        if self._vanished():
            old, self._file = self._file, None
            if old is not None:
                old.close()
            deleted = not os.path.exists(self.path)
            if deleted:
                _reopen_log_files()
            db = self._connect_or_set_aside(self.path, self.write_wait_s)
            self._attach(self.path, db)
            with self._lock:
                self._resync = True
                copied = self._db.execute("SELECT count(*) FROM notified").fetchone()[0]
            log.warning(
                "the state %s while running; %s it (%d notified questions, snoozes, mutes and "
                "history carried over)",
                f"folder {clean(os.path.dirname(self.path))} was deleted" if deleted
                else f"store {clean(self.path)} was replaced",
                "recreated" if deleted else "wrote what this run knew into",
                copied,
            )
        if self._file is None:
            db = self._connect_or_set_aside(self.path, self.write_wait_s)
            rows = {table: db.execute(f"SELECT * FROM {table}").fetchall() for table in KEPT}  # noqa: S608
            with self._lock:
                for table, found in rows.items():  # what the file knew, and what this run added
                    self._copy_rows(self._db, table, found)
                self._merge = False
                self._resync = True
            self._attach(self.path, db)

    def _replace_corrupt(self, exc: sqlite3.Error) -> None:
        """The file went bad while running: set it aside; the next try makes a fresh one and
        writes everything kept in memory into it. File lock held."""
        assert self.path is not None and self._file is not None
        self._file.close()
        self._file = None
        try:
            self._set_aside(self.path, exc)
        except OSError as err:
            self._fail(f"{exc}; cannot set it aside: {err}")
        with self._lock:
            self._resync = True

    @staticmethod
    def _copy_rows(db: sqlite3.Connection, table: str, rows: list[tuple[Any, ...]]) -> None:
        if rows:
            marks = ",".join("?" * len(rows[0]))
            db.executemany(f"INSERT OR IGNORE INTO {table} VALUES ({marks})", rows)  # noqa: S608

    def flush(self, timeout: float = 5.0) -> bool:
        """Wait (at most ``timeout`` s) until every change is in the file: True if it is."""
        deadline = time.monotonic() + timeout
        with self._lock:
            while self._pending or self._resync or self._merge:
                left = deadline - time.monotonic()
                if left <= 0 or self._writer is None:
                    return False
                self._lock.wait(min(left, 0.05))
            return True

    @property
    def unwritten(self) -> int:
        """Changes still waiting for the file."""
        with self._lock:
            return len(self._pending)

    def close(self, timeout: float = -1) -> None:
        """Write what waits and close the file; with a ``timeout``, give up after that many
        seconds (a write stuck on another process's lock, a full disk) and say what is lost."""
        if self.path is not None:
            if self._vanished():  # deleted since the last write: keep what it knew for next time
                with self._lock:
                    self._resync = True
                    self._lock.notify_all()
                self._start_writer()
            written = self.flush(10.0 if timeout < 0 else timeout)
            with self._lock:
                self._closed = True
                self._lock.notify_all()
                left = len(self._pending)
            if not written and (left or self._resync or self._merge):
                log.warning(
                    "the state store %s could not be written before quitting: %d changes lost",
                    clean(self.path), left,
                )
        if self._file_lock.acquire(timeout=0.5):
            try:
                if self._file is not None:
                    self._file.close()
                    self._file = None
            except sqlite3.Error:
                pass
            finally:
                self._file_lock.release()
        with self._lock:
            self._closed = True
            self._lock.notify_all()

    # ---- notified ----

    def notified(self) -> set[tuple[str, str]]:
        return {(f, c) for f, c in self._read("SELECT file, call_id FROM notified")}

    def mark_notified(self, keys: Iterable[tuple[str, str]], now: float | None = None) -> None:
        at = time.time() if now is None else now
        for file, call_id in keys:
            self._run("notified", "INSERT OR IGNORE INTO notified (file, call_id, at) VALUES (?, ?, ?)", (file, call_id, at))

    def reminders(self) -> dict[tuple[str, str], int]:
        """How many reminders each notified question already had (only those with some)."""
        rows = self._read("SELECT file, call_id, reminders FROM notified WHERE reminders > 0")
        return {(f, c): int(n) for f, c, n in rows}

    def mark_reminded(self, counts: Mapping[tuple[str, str], int]) -> None:
        """Record reminder counts of questions already notified (never lowers one)."""
        for (file, call_id), n in counts.items():
            self._run(
                "notified",
                "UPDATE notified SET reminders = MAX(reminders, ?) WHERE file = ? AND call_id = ?",
                (n, file, call_id),
            )

    # ---- bubbles: the notifications on screen, by server, so that after a crash the next run
    # can close those whose question was answered meanwhile (sinks/notify/screen.py) ----

    def bubbles(self) -> dict[tuple[str, int], set[tuple[str, str]]]:
        """``{(server owner, notification id): the questions it shows}``."""
        out: dict[tuple[str, int], set[tuple[str, str]]] = {}
        for owner, nid, file, call_id in self._read("SELECT owner, id, file, call_id FROM bubbles"):
            if isinstance(owner, str) and isinstance(nid, int) and isinstance(file, str) and isinstance(call_id, str):
                out.setdefault((owner, nid), set()).add((file, call_id))
        return out

    def put_bubble(self, owner: str, nid: int, keys: Iterable[tuple[str, str]]) -> None:
        self._run("bubbles", "DELETE FROM bubbles WHERE owner = ? AND id = ?", (owner, nid))
        for file, call_id in keys:
            self._run(
                "bubbles",
                "INSERT OR IGNORE INTO bubbles (owner, id, file, call_id) VALUES (?, ?, ?, ?)",
                (owner, nid, file, call_id),
            )

    def drop_bubbles(self, owner: str, nid: int | None = None) -> None:
        """Forget one notification of server ``owner`` (``nid``), or all of them."""
        if nid is None:
            self._run("bubbles", "DELETE FROM bubbles WHERE owner = ?", (owner,))
        else:
            self._run("bubbles", "DELETE FROM bubbles WHERE owner = ? AND id = ?", (owner, nid))

    def keep_bubbles_of(self, owner: str) -> None:
        """Forget the notifications of every server but ``owner`` (gone with their server)."""
        self._run("bubbles", "DELETE FROM bubbles WHERE owner != ?", (owner,))

    # ---- pushed (sinks/push.py): a question is pushed once, also across restarts ----
    # (The table is created on open when missing: stores from before pushes were kept get it.)

    def pushed(self) -> set[tuple[str, str]]:
        return {(f, c) for f, c in self._read("SELECT file, call_id FROM pushed")}

    def mark_pushed(self, file: str, call_id: str, now: float | None = None) -> None:
        at = time.time() if now is None else now
        self._run("pushed", "INSERT OR IGNORE INTO pushed (file, call_id, at) VALUES (?, ?, ?)", (file, call_id, at))

    # ---- snoozes and mutes ----

    # A snooze's scope: one session (its file), one project ("project:<name>"), or all ("*").

    def snoozes(self, now: float) -> list[tuple[str | None, str | None, float]]:
        """The snoozes still running at ``now``: (session, project, until); both None = all."""
        out: list[tuple[str | None, str | None, float]] = []
        for scope, until in self._read("SELECT scope, until FROM snoozes WHERE until > ?", (now,)):
            if scope == ALL:
                out.append((None, None, until))
            elif scope.startswith(_PROJECT):
                out.append((None, scope[len(_PROJECT) :], until))
            else:
                out.append((scope, None, until))
        return out

    def snooze(self, until: float, session: str | None = None, project: str | None = None) -> None:
        """Snooze a session, a project, or (neither given) everything until ``until``."""
        scope = _PROJECT + project if project else session or ALL
        self._run("snoozes", "INSERT OR REPLACE INTO snoozes VALUES (?, ?)", (scope, until))

    def clear_snoozes(self) -> None:
        self._run("snoozes", "DELETE FROM snoozes")

    def preferences(self, now: float) -> Preferences:
        """The snoozes still running at ``now`` and the muted projects, as one value."""
        prefs = Preferences(muted=frozenset(self.mutes()))
        for session, project, until in self.snoozes(now):
            prefs = prefs.snoozed(until, now, session, project)
        return prefs

    def mutes(self) -> set[str]:
        return {p for (p,) in self._read("SELECT project FROM mutes")}

    def mute(self, project: str, on: bool) -> None:
        if on:
            self._run("mutes", "INSERT OR REPLACE INTO mutes VALUES (?, ?)", (project, time.time()))
        else:
            self._run("mutes", "DELETE FROM mutes WHERE project = ?", (project,))

    # ---- history ----

    def _asked(self, t: Transition) -> None:
        row = history_row(t)  # the one serialisation of a question (core/formats.py)
        for column, limit in ROW_LIMITS.items():
            if isinstance(row.get(column), str):
                row[column] = row[column][:limit]
        row["asked_at"] = _time(t.question.asked_at)
        self._run(
            HISTORY,
            f"INSERT OR IGNORE INTO history ({', '.join(row)}) VALUES ({','.join('?' * len(row))})",  # noqa: S608
            row.values(),
        )

    def record(self, transitions: Iterable[Transition]) -> None:
        for t in transitions:
            q, s = t.question, t.session
            if t.kind == "needs_input":
                self._asked(t)
            elif t.kind == "resolved":
                self._asked(t)  # asked before we were watching: record it now
                self._run(
                    HISTORY,
                    "UPDATE history SET resolved_at = ?, outcome = ?, waited_s = ?, answer = ?"
                    " WHERE file = ? AND call_id = ? AND resolved_at IS NULL",
                    (
                        _time(q.asked_at) + _wait(t.waited_s),
                        t.outcome,
                        _wait(t.waited_s),
                        clean(t.answer) if t.answer is not None else None,
                        s.key,
                        q.tool_call_id,
                    ),
                )
            elif t.kind == "abandoned":
                self._run(
                    HISTORY,
                    "UPDATE history SET outcome = 'abandoned' WHERE file = ? AND call_id = ? AND resolved_at IS NULL",
                    (s.key, q.tool_call_id),
                )

    def history(self, since: float | None = None) -> list[dict[str, Any]]:
        """History rows (:data:`~notifier.core.formats.HISTORY_COLUMNS`), oldest first, for
        :func:`~notifier.core.formats.history_obj`."""
        sql = f"SELECT {', '.join(HISTORY_COLUMNS)} FROM history WHERE asked_at >= ? ORDER BY asked_at"  # noqa: S608
        args = (float("-inf") if since is None else since,)  # all rows, also those of broken clocks
        rows = self._read(sql, args)  # (in memory: a store without a file)
        if self.path is not None:
            self.flush(2.0)
            with self._file_lock:
                if self._file is not None:
                    try:
                        rows = [tuple(from_db(v) for v in r) for r in self._file.execute(sql, args).fetchall()]
                    except sqlite3.Error as exc:
                        log.warning("cannot read the history (%s)", clean(exc, 200))
        return [dict(zip(HISTORY_COLUMNS, row, strict=True)) for row in rows]

    def prune(self, older_than: float) -> None:
        self._run("history", "DELETE FROM history WHERE asked_at < ?", (older_than,))
        self._run("notified", "DELETE FROM notified WHERE at < ?", (older_than,))
        self._run("pushed", "DELETE FROM pushed WHERE at < ?", (older_than,))
        self._run("snoozes", "DELETE FROM snoozes WHERE until < ?", (time.time(),))


def _reopen_log_files() -> None:
    """Log files in the deleted folder: write to new ones there, not to the unlinked inodes."""
    import logging as _logging

    for handler in _logging.getLogger().handlers:
        if isinstance(handler, _logging.FileHandler) and not os.path.exists(handler.baseFilename):
            try:
                os.makedirs(os.path.dirname(handler.baseFilename), mode=0o700, exist_ok=True)
                handler.acquire()
                try:
                    if handler.stream is not None:
                        handler.stream.close()
                    handler.stream = handler._open()
                finally:
                    handler.release()
            except OSError:
                pass
