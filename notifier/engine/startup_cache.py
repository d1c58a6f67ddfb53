"""The start-up scan's memory (``notifier.watch.cache``): files unchanged since the last scan are
restored from their summary instead of read; what was read is summarized for the next start.

Used for one start-up scan: ``lookup`` each file found, then ``save`` once (after the names of
asking sessions were filled in), which closes the database. A one-shot command saves after its
output, in a process of its own that it does not wait for (``save(detach=True)``): what was asked
for comes first, and the next run finds the cache."""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable, Mapping
from stat import S_ISREG
from typing import TYPE_CHECKING, Literal, NamedTuple

from notifier.core.board import Board
from notifier.core.reducer import SessionReducer
from notifier.system import logs
from notifier.watch.scanner import FileStat, Stamp, stamp_of
from notifier.watch.tail import Tailer

if TYPE_CHECKING:
    from notifier.watch.cache import Row, ScanCache

log = logs.get(__name__)
_MAX_FD = 1 << 20  # (os.closerange closes them in one call where the kernel can)

# Fewer rows to write than this are written at once: a child process costs more than they do.
BACKGROUND_ROWS = 256
DETACHED_BUSY_S = 30.0  # how long the process writing a one-shot command's cache waits for another


class Restored(NamedTuple):
    """An unchanged file: its state and a tailer that continues at its end."""

    tailer: Tailer
    reducer: SessionReducer


class StartupCache:
    def __init__(self, path: str, tools: Iterable[str], roots: list[str], max_line: int) -> None:
        self._path = path
        self._tools = list(tools)
        self._roots = roots
        self._max_line = max_line
        self._db: ScanCache | None = None
        self._key = ""
        self._rows: dict[str, Row] = {}
        # files read (not restored) → their stamp before (dev, ino, size, mtime_ns); None: not
        # taken yet, given by :meth:`stamped` after the read
        self._stale: dict[str, Stamp | None] = {}
        self._seen: set[str] = set()
        self._unpack: Callable[[Row, str, int], tuple[Tailer, SessionReducer]] | None = None
        self.hits = 0
        self._child = 0  # the process writing the cache (save(detach=True)); nobody waits for it
        self._saved = False

    def open(self) -> None:
        """Open and load the cache (once): done when a scan starts, even one finding no files.
        A cache that does not exist yet holds nothing to load: it is created when saved."""
        if self._unpack is None:
            from notifier.watch.cache import ScanCache, fingerprint, unpack

            self._key = fingerprint(self._tools)
            self._unpack = unpack
            if self.on_disk():
                self._db = ScanCache(self._path, self._key)
                self._rows = self._db.load(self._roots)  # checked; a damaged cache comes back empty

    def lookup(self, path: str, st: os.stat_result | FileStat | None = None) -> Restored | Literal["read", "missing"]:
        """The file's state if it is unchanged since it was summarized; ``"read"`` if it must be
        read (it is then summarized by ``save``); ``"missing"`` if it cannot even be looked at.
        ``st``: the file's stat, if the caller has just taken it (before any read: a change
        during the read can only cause a miss)."""
        unpack = self._unpack
        if unpack is None:
            self.open()
            unpack = self._unpack
            assert unpack is not None
        self._seen.add(path)
        row = self._rows.get(path)
        if st is None:
            if row is None:  # nothing cached: read it (its stamp is taken then, see stamped)
                self._stale[path] = None
                return "read"
            try:
                st = os.stat(path)
            except OSError:
                return "missing"
        # Written for this very content (the key and the stamp, see notifier.watch.cache.COLUMNS)
        # and read to its end:
        if (
            row is not None
            and row[5] == st.st_mtime_ns
            and row[4] == st.st_size
            and row[6] == st.st_size
            and row[3] == st.st_ino
            and row[2] == st.st_dev
            and row[1] == self._key
            and S_ISREG(st.st_mode)
        ):
            try:
                tailer, reducer = unpack(row, path, self._max_line)
            except (ValueError, KeyError, TypeError):  # (rows were checked when loaded)
                pass  # an unusable summary: read the file instead
            else:
                self.hits += 1
                return Restored(tailer, reducer)
        self._stale[path] = stamp_of(st)
        return "read"

    def all_read(self, paths: list[str]) -> list[str]:
        """:meth:`lookup` of each of ``paths`` when nothing is cached (:meth:`empty`): all are
        to be read (their stamps are given by :meth:`stamped`). ``paths`` itself, copied."""
        if self._unpack is None:
            self.open()
        assert not self._rows
        self._seen.update(paths)
        self._stale.update(dict.fromkeys(paths))
        return list(paths)

    def on_disk(self) -> bool:
        """A cache file exists (before :meth:`open`: it may hold something to load)."""
        return os.path.lexists(self._path)

    def empty(self) -> bool:
        """Nothing is cached (after :meth:`open`): every file will be read."""
        return not self._rows

    def stamped(self, path: str, stamp: Stamp) -> None:
        """The stamp of a file that was looked up without one, taken when it was read (its
        ``fstat`` before any read)."""
        if path in self._stale:
            self._stale[path] = stamp

    def save(self, tailers: Mapping[str, Tailer], board: Board, detach: bool = False) -> None:
        """Remember what the scan read; forget files under the roots that are gone (and keep the
        rows of other folders within a bound, see ScanCache.save). Either way the database is
        closed. ``detach`` (a one-shot command, after its output): many rows are written by a
        process of their own, which this one need not wait for (it ends on its own; its pid is
        ``_child``). A start-up scan of the app writes here: its engine owns the state."""
        if self._unpack is None or self._saved:
            return  # (never opened, or saved already)
        self._saved = True
        db, self._db = self._db, None
        roots = tuple(r.rstrip(os.sep) + os.sep for r in self._roots)
        gone = [f for f in self._rows if f.startswith(roots) and f not in self._seen]
        if not self._stale and not gone:  # (a warm scan: nothing changed, nothing to write)
            if db is not None:
                db.close()
            return
        if detach and len(self._stale) >= BACKGROUND_ROWS:
            from notifier.engine.scan_workers import fork_is_safe

            if fork_is_safe():
                if db is not None:
                    db.close()  # (a connection must not cross a fork: the child opens its own)
                folder = os.path.dirname(self._path)
                try:
                    st = os.stat(folder)
                    before: tuple[int, int] | None = (st.st_dev, st.st_ino)
                except OSError:
                    before = None  # (a first run: the writer makes the folder)

                def write() -> None:
                    from notifier.watch.cache import ScanCache

                    if before is not None:
                        try:
                            now = os.stat(folder)
                        except OSError:
                            return  # (the state folder was removed meanwhile: not made again)
                        if (now.st_dev, now.st_ino) != before:
                            return
                    # (nobody waits for it: it may wait long for another writer to finish)
                    self._write(ScanCache(self._path, self._key, timeout=DETACHED_BUSY_S), tailers, board, gone)

                pid = _detached(write)
                if pid:
                    self._child = pid
                    log.debug("scan cache left to process %d (%d files)", pid, len(self._stale))
                    return
                db = None  # no process: written here after all
        if db is None:
            from notifier.watch.cache import ScanCache

            db = ScanCache(self._path, self._key)  # (created now if there was none)
        self._write(db, tailers, board, gone)

    def _write(self, db: ScanCache, tailers: Mapping[str, Tailer], board: Board, gone: list[str]) -> None:
        from notifier.watch.cache import row_of

        rows = []
        for path, stamp in self._stale.items():
            tailer = tailers.get(path)
            reducer = board.reducer(path)
            if tailer is None or reducer is None or stamp is None:
                continue
            row = row_of(path, self._key, stamp, tailer, reducer)
            if row is not None:
                rows.append(row)
        db.save(rows, gone, self._roots)
        db.close()
        self._stale.clear()
        self._rows = {}


def _detached(work: Callable[[], None]) -> int:
    """A forked process that runs ``work()`` on its own, then leaves without cleanup: in a new
    session (a Ctrl-C or a hang-up meant for the command leaves it be), with its standard
    streams on /dev/null and no other file of the command's open (whoever reads the command's
    output, or waits on any pipe it was given, sees its end when the command ends, not when
    this ends), in / (no folder is kept busy). Its pid; 0 where none can be made."""
    try:
        pid = os.fork()
    except OSError:
        return 0
    if pid == 0:
        code = 1
        try:
            os.setsid()
            null = os.open(os.devnull, os.O_RDWR)
            for fd in (0, 1, 2):
                os.dup2(null, fd)
            os.closerange(3, _MAX_FD)
            os.chdir("/")
            work()
            code = 0
        finally:
            os._exit(code)
    return pid
