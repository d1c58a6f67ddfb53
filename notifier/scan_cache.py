"""The start-up scan cache: per session file, a summary of its state and where reading stopped,
valid while the file's stamp (device, inode, size, mtime_ns) is unchanged, like git's index (a
changed file is read again; liveness is never cached). One SQLite table ``scan(path, stamp, head,
tail, partial, summary)`` in the state folder, 0600 in a 0700 folder (it holds names, folders,
questions); deleting it is always safe. The tailer's bytes (digests of the file's head and of the
window before the offset, an unfinished last line) are blobs; the rest is a JSON summary, an
array of the values :data:`FIELDS` names (no names repeated in every row: half the bytes to parse).
``PRAGMA user_version`` is its version (format, release, question catalog): another one is
emptied, quietly. What is read back is untrusted (bit rot, another program, a hand edit): each
summary goes through the one bounded JSON parse and is checked field by field, each blob by its
type and length. Anything wrong: the cache is deleted and rebuilt by this scan, said in one log
line. Used for one scan: :meth:`StartupCache.lookup` each file, then :meth:`~StartupCache.save`."""

from __future__ import annotations

import contextlib
import json
import logging
import os
import sqlite3
import zlib
from collections.abc import Iterable, Mapping
from typing import Any, NamedTuple

from notifier import __version__
from notifier.core import codec as jsonbound
from notifier.core.board import Board
from notifier.core.reducer import SessionReducer, restore, summarize
from notifier.core.text import clean
from notifier.system.paths import private_file
from notifier.tail import HEAD, Tailer

log = logging.getLogger(__name__)

FORMAT = 8  # 8: the summary an array (7: the tailer's bytes in blobs; 6: every field of a question)
MAX_ROWS = 200_000  # more rows than any scan writes: a damaged cache
KEEP_ROWS = 20_000  # past this many rows, those of folders not scanned now are dropped
MAX_SUMMARY = 1 << 20  # bytes of one summary
MAX_TEXT = 64 << 10  # characters of any string in a summary
MAX_LIST = 1000
MAX_PARTIAL = 64 << 10  # bytes of an unfinished last line held back
_STATE_FIELDS = ("sid", "cwd", "name", "base", "pending", "running", "tool", "at", "header")  # (summarize's)
FIELDS = ("offset", "head_len", "tail_start", "ws", "nc", *_STATE_FIELDS)  # a summary's values, in order
_COLUMNS = [("path", "BLOB"), ("stamp", "TEXT"), *((name, "BLOB") for name in ("head", "tail", "partial", "summary"))]
_encode = json.JSONEncoder(separators=(",", ":"), allow_nan=False).encode  # (ASCII: lone surrogates escaped)


class Damaged(ValueError):  # the cache holds something this program never writes
    pass


class Restored(NamedTuple):  # an unchanged file: its state, a tailer that continues at its end
    tailer: Tailer
    reducer: SessionReducer


def version(tools: Iterable[str]) -> int:
    """``PRAGMA user_version`` of a cache written for this format, release and catalog."""
    return zlib.crc32(f"{FORMAT}|{__version__}|{','.join(sorted(tools))}".encode()) >> 1


def _below(roots: Iterable[str]) -> tuple[str, list[bytes]]:
    """An SQL condition on ``path``: below one of ``roots`` (a range of the key per root)."""
    bounds: list[bytes] = []
    for root in roots:
        prefix = os.fsencode(root.rstrip(os.sep) + os.sep)
        bounds += [prefix, prefix[:-1] + bytes([prefix[-1] + 1])]
    terms = ["(path >= ? AND path < ?)"] * (len(bounds) // 2)
    return "(" + (" OR ".join(terms) or "0") + ")", bounds


class StartupCache:
    def __init__(
        self, path: str, tools: Iterable[str], roots: list[str], max_line: int, keep_rows: int = KEEP_ROWS
    ) -> None:
        self._path = path
        self._version = version(tools)
        self._roots = roots
        self._max_line = max_line
        self._keep_rows = keep_rows
        self._db: sqlite3.Connection | None = None
        self._rows: dict[str, tuple[Any, ...]] = {}  # path → (stamp, head, tail, partial, summary) as stored
        self._read: dict[str, str] = {}  # files read (not restored) → their stamp before the read
        self._seen: set[str] = set()
        self._opened = self._done = False
        self.hits = 0

    def open(self) -> None:
        """Open the cache and load the rows below the roots (once). A cache that does not exist
        yet holds nothing to load: it is created when saved."""
        if self._opened:
            return
        self._opened = True
        if not os.path.lexists(self._path):
            return
        try:
            self._db = self._connect()
            cond, params = _below(self._roots)
            (count,) = self._db.execute("SELECT count(*) FROM scan").fetchone()
            if count > MAX_ROWS:
                raise Damaged("it is far larger than any scan writes")
            for path, *row in self._db.execute(f"SELECT * FROM scan WHERE {cond}", params):
                if type(path) is not bytes:
                    raise Damaged("a row's path is not a name")
                self._rows[os.fsdecode(path)] = tuple(row)
            self._close()  # (the rows are read: its pages need not stay in memory; saving opens it again)
        except sqlite3.OperationalError as exc:  # (busy, locked: nothing wrong with what it holds)
            log.debug("scan cache not read (%s)", exc)
            self._close()
        except (sqlite3.Error, Damaged, OSError) as exc:
            self._damaged(str(exc))

    def lookup(self, path: str, st: os.stat_result) -> Restored | None:
        """The file's state if it is unchanged since it was summarized (``st``: its stat before
        any read); ``None``: read it (it is then summarized by :meth:`save`)."""
        self.open()
        self._seen.add(path)
        now = f"{st.st_dev}:{st.st_ino}:{st.st_size}:{st.st_mtime_ns}"  # (a file unchanged while equal)
        row = self._rows.get(path)
        if row is not None and row[0] == now:
            try:
                restored = _unpack(row[1:], path, st.st_size, self._max_line, (st.st_dev, st.st_ino))
            except Damaged as exc:
                self._damaged(str(exc))
            else:
                self.hits += 1
                return restored
        self._read[path] = now
        return None

    def save(self, tailers: Mapping[str, Tailer], board: Board) -> None:
        """Remember what the scan read, forget files under the roots that are gone, and close."""
        if not self._opened or self._done:
            return
        self._done = True
        gone = [p for p in self._rows if p not in self._seen]
        rows = []
        for path, st in self._read.items():
            tailer, reducer = tailers.get(path), board.local.reducer(path)
            packed = _pack(tailer, reducer) if tailer is not None and reducer is not None else None
            if packed is not None:
                rows.append((os.fsencode(path), st, *packed))
        if not rows and not gone:  # (a warm scan: nothing changed, nothing to write)
            return
        try:
            db = self._db = self._connect()  # (open() closed it once it had read the rows)
            with db:
                db.execute("BEGIN IMMEDIATE")  # (the write lock first: another writer may be at work)
                db.executemany("INSERT OR REPLACE INTO scan VALUES (?, ?, ?, ?, ?, ?)", rows)
                db.executemany("DELETE FROM scan WHERE path = ?", [(os.fsencode(p),) for p in gone])
                (count,) = db.execute("SELECT count(*) FROM scan").fetchone()
                if count > self._keep_rows:
                    cond, params = _below(self._roots)
                    db.execute(f"DELETE FROM scan WHERE NOT {cond}", params)
        except (sqlite3.Error, Damaged, OSError) as exc:  # (busy, a full disk…: next time)
            log.debug("scan cache not written (%s)", exc)
        self._close()

    def _connect(self) -> sqlite3.Connection:
        private_file(self._path)
        db = sqlite3.connect(self._path, timeout=2.0, isolation_level=None)
        try:
            db.execute("PRAGMA synchronous=OFF")  # a lost write only costs a re-read
            (found,) = db.execute("PRAGMA user_version").fetchone()
            columns = [(r[1], r[2]) for r in db.execute("PRAGMA table_info(scan)")]
            if found != self._version or not columns:  # another version, or none yet: no damage
                db.execute("DROP TABLE IF EXISTS scan")
                db.execute(
                    "CREATE TABLE scan (path BLOB PRIMARY KEY, stamp TEXT, head BLOB, tail BLOB, partial BLOB,"
                    " summary BLOB) WITHOUT ROWID"
                )
                db.execute(f"PRAGMA user_version={self._version}")
            elif columns != _COLUMNS:
                raise Damaged("its table has the wrong columns")
        except BaseException:
            db.close()
            raise
        return db

    def _damaged(self, why: str) -> None:
        """Delete the cache (said once) and start an empty one: this scan reads every file."""
        self._close()
        log.warning("the scan cache %s was damaged (%s); rebuilding it", clean(self._path), clean(why, 200))
        self._read.update((p, row[0]) for p, row in self._rows.items() if p in self._seen)
        self._rows = {}
        for suffix in ("", "-journal", "-wal", "-shm"):
            with contextlib.suppress(OSError):
                os.unlink(self._path + suffix)

    def _close(self) -> None:
        with contextlib.suppress(sqlite3.Error):
            if self._db is not None:
                self._db.close()
        self._db = None


# ---- one summary ----


def _pack(tailer: Tailer, reducer: SessionReducer) -> tuple[bytes, bytes, bytes, bytes] | None:
    """``(head, tail, partial, summary)`` of a file read (``None`` if it cannot be cached: that
    file is read next time)."""
    t, state = tailer.state(), summarize(reducer)
    try:
        if reducer.pending or reducer.running:  # (what could not be read back is not written;
            _restored(state)  # the other strings are bounded by pi/entries already)
        data = [t["offset"], t["head_len"], t["tail_start"], tailer.window_start, tailer.name_checked]
        raw = _encode(data + [state[name] for name in _STATE_FIELDS]).encode("ascii")
    except (ValueError, KeyError, Damaged):
        return None
    if len(raw) > MAX_SUMMARY or len(t["partial"]) > MAX_PARTIAL:
        return None
    return t["head"], t["tail"], t["partial"], raw


def _unpack(row: tuple[Any, ...], path: str, size: int, max_line: int, ident: tuple[int, int]) -> Restored:
    """The tailer and the state of a row's ``(head, tail, partial, summary)`` (raises
    :class:`Damaged` on anything wrong)."""
    head, tail, partial, raw = row
    if type(raw) is not bytes:
        raise Damaged("a summary is not a blob")
    try:
        data = jsonbound.loads(raw, MAX_SUMMARY, max_depth=10)
    except ValueError as exc:  # (not JSON, not UTF-8, too large or too deep)
        raise Damaged(f"a summary is not valid JSON ({type(exc).__name__})") from exc
    if type(data) is not list or len(data) != len(FIELDS):
        raise Damaged("a summary has the wrong fields")
    offset, head_len, tail_start, ws, nc, sid, cwd, name, base, pending, running, tool, at, header = data  # (FIELDS)
    offset = _int(offset, size)
    head_len, tail_start, ws = _int(head_len, HEAD), _int(tail_start, offset), _int(ws, offset)
    if type(head) is not bytes or type(tail) is not bytes or len(head) != 16 or len(tail) != 16:
        raise Damaged("a summary holds wrong digests")  # (sessions.tail.digest: 16 bytes)
    if type(partial) is not bytes or len(partial) > min(offset, MAX_PARTIAL) or type(nc) is not bool:
        raise Damaged("a summary holds a wrong position")
    tailer = Tailer(path, max_line)
    position = dict(offset=offset, partial=partial, head_len=head_len, head=head, tail_start=tail_start, tail=tail)
    tailer.restore(position, ident)
    tailer.window_start, tailer.name_checked = ws, nc
    state = {
        "sid": sid, "cwd": cwd, "name": name, "base": base, "pending": pending, "running": running, "tool": tool,
        "at": at, "header": header,
    }  # fmt: skip
    return Restored(tailer, _restored(state))


def _restored(state: dict[str, Any]) -> SessionReducer:
    """The reducer of a summary (:func:`notifier.core.reducer.restore` checks every field)."""
    try:
        return restore(state, MAX_TEXT, MAX_LIST)
    except ValueError as exc:
        raise Damaged(f"a summary holds {exc}") from None


def _int(value: Any, high: int) -> int:
    if type(value) is not int or not 0 <= value <= high:
        raise Damaged("a summary holds a wrong number")
    return value
