"""The engine thread: owns every tailer and the board; turns file changes into transitions.

Data flow: watchdog → queue (coalesced per path) → tailer → JSON lines → pi entries → events →
board → transitions + an immutable snapshot → sinks. Nothing else mutates engine state; the UI and
other threads talk to it only by putting commands on its queue.
"""

from __future__ import annotations

import dataclasses
import logging
import os
import queue
import stat
import threading
import time
from collections import deque
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol

from notifier.core import jsonbound
from notifier.core.board import Board, Proc
from notifier.core.model import Snapshot, Transition
from notifier.core.reducer import Event, Header, Input, Renamed, SessionReducer, Supersede, restore, summarize
from notifier.core.settle import EVENT_BUDGET, Settler, sets_base
from notifier.core.text import clean
from notifier.pi.entries import EntryError, to_events
from notifier.pi.lines import MARKERS, may_have_events
from notifier.pi.questions import QuestionCatalog
from notifier.watch.events import FileChanged, FolderAppeared, PathGone, RootBack, RootGone, WatchEvent
from notifier.watch.scanner import (
    HEADER_LIMIT,
    NotRegularFile,
    backward_matching_lines,
    find_end,
    find_name,
    forward_lines,
    is_session_name,
    kind_of,
    open_regular,
    read_head,
    walk_tree,
)
from notifier.watch.tail import DEFAULT_MAX_LINE, WINDOW, Tailer

if TYPE_CHECKING:
    from notifier.system.config import Config

log = logging.getLogger(__name__)



# Messages of the engine's own (the watcher's are in notifier.watch.events).
@dataclass(frozen=True)
class _Stop:
    pass


@dataclass(frozen=True)
class _Call:
    """Run ``fn`` on the engine thread (how the tray, the window and the control socket act)."""

    fn: Callable[[], None]


@dataclass(frozen=True)
class _Processes:
    """A process list from the liveness probe; ``mark``: the board's update count before the read."""

    mark: int
    procs: Sequence[Proc] | None
LIVENESS_INTERVAL_S = 3.0
LIVENESS_SOON_S = 0.1
RECHECK_MAX_S = 30.0  # abandoned questions are looked at again, backing off up to this
RESTART_MIN_S = 0.2  # a failed engine thread is restarted after this, doubling …
RESTART_MAX_S = 30.0  # … up to this
HEALTHY_S = 60.0  # a run this long resets the restart back-off
BLAME_LIMIT = 3  # a file that made the engine fail this often is ignored
UNWATCHED_POLL_S = 2.0
LIVE_FULL_READ = 4 << 20
CACHE_PARTIAL_MAX = 64 << 10  # a file ending in a longer unfinished line is not cached


@dataclass(frozen=True)
class ReadyInfo:
    sessions: int
    pending: int
    scan_s: float


class Sink(Protocol):
    def ready(self, info: ReadyInfo, snapshot: Snapshot) -> None: ...

    def transitions(self, items: Sequence[Transition], snapshot: Snapshot) -> None: ...


@dataclass
class EngineOptions:
    roots: list[str]
    catalog: QuestionCatalog = field(default_factory=QuestionCatalog)
    liveness: bool = True
    max_line: int = DEFAULT_MAX_LINE
    liveness_interval: float = LIVENESS_INTERVAL_S
    cache_path: str | None = None  # the start-up scan cache (None: read every file)


def engine_options(config: Config) -> EngineOptions:
    from notifier.system import paths

    return EngineOptions(
        roots=list(config["sessions_dirs"]),
        catalog=QuestionCatalog(config["question_tools"], config["ignore_tools"]),
        liveness=config["liveness"] == "auto",
        cache_path=os.path.join(paths.state_dir(), "scan-cache.sqlite3"),
    )


class _Once:
    """Log each (file, kind of problem) once, never per line."""

    def __init__(self) -> None:
        self.seen: set[tuple[str, str]] = set()

    def __call__(self, path: str, kind: str, message: str, *args: Any) -> None:
        if (path, kind) not in self.seen:
            self.seen.add((path, kind))
            log.warning("%s: " + message, clean(path), *args)

    def forget(self, path: str) -> None:
        self.seen = {k for k in self.seen if k[0] != path}


class Health:
    """What went wrong and was recovered from (any thread): the engine restarted, a sink failed.
    The tray shows it, ``doctor`` asks for it; each kind of failure is logged with its traceback
    once, later ones of the same kind only counted."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._problems: dict[str, dict[str, Any]] = {}
        self._logged: set[tuple[str, str]] = set()

    def failed(self, part: str, exc: BaseException, doing: str) -> bool:
        """Record a failure of ``part``; True the first time this kind is seen (log it fully)."""
        kind = type(exc).__name__
        with self._lock:
            p = self._problems.setdefault(part, {"count": 0})
            p["count"] += 1
            p["error"] = f"{kind}: {clean(exc, 200)}" if str(exc) else kind
            p["doing"] = doing
            p["at"] = time.time()
            p.pop("recovered", None)
            first = (part, kind) not in self._logged
            self._logged.add((part, kind))
        return first

    def recovered(self, part: str) -> None:
        with self._lock:
            if part in self._problems:
                self._problems[part]["recovered"] = True

    def report(self) -> dict[str, dict[str, Any]]:
        with self._lock:
            return {k: dict(v) for k, v in self._problems.items()}

    def lines(self) -> tuple[str, ...]:
        """One short line per part that failed (for the tray's tooltip)."""
        out = []
        for part, p in sorted(self.report().items()):
            times = f"{p['count']}×" if p["count"] > 1 else "once"
            out.append(f"{part} failed {times} ({p['error']}); {p['doing']}")
        return tuple(out)


def _name(sink: object) -> str:
    return type(sink).__name__


class Engine:
    def __init__(
        self,
        options: EngineOptions,
        sinks: Iterable[Sink] = (),
        processes: Callable[[], Sequence[Proc] | None] | None = None,
        wall: Callable[[], float] = time.time,
    ) -> None:
        self.options = options
        self.sinks = list(sinks)
        self.board = Board(liveness=options.liveness)
        self.queue: queue.Queue[WatchEvent | _Stop | _Call | _Processes] = queue.Queue()
        self._watcher: Any = None
        self.tailers: dict[str, Tailer] = {}
        self.snapshot = Snapshot()
        self.ready_info: ReadyInfo | None = None
        self._processes = processes
        self._wall = wall
        self._once = _Once()
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._next_liveness: float | None = None
        self._unwatched: dict[str, list[str]] = {}
        self._next_poll: float | None = None
        self.ready_event = threading.Event()
        self.failed: BaseException | None = None  # the last failure while it is being restarted
        self.on_failure: Callable[[], None] | None = None
        self.health = Health()
        self.restarts = 0
        self._started = False  # the start-up scan finished and ``ready`` was handed out
        self._recheck_s = options.liveness_interval
        self._probe_mark = 0
        self._cache: Any = None
        self._cached: dict[str, tuple[str, dict[str, Any]]] = {}
        self._stale: dict[str, str] = {}  # files read (not restored) at start-up → their stamp
        self._probe_wanted = threading.Event()
        self._seen: set[str] = set()
        self.cache_hits = 0
        self._inflight: str | None = None  # the file being read (blamed if the engine fails)
        self._blame: dict[str, int] = {}  # failures that happened while reading each file
        self._ignored: set[str] = set()  # files that made the engine fail again and again
        self._idents: dict[tuple[int, int], str] = {}  # (device, inode) → the one name read

    # ---- lifecycle ----

    def start(self) -> None:
        self._thread = threading.Thread(target=self._main, name="pi-notifier-engine", daemon=True)
        self._thread.start()
        if self.options.liveness:
            threading.Thread(target=self._probe_loop, name="pi-notifier-liveness", daemon=True).start()

    @property
    def watcher(self) -> Any:
        """The watchdog wrapper, imported on first use (``status`` never needs it)."""
        if self._watcher is None:
            from notifier.watch.observer import Watcher

            self._watcher = Watcher(self.queue)
        return self._watcher

    def stop(self, timeout: float = 2.0) -> None:
        self._stop.set()
        self._probe_wanted.set()
        self.queue.put(_Stop())
        if self._thread is not None:
            self._thread.join(timeout)
        if self._watcher is not None:
            self._watcher.stop()

    def call(self, fn: Callable[[], None]) -> None:
        """Run ``fn`` on the engine thread (how the tray and window change state)."""
        self.queue.put(_Call(fn))

    def _main(self) -> None:
        """Runs the engine; if a step fails anyway (any exception, even a BaseException raised
        by a bug or a sink), logs it, shows it in the health report and runs again after a
        bounded back-off, keeping every session's state (nothing is reported twice)."""
        delay = RESTART_MIN_S
        while not self._stop.is_set():
            began = time.monotonic()
            try:
                if not self._started:
                    self._startup()
                else:
                    self._resync()
                self._loop()
                return
            except BaseException as exc:
                if self._stop.is_set():
                    return
                self.failed = exc
                if self._inflight is not None:
                    self._blame[self._inflight] = self._blame.get(self._inflight, 0) + 1
                if time.monotonic() - began > HEALTHY_S:
                    delay = RESTART_MIN_S
                doing = f"restarted {self.restarts + 1}×" if self._started else "starting again"
                if self.health.failed("engine", exc, doing):
                    log.error("the engine failed; restarting it in %.1f s", delay, exc_info=exc)
                else:
                    log.error("the engine failed again (%s); restarting it in %.1f s", clean(exc, 200), delay)
                if not self._started:
                    self._reset_startup()
                if self.on_failure is not None:
                    try:
                        self.on_failure()
                    except Exception:
                        log.exception("reporting the engine failure failed")
                if self._stop.wait(delay):
                    return
                delay = min(delay * 2, RESTART_MAX_S)
                self.restarts += 1
                self.failed = None
                self.health.recovered("engine")

    def _reset_startup(self) -> None:
        """The start-up scan failed half-way: start it again from nothing (no sink saw anything)."""
        if self._watcher is not None:
            try:
                self._watcher.stop()
            except Exception:
                log.debug("stopping the half-started watcher failed", exc_info=True)
            self._watcher = None
        self.board = Board(liveness=self.options.liveness)
        self.tailers.clear()
        self._stale.clear()
        self._seen.clear()
        self._cache = None
        self._cached = {}

    def _resync(self) -> None:
        """After a restart: read what every file gained meanwhile (a lost wake-up loses nothing).
        The file being read when it failed is read again from its tail (what the failed read
        took is not lost); if it makes the engine fail again, it is skipped past, and after
        BLAME_LIMIT failures ignored, so one file cannot stop the app telling about the others."""
        out: list[Transition] = []
        culprit, self._inflight = self._inflight, None
        if culprit is not None:
            blamed = self._blame.get(culprit, 0)
            tailer = self.tailers.get(culprit)
            if blamed >= BLAME_LIMIT:
                self._ignored.add(culprit)
                log.error(
                    "ignoring %s from now on: reading it made the engine fail %d times", clean(culprit), blamed
                )
                out += self.board.forget(culprit, self._wall())
                self.tailers.pop(culprit, None)
            elif blamed == 1 and tailer is not None:
                self._inflight = culprit
                lines = self._read_bounded(tailer)
                now = self._wall()
                if lines is not None:
                    out += self.board.replace(culprit, self._events(culprit, lines, now), now)
                self._inflight = None
        for path in list(self.tailers):
            out += self._read(path)
        if self.options.liveness and (self.board.needs_liveness() or self.board.has_abandoned()):
            self._schedule_liveness(LIVENESS_SOON_S)
        self._emit(out)

    # ---- startup ----

    def _startup(self) -> None:
        began = time.perf_counter()
        self.watcher.start()
        roots = []
        for root in self.options.roots:
            if self.watcher.watch(root):
                roots.append(root)
        collected: list[Transition] = []
        for root in roots:
            collected += self._scan_dir(root, initial=True)
        if self.board.needs_liveness():
            abandoned = self.board.set_processes(self._safe_procs(), self._wall())
            gone = {(t.session.key, t.question.tool_call_id) for t in abandoned}
            collected = [t for t in collected if (t.session.key, t.question.tool_call_id) not in gone]
            self._schedule_liveness(self.options.liveness_interval)
        if self._fill_names():
            collected = self._renamed(collected)
        self._save_cache()
        if self.options.cache_path is not None:
            log.debug(
                "start-up scan: %d session files, %d unchanged since the last scan",
                len(self.board),
                self.cache_hits,
            )
        now = self._wall()
        self.snapshot = self.board.snapshot(now)
        info = ReadyInfo(len(self.board), self.snapshot.pending_count, time.perf_counter() - began)
        self.ready_info = info
        if collected:
            self._emit(collected)
        for sink in self.sinks:
            self._to_sink(sink, "ready", lambda s=sink: s.ready(info, self.snapshot))
        self._started = True
        self.ready_event.set()
        for root in roots:
            self._check_watch_limit(root)

    def _procs(self) -> Sequence[Proc] | None:
        if self._processes is None:
            from notifier.system.processes import running_pi

            self._processes = running_pi
        return self._processes()

    def _safe_procs(self) -> Sequence[Proc] | None:
        """The process list, or ``None`` (liveness unknown: nothing changes) if reading it fails."""
        try:
            return self._procs()
        except Exception as exc:
            if self.health.failed("process check", exc, "liveness unknown until it works again"):
                log.warning("reading the process list failed (%s)", clean(exc, 200), exc_info=exc)
            return None

    def _fill_names(self, keys: Iterable[str] | None = None) -> bool:
        """Sessions that ask something deserve their name, even if it was set long before the
        part of the file we read. Looked up once per session (bounded read). True if any found."""
        found = False
        for key in self.board.unnamed_askers(keys):
            tailer = self.tailers.get(key)
            if tailer is None or tailer.name_checked or tailer.window_start == 0:
                continue
            tailer.name_checked = True
            name = find_name(key, tailer.window_start)
            if name:
                self.board.apply(key, [Renamed(clean(name, 200))], self._wall())
                found = True
        return found

    def _renamed(self, items: list[Transition]) -> list[Transition]:
        """The same transitions, carrying the sessions' current names."""
        out = []
        for t in items:
            view = self.board.view(t.session.key)
            out.append(dataclasses.replace(t, session=view.ref) if view is not None else t)
        return out

    def _check_watch_limit(self, root: str) -> None:
        """Say once, and poll, when inotify really ran out of watches under ``root``. A folder
        missing from watchdog's table is not enough (it may be adding it right now, after a
        ``mkdir -p``): the limit is confirmed by the kernel refusing one more watch."""
        dirs = walk_tree(root).dirs
        missing = self.watcher.unwatched(root, dirs)
        if missing and not self.watcher.limit_reached(missing):
            missing = []
        if missing:
            if root not in self._unwatched:
                log.warning(
                    "inotify watch limit reached: %d of %d folders in %s are not watched; polling them every %.0f s "
                    "(raise fs.inotify.max_user_watches to fix)",
                    len(missing),
                    len(dirs),
                    clean(root),
                    UNWATCHED_POLL_S,
                )
            self._unwatched[root] = missing
            self._next_poll = time.monotonic() + UNWATCHED_POLL_S
        else:
            self._unwatched.pop(root, None)

    # ---- files ----

    def _scan_dir(self, folder: str, initial: bool) -> list[Transition]:
        tree = walk_tree(folder)
        for path, kind in tree.skipped:
            self._once(path, "kind", "skipped: %s, not a regular file", kind)
        out: list[Transition] = []
        cached = self._cache_rows() if initial else None
        names = {path: ident for ident, path in tree.idents.items()}
        for path in tree.files:
            ident = names[path]
            known = self._idents.get(ident)
            if known is not None and known != path and known in self.tailers:
                continue  # a second name of a file already read (a hard link, another root)
            if path in self.tailers:
                out += self._read(path)
                continue
            self._idents[ident] = path
            if cached is not None:
                out += self._add_cached(path, cached)
            else:
                out += self._add(path, initial)
        return out

    # ---- the start-up scan cache ----

    def _cache_rows(self) -> dict[str, tuple[str, dict[str, Any]]] | None:
        if self.options.cache_path is None:
            return None
        if self._cache is None:
            from notifier.watch.cache import ScanCache, fingerprint

            self._cache = ScanCache(self.options.cache_path, fingerprint(self.options.catalog.names))
            self._cached = self._cache.load()  # checked row by row; a damaged cache comes back empty
        return self._cached

    def _add_cached(self, path: str, cached: dict[str, tuple[str, dict[str, Any]]]) -> list[Transition]:
        """Restore an unchanged file from its summary; read any other one (and remember it)."""
        assert self._cache is not None
        self._seen.add(path)
        try:
            st = os.stat(path)  # before reading: a change during the read can only cause a miss
        except OSError:
            return []
        stamp = self._cache.stamp(st)
        row = cached.get(path)
        if row is not None and row[0] == stamp and stat.S_ISREG(st.st_mode):
            data = row[1]
            try:
                reducer = restore(data["s"])
                tailer = Tailer(path, self.options.max_line)
                tailer.restore(data["t"], (st.st_dev, st.st_ino))
            except (ValueError, KeyError, TypeError):  # (rows were checked when loaded)
                pass  # an unusable summary: read the file instead
            else:
                if tailer.offset == st.st_size:
                    tailer.window_start = data["ws"]
                    tailer.name_checked = data["nc"]
                    self.tailers[path] = tailer
                    self.cache_hits += 1
                    return self.board.restore(path, reducer, self._wall(), initial=True)
        self._stale[path] = stamp
        return self._add(path, initial=True)

    def _save_cache(self) -> None:
        """Remember what the start-up scan read (after names were filled in)."""
        if self._cache is None:
            return
        from notifier.watch.cache import encode

        rows = []
        for path, stamp in self._stale.items():
            tailer = self.tailers.get(path)
            reducer = self.board.reducer(path)
            if tailer is None or reducer is None or len(tailer.partial) > CACHE_PARTIAL_MAX:
                continue
            try:
                data = encode(summarize(reducer), tailer.state(), tailer.window_start, tailer.name_checked)
            except (TypeError, ValueError):  # (cannot happen with what the reducer holds)
                continue
            rows.append((path, stamp, data))
        roots = tuple(r.rstrip(os.sep) + os.sep for r in self.options.roots)
        gone = [f for f in self._cached if f.startswith(roots) and f not in self._seen]
        self._cache.save(rows, gone)
        self._cache.close()
        self._stale.clear()
        self._cached = {}

    def _add(self, path: str, initial: bool) -> list[Transition]:
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
                    return self._read(known)  # another name of a file we follow: read it once
            self._idents[ident] = path
            if st.st_size <= LIVE_FULL_READ:
                # A file that appears while we run is read whole (it is new, so small): every
                # question in it is reported, even one asked and answered before we looked.
                tailer = Tailer(path, self.options.max_line)
                self.tailers[path] = tailer
                return self._read(path)
        tailer = Tailer(path, self.options.max_line)
        reducer = self._load(tailer)
        if reducer is None:
            return []
        self.tailers[path] = tailer
        if tailer.ident is not None:
            self._idents[tailer.ident] = path
        # Only the state the file ends in is reported: a question asked and answered before we
        # looked is history, not news (no needs_input + resolved pair at start-up).
        return self.board.restore(path, reducer, self._wall(), initial=initial)

    def _read_bounded(self, tailer: Tailer) -> list[bytes | dict[str, Any]] | None:
        """The header and the lines that settle the file's state (in file order); the tailer
        continues after them. ``None`` if the file cannot be read (said once)."""
        keep: list[bytes] = []
        if self._load(tailer, keep) is None:
            return None
        return list(keep)

    def _load(self, tailer: Tailer, keep: list[bytes] | None = None) -> SessionReducer | None:
        """The state a full read of the tailer's file would give, read from its end only as far
        as needed; the tailer continues at the end. ``None`` if it cannot be read (said once).
        ``keep`` receives the raw lines that state was built from (header first)."""
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
            return self._settle(fd, st, tailer, keep)
        except OSError as exc:
            self._once(path, "read", "cannot read (%s)", exc.strerror or exc)
            return None
        finally:
            os.close(fd)

    def _settle(
        self, fd: int, st: os.stat_result, tailer: Tailer, keep: list[bytes] | None
    ) -> SessionReducer:
        path, size, max_line = tailer.path, st.st_size, self.options.max_line
        ident = (st.st_dev, st.st_ino)
        tailer.name_checked = False
        head, header_end = read_head(fd, size)
        if header_end < 0:
            # No complete first line yet: the tailer picks it up when its newline arrives
            # (an absurdly long first line is not a pi session: follow new data only).
            partial = head if size <= HEADER_LIMIT else b""
            tailer.seek(size, ident, partial, partial[-WINDOW:], head=partial)
            tailer.window_start = 0
            return SessionReducer()
        now = self._wall()
        head_events = self._events(path, [head], now)
        if keep is not None:
            keep.append(head)
        tail = find_end(fd, header_end, size, max_line)
        offset = size if tail.partial is not None else tail.end
        seen = tail.block + (tail.partial or b"") if offset == size else tail.block
        want = min(WINDOW, offset)
        sig = seen[-want:] if len(seen) >= want else os.pread(fd, want, offset - want)
        tailer.seek(offset, ident, tail.partial or b"", sig, head=head)
        settler = Settler()
        window_start = tail.end
        kept: list[bytes] = []
        if any(isinstance(e, Header) for e in head_events):
            lines = backward_matching_lines(fd, header_end, tail.end, max_line, MARKERS, block=tail.block)
            for start, line in lines:
                window_start = start
                if keep is not None:
                    kept.append(line)
                if settler.feed(self._events(path, [line], now)) or settler.over_budget:
                    break
            else:
                window_start = header_end  # every line was looked at
        if settler.settled or window_start <= header_end and not settler.over_budget:
            tailer.window_start = window_start
            tailer.name_checked = settler.renamed or any(isinstance(e, Renamed) for e in head_events)
            if keep is not None:
                keep += reversed(kept)
            return settler.replay(head_events)
        # A first line that is no header, or a pathological tail (no message among a huge number
        # of tool results): replay the whole file forward, in bounded memory.
        tailer.window_start = header_end
        tailer.name_checked = True  # the whole file was read
        reducer = SessionReducer()
        for event in head_events:
            reducer.apply(event)
        # ``keep`` (a rewrite being compared) gets the lines from the last superseding entry on
        # (plus the last one that set the state before it), at most EVENT_BUDGET of them.
        tail_lines: deque[bytes] = deque(maxlen=EVENT_BUDGET)
        last_base: bytes | None = None
        for _, line in forward_lines(fd, header_end, tail.end, max_line):
            if reducer.has_header and not may_have_events(line):
                continue
            events = self._events(path, [line], now)
            for event in events:
                reducer.apply(event)
            if keep is None or not events:
                continue
            based = any(sets_base(e) for e in events)
            if any(isinstance(e, (Input, Supersede)) for e in events):
                tail_lines.clear()
                if not based and last_base is not None:
                    tail_lines.append(last_base)
            tail_lines.append(line)
            if based:
                last_base = line
        if keep is not None:
            keep += tail_lines
        return reducer

    def _read(self, path: str) -> list[Transition]:
        if path in self._ignored:
            return []
        self._inflight = path
        out = self._read_file(path)
        self._inflight = None
        return out

    def _read_file(self, path: str) -> list[Transition]:
        tailer = self.tailers.get(path)
        if tailer is None:
            return self._add(path, initial=False)
        result = tailer.read()
        now = self._wall()
        if result.missing:
            return self._forget(path)
        if result.special:
            # A FIFO, device or folder named *.jsonl: never opened in a way that blocks, never
            # read. The tailer stays, so the next event costs one fstat and no log line.
            self._once(path, "special", "not a regular file; ignored")
            return self.board.forget(path, now) if self.board.reducer(path) is not None else []
        if result.error is not None:
            self._once(path, "read", "cannot read (%s)", clean(result.error.strerror or result.error))
            return []
        if result.skipped_long:
            self._once(path, "long", "skipped a line longer than %d MB", self.options.max_line >> 20)
        if result.more:
            self.queue.put(FileChanged(path))  # a huge append: the rest after what is queued already
        if result.rewritten:
            log.info("%s was rewritten; reading it again from the start", clean(path))
            lines = self._read_bounded(tailer)
            if lines is None:
                return self._forget(path)
            return self.board.replace(path, self._events(path, lines, now), now)
        if not result.lines:
            return []
        return self.board.apply(path, self._events(path, result.lines, now), now)

    def _forget(self, path: str) -> list[Transition]:
        self.tailers.pop(path, None)
        self._once.forget(path)
        return self.board.forget(path, self._wall())

    def _events(self, path: str, lines: Iterable[bytes | dict[str, Any]], now: float) -> list[Event]:
        events: list[Event] = []
        catalog = self.options.catalog
        for line in lines:
            if isinstance(line, dict):
                entry: Any = line  # parsed by the startup scan already
            elif not line or line.isspace():
                continue
            else:
                try:
                    entry = jsonbound.loads(line)  # size: the tailer's max_line; depth: capped
                except UnicodeDecodeError:
                    self._once(path, "utf8", "skipped a line that is not UTF-8")
                    continue
                except ValueError as exc:
                    self._once(path, "json", "skipped a line that is not usable JSON (%s)", clean(exc, 80))
                    continue
            if not isinstance(entry, dict):
                self._once(path, "object", "skipped a JSON line that is not an object")
                continue
            try:
                events += to_events(entry, catalog, now)
            except EntryError as exc:
                self._once(path, "shape", "skipped an entry with an unexpected shape (%s)", exc)
            except Exception as exc:  # a bug meeting odd data must cost this entry, not the engine
                self._once(
                    path, "shape", "skipped an entry with an unexpected shape (%s)", type(exc).__name__
                )
        return events

    # ---- loop ----

    def _loop(self) -> None:
        while not self._stop.is_set():
            timeout = self._timeout()
            try:
                item = self.queue.get(timeout=timeout)
            except queue.Empty:
                item = None
            batch = [item] if item is not None else []
            while True:
                try:
                    batch.append(self.queue.get_nowait())
                except queue.Empty:
                    break
            out: list[Transition] = []
            files: dict[str, None] = {}
            for item in batch:
                if isinstance(item, _Stop):
                    return
                if isinstance(item, FileChanged):
                    files[item.path] = None
                    continue
                for path in list(files):
                    out += self._read(path)
                files.clear()
                if isinstance(item, _Call):
                    try:
                        item.fn()
                    except Exception:
                        log.exception("a command from the tray or window failed; carrying on")
                    self._emit([])
                elif isinstance(item, PathGone):
                    out += self._gone(item.path)
                elif isinstance(item, FolderAppeared):
                    out += self._scan_dir(item.path, initial=False)
                    self._check_watch_limit_for(item.path)
                elif isinstance(item, RootGone):
                    log.warning("sessions folder %s was removed; waiting for it to come back", clean(item.path))
                    self.watcher.root_gone(item.path)
                    out += self._gone(item.path)
                elif isinstance(item, _Processes):
                    found = self.board.set_processes(item.procs, self._wall(), as_of=item.mark)
                    out += found
                    if found:
                        self._recheck_s = self.options.liveness_interval
                    if self.board.needs_liveness():
                        self._schedule_liveness(self.options.liveness_interval)
                    elif self.board.has_abandoned():
                        # its pi may be seen again: look now and then, less and less often
                        self._schedule_liveness(self._recheck_s)
                        self._recheck_s = min(self._recheck_s * 2, RECHECK_MAX_S)
                elif isinstance(item, RootBack) and self.watcher.watch(item.path):
                    log.info("watching %s", clean(item.path))
                    out += self._scan_dir(item.path, initial=False)
            for path in files:
                out += self._read(path)
            unnamed = {t.session.key for t in out if t.kind == "needs_input" and t.session.name is None}
            if unnamed and self._fill_names(unnamed):
                out = self._renamed(out)
            out += self._timers()
            if out or self.board.has_turns():
                self._emit(out)

    def _check_watch_limit_for(self, folder: str) -> None:
        for root in self.options.roots:
            if folder == root or folder.startswith(root.rstrip(os.sep) + os.sep):
                self._check_watch_limit(root)
                return

    def _gone(self, path: str) -> list[Transition]:
        prefix = path.rstrip(os.sep) + os.sep
        out: list[Transition] = []
        for key in [k for k in self.tailers if k == path or k.startswith(prefix)]:
            if not os.path.exists(key):
                out += self._forget(key)
        return out

    def _timeout(self) -> float | None:
        due = [t for t in (self._next_liveness, self._next_poll) if t is not None]
        if not due:
            return None  # nothing to do until a file changes: no polling
        return max(0.0, min(due) - time.monotonic())

    def _schedule_liveness(self, delay: float) -> None:
        when = time.monotonic() + delay
        if self._next_liveness is None or when < self._next_liveness:
            self._next_liveness = when

    def _timers(self) -> list[Transition]:
        out: list[Transition] = []
        mono = time.monotonic()
        if self._next_poll is not None and mono >= self._next_poll:
            for folders in list(self._unwatched.values()):
                for folder in folders:
                    try:
                        names = os.listdir(folder)
                    except OSError:
                        continue
                    for name in names:
                        if is_session_name(name):
                            out += self._read(os.path.join(folder, name))
            self._next_poll = mono + UNWATCHED_POLL_S if self._unwatched else None
        if self._next_liveness is not None and mono >= self._next_liveness:
            self._next_liveness = None
            if self.board.needs_liveness() or self.board.has_abandoned():
                # The probe thread reads the process table, not us. The mark is taken now, before
                # it reads: only questions seen by now can be judged on what it reads.
                self._probe_mark = self.board.mark()
                self._probe_wanted.set()
        return out

    def _probe_loop(self) -> None:
        """Reads the process table (tens of ms on a busy desktop) off the engine thread."""
        while not self._stop.is_set():
            self._probe_wanted.wait()
            self._probe_wanted.clear()
            if self._stop.is_set():
                return
            mark = self._probe_mark  # read before the table is: see _timers
            self.queue.put(_Processes(mark, self._safe_procs()))

    def _emit(self, items: list[Transition]) -> None:
        if self.options.liveness and any(t.kind == "needs_input" for t in items):
            self._schedule_liveness(LIVENESS_SOON_S)
            self._recheck_s = self.options.liveness_interval
        if log.isEnabledFor(logging.DEBUG):
            for t in items:
                log.debug(
                    "%s%s: %s call %s (%s)%s",
                    t.kind,
                    " (initial)" if t.initial else "",
                    clean(t.session.key),
                    clean(t.question.tool_call_id, 80),
                    clean(t.question.tool, 60),
                    f" → {t.outcome}" if t.outcome else "",
                )
        self._publish_snapshot()
        turns = self.board.drain_turns()
        for sink in self.sinks:
            self._to_sink(sink, "transitions", lambda s=sink: s.transitions(items, self.snapshot))
            if turns and hasattr(sink, "turns"):
                self._to_sink(sink, "turns", lambda s=sink: s.turns(turns))

    def _to_sink(self, sink: object, what: str, call: Callable[[], None]) -> None:
        """Hand something to one sink; whatever it raises stays there (logged once per kind),
        the other sinks still get theirs."""
        try:
            call()
        except BaseException as exc:
            name = _name(sink)
            if self.health.failed(f"sink {name}", exc, "the other outputs carry on"):
                log.error("the %s output failed (in %s); carrying on without it this time", name, what, exc_info=exc)

    def _publish_snapshot(self) -> None:
        self.snapshot = self.board.snapshot(self._wall())


def scan_once(
    options: EngineOptions, processes: Callable[[], Sequence[Proc] | None] | None = None
) -> Snapshot:
    """Read every session once (for ``status``): no watcher, no thread."""
    engine = Engine(options, processes=processes)
    for root in options.roots:
        if os.path.isdir(root):
            engine._scan_dir(root, initial=True)
    if options.liveness:
        engine.board.set_processes(engine._safe_procs(), engine._wall())
    engine._fill_names()
    engine._save_cache()
    log.debug(
        "scanned %d session files, %d unchanged since the last scan", len(engine.board), engine.cache_hits
    )
    return engine.board.snapshot(engine._wall())
