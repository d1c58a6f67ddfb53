"""Small persistent state in SQLite (WAL) in the per-OS state folder: which questions were
already notified, snoozes and mutes, and the question history. If the folder or file cannot be
written, one line is logged and the app carries on with an in-memory store."""

from __future__ import annotations

import logging
import sqlite3
import threading
import time
from collections.abc import Iterable
from typing import Any

from notifier.core.model import Transition
from notifier.core.text import clean
from notifier.paths import from_db, private_file, to_db
from notifier.pi.entries import sane_time

log = logging.getLogger(__name__)

SCHEMA = """
CREATE TABLE IF NOT EXISTS notified (file TEXT NOT NULL, call_id TEXT NOT NULL, at REAL NOT NULL,
                                     PRIMARY KEY (file, call_id));
CREATE TABLE IF NOT EXISTS snoozes (scope TEXT PRIMARY KEY, until REAL NOT NULL);
CREATE TABLE IF NOT EXISTS mutes (project TEXT PRIMARY KEY, at REAL NOT NULL);
CREATE TABLE IF NOT EXISTS history (
  file TEXT NOT NULL, call_id TEXT NOT NULL, session_id TEXT, cwd TEXT, name TEXT,
  tool TEXT, text TEXT, header TEXT, options TEXT, count INTEGER,
  asked_at REAL NOT NULL, resolved_at REAL, outcome TEXT, waited_s REAL,
  PRIMARY KEY (file, call_id));
CREATE INDEX IF NOT EXISTS history_asked ON history (asked_at);
"""
ALL = "*"  # the snooze scope meaning every session
_PROJECT = "project:"


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
        self._db = self._open(path)

    def _open(self, path: str | None) -> sqlite3.Connection:
        if path:
            try:
                private_file(path)  # 0600 in a 0700 folder; SQLite's side files inherit the mode
                db = sqlite3.connect(path, timeout=5, check_same_thread=False, isolation_level=None)
                db.execute("PRAGMA journal_mode=WAL")
                db.execute("PRAGMA synchronous=NORMAL")
                db.executescript(SCHEMA)
                self.persistent = True
                return db
            except (OSError, sqlite3.Error) as exc:
                log.warning(
                    "cannot use the state store %s (%s); state will not survive a restart", clean(path), exc
                )
        db = sqlite3.connect(":memory:", check_same_thread=False, isolation_level=None)
        db.executescript(SCHEMA)
        return db

    def _run(self, sql: str, args: Iterable[Any] = ()) -> list[tuple[Any, ...]]:
        rows = self._execute(sql, tuple(to_db(a) for a in args))  # any str, also names that are not UTF-8
        return [tuple(from_db(v) for v in row) for row in rows]

    def _execute(self, sql: str, args: Iterable[Any] = ()) -> list[tuple[Any, ...]]:
        with self._lock:
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

    def close(self) -> None:
        with self._lock:
            try:
                self._db.close()
            except sqlite3.Error:
                pass

    # ---- notified ----

    def notified(self) -> set[tuple[str, str]]:
        return {(f, c) for f, c in self._run("SELECT file, call_id FROM notified")}

    def mark_notified(self, keys: Iterable[tuple[str, str]], now: float | None = None) -> None:
        at = time.time() if now is None else now
        for file, call_id in keys:
            self._run("INSERT OR IGNORE INTO notified VALUES (?, ?, ?)", (file, call_id, at))

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

    def mutes(self) -> set[str]:
        return {p for (p,) in self._run("SELECT project FROM mutes")}

    def mute(self, project: str, on: bool) -> None:
        if on:
            self._run("INSERT OR REPLACE INTO mutes VALUES (?, ?)", (project, time.time()))
        else:
            self._run("DELETE FROM mutes WHERE project = ?", (project,))

    # ---- history ----

    def _asked(self, t: Transition) -> None:
        q, s = t.question, t.session
        self._run(
            "INSERT OR IGNORE INTO history (file, call_id, session_id, cwd, name, tool, text, header, options,"
            " count, asked_at) VALUES (?,?,?,?,?,?,?,?,?,?,?)",
            (
                s.key,
                q.tool_call_id,
                s.id,
                s.cwd,
                s.name,
                q.tool,
                q.text,
                q.header,
                "\x1f".join(q.options),
                q.count,
                _time(q.asked_at),
            ),
        )

    def record(self, transitions: Iterable[Transition]) -> None:
        for t in transitions:
            q, s = t.question, t.session
            if t.kind == "needs_input":
                self._asked(t)
            elif t.kind == "resolved":
                self._asked(t)  # asked before we were watching: record it now
                self._run(
                    "UPDATE history SET resolved_at = ?, outcome = ?, waited_s = ? WHERE file = ? AND call_id = ?"
                    " AND resolved_at IS NULL",
                    (_time(q.asked_at) + _wait(t.waited_s), t.outcome, _wait(t.waited_s), s.key, q.tool_call_id),
                )
            elif t.kind == "abandoned":
                self._run(
                    "UPDATE history SET outcome = 'abandoned' WHERE file = ? AND call_id = ? AND resolved_at IS NULL",
                    (s.key, q.tool_call_id),
                )

    def history(self, since: float | None = None) -> list[dict[str, Any]]:
        rows = self._run(
            "SELECT file, call_id, session_id, cwd, name, tool, text, header, options, count, asked_at, resolved_at,"
            " outcome, waited_s FROM history WHERE asked_at >= ? ORDER BY asked_at",
            (float("-inf") if since is None else since,),  # all rows, also those of broken clocks
        )
        keys = (
            "file",
            "call_id",
            "session_id",
            "cwd",
            "name",
            "tool",
            "text",
            "header",
            "options",
            "count",
            "asked_at",
            "resolved_at",
            "outcome",
            "waited_s",
        )
        return [dict(zip(keys, row, strict=True)) for row in rows]

    def prune(self, older_than: float) -> None:
        self._run("DELETE FROM history WHERE asked_at < ?", (older_than,))
        self._run("DELETE FROM notified WHERE at < ?", (older_than,))
        self._run("DELETE FROM snoozes WHERE until < ?", (time.time(),))
