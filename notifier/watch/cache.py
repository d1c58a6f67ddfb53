"""The start-up scan cache: per session file, a summary of its state and where reading stopped,
valid while the file's (device, inode, size, mtime_ns) are unchanged, like git's index. A
changed file is simply read again (bounded). The key also holds the question catalog and a
format version, so new tools or a new release never reuse old summaries. Liveness is never
cached. The cache is its own SQLite file in the state folder: deleting it is always safe.

Everything read back is untrusted (bit rot, another program, a hand edit): rows are JSON
(parsed with the bounded parser, never ``marshal``/``pickle``), every row is checked for types
and sizes before use, and the whole read is bounded (row count, bytes). A cache that fails any
check is discarded and rebuilt by this run's scan, with one log line. The file is created 0600
in a 0700 folder: it holds session names, folders and questions.
"""

from __future__ import annotations

import base64
import binascii
import contextlib
import hashlib
import json
import logging
import math
import os
import sqlite3
from collections.abc import Iterable, Mapping
from typing import Any, get_args

from notifier import __version__
from notifier.core import jsonbound
from notifier.core.model import State
from notifier.core.text import clean
from notifier.system.paths import from_db, private_file, to_db

log = logging.getLogger(__name__)
FORMAT = 2  # 1: marshal rows (never read again); 2: validated JSON rows
MAX_ROWS = 200_000
MAX_ROW = 1 << 20  # bytes of one summary (a larger one is not cached: that file is read instead)
MAX_TOTAL = 64 << 20  # bytes of all rows together
MAX_PATH = 4096
MAX_STAMP = 512
MAX_TEXT = 64 << 10  # characters of any string in a summary
MAX_LIST = 1000
_STATES = frozenset(get_args(State))
_SCHEMA = [("file", "TEXT"), ("stamp", "TEXT"), ("data", "BLOB")]


class Damaged(ValueError):
    """The cache holds something this program never writes."""


def fingerprint(tools: Iterable[str]) -> str:
    text = f"{FORMAT}|{__version__}|" + ",".join(sorted(tools))
    return hashlib.sha1(text.encode()).hexdigest()[:16]


# ---- rows: encode / decode + validate ----


def encode(
    summary: Mapping[str, Any], tail: Mapping[str, Any], window_start: int, name_checked: bool
) -> bytes:
    """One row's data (``tail``: :meth:`notifier.watch.tail.Tailer.state`)."""
    data = {
        "s": summary,
        "t": {
            "offset": tail["offset"],
            "partial": base64.b64encode(tail["partial"]).decode("ascii"),
            "head_len": tail["head_len"],
            "head": tail["head"].hex(),
            "tail_start": tail["tail_start"],
            "tail": tail["tail"].hex(),
        },
        "ws": window_start,
        "nc": name_checked,
    }
    # ASCII: lone surrogates (names and text that were not UTF-8) travel as escapes
    return json.dumps(data, separators=(",", ":"), allow_nan=False).encode("ascii")


def decode(raw: bytes) -> dict[str, Any]:
    """The row's data, checked (raises :class:`Damaged`): ``{"s", "t", "ws", "nc"}`` with ``t``
    ready for :meth:`Tailer.restore` (bytes decoded)."""
    try:
        data = jsonbound.loads(raw, max_bytes=MAX_ROW, max_depth=12)
    except ValueError as exc:  # not JSON / not UTF-8 / too big or deep
        raise Damaged(f"a row is not valid JSON ({type(exc).__name__})") from exc
    d = _obj(data, {"s", "t", "ws", "nc"})
    t = _obj(d["t"], {"offset", "partial", "head_len", "head", "tail_start", "tail"})
    offset = _int(t["offset"])
    try:
        partial = base64.b64decode(str(_str(t["partial"])), validate=True)
        head, tail = bytes.fromhex(str(_str(t["head"]))), bytes.fromhex(str(_str(t["tail"])))
    except (binascii.Error, ValueError) as exc:
        raise Damaged("a row's read position is garbled") from exc
    head_len, tail_start = _int(t["head_len"]), _int(t["tail_start"])
    if len(head) != 16 or len(tail) != 16 or tail_start > offset or len(partial) > offset:
        raise Damaged("a row's read position is inconsistent")
    ws = _int(d["ws"])
    if not isinstance(d["nc"], bool) or ws > offset:
        raise Damaged("a row's read position is inconsistent")
    tailer = {
        "offset": offset,
        "partial": partial,
        "head_len": head_len,
        "head": head,
        "tail_start": tail_start,
        "tail": tail,
    }
    return {"s": _summary(d["s"]), "t": tailer, "ws": ws, "nc": d["nc"]}


def _obj(value: Any, keys: set[str], optional: frozenset[str] = frozenset()) -> dict[str, Any]:
    if not isinstance(value, dict) or not keys <= value.keys() <= keys | optional:
        raise Damaged("a row has the wrong fields")
    return value


def _str(value: Any, none: bool = False) -> str | None:
    if value is None and none:
        return None
    if not isinstance(value, str) or len(value) > MAX_TEXT:
        raise Damaged("a row holds a wrong or oversized string")
    return value


def _int(value: Any) -> int:
    if type(value) is not int or not 0 <= value < 1 << 62:
        raise Damaged("a row holds a wrong number")
    return value


def _time(value: Any) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        raise Damaged("a row holds a wrong time")
    return float(value)


def _list(value: Any, limit: int = MAX_LIST) -> list[Any]:
    if not isinstance(value, list) or len(value) > limit:
        raise Damaged("a row holds a wrong or oversized list")
    return value


def _summary(value: Any) -> dict[str, Any]:
    """Check a :func:`notifier.core.reducer.summarize` dict field by field."""
    s = _obj(value, {"sid", "cwd", "name", "base", "pending", "running", "tool", "at", "header"})
    for key in ("sid", "cwd", "name", "tool"):
        _str(s[key], none=True)
    if s["base"] not in _STATES or not isinstance(s["header"], bool):
        raise Damaged("a row holds a wrong state")
    _time(s["at"])
    running = s["running"]
    if not isinstance(running, dict) or len(running) > MAX_LIST:
        raise Damaged("a row holds wrong running tools")
    for k, v in running.items():
        _str(k)
        _str(v)
    for q in _list(s["pending"]):
        q = _obj(q, {"id", "tool", "at", "title", "items"})
        _str(q["id"])
        _str(q["tool"])
        _str(q["title"], none=True)
        _time(q["at"])
        for item in _list(q["items"]):
            item = _obj(item, {"text", "header", "detail", "multi", "options"})
            _str(item["text"])
            _str(item["header"], none=True)
            _str(item["detail"], none=True)
            if not isinstance(item["multi"], bool):
                raise Damaged("a row holds a wrong flag")
            for option in _list(item["options"]):
                option = _list(option, 3)
                if len(option) != 3 or not isinstance(option[2], bool):
                    raise Damaged("a row holds a wrong option")
                _str(option[0])
                _str(option[1], none=True)
    return s


# ---- the file ----


class ScanCache:
    def __init__(self, path: str, key: str) -> None:
        self.path = path
        self.key = key
        self.db: sqlite3.Connection | None = None
        self.discarded: str | None = None  # why the old cache was thrown away, if it was
        try:
            self.db = self._open()
        except Damaged as exc:
            self._discard(str(exc))
        except (OSError, sqlite3.Error) as exc:
            if isinstance(exc, sqlite3.DatabaseError):
                self._discard(f"not a usable database ({exc})")
            else:
                log.debug("no scan cache (%s)", exc)

    def _open(self) -> sqlite3.Connection:
        private_file(self.path)  # 0600 in a 0700 folder, like the store
        db = sqlite3.connect(self.path, timeout=2, isolation_level=None, check_same_thread=False)
        try:
            setlimit = getattr(db, "setlimit", None)
            if setlimit is not None:  # Python 3.11+: no value larger than this is ever loaded
                setlimit(sqlite3.SQLITE_LIMIT_LENGTH, MAX_ROW + 1024)  # type: ignore[attr-defined]
            db.execute("PRAGMA journal_mode=WAL")
            db.execute("PRAGMA synchronous=OFF")  # a lost write only costs a re-read
            version = db.execute("PRAGMA user_version").fetchone()[0]
            columns = [(r[1], r[2]) for r in db.execute("PRAGMA table_info(scan)")]
            if version != FORMAT or not columns:
                # another format (or none yet): start afresh, quietly; this is no damage
                db.execute("DROP TABLE IF EXISTS scan")
                db.execute(
                    "CREATE TABLE scan (file TEXT PRIMARY KEY, stamp TEXT NOT NULL, data BLOB NOT NULL)"
                )
                db.execute(f"PRAGMA user_version={FORMAT}")
            elif columns != _SCHEMA:
                raise Damaged("its table has the wrong columns")
        except BaseException:
            db.close()
            raise
        return db

    def _discard(self, why: str) -> None:
        """Throw the cache away (one log line) and start an empty one."""
        self.discarded = why
        log.warning("the scan cache %s was damaged (%s); rebuilding it", clean(self.path), clean(why, 200))
        self.close()
        for suffix in ("", "-wal", "-shm", "-journal"):
            with contextlib.suppress(OSError):
                os.unlink(self.path + suffix)
        try:
            self.db = self._open()
        except (OSError, sqlite3.Error, Damaged) as exc:
            log.debug("no scan cache (%s)", exc)
            self.db = None

    def stamp(self, st: os.stat_result) -> str:
        return f"{self.key}:{st.st_dev}:{st.st_ino}:{st.st_size}:{st.st_mtime_ns}"

    def load(self) -> dict[str, tuple[str, dict[str, Any]]]:
        """Every row, checked: ``{file: (stamp, decoded data)}``. A damaged cache is discarded
        (one log line) and this returns ``{}``: every file is then read and the cache rebuilt."""
        if self.db is None:
            return {}
        rows: dict[str, tuple[str, dict[str, Any]]] = {}
        total = 0
        try:
            cursor = self.db.execute(
                "SELECT file, stamp, data FROM scan"
                " WHERE typeof(file) IN ('text', 'blob') AND typeof(stamp) = 'text' AND typeof(data) = 'blob'"
            )
            for file, stamp, data in cursor:
                total += len(data) + len(file) + len(stamp)
                if len(rows) >= MAX_ROWS or total > MAX_TOTAL:
                    raise Damaged("it is far larger than any scan writes")
                if len(file) > MAX_PATH or len(stamp) > MAX_STAMP or len(data) > MAX_ROW:
                    raise Damaged("a row is oversized")
                rows[str(from_db(file))] = (stamp, decode(data))  # file names need not be UTF-8
            (odd,) = self.db.execute(
                "SELECT count(*) FROM scan"
                " WHERE typeof(file) NOT IN ('text', 'blob') OR typeof(stamp) != 'text' OR typeof(data) != 'blob'"
            ).fetchone()
            if odd:
                raise Damaged("a row holds values of the wrong type")
        except Damaged as exc:
            self._discard(str(exc))
            return {}
        except sqlite3.Error as exc:
            self._discard(f"unreadable: {exc}")
            return {}
        return rows

    def save(self, rows: list[tuple[str, str, bytes]], forget: Iterable[str] = ()) -> None:
        if self.db is None:
            return
        rows = [r for r in rows if len(r[2]) <= MAX_ROW and len(r[0]) <= MAX_PATH]
        try:
            with self.db:
                self.db.execute("BEGIN")
                self.db.executemany(
                    "INSERT OR REPLACE INTO scan VALUES (?, ?, ?)", [(to_db(f), st, d) for f, st, d in rows]
                )
                self.db.executemany("DELETE FROM scan WHERE file = ?", [(to_db(f),) for f in forget])
        except sqlite3.Error as exc:
            log.debug("scan cache not written (%s)", exc)

    def close(self) -> None:
        if self.db is not None:
            with contextlib.suppress(sqlite3.Error):
                self.db.close()
            self.db = None
