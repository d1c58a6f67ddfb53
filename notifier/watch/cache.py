"""The start-up scan cache: per session file, a summary of its state and where reading stopped,
valid while the file's (device, inode, size, mtime_ns) are unchanged, like git's index. A
changed file is simply read again (bounded). Each row also holds the question catalog and a
format version (its key), so new tools or a new release never reuse old summaries. Liveness is
never cached. The cache is its own SQLite file in the state folder: deleting it is always safe.

Everything read back is untrusted (bit rot, another program, a hand edit). A row is one typed
column per field (never ``marshal``/``pickle``): SQLite itself checks every row's types, ranges
and sizes, and their total size, in one pass before anything is used (:data:`_VALID`; only the
rows below the folders being scanned are read, and those of other folders are bounded in number);
the rare nested parts (pending questions, running tools) are JSON, parsed with the bounded
parser and checked field by field. A cache that fails any check is discarded and rebuilt by this
run's scan, with one log line. The file is created 0600 in a 0700 folder: it holds session
names, folders and questions.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import math
import os
import sqlite3
from collections.abc import Iterable
from typing import Any, get_args

from notifier import __version__
from notifier.core import jsonbound
from notifier.core.model import State
from notifier.core.reducer import SessionReducer, restore, summarize
from notifier.core.text import clean
from notifier.system import logs
from notifier.system.paths import private_file, to_db
from notifier.watch.scanner import Stamp
from notifier.watch.tail import Tailer

log = logs.get(__name__)
# 1: marshal rows (never read again); 2: validated JSON rows; 3: one typed column per field;
# 4: the same, WITHOUT ROWID (the file is the key: one b-tree to write, not a table and an index)
FORMAT = 4
MAX_ROWS = 200_000
MAX_ROW = 1 << 20  # bytes of one row's nested part (a larger one is not cached: that file is read)
MAX_TOTAL = 64 << 20  # bytes of all rows together
MAX_PATH = 4096
MAX_KEY = 64
MAX_TEXT = 64 << 10  # characters of any string in a summary
MAX_INT = 1 << 62
MAX_PARTIAL = 64 << 10  # bytes of an unfinished last line held back
MAX_LIST = 1000
_STATES = frozenset(get_args(State))
COLUMNS = (
    ("file", "TEXT"),  # (a BLOB for a name that is not UTF-8: paths.to_db)
    ("key", "TEXT"),  # fingerprint(): format, release, question catalog
    ("dev", "INTEGER"),  # the stamp: a row is used only while these four are unchanged
    ("ino", "INTEGER"),
    ("size", "INTEGER"),
    ("mtime", "INTEGER"),
    ("offset", "INTEGER"),  # the tailer (notifier.watch.tail.Tailer.state)
    ("partial", "BLOB"),
    ("head_len", "INTEGER"),
    ("head", "BLOB"),
    ("tail_start", "INTEGER"),
    ("tail", "BLOB"),
    ("ws", "INTEGER"),  # where the start-up read began (Tailer.window_start)
    ("nc", "INTEGER"),  # the name was looked for (Tailer.name_checked)
    ("sid", "TEXT"),  # the reducer (notifier.core.reducer.summarize)
    ("cwd", "TEXT"),
    ("name", "TEXT"),
    ("base", "TEXT"),
    ("tool", "TEXT"),
    ("at", "REAL"),
    ("header", "INTEGER"),
    ("more", "BLOB"),  # NULL, or JSON {"pending": [...], "running": {...}} when either is not empty
)
_NAMES = ", ".join(name for name, _ in COLUMNS)
_SCHEMA = [(name, kind) for name, kind in COLUMNS]


def _text(col: str, mostly_null: bool = False) -> str:
    """A string, NULL, or a name that is not UTF-8 (a BLOB: paths.to_db); the likelier case first."""
    text = f"typeof({col}) = 'text' AND length(CAST({col} AS BLOB)) <= {4 * MAX_TEXT}"
    null = f"{col} IS NULL"
    first, second = (null, text) if mostly_null else (text, null)
    return f"({first} OR {second} OR typeof({col}) = 'blob' AND length({col}) <= {3 * MAX_TEXT})"


def _int(col: str, high: str = str(MAX_INT - 1)) -> str:
    return f"typeof({col}) = 'integer' AND {col} BETWEEN 0 AND {high}"


# What every row must satisfy, checked by SQLite (in C) over the whole table at once.
_VALID = " AND ".join(
    [
        f"typeof(file) IN ('text', 'blob') AND length(CAST(file AS BLOB)) BETWEEN 1 AND {MAX_PATH}",
        f"typeof(key) = 'text' AND length(CAST(key AS BLOB)) <= {MAX_KEY}",
        *(f"typeof({c}) = 'integer'" for c in ("dev", "ino", "size", "mtime")),
        _int("offset"),
        f"typeof(partial) = 'blob' AND length(partial) <= min(offset, {MAX_PARTIAL})",
        _int("head_len", "1024"),
        "typeof(head) = 'blob' AND length(head) = 16",
        _int("tail_start", "offset"),
        "typeof(tail) = 'blob' AND length(tail) = 16",
        _int("ws", "offset"),
        "typeof(nc) = 'integer' AND nc IN (0, 1)",
        _text("sid"),
        _text("cwd"),
        _text("name", mostly_null=True),
        _text("tool", mostly_null=True),
        "typeof(base) = 'text' AND base IN (" + ", ".join(f"'{s}'" for s in sorted(_STATES)) + ")",
        "typeof(at) = 'real' AND at BETWEEN -1.7976931348623157e308 AND 1.7976931348623157e308",
        "typeof(header) = 'integer' AND header IN (0, 1)",
        f"(more IS NULL OR typeof(more) = 'blob' AND length(more) <= {MAX_ROW})",
    ]
)
# How many rows and how large, checked before any row is loaded.
_SIZE = (
    "SELECT count(*), total("
    + " + ".join(
        f"ifnull(length(CAST({c} AS BLOB)), 0)"
        for c in ("file", "partial", "sid", "cwd", "name", "tool", "more")
    )
    + ") FROM scan"
)
# The rows are loaded in the same pass that checks them: all of them must come back. Most rows
# need nothing more (a UTF-8 name, no nested part); the others are finished in Python.
_PLAIN = "more IS NULL AND typeof(file) = 'text'"
_LOAD_PLAIN = f"SELECT {_NAMES} FROM scan WHERE {_PLAIN} AND {_VALID}"
_LOAD_OTHER = f"SELECT {_NAMES} FROM scan WHERE NOT ({_PLAIN}) AND {_VALID}"
KEEP_OTHERS = 20_000  # rows of files in other folders than those scanned, kept (see save)


def _ranges(roots: Iterable[str]) -> tuple[list[tuple[str, str]], list[tuple[bytes, bytes]]]:
    """The key ranges ``[low, high)`` that hold the names below ``roots``, merged and sorted: one
    range of names stored as text per root (if it can be), one of names stored as blobs
    (paths.to_db). UTF-8 keeps the order of code points and prefixes, so each is a prefix range."""
    texts: list[tuple[str, str]] = []
    blobs: list[tuple[bytes, bytes]] = []
    for root in roots:
        prefix = root.rstrip(os.sep) + os.sep
        after = prefix[:-1] + chr(ord(os.sep) + 1)  # the first key past every name below prefix
        if to_db(prefix) is prefix:  # (names below it may be stored as text)
            texts.append((prefix, after))
        blobs.append((prefix.encode("utf-8", "surrogatepass"), after.encode("utf-8", "surrogatepass")))
    return _merged(texts), _merged(blobs)


def _merged(ranges: list[Any]) -> list[Any]:
    out: list[Any] = []
    for low, high in sorted(ranges):
        if out and low <= out[-1][1]:
            out[-1] = (out[-1][0], max(out[-1][1], high))
        else:
            out.append((low, high))
    return out


def under(roots: Iterable[str]) -> tuple[str, list[Any]]:
    """An SQL condition on ``file``: below one of ``roots``, and its parameters; only those rows
    are visited (ranges of the key), so rows of other folders cost nothing."""
    texts, blobs = _ranges(roots)
    bounds = [*texts, *blobs]
    if not bounds:
        return "0", []
    return "(" + " OR ".join("(file >= ? AND file < ?)" for _ in bounds) + ")", [x for r in bounds for x in r]


def elsewhere(roots: Iterable[str]) -> tuple[str, list[Any]]:
    """The rows :func:`under` leaves out, as ranges of the key too (SQLite orders NULL and
    numbers, then text, then blobs): what lies before, between and after its ranges."""
    texts, blobs = _ranges(roots)
    bounds = [*texts, *blobs]  # (every text key sorts before every blob key)
    if not bounds:
        return "1", []
    terms = ["file < ?"]
    params: list[Any] = [bounds[0][0]]
    for (_, high), (low, _) in zip(bounds, bounds[1:], strict=False):  # (each gap between two)
        terms.append("(file >= ? AND file < ?)")
        params += [high, low]
    terms.append("file >= ?")
    params.append(bounds[-1][1])
    return "(" + " OR ".join(terms) + ")", params


class Damaged(ValueError):
    """The cache holds something this program never writes."""


def fingerprint(tools: Iterable[str]) -> str:
    text = f"{FORMAT}|{__version__}|" + ",".join(sorted(tools))
    return hashlib.sha1(text.encode()).hexdigest()[:16]


# ---- rows ----

Row = tuple[Any, ...]  # the columns of COLUMNS, in order (``more`` decoded when loaded)

# The nullable columns are written through ``nullif(?, 0)``: ``row_of`` gives 0 for NULL (these
# columns hold only strings, bytes or NULL, so the integer 0 stands for nothing else), and its
# blobs as bytearray. Python's sqlite3 binds int, float, str and bytearray directly, but looks
# for an adapter for None and bytes first, which costs more than the rest of a row put together.
_NULLABLE = frozenset({"sid", "cwd", "name", "tool", "more"})
_INSERT = "INSERT OR REPLACE INTO scan VALUES ({})".format(
    ", ".join("nullif(?, 0)" if name in _NULLABLE else "?" for name, _ in COLUMNS)
)


def _param(value: str | None) -> Any:
    """A nullable string as written (see _NULLABLE; a name that is not UTF-8: paths.to_db)."""
    if value is None:
        return 0
    return value if value.isascii() else to_db(value)


def row_of(path: str, key: str, stamp: Stamp, tailer: Tailer, r: SessionReducer) -> Row | None:
    """The row that summarizes a file read at ``stamp`` (its device, inode, size, mtime_ns before
    the read), as written (see _NULLABLE); ``None`` if it cannot be cached."""
    t = tailer.state()
    more: Any = 0
    if r.pending or r.running:
        s = summarize(r)
        data = json.dumps(
            {"pending": s["pending"], "running": s["running"]}, separators=(",", ":"), allow_nan=False
        ).encode("ascii")  # ASCII: lone surrogates (text that was not UTF-8) travel as escapes
        if len(data) > MAX_ROW:
            return None
        more = bytearray(data)
    sid, cwd, name, tool = r.session_id, r.cwd, r.name, r.current_tool
    partial, head, tail, offset = t["partial"], t["head"], t["tail"], t["offset"]
    if (
        len(partial) > MAX_PARTIAL
        or len(path) > MAX_PATH
        or not 0 <= offset < MAX_INT
        or len(head) != 16
        or len(tail) != 16
        or not math.isfinite(r.updated_at)
    ):
        return None
    for text in (sid, cwd, name, tool):
        if text is not None and len(text) > MAX_TEXT:
            return None
    return (
        path if path.isascii() else to_db(path), key, *stamp,
        offset, bytearray(partial), t["head_len"], bytearray(head), t["tail_start"], bytearray(tail),
        tailer.window_start, int(tailer.name_checked),
        _param(sid), _param(cwd), _param(name), r.base, _param(tool), float(r.updated_at), int(r.has_header),
        more,
    )  # fmt: skip


def _str(value: Any) -> Any:
    return value.decode("utf-8", "surrogatepass") if type(value) is bytes else value


def unpack(row: Row, path: str, max_line: int) -> tuple[Tailer, SessionReducer]:
    """The tailer (at the row's offset) and the state of a row (raises ValueError on a bad one)."""
    tailer = Tailer(path, max_line)
    tailer.restore(
        {
            "offset": row[6],
            "partial": row[7],
            "head_len": row[8],
            "head": row[9],
            "tail_start": row[10],
            "tail": row[11],
        },
        (row[2], row[3]),
    )
    tailer.window_start = row[12]
    tailer.name_checked = bool(row[13])
    sid, cwd, name, tool = row[14], row[15], row[16], row[18]
    if type(sid) is bytes or type(cwd) is bytes or type(name) is bytes or type(tool) is bytes:
        sid, cwd, name, tool = _str(sid), _str(cwd), _str(name), _str(tool)  # (not UTF-8: to_db)
    more = row[21]
    if more is None:
        reducer = SessionReducer(
            session_id=sid, cwd=cwd, name=name, base=row[17], current_tool=tool,
            updated_at=row[19], has_header=row[20] == 1,
        )  # fmt: skip
    else:
        reducer = restore(
            {
                "sid": sid, "cwd": cwd, "name": name, "base": row[17], "tool": tool, "at": row[19],
                "header": bool(row[20]), "pending": more["pending"], "running": more["running"],
            }
        )  # fmt: skip
    return tailer, reducer


def _obj(value: Any, keys: set[str], optional: frozenset[str] = frozenset()) -> dict[str, Any]:
    if not isinstance(value, dict) or not keys <= value.keys() <= keys | optional:
        raise Damaged("a row has the wrong fields")
    return value


def _check_str(value: Any, none: bool = False) -> str | None:
    if value is None and none:
        return None
    if not isinstance(value, str) or len(value) > MAX_TEXT:
        raise Damaged("a row holds a wrong or oversized string")
    return value


def _time(value: Any) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        raise Damaged("a row holds a wrong time")
    return float(value)


def _list(value: Any, limit: int = MAX_LIST) -> list[Any]:
    if not isinstance(value, list) or len(value) > limit:
        raise Damaged("a row holds a wrong or oversized list")
    return value


def decode_more(raw: bytes) -> dict[str, Any]:
    """A row's nested part, checked field by field (raises :class:`Damaged`):
    ``{"pending": [question summaries], "running": {call id: tool}}``."""
    try:
        data = jsonbound.loads(raw, max_bytes=MAX_ROW, max_depth=8)
    except ValueError as exc:  # not JSON / not UTF-8 / too big or deep
        raise Damaged(f"a row is not valid JSON ({type(exc).__name__})") from exc
    s = _obj(data, {"pending", "running"})
    running = s["running"]
    if not isinstance(running, dict) or len(running) > MAX_LIST:
        raise Damaged("a row holds wrong running tools")
    for k, v in running.items():
        _check_str(k)
        _check_str(v)
    for q in _list(s["pending"]):
        q = _obj(q, {"id", "tool", "at", "title", "items"})
        _check_str(q["id"])
        _check_str(q["tool"])
        _check_str(q["title"], none=True)
        _time(q["at"])
        for item in _list(q["items"]):
            item = _obj(item, {"text", "header", "detail", "multi", "options"})
            _check_str(item["text"])
            _check_str(item["header"], none=True)
            _check_str(item["detail"], none=True)
            if not isinstance(item["multi"], bool):
                raise Damaged("a row holds a wrong flag")
            for option in _list(item["options"]):
                option = _list(option, 3)
                if len(option) != 3 or not isinstance(option[2], bool):
                    raise Damaged("a row holds a wrong option")
                _check_str(option[0])
                _check_str(option[1], none=True)
    return s


# ---- the file ----


class ScanCache:
    def __init__(self, path: str, key: str, timeout: float = 2.0) -> None:
        """``timeout``: seconds to wait for another process that holds the database."""
        self.path = path
        self.key = key
        self.timeout = timeout
        self.db: sqlite3.Connection | None = None
        self.discarded: str | None = None  # why the old cache was thrown away, if it was
        try:
            self.db = self._open()
        except Damaged as exc:
            self._discard(str(exc))
        except (OSError, sqlite3.Error) as exc:
            if isinstance(exc, sqlite3.DatabaseError) and not isinstance(exc, sqlite3.OperationalError):
                self._discard(f"not a usable database ({exc})")
            else:  # (busy, locked, cannot be opened: nothing wrong with what it holds)
                log.debug("no scan cache (%s)", exc)

    def _open(self) -> sqlite3.Connection:
        private_file(self.path)  # 0600 in a 0700 folder, like the store
        db = sqlite3.connect(self.path, timeout=self.timeout, isolation_level=None, check_same_thread=False)
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
                cols = ", ".join(f"{name} {kind}" for name, kind in COLUMNS[1:])
                db.execute(f"CREATE TABLE scan (file TEXT PRIMARY KEY, {cols}) WITHOUT ROWID")
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

    def load(self, roots: Iterable[str]) -> dict[str, Row]:
        """Every row of a file below ``roots``, checked: ``{file: row}`` (``more`` decoded). The
        rows of other folders stay unread (a folder scanned once, then no more, costs nothing).
        A damaged cache is discarded (one log line) and this returns ``{}``: every file is then
        read and the cache rebuilt."""
        if self.db is None:
            return {}
        cond, params = under(roots)
        try:
            self.db.execute("BEGIN")  # one snapshot for the check and the read
            try:
                count, total = self.db.execute(f"{_SIZE} WHERE {cond}", params).fetchone()
                if count > MAX_ROWS or total > MAX_TOTAL:
                    raise Damaged("it is far larger than any scan writes")
                rows: dict[str, Row] = {
                    row[0]: row for row in self.db.execute(f"{_LOAD_PLAIN} AND {cond}", params)
                }
                loaded = len(rows)
                for row in self.db.execute(f"{_LOAD_OTHER} AND {cond}", params):
                    loaded += 1
                    if row[21] is not None:
                        row = (*row[:21], decode_more(row[21]))
                    file = row[0]
                    if type(file) is bytes:  # file names need not be UTF-8
                        try:
                            file = file.decode("utf-8", "surrogatepass")
                        except UnicodeDecodeError as exc:
                            raise Damaged("a row's file name is garbled") from exc
                    rows[file] = row
                if loaded != count:  # (a row failed the check)
                    raise Damaged("a row holds values of the wrong type or size")
            finally:
                self.db.execute("COMMIT")
        except Damaged as exc:
            self._discard(str(exc))
            return {}
        except sqlite3.OperationalError as exc:  # (busy, locked, I/O: every file is read this time)
            log.debug("scan cache not read (%s)", exc)
            return {}
        except sqlite3.Error as exc:
            self._discard(f"unreadable: {exc}")
            return {}
        return rows

    def save(self, rows: list[Row], forget: Iterable[str] = (), roots: Iterable[str] | None = None) -> None:
        """Write ``rows`` and drop the rows of the files in ``forget``. Given the ``roots``
        scanned: the rows of files in other folders are kept (a folder scanned now and then
        keeps its summaries) up to KEEP_OTHERS, past which they all go. They are never loaded
        (:meth:`load`), so only the file's size is at stake; no name of theirs is read or
        looked up (a folder that is gone, or a mount that hangs, costs nothing)."""
        if self.db is None:
            return
        try:
            with self.db:
                self.db.execute("BEGIN IMMEDIATE")  # (the write lock first, waited for: another writer may be at work)
                self.db.executemany(_INSERT, rows)
                self.db.executemany("DELETE FROM scan WHERE file = ?", [(to_db(f),) for f in forget])
        except sqlite3.Error as exc:
            log.debug("scan cache not written (%s)", exc)
            return
        if roots is None:
            return
        cond, params = elsewhere(roots)
        try:
            with self.db:
                self.db.execute("BEGIN IMMEDIATE")
                (others,) = self.db.execute(f"SELECT count(*) FROM scan WHERE {cond}", params).fetchone()
                if others > KEEP_OTHERS:
                    self.db.execute(f"DELETE FROM scan WHERE {cond}", params)
        except sqlite3.OperationalError as exc:  # (busy, a full disk…: next time)
            log.debug("scan cache not pruned (%s)", exc)
        except sqlite3.Error as exc:  # a row SQLite itself cannot read: never loaded, never dropped
            self._discard(f"unreadable: {exc}")

    def close(self) -> None:
        if self.db is not None:
            with contextlib.suppress(sqlite3.Error):
                self.db.close()
            self.db = None
