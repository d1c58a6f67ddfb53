"""What the app remembers across runs, in a SQLite file in the per-OS state folder: which questions
were already notified (and how often reminded) and pushed, the notifications on screen, snoozes and
mutes, and the question history. The file, its writer thread and its faults: :mod:`.database`."""

from __future__ import annotations

import time
from collections.abc import Iterable, Mapping
from typing import Any

from notifier.core.codec import HISTORY_COLUMNS, history_row, sane_time
from notifier.core.model import Transition
from notifier.core.planner import Preferences
from notifier.core.text import clean
from notifier.state.database import WRITE_WAIT_S, Database
from notifier.state.saved_choices import ALL, PROJECT

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
# Columns that stores of older versions lack: reminders were not kept across restarts, answers
# were not recorded. (Tables they lack, such as pushed, are made by the schema.)
ADDED = (("notified", "reminders INTEGER NOT NULL DEFAULT 0"), ("history", "answer TEXT"))
# The tables the running app reads back, kept in memory. History is only written (``pi-notifier
# history`` reads the file).
KEPT = ("notified", "pushed", "snoozes", "mutes", "bubbles")
# Bounds of one history row (a question's text is not cut in run --json, but the store keeps a
# record, not a copy: a hostile or huge question must not make the state folder grow by its size).
ROW_LIMITS = {"text": 4000, "options": 2000, "header": 500, "name": 500, "cwd": 2000, "session_id": 200, "tool": 128}


def _time(at: float) -> float:
    """A question's time as stored: one from a broken clock or another source is 'now'."""
    sane = sane_time(at)
    return time.time() if sane is None else sane


def _wait(seconds: float | None) -> float:
    return seconds if isinstance(seconds, (int, float)) and 0 <= seconds < 1e10 else 0.0


class Store(Database):
    """The app's state; ``path`` None: in memory, for this run."""

    def __init__(self, path: str | None, write_wait_s: float = WRITE_WAIT_S) -> None:
        super().__init__(path, SCHEMA, KEPT, ADDED, write_wait_s)

    # ---- notified ----

    def notified(self) -> set[tuple[str, str]]:
        return {(f, c) for f, c in self._read("SELECT file, call_id FROM notified")}

    def mark_notified(self, keys: Iterable[tuple[str, str]], now: float | None = None) -> None:
        at = time.time() if now is None else now
        for file, call_id in keys:
            self._run(
                "notified",
                "INSERT OR IGNORE INTO notified (file, call_id, at) VALUES (?, ?, ?)",
                (file, call_id, at),
            )

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
            elif scope.startswith(PROJECT):
                out.append((None, scope[len(PROJECT) :], until))
            else:
                out.append((scope, None, until))
        return out

    def snooze(self, until: float, session: str | None = None, project: str | None = None) -> None:
        """Snooze a session, a project, or (neither given) everything until ``until``."""
        scope = PROJECT + project if project else session or ALL
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
        row = history_row(t)  # the one serialisation of a question (core/codec.py)
        for column, limit in ROW_LIMITS.items():
            if isinstance(row.get(column), str):
                row[column] = row[column][:limit]
        row["asked_at"] = _time(t.question.asked_at)
        self._run(
            "history",
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
                    "history",
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
                    "history",
                    "UPDATE history SET outcome = 'abandoned' WHERE file = ? AND call_id = ? AND resolved_at IS NULL",
                    (s.key, q.tool_call_id),
                )

    def history(self, since: float | None = None) -> list[dict[str, Any]]:
        """History rows (:data:`~notifier.core.codec.HISTORY_COLUMNS`), oldest first, for
        :func:`~notifier.core.codec.history_obj`."""
        sql = f"SELECT {', '.join(HISTORY_COLUMNS)} FROM history WHERE asked_at >= ? ORDER BY asked_at"  # noqa: S608
        args = (float("-inf") if since is None else since,)  # all rows, also those of broken clocks
        rows = self._query(sql, args)
        return [dict(zip(HISTORY_COLUMNS, row, strict=True)) for row in rows]

    def prune(self, older_than: float) -> None:
        self._run("history", "DELETE FROM history WHERE asked_at < ?", (older_than,))
        self._run("notified", "DELETE FROM notified WHERE at < ?", (older_than,))
        self._run("pushed", "DELETE FROM pushed WHERE at < ?", (older_than,))
        self._run("snoozes", "DELETE FROM snoozes WHERE until < ?", (time.time(),))
