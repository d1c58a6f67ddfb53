"""The start-up scan cache: per session file, a summary of its state and where reading stopped
(plain data in marshal format: nothing is executed when it is read back),
valid while the file's (device, inode, size, mtime_ns) are unchanged, like git's index. A
changed file is simply read again (bounded). The key also holds the question catalog and a
format version, so new tools or a new release never reuse old summaries. Liveness is never
cached. The cache is its own SQLite file in the state folder: deleting it is always safe."""

from __future__ import annotations

import contextlib
import hashlib
import logging
import os
import sqlite3
import sys
from collections.abc import Iterable

from notifier import __version__
from notifier.paths import from_db, private_file, to_db

log = logging.getLogger(__name__)
FORMAT = 1


def fingerprint(tools: Iterable[str]) -> str:
    # marshal's format belongs to the Python version: a new interpreter never reads old rows
    text = f"{FORMAT}|{__version__}|{sys.version}|" + ",".join(sorted(tools))
    return hashlib.sha1(text.encode()).hexdigest()[:16]


class ScanCache:
    def __init__(self, path: str, key: str) -> None:
        self.key = key
        self.db: sqlite3.Connection | None = None
        try:
            private_file(path)  # 0600 in a 0700 folder, like the store
            db = sqlite3.connect(path, timeout=2, isolation_level=None, check_same_thread=False)
            db.execute("PRAGMA journal_mode=WAL")
            db.execute("PRAGMA synchronous=OFF")  # a lost write only costs a re-read
            db.execute(
                "CREATE TABLE IF NOT EXISTS scan (file TEXT PRIMARY KEY, stamp TEXT NOT NULL, data TEXT NOT NULL)"
            )
            self.db = db
        except (OSError, sqlite3.Error) as exc:
            log.debug("no scan cache (%s)", exc)

    def stamp(self, st: os.stat_result) -> str:
        return f"{self.key}:{st.st_dev}:{st.st_ino}:{st.st_size}:{st.st_mtime_ns}"

    def load(self) -> dict[str, tuple[str, bytes]]:
        if self.db is None:
            return {}
        try:
            rows = self.db.execute("SELECT file, stamp, data FROM scan")
            return {str(from_db(f)): (s, d) for f, s, d in rows}  # file names need not be UTF-8
        except sqlite3.Error as exc:
            log.debug("scan cache unreadable (%s)", exc)
            return {}

    def save(self, rows: list[tuple[str, str, bytes]], forget: Iterable[str] = ()) -> None:
        if self.db is None:
            return
        try:
            with self.db:
                self.db.execute("BEGIN")
                self.db.executemany("INSERT OR REPLACE INTO scan VALUES (?, ?, ?)", [(to_db(f), s, d) for f, s, d in rows])
                self.db.executemany("DELETE FROM scan WHERE file = ?", [(to_db(f),) for f in forget])
        except sqlite3.Error as exc:
            log.debug("scan cache not written (%s)", exc)

    def close(self) -> None:
        if self.db is not None:
            with contextlib.suppress(sqlite3.Error):
                self.db.close()
            self.db = None
