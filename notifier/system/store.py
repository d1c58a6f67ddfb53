"""Small persistent state in SQLite (WAL) in the per-OS state folder: which questions were
already notified (and pushed), snoozes and mutes, and the question history. If the folder or file
cannot be written, one line is logged and the app carries on with an in-memory store."""

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


class Store:
    def __init__(self, path: str | None) -> None:
        self.path = path
        self._lock = threading.Lock()
        self.persistent = False
        self._ident: tuple[int, int] | None = None
        self._db = self._open(path)

    def _open(self, path: str | None) -> sqlite3.Connection:
        if path:
            try:
                private_file(path)  # 0600 in a 0700 folder; SQLite's side files inherit the mode
                db = sqlite3.connect(path, timeout=5, check_same_thread=False, isolation_level=None)
                db.execute("PRAGMA journal_mode=WAL")
                db.execute("PRAGMA synchronous=NORMAL")
                db.executescript(SCHEMA)
                _add_reminders_column(db)
                self.persistent = True
                st = os.stat(path)
                self._ident = (st.st_dev, st.st_ino)
                return db
            except (OSError, sqlite3.Error) as exc:
                log.warning(
                    "cannot use the state store %s (%s); state will not survive a restart", clean(path), exc
                )
        db = sqlite3.connect(":memory:", check_same_thread=False, isolation_level=None)
        db.executescript(SCHEMA)
        return db

    def _vanished(self) -> bool:
        """The database file was deleted (with its folder, perhaps) or replaced under us."""
        if not self.persistent or self.path is None:
            return False
        try:
            st = os.stat(self.path)
        except FileNotFoundError:
            return True
        except OSError:
            return False
        return (st.st_dev, st.st_ino) != self._ident

    def _reopen(self) -> None:
        """Recreate the vanished database and carry over everything the open connection still
        holds (notified questions above all: a restart must not notify them again). Lock held."""
        assert self.path is not None
        old = self._db
        self.persistent = False
        fresh = self._open(self.path)
        if not self.persistent:
            self._db = fresh  # (logged by _open) in memory from now on; copy what we had anyway
        copied = 0
        for table in ("notified", "pushed", "snoozes", "mutes", "history", "bubbles"):
            try:
                rows = old.execute(f"SELECT * FROM {table}").fetchall()  # noqa: S608
                if rows:
                    marks = ",".join("?" * len(rows[0]))
                    fresh.executemany(f"INSERT OR IGNORE INTO {table} VALUES ({marks})", rows)  # noqa: S608
                    copied += len(rows) if table == "notified" else 0
            except sqlite3.Error as exc:
                log.debug("could not carry over %s: %s", table, exc)
        try:
            old.close()
        except sqlite3.Error:
            pass
        self._db = fresh
        _reopen_log_files()
        log.warning(
            "the state folder %s was deleted while running; recreated it (%d notified questions, "
            "snoozes, mutes and history carried over)",
            clean(os.path.dirname(self.path)),
            copied,
        )

    def _run(self, sql: str, args: Iterable[Any] = ()) -> list[tuple[Any, ...]]:
        rows = self._execute(sql, tuple(to_db(a) for a in args))  # any str, also names that are not UTF-8
        return [tuple(from_db(v) for v in row) for row in rows]

    def _execute(self, sql: str, args: Iterable[Any] = ()) -> list[tuple[Any, ...]]:
        with self._lock:
            if self._vanished():
                self._reopen()
            try:
                return self._db.execute(sql, tuple(args)).fetchall()
            except sqlite3.Error as exc:
                if self.persistent:
                    log.warning("the state store failed (%s); carrying on in memory", exc)
                    self.persistent = False
                    self._db = self._open(None)
                    try:
                        return self._db.execute(sql, tuple(args)).fetchall()
                    except sqlite3.Error:
                        return []
                return []

    def close(self, timeout: float = -1) -> None:
        """Close the database; with a ``timeout``, give up (leave it to the process's exit) if a
        write is still stuck (e.g. on another process's lock) after that many seconds."""
        if not self._lock.acquire(timeout=timeout):
            log.debug("the state store is busy; leaving it to close with the process")
            return
        try:
            if self._vanished():  # deleted since the last write: keep what it knew for next time
                self._reopen()
            self._db.close()
        except sqlite3.Error:
            pass
        finally:
            self._lock.release()

    # ---- notified ----

    def notified(self) -> set[tuple[str, str]]:
        return {(f, c) for f, c in self._run("SELECT file, call_id FROM notified")}

    def mark_notified(self, keys: Iterable[tuple[str, str]], now: float | None = None) -> None:
        at = time.time() if now is None else now
        for file, call_id in keys:
            self._run("INSERT OR IGNORE INTO notified (file, call_id, at) VALUES (?, ?, ?)", (file, call_id, at))

    def reminders(self) -> dict[tuple[str, str], int]:
        """How many reminders each notified question already had (only those with some)."""
        rows = self._run("SELECT file, call_id, reminders FROM notified WHERE reminders > 0")
        return {(f, c): int(n) for f, c, n in rows}

    def mark_reminded(self, counts: Mapping[tuple[str, str], int]) -> None:
        """Record reminder counts of questions already notified (never lowers one)."""
        for (file, call_id), n in counts.items():
            self._run(
                "UPDATE notified SET reminders = MAX(reminders, ?) WHERE file = ? AND call_id = ?",
                (n, file, call_id),
            )

    # ---- bubbles: the notifications on screen, by server, so that after a crash the next run
    # can close those whose question was answered meanwhile (sinks/notify/screen.py) ----

    def bubbles(self) -> dict[tuple[str, int], set[tuple[str, str]]]:
        """``{(server owner, notification id): the questions it shows}``."""
        out: dict[tuple[str, int], set[tuple[str, str]]] = {}
        for owner, nid, file, call_id in self._run("SELECT owner, id, file, call_id FROM bubbles"):
            if isinstance(owner, str) and isinstance(nid, int) and isinstance(file, str) and isinstance(call_id, str):
                out.setdefault((owner, nid), set()).add((file, call_id))
        return out

    def put_bubble(self, owner: str, nid: int, keys: Iterable[tuple[str, str]]) -> None:
        self._run("DELETE FROM bubbles WHERE owner = ? AND id = ?", (owner, nid))
        for file, call_id in keys:
            self._run(
                "INSERT OR IGNORE INTO bubbles (owner, id, file, call_id) VALUES (?, ?, ?, ?)",
                (owner, nid, file, call_id),
            )

    def drop_bubbles(self, owner: str, nid: int | None = None) -> None:
        """Forget one notification of server ``owner`` (``nid``), or all of them."""
        if nid is None:
            self._run("DELETE FROM bubbles WHERE owner = ?", (owner,))
        else:
            self._run("DELETE FROM bubbles WHERE owner = ? AND id = ?", (owner, nid))

    def keep_bubbles_of(self, owner: str) -> None:
        """Forget the notifications of every server but ``owner`` (gone with their server)."""
        self._run("DELETE FROM bubbles WHERE owner != ?", (owner,))

    # ---- pushed (sinks/push.py): a question is pushed once, also across restarts ----
    # (The table is created on open when missing: stores from before pushes were kept get it.)

    def pushed(self) -> set[tuple[str, str]]:
        return {(f, c) for f, c in self._run("SELECT file, call_id FROM pushed")}

    def mark_pushed(self, file: str, call_id: str, now: float | None = None) -> None:
        at = time.time() if now is None else now
        self._run("INSERT OR IGNORE INTO pushed (file, call_id, at) VALUES (?, ?, ?)", (file, call_id, at))

    # ---- snoozes and mutes ----

    # A snooze's scope: one session (its file), one project ("project:<name>"), or all ("*").

    def snoozes(self, now: float) -> list[tuple[str | None, str | None, float]]:
        """The snoozes still running at ``now``: (session, project, until); both None = all."""
        out: list[tuple[str | None, str | None, float]] = []
        for scope, until in self._run("SELECT scope, until FROM snoozes WHERE until > ?", (now,)):
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
        self._run("INSERT OR REPLACE INTO snoozes VALUES (?, ?)", (scope, until))

    def clear_snoozes(self) -> None:
        self._run("DELETE FROM snoozes")

    def preferences(self, now: float) -> Preferences:
        """The snoozes still running at ``now`` and the muted projects, as one value."""
        prefs = Preferences(muted=frozenset(self.mutes()))
        for session, project, until in self.snoozes(now):
            prefs = prefs.snoozed(until, now, session, project)
        return prefs

    def mutes(self) -> set[str]:
        return {p for (p,) in self._run("SELECT project FROM mutes")}

    def mute(self, project: str, on: bool) -> None:
        if on:
            self._run("INSERT OR REPLACE INTO mutes VALUES (?, ?)", (project, time.time()))
        else:
            self._run("DELETE FROM mutes WHERE project = ?", (project,))

    # ---- history ----

    def _asked(self, t: Transition) -> None:
        row = history_row(t)  # the one serialisation of a question (core/formats.py)
        row["asked_at"] = _time(t.question.asked_at)
        self._run(
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
                    "UPDATE history SET outcome = 'abandoned' WHERE file = ? AND call_id = ? AND resolved_at IS NULL",
                    (s.key, q.tool_call_id),
                )

    def history(self, since: float | None = None) -> list[dict[str, Any]]:
        """History rows (:data:`~notifier.core.formats.HISTORY_COLUMNS`), oldest first, for
        :func:`~notifier.core.formats.history_obj`."""
        rows = self._run(
            f"SELECT {', '.join(HISTORY_COLUMNS)} FROM history WHERE asked_at >= ? ORDER BY asked_at",  # noqa: S608
            (float("-inf") if since is None else since,),  # all rows, also those of broken clocks
        )
        return [dict(zip(HISTORY_COLUMNS, row, strict=True)) for row in rows]

    def prune(self, older_than: float) -> None:
        self._run("DELETE FROM history WHERE asked_at < ?", (older_than,))
        self._run("DELETE FROM notified WHERE at < ?", (older_than,))
        self._run("DELETE FROM pushed WHERE at < ?", (older_than,))
        self._run("DELETE FROM snoozes WHERE until < ?", (time.time(),))


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
