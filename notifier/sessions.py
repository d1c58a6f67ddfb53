"""pi's session files read into a board: what the reading is told (:class:`EngineOptions`), the
reading (:class:`BoardReader`: the engine thread owns one, one-shot reads have their own), one
read of them all without a thread or a watcher (:func:`scanned`, for ``status``, ``answer`` and
``goto`` without the app; :class:`OneFileReader` for one file), and what a scan remembers of each
file for the next (the start-up cache, :class:`StartupCache`, on the store's one SQLite path).

:class:`BoardReader` follows the files :func:`~notifier.tail.walk_tree` finds, each with its
:class:`~notifier.tail.Tailer`, every line through the one bounded parse; a bad line, file or
folder said once; a file that could not be read, or a folder listed, is tried again when its
time comes on the one back-off (:meth:`BoardReader.retry`, on the engine's timer), as the
start-up scan reads for one it missed. Nothing here imports watchdog or the engine thread (a
one-shot command starts fast)."""

from __future__ import annotations

import contextlib
import gc
import json
import logging
import os
import sqlite3
import stat
import time
import zlib
from collections.abc import Callable, Collection, Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field, replace
from functools import partial
from typing import Any, NamedTuple, get_args

from notifier import __version__
from notifier.config import Config
from notifier.core import codec
from notifier.core.board import Board
from notifier.core.codec import MAX_FLOAT, decode
from notifier.core.model import Question, SessionView, Snapshot, State, Transition
from notifier.core.owners import Proc
from notifier.core.reducer import Event, Renamed, SessionReducer, summarize
from notifier.core.text import clean
from notifier.pi.parse import (
    EntryError,
    QuestionCatalog,
    odd_line_events,
    result_events,
    to_events,
    too_large_events,
)
from notifier.store import connect, is_damage, replace_damaged
from notifier.system import paths
from notifier.system.log import LogOnce
from notifier.system.supervisor import Backoff, FailureLog
from notifier.tail import (
    DEFAULT_MAX_LINE,
    HEAD,
    Ident,
    LongLine,
    NotRegularFile,
    Tailer,
    kind_of,
    look_up_name,
    open_regular,
    startup_read,
    walk_tree,
)

log = logging.getLogger(__name__)

LIVENESS_INTERVAL_S = 3.0
BLAME_LIMIT = 3  # a file that made the engine fail this often is ignored
LIVE_FULL_READ = 4 << 20  # a file appearing while we run is read whole up to this size
HOT = 64  # the files read last that keep the bytes before their offset as read (the others: a digest)

Probe = Callable[[], Sequence[Proc] | None]


# ---- what the reading is told ----


@dataclass(slots=True)
class EngineOptions:
    """What the engine reads and how: the sessions folders, the question catalog, liveness."""

    roots: list[str]
    catalog: QuestionCatalog = field(default_factory=QuestionCatalog)
    liveness: bool = True
    max_line: int = DEFAULT_MAX_LINE
    liveness_interval: float = LIVENESS_INTERVAL_S
    cache_path: str | None = None  # the start-up scan cache (None: read every file)


def engine_options(config: Config, state_dir: str | None = None) -> EngineOptions:
    """What reading ``config``'s sessions is told; its scan cache in ``state_dir`` (default: the app's)."""
    return EngineOptions(
        roots=list(config["sessions_dirs"]),
        catalog=QuestionCatalog(config["question_tools"], config["ignore_tools"]),
        liveness=config["liveness"] == "auto",
        cache_path=os.path.join(state_dir or paths.state_dir(), "scan-cache.sqlite3"),
    )


# ---- the session files read into a board ----


class BoardReader:
    """Reads session files into a board: a :class:`Tailer` per file followed, the board they feed.
    Owned by one thread (the engine's; a one-shot read has its own)."""

    def __init__(
        self,
        options: EngineOptions,
        board: Board,
        wall: Callable[[], float],
        more: Callable[[str], None] = lambda path: None,
        listed: Callable[[str], None] = lambda folder: None,
    ) -> None:
        """``more(path)``: a huge append, read the rest of the file after what is queued;
        ``listed(folder)``: a folder that could not be listed can be now (it may not be watched)."""
        self.options = options
        self.board = board
        self.tailers: dict[str, Tailer] = {}
        self.ignored: set[str] = set()  # files that made the engine fail again and again
        self.reading: str | None = None  # the file being read (blamed if the engine fails)
        self._wall = wall
        self._more = more  # a huge append: read the rest of this file after what is queued
        self._listed = listed
        self._once = LogOnce(log)
        self._idents: dict[Ident, str] = {}  # (device, inode) → the one name read
        self._blame: dict[str, int] = {}  # failures that happened while reading each file
        self._hot: dict[str, Tailer] = {}  # the HOT tailers read last, oldest first
        # Files (and folders) whose last read failed (EMFILE, EIO, ESTALE, EACCES…): read again when
        # due (time.monotonic()), on the back-off each keeps until a read of it ends otherwise.
        self._retry_at: dict[str, float] = {}
        self._backoff: dict[str, Backoff] = {}
        self._unlisted: set[str] = set()  # of those, the folders (listed again)
        self._at_start: set[str] = set()  # of those, the ones the start-up scan missed (read as it reads)

    def scan(
        self, folder: str, initial: bool, cache: StartupCache | None = None, out: list[Transition] | None = None
    ) -> list[Transition]:
        """Every session file under ``folder``: read on, added, or restored from ``cache``; the
        transitions go to ``out`` as each file is read (kept there if a later file fails)."""
        tree = walk_tree(folder)
        for path, kind in tree.skipped:
            self._once(path, "kind", "skipped: %s, not a regular file", kind)
        for path, exc in tree.unlisted:  # (its session files may be there: listed again when due)
            self._unlisted.add(path)
            self._failed(path, exc, initial)
        for path, exc in tree.unread:  # (read again when due)
            self._failed(path, exc, initial)
        out = [] if out is None else out
        for path, st in tree.files.items():
            if self._other_name(path, (st.st_dev, st.st_ino)) is not None:
                continue  # (read under that name)
            if path in self.tailers:
                out += self.read(path)
                continue
            found = cache.lookup(path, st) if initial and cache is not None else None
            if found is not None:
                self.tailers[path], restored = found
                out += self.board.local.restore(path, restored, self._wall(), initial=True)
            else:
                out += self.add(path, initial)
        return out

    def gone(self, path: str, everything: bool = False) -> list[Transition]:
        """Forget the sessions under ``path`` that no longer exist (``everything``: all of them)."""
        prefix = path.rstrip(os.sep) + os.sep
        under = [key for key in self.tailers if key == path or key.startswith(prefix)]
        return [t for key in under if everything or not os.path.exists(key) for t in self.forget(key)]

    def _other_name(self, path: str, ident: Ident) -> str | None:
        """The name the file of ``ident`` (device, inode) is followed by already, if another (a
        hard link, a symlink, another root); else it is ``path``'s from now on."""
        known = self._idents.get(ident)
        other = self.tailers.get(known) if known is not None and known != path else None
        if other is not None and other.ident == ident:
            return known
        self._idents[ident] = path
        return None

    def _forget_ident(self, path: str, ident: Ident | None) -> None:
        """``path`` no longer names the file of ``ident``: the map stays as large as the files followed."""
        if ident is not None and self._idents.get(ident) == path:
            del self._idents[ident]

    def add(self, path: str, initial: bool) -> list[Transition]:
        """Follow a file not followed yet: at start-up (``initial``), or when large, only the state
        it ends in is reported (what was asked and answered before is history); a new small file
        is read whole."""
        if not initial:
            try:
                st = os.stat(path)
            except FileNotFoundError:
                return []
            except OSError as exc:
                self._failed(path, exc)
                return []
            if not stat.S_ISREG(st.st_mode):
                self._once(path, "kind", "skipped: %s, not a regular file", kind_of(st.st_mode))
                return []
            known = self._other_name(path, (st.st_dev, st.st_ino))
            if known is not None:
                return self.read(known)  # (read once, under that name)
            if st.st_size <= LIVE_FULL_READ:  # (every question in it is news)
                self.tailers[path] = Tailer(path, self.options.max_line)
                return self.read(path)
        tailer = Tailer(path, self.options.max_line)
        reducer = self.load(tailer, name=True)
        if reducer is None:
            if initial and path in self._retry_at:
                self._at_start.add(path)  # (read again as now, from the end)
            return []
        self.tailers[path] = tailer
        if tailer.ident is not None:
            self._idents[tailer.ident] = path
        return self.board.local.restore(path, reducer, self._wall(), initial=initial)

    def read(self, path: str) -> list[Transition]:
        """What changed in ``path`` (a file not followed yet is added)."""
        if path in self.ignored:
            return []
        self.reading = path
        out = self._again(path, partial(self._read, path))
        self.reading = None
        return out

    def _again(self, path: str, read: Callable[[], list[Transition]]) -> list[Transition]:
        """``read()`` of ``path``; one that failed before and works now is done with its retries."""
        failing = path in self._backoff
        if failing:
            self._retry_at.pop(path, None)  # (read now: due again only if this read fails too)
        out = read()
        if failing and path not in self._retry_at:
            self._recovered(path)
        return out

    @property
    def next_retry(self) -> float | None:
        """When (time.monotonic()) a file whose read failed is due to be read again, if any is."""
        return min(self._retry_at.values()) if self._retry_at else None

    def retry(self, mono: float) -> list[Transition]:
        """Read (or list) again the files (folders) whose read failed and whose time has come (on
        the engine's timer: a pi waiting for an answer writes nothing more, so no change event
        would bring its question); as the start-up scan reads for one it missed."""
        out: list[Transition] = []
        for path in [path for path, due in self._retry_at.items() if due <= mono]:
            del self._retry_at[path]  # (whatever this read does, this time is spent)
            if path in self._unlisted:
                out += self._again(path, partial(self.scan, path, path in self._at_start))
            else:
                out += self.read(path)
        return out

    def _failed(self, path: str, exc: OSError, initial: bool = False) -> None:
        """A read (a folder's listing) of ``path`` failed: said once; tried again on the back-off (:class:`Backoff`:
        doubling up to its most, a look every half minute at worst). Any error that is not the
        file being gone or not regular may pass without the file changing (no descriptor or memory
        left for a moment, an I/O error, a stale NFS handle, access granted by a chmod, which the
        watch does not report), and a failed open costs next to nothing: all are tried again."""
        backoff = self._backoff.get(path)
        if backoff is None:
            backoff = self._backoff[path] = Backoff()
        backoff.began()  # (this try ran no time: the wait doubles)
        self._retry_at[path] = time.monotonic() + backoff.next()
        if initial:
            self._at_start.add(path)
        self._once(path, "read", "cannot read (%s)", exc.strerror or exc)  # (one-shot reads never retry)

    def _recovered(self, path: str) -> None:
        """A file whose read failed was read (or is gone): no more retries; its next failure is said."""
        if self._backoff.pop(path, None) is not None and (path in self.tailers or path in self._unlisted):
            log.info("%s: read again", path)
        if path in self._unlisted:
            self._listed(path)
        self._unlisted.discard(path)
        self._at_start.discard(path)
        self._once.forget(path, "read")

    def _read(self, path: str) -> list[Transition]:
        tailer = self.tailers.get(path)
        if tailer is None:
            return self.add(path, initial=path in self._at_start)
        was = tailer.ident  # (a rewrite may bring another inode)
        with tailer.reading() as (result, fd):
            now = self._wall()
            if result.missing:
                return self.forget(path)
            if result.special:  # (never read; the tailer stays: the next event costs one fstat, no line)
                self._once(path, "special", "not a regular file; ignored")
                return self.board.local.forget(path, now) if self.board.local.reducer(path) is not None else []
            if result.error is not None:  # (read again later; what was read before it failed goes on)
                self._failed(path, result.error)
            if fd is None or (result.error is not None and not result.lines):
                return []
            if result.more:
                self._more(path)
            if result.rewritten:
                if not self._once(path, "rewritten", "rewritten; reading it again from the start", level=logging.INFO):
                    log.debug("%s was rewritten again; reading it again", path)  # (a writer that rewrites: said once)
                # (replaced: the new inode is this name's, unless another name follows it; the old one no name's)
                if tailer.ident is not None and self._other_name(path, tailer.ident) is None and was != tailer.ident:
                    self._forget_ident(path, was)
                events = self._read_bounded(tailer, fd)
                if events is None:
                    return self.forget(path)
                return self.board.local.replace(path, events, now)
            self._warm(path, tailer)
            return self._apply(path, result.lines, tailer, fd, now) if result.lines else []

    def _apply(self, path: str, lines: list[bytes], tailer: Tailer, fd: int, now: float) -> list[Transition]:
        """New whole ``lines`` of ``path`` (open as ``fd``) onto the board; a session that asks
        and has no name yet gets the name set before them (looked up once, bounded)."""
        events = [event for line in lines for event in self.line_events(path, line, now)]
        out = self.board.local.apply(path, events, now)
        if not any(t.kind == "needs_input" and t.session.name is None for t in out):
            return out
        try:  # (the questions are on the board: a failure here must not lose their transitions)
            name = look_up_name(tailer, fd)
        except Exception as exc:
            log.debug("%s: cannot look up the session's name: %s", path, exc)
            return out
        if not name:
            return out
        self.board.local.apply(path, [Renamed(name)], now)  # (the transitions carry it too)
        return [replace(t, session=named.ref) if (named := self.board.view(t.session.key)) else t for t in out]

    def _warm(self, path: str, tailer: Tailer) -> None:
        """``tailer`` was just read: it keeps its window as read (compared on the next read
        without hashing: the common case, a file that is being written); the tailer read longest
        ago of more than :data:`HOT` keeps only its digest (memory bounded whatever the number
        of files)."""
        hot = self._hot
        hot.pop(path, None)
        hot[path] = tailer
        if len(hot) > HOT:
            cold = next(iter(hot))
            hot.pop(cold).keep_digest_only()

    def forget(self, path: str) -> list[Transition]:
        self._hot.pop(path, None)
        tailer = self.tailers.pop(path, None)
        self._forget_ident(path, tailer.ident if tailer is not None else None)
        if path not in self._backoff:  # (one that cannot be read stays said until it is read)
            self._once.forget(path)
        return self.board.local.forget(path, self._wall())

    def _read_bounded(self, tailer: Tailer, fd: int | None = None) -> list[Event] | None:
        """The events that settle the file's state (see :meth:`load`), ``None`` if unreadable."""
        keep: list[Event] = []
        return keep if self.load(tailer, keep, fd, name=True) is not None else None

    def load(
        self, tailer: Tailer, keep: list[Event] | None = None, fd: int | None = None, name: bool = False
    ) -> SessionReducer | None:
        """The state a full read of the tailer's file would give (:func:`startup_read`); ``None`` if
        it cannot be read (said once). ``fd``: the file, if open already; ``name``: a session that
        asks gets its name, even one set before what was read."""
        path = tailer.path
        try:
            with contextlib.ExitStack() as opened:
                if fd is None:
                    fd, _ = open_regular(path)
                    opened.callback(os.close, fd)
                events = partial(self.line_events, path, now=self._wall())
                reducer = startup_read(fd, os.fstat(fd), tailer, self.options.max_line, events, keep)
                asks = name and reducer.pending and reducer.name is None and reducer.has_header
                found = asks and look_up_name(tailer, fd)
        except NotRegularFile as exc:
            self._once(path, "kind", "skipped: %s, not a regular file", exc.kind)
            return None
        except FileNotFoundError:
            return None
        except OSError as exc:
            self._failed(path, exc)
            return None
        if found:
            reducer.apply(Renamed(found))
            if keep is not None:
                keep.append(Renamed(found))
        return reducer

    def line_events(self, path: str, line: bytes, now: float) -> list[Event]:
        """pi's events in one line (the one bounded parse); a bad line is skipped, said once."""
        if not line or line.isspace():
            return []
        if type(line) is LongLine:  # too long to read: what its first bytes say
            self._once(path, "long", "skipped a line longer than %d MB", self.options.max_line >> 20)
            return too_large_events(line, self.options.catalog, now)
        fast = result_events(line, self.options.catalog, now)  # (a tool's result: its output unparsed)
        if fast is not None:
            return fast
        try:
            entry = codec.loads(line)  # size: the tailer's max_line; depth: capped
        except UnicodeDecodeError:  # (what its bytes still say: a question tool's call, a result)
            self._once(path, "utf8", "read only the calls of a line that is not UTF-8")
            return odd_line_events(line, self.options.catalog, now)
        except ValueError as exc:
            self._once(path, "json", "read only the calls of a line that is not usable JSON (%s)", clean(exc, 80))
            return odd_line_events(line, self.options.catalog, now)
        if not isinstance(entry, dict):
            self._once(path, "object", "skipped a JSON line that is not an object")
            return []
        try:
            return to_events(entry, self.options.catalog, now)
        except Exception as exc:  # (EntryError; a bug meeting odd data must cost this entry, not the engine)
            why = exc if isinstance(exc, EntryError) else type(exc).__name__
            self._once(path, "shape", "skipped an entry with an unexpected shape (%s)", why)
        return []

    def blame(self) -> None:
        """The engine failed: count it against the file it was reading, if any."""
        if self.reading is not None:
            self._blame[self.reading] = self._blame.get(self.reading, 0) + 1

    def resync(self, out: list[Transition]) -> None:
        """After a restart: every file read on, the transitions into ``out`` as each is read. The
        one being read when it failed: read again from its tail (a file not followed yet: added
        again); failing again, skipped past; after BLAME_LIMIT failures, ignored."""
        culprit, self.reading = self.reading, None
        if culprit is not None:
            blamed = self._blame.get(culprit, 0)
            tailer = self.tailers.get(culprit)
            if blamed >= BLAME_LIMIT:
                self.ignored.add(culprit)
                log.error("ignoring %s from now on: reading it made the engine fail %d times", culprit, blamed)
                self._retry_at.pop(culprit, None)
                self._backoff.pop(culprit, None)
                out += self.forget(culprit)
            elif blamed == 1 and tailer is not None:
                self.reading = culprit
                events = self._read_bounded(tailer)
                if events is not None:
                    out += self.board.local.replace(culprit, events, self._wall())
                self.reading = None
            elif tailer is None:
                out += self.read(culprit)
        for path in list(self.tailers):
            out += self.read(path)


# ---- one read, without the app ----


def read_processes(processes: Probe | None, health: FailureLog, folders: Collection[str] = ()) -> Sequence[Proc] | None:
    """The process list (``processes``: how to read it, by default the running pi processes, with
    the panes of those in ``folders`` captured), or ``None`` (liveness unknown: nothing changes)
    if reading it fails."""
    try:
        if processes is None:
            from notifier.system.processes import running_pi  # (only where liveness is wanted)

            return running_pi(folders)
        return processes()
    except Exception as exc:
        if health.failed("process check", exc, "liveness unknown until it works again"):
            log.warning("reading the process list failed (%s)", exc, exc_info=exc)
        return None


def open_cache(options: EngineOptions) -> StartupCache | None:
    """The start-up scan cache the options name (None: read every file)."""
    if options.cache_path is None:
        return None
    return StartupCache(options.cache_path, options.catalog.key, options.roots, options.max_line)


def scan_once(options: EngineOptions, processes: Probe | None = None) -> Snapshot:
    """Read every session once: no watcher, no thread. For ``answer``, ``goto`` and ``snooze`` /
    ``mute`` / ``unmute`` (:func:`notifier.cli.parser.sessions_of`), and ``status --tmux`` /
    ``--bar`` without an app."""
    with scanned(options, processes) as board:
        return board.snapshot(time.time())


@contextmanager
def scanned(options: EngineOptions, processes: Probe | None = None) -> Iterator[Board]:
    """The board after one read of every session (a snapshot of it is :func:`scan_once`). The
    scan cache is written once the caller is done with it (after ``status`` printed it).

    The cyclic garbage collector waits meanwhile: a scan makes objects for every session that
    live as long as the board, which it would walk again and again (a tenth of a warm
    ``status``); what it would find is collected once the caller is done."""
    collecting = gc.isenabled()
    gc.disable()
    try:
        wall = time.time
        files = BoardReader(options, Board(liveness=options.liveness), wall)
        cache = open_cache(options)
        for root in options.roots:
            if os.path.isdir(root):
                files.scan(root, initial=True, cache=cache)
        if options.liveness:
            board = files.board
            board.local.set_processes(read_processes(processes, FailureLog(), board.local.asking_folders()), wall())
        if cache is not None:
            log.debug("scanned %d session files, %d unchanged since the last scan", len(files.board.local), cache.hits)
        try:
            yield files.board
        finally:
            if cache is not None:
                cache.save(files.tailers, files.board)
    finally:
        if collecting:
            gc.enable()


class OneFileReader:
    """One session file read into a board of its own, as the engine reads it at start-up, then
    followed as it grows (for ``answer``). No thread, no watcher, no liveness: each ``read``
    takes what the file gained since the last one."""

    def __init__(self, path: str, catalog: QuestionCatalog, wall: Callable[[], float] = time.time) -> None:
        self.path = path
        options = EngineOptions(roots=[], catalog=catalog, liveness=False)
        self._files = BoardReader(options, Board(liveness=False), wall)
        self._files.add(path, initial=True)

    def read(self) -> list[Transition]:
        """What changed since the last read (a file that is gone is forgotten: no session left)."""
        return self._files.read(self.path)

    def view(self) -> SessionView | None:
        """The session as read so far (``None``: no session header read)."""
        return self._files.board.view(self.path)


# ---- the start-up cache ----

CACHE_FORMAT = 8  # 8: the summary an array (7: the tailer's bytes in blobs; 6: every field of a question)
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


def cache_version(tools: Iterable[str]) -> int:
    """``PRAGMA user_version`` of a cache written for this format, release and catalog."""
    return zlib.crc32(f"{CACHE_FORMAT}|{__version__}|{','.join(sorted(tools))}".encode()) >> 1


def _below(roots: Iterable[str]) -> tuple[str, list[bytes]]:
    """An SQL condition on ``path``: below one of ``roots`` (a range of the key per root)."""
    bounds: list[bytes] = []
    for root in roots:
        prefix = os.fsencode(root.rstrip(os.sep) + os.sep)
        bounds += [prefix, prefix[:-1] + bytes([prefix[-1] + 1])]
    terms = ["(path >= ? AND path < ?)"] * (len(bounds) // 2)
    return "(" + (" OR ".join(terms) or "0") + ")", bounds


class StartupCache:
    """The start-up scan cache (``status`` without the app, and the app's start): per session
    file, a summary of its state and where reading stopped, valid while the file's stamp (device,
    inode, size, mtime_ns) is unchanged, like git's index (a changed file is read again; liveness
    is never cached). One SQLite table ``scan(path, stamp, head, tail, partial, summary)`` in the
    state folder, opened as every SQLite file of the app (:func:`notifier.store.connect`: 0600 in
    a 0700 folder, it holds names, folders, questions); deleting it is always safe. The tailer's
    bytes (digests of the file's head and of the window before the offset, an unfinished last
    line) are blobs; the rest is a JSON summary, an array of the values :data:`FIELDS` names (no
    names repeated in every row: half the bytes to parse). ``PRAGMA user_version`` is its version
    (format, release, question catalog): another one is emptied, quietly.

    The one fault policy (:mod:`notifier.store`): busy or locked is no damage and discards
    nothing (this scan reads every file, the cache stays for the next). What is read back is
    untrusted (bit rot, another program, a hand edit): each summary goes through the one bounded
    JSON parse and is checked field by field, each blob by its type and length. Damage (not a
    database, or anything wrong in it): the cache is deleted and rebuilt by this scan, said in
    one log line (:func:`notifier.store.replace_damaged`). Used for one scan: :meth:`lookup`
    each file, then :meth:`save`."""

    def __init__(
        self, path: str, tools: Iterable[str], roots: list[str], max_line: int, keep_rows: int = KEEP_ROWS
    ) -> None:
        self._path = path
        self._version = cache_version(tools)
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
        except (sqlite3.Error, Damaged, OSError) as exc:
            if isinstance(exc, Damaged) or is_damage(exc):
                self._damaged(str(exc))
            else:  # (busy, locked, a folder we may not read: nothing wrong with what it holds)
                log.debug("scan cache not read (%s)", exc)
                self._close()

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
        db = connect(self._path, 2.0)  # (the one way the app opens an SQLite file: notifier.store)
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
        replace_damaged(self._path, why, "the scan cache", keep=False)
        self._read.update((p, row[0]) for p, row in self._rows.items() if p in self._seen)
        self._rows = {}

    def _close(self) -> None:
        with contextlib.suppress(sqlite3.Error):
            if self._db is not None:
                self._db.close()
        self._db = None


# ---- one summary of the cache ----


def _pack(tailer: Tailer, reducer: SessionReducer) -> tuple[bytes, bytes, bytes, bytes] | None:
    """``(head, tail, partial, summary)`` of a file read (``None`` if it cannot be cached: that
    file is read next time)."""
    t, state = tailer.state(), summarize(reducer)
    values = [state[name] for name in _STATE_FIELDS]
    try:
        if reducer.pending or reducer.running:  # (what could not be read back is not written;
            _reducer(values)  # the other strings are bounded by pi/entries already)
        data = [t["offset"], t["head_len"], t["tail_start"], tailer.window_start, tailer.name_checked]
        raw = _encode(data + values).encode("ascii")
    except (ValueError, Damaged):
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
        data = codec.loads(raw, MAX_SUMMARY, max_depth=10)
    except ValueError as exc:  # (not JSON, not UTF-8, too large or too deep)
        raise Damaged(f"a summary is not valid JSON ({type(exc).__name__})") from exc
    if type(data) is not list or len(data) != len(FIELDS):
        raise Damaged("a summary has the wrong fields")
    offset, head_len, tail_start, ws, nc = data[:5]
    if not (type(offset) is type(head_len) is type(tail_start) is type(ws) is int and 0 <= offset <= size):
        raise Damaged("a summary holds a wrong number")
    if not (0 <= head_len <= HEAD and 0 <= tail_start <= offset and 0 <= ws <= offset):
        raise Damaged("a summary holds a wrong number")
    if type(head) is not bytes or type(tail) is not bytes or len(head) != 16 or len(tail) != 16:
        raise Damaged("a summary holds wrong digests")  # (notifier.tail.digest: 16 bytes)
    if type(partial) is not bytes or len(partial) > min(offset, MAX_PARTIAL) or type(nc) is not bool:
        raise Damaged("a summary holds a wrong position")
    position = dict(offset=offset, partial=partial, head_len=head_len, head=head, tail_start=tail_start, tail=tail)
    tailer = Tailer(path, max_line, position, ident)
    tailer.window_start, tailer.name_checked = ws, nc
    return Restored(tailer, _reducer(data[5:]))


_STATES: dict[str, State] = {state: state for state in get_args(State)}  # (each by its name)


def _reducer(values: list[Any]) -> SessionReducer:
    """The reducer of a summary's state values (:data:`_STATE_FIELDS`, as :func:`summarize`
    writes them). Our own rows, versioned: a structural check of each value (its type, strings
    and lists bounded) is enough to never crash or mislead on a damaged one, and costs a fraction
    of the generic decoder; only a pending question (rare) is read by the codec, whose writer
    wrote it (:func:`notifier.core.codec.decode`). Raises :class:`Damaged`."""
    sid, cwd, name, base, pending, running, tool, at, header = values
    if not (_text(sid) and _text(cwd) and _text(name) and _text(tool) and type(header) is bool):
        raise Damaged("a summary holds a wrong name or flag")
    state = _STATES.get(base) if type(base) is str else None
    if state is None or type(at) not in (int, float) or not -MAX_FLOAT <= at <= MAX_FLOAT:  # (NaN, inf too)
        raise Damaged("a summary holds a wrong state or time")
    if not _listed(pending, running):
        raise Damaged("a summary holds a wrong list")
    try:
        asked = [decode(Question, q, MAX_TEXT, MAX_LIST) for q in pending] if pending else []
    except ValueError as exc:
        raise Damaged(f"a summary holds {exc}") from None
    return SessionReducer(
        session_id=sid, cwd=cwd, name=name, base=state, calls={q.tool_call_id: q for q in asked},
        running=running, current_tool=tool, updated_at=float(at), has_header=header,
    )  # fmt: skip


def _text(value: Any, optional: bool = True) -> bool:
    """``value`` may be a summary's string (``optional``: or None)."""
    return (optional and value is None) or (type(value) is str and len(value) <= MAX_TEXT)


def _listed(pending: Any, running: Any) -> bool:
    """A summary's pending questions (a list; each checked by the codec) and tools running (names
    to names) may be what it holds."""
    if type(pending) is not list or type(running) is not dict or max(len(pending), len(running)) > MAX_LIST:
        return False
    return not running or all(_text(k, False) and _text(v, False) for k, v in running.items())
