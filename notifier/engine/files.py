"""Session files → the board: one tailer per file, read at start-up from its end only as far as its
state needs, then followed as it grows (rewrites read again, removed files forgotten).

Every line goes through the one bounded parse and pi's adapter; a bad line, file or folder is
said once (per file and kind of problem) and skipped. A file has one name: a second name of the
same (device, inode) — a hard link, an overlapping root — is not read twice."""

from __future__ import annotations

import logging
import os
import stat
from collections.abc import Callable, Iterable
from dataclasses import replace

from notifier.core import jsonbound
from notifier.core.board import Board
from notifier.core.model import Transition
from notifier.core.reducer import Event, Renamed, SessionReducer
from notifier.core.text import clean
from notifier.engine.options import EngineOptions
from notifier.pi.parse import EntryError, odd_line_events, to_events, too_large_events
from notifier.sessions.cache import StartupCache
from notifier.sessions.names import look_up_name
from notifier.sessions.scanner import NotRegularFile, kind_of, open_regular, walk_tree
from notifier.sessions.startup_read import settle_file
from notifier.sessions.tail import LongLine, Tailer
from notifier.system.logonce import LogOnce

log = logging.getLogger(__name__)

BLAME_LIMIT = 3  # a file that made the engine fail this often is ignored
LIVE_FULL_READ = 4 << 20  # a file appearing while we run is read whole up to this size


class SessionFiles:
    """Owned by one thread (the engine's): every tailer, and the board they feed."""

    def __init__(
        self,
        options: EngineOptions,
        board: Board,
        wall: Callable[[], float],
        more: Callable[[str], None] = lambda path: None,
    ) -> None:
        self.options = options
        self.board = board
        self.tailers: dict[str, Tailer] = {}
        self.ignored: set[str] = set()  # files that made the engine fail again and again
        self.reading: str | None = None  # the file being read (blamed if the engine fails)
        self._wall = wall
        self._more = more  # a huge append: read the rest of this file after what is queued
        self._once = LogOnce(log)
        self._idents: dict[tuple[int, int], str] = {}  # (device, inode) → the one name read
        self._blame: dict[str, int] = {}  # failures that happened while reading each file

    # ---- folders ----

    def scan(self, folder: str, initial: bool, cache: StartupCache | None = None) -> list[Transition]:
        """Every session file under ``folder``: known ones read on, new ones added (at start-up,
        ``initial``, unchanged ones restored from ``cache``)."""
        tree = walk_tree(folder)
        for path, kind in tree.skipped:
            self._once(path, "kind", "skipped: %s, not a regular file", kind)
        out: list[Transition] = []
        names = {path: ident for ident, path in tree.idents.items()}
        for path in tree.files:
            ident = names[path]
            known = self._idents.get(ident)
            if known is not None and known != path and known in self.tailers:
                continue  # a second name of a file already read (a hard link, another root)
            if path in self.tailers:
                out += self.read(path)
                continue
            self._idents[ident] = path
            found = cache.lookup(path, tree.stats[path]) if initial and cache is not None else None
            if found is not None:
                self.tailers[path] = found.tailer
                out += self.board.local.restore(path, found.reducer, self._wall(), initial=True)
            else:
                out += self.add(path, initial)
        return out

    def gone(self, path: str, everything: bool = False) -> list[Transition]:
        """A file or folder was removed or moved away: forget the sessions that no longer exist
        (``everything``: all under ``path``, a symlinked folder that points elsewhere now)."""
        prefix = path.rstrip(os.sep) + os.sep
        out: list[Transition] = []
        for key in [k for k in self.tailers if k == path or k.startswith(prefix)]:
            if everything or not os.path.exists(key):
                out += self.forget(key)
        return out

    # ---- files ----

    def add(self, path: str, initial: bool) -> list[Transition]:
        """Follow a file not followed yet. At start-up (``initial``) only the state it ends in is
        reported; a file that appears while we run is new, so read whole when small."""
        if not initial:
            try:
                st = os.stat(path)
            except OSError:
                return []
            if not stat.S_ISREG(st.st_mode):
                self._once(path, "kind", "skipped: %s, not a regular file", kind_of(st.st_mode))
                return []
            ident = (st.st_dev, st.st_ino)
            known = self._idents.get(ident)
            if known is not None and known != path:
                other = self.tailers.get(known)
                if other is not None and other.ident == ident:
                    return self.read(known)  # another name of a file we follow: read it once
            self._idents[ident] = path
            if st.st_size <= LIVE_FULL_READ:
                # Every question in it is reported, even one asked and answered before we looked.
                self.tailers[path] = Tailer(path, self.options.max_line)
                return self.read(path)
        tailer = Tailer(path, self.options.max_line)
        reducer = self.load(tailer)
        if reducer is None:
            return []
        self.tailers[path] = tailer
        if tailer.ident is not None:
            self._idents[tailer.ident] = path
        # Only the state the file ends in is reported: a question asked and answered before we
        # looked is history, not news (no needs_input + resolved pair at start-up).
        return self.board.local.restore(path, reducer, self._wall(), initial=initial)

    def read(self, path: str) -> list[Transition]:
        """What changed in ``path`` (a file not followed yet is added)."""
        if path in self.ignored:
            return []
        self.reading = path
        out = self._read(path)
        self.reading = None
        return out

    def _read(self, path: str) -> list[Transition]:
        tailer = self.tailers.get(path)
        if tailer is None:
            return self.add(path, initial=False)
        result = tailer.read()
        now = self._wall()
        if result.missing:
            return self.forget(path)
        if result.special:
            # A FIFO, device or folder named *.jsonl: never opened in a way that blocks, never
            # read. The tailer stays, so the next event costs one fstat and no log line.
            self._once(path, "special", "not a regular file; ignored")
            return self.board.local.forget(path, now) if self.board.local.reducer(path) is not None else []
        if result.error is not None:
            self._once(path, "read", "cannot read (%s)", clean(result.error.strerror or result.error))
            return []
        if result.more:
            self._more(path)
        if result.rewritten:
            log.info("%s was rewritten; reading it again from the start", clean(path))
            events = self._read_bounded(tailer)
            if events is None:
                return self.forget(path)
            return self.board.local.replace(path, events, now)
        if not result.lines:
            return []
        return self.board.local.apply(path, self.events(path, result.lines, now), now)

    def forget(self, path: str) -> list[Transition]:
        self.tailers.pop(path, None)
        self._once.forget(path)
        return self.board.local.forget(path, self._wall())

    def _read_bounded(self, tailer: Tailer) -> list[Event] | None:
        """The events that settle the file's state (see :meth:`load`), ``None`` if unreadable."""
        keep: list[Event] = []
        return keep if self.load(tailer, keep) is not None else None

    def load(self, tailer: Tailer, keep: list[Event] | None = None) -> SessionReducer | None:
        """The state a full read of the tailer's file would give, read from its end only as far
        as needed; the tailer continues at the end. ``None`` if it cannot be read (said once).
        ``keep`` receives the events that state was built from (header first)."""
        path = tailer.path
        try:
            fd, st = open_regular(path)
        except NotRegularFile as exc:
            self._once(path, "kind", "skipped: %s, not a regular file", exc.kind)
            return None
        except OSError as exc:
            if not isinstance(exc, FileNotFoundError):
                self._once(path, "open", "cannot read (%s)", exc.strerror or exc)
            return None
        try:
            now = self._wall()
            line_events = self.line_events
            return settle_file(
                fd, st, tailer, self.options.max_line, lambda line: line_events(path, line, now), keep
            )
        except OSError as exc:
            self._once(path, "read", "cannot read (%s)", exc.strerror or exc)
            return None
        finally:
            os.close(fd)

    def events(self, path: str, lines: Iterable[bytes], now: float) -> list[Event]:
        """pi's events in ``lines`` (the one bounded parse each); a bad line is skipped, said once."""
        events: list[Event] = []
        for line in lines:
            events += self.line_events(path, line, now)
        return events

    def line_events(self, path: str, line: bytes, now: float) -> list[Event]:
        """pi's events in one line (see :meth:`events`)."""
        if not line or line.isspace():
            return []
        if type(line) is LongLine:  # too long to read: what its first bytes say
            self._once(path, "long", "skipped a line longer than %d MB", self.options.max_line >> 20)
            return too_large_events(line, self.options.catalog, now)
        try:
            entry = jsonbound.loads(line)  # size: the tailer's max_line; depth: capped
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
        except EntryError as exc:
            self._once(path, "shape", "skipped an entry with an unexpected shape (%s)", exc)
        except Exception as exc:  # a bug meeting odd data must cost this entry, not the engine
            self._once(path, "shape", "skipped an entry with an unexpected shape (%s)", type(exc).__name__)
        return []

    # ---- names ----

    def fill_names(self, keys: Iterable[str] | None = None) -> bool:
        """Sessions that ask something deserve their name, even if it was set long before the
        part of the file we read. Looked up once per session (bounded read). True if any found."""
        found = False
        for key in self.board.local.unnamed_askers(keys):
            tailer = self.tailers.get(key)
            name = look_up_name(tailer) if tailer is not None else None
            if name:
                self.board.local.apply(key, [Renamed(name)], self._wall())
                found = True
        return found

    def renamed(self, items: list[Transition]) -> list[Transition]:
        """The same transitions, carrying the sessions' current names."""
        out = []
        for t in items:
            view = self.board.view(t.session.key)
            out.append(replace(t, session=view.ref) if view is not None else t)
        return out

    # ---- after a failure ----

    def blame(self) -> None:
        """The engine failed: count it against the file it was reading, if any."""
        if self.reading is not None:
            self._blame[self.reading] = self._blame.get(self.reading, 0) + 1

    def resync(self) -> list[Transition]:
        """After a restart: read what every file gained meanwhile (a lost wake-up loses nothing).
        The file being read when it failed is read again from its tail (what the failed read
        took is not lost); if it makes the engine fail again, it is skipped past, and after
        BLAME_LIMIT failures ignored, so one file cannot stop the app telling about the others."""
        out: list[Transition] = []
        culprit, self.reading = self.reading, None
        if culprit is not None:
            blamed = self._blame.get(culprit, 0)
            tailer = self.tailers.get(culprit)
            if blamed >= BLAME_LIMIT:
                self.ignored.add(culprit)
                log.error(
                    "ignoring %s from now on: reading it made the engine fail %d times",
                    clean(culprit),
                    blamed,
                )
                out += self.board.local.forget(culprit, self._wall())
                self.tailers.pop(culprit, None)
            elif blamed == 1 and tailer is not None:
                self.reading = culprit
                events = self._read_bounded(tailer)
                if events is not None:
                    out += self.board.local.replace(culprit, events, self._wall())
                self.reading = None
        for path in list(self.tailers):
            out += self.read(path)
        return out

