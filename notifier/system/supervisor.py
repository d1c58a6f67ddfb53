"""Keeping a part running: the one way the app restarts what fails (the engine, the outputs thread,
push), with the one back-off (:class:`Backoff`: doubling from a least to a most wait,
started over by a healthy run). Also the outputs thread itself (:class:`Worker`: the notifier, the
tray and the window on one thread) and the app's stop (:class:`Stop`: an Event that ends what
cannot wait on one, such as the tray's loop).

A part's work runs on its own thread inside :meth:`Supervisor.run`; when it fails (any exception,
even a BaseException raised by a bug) the failure goes into the shared :class:`FailureLog` record, is
logged (with its traceback the first time of each kind, in one line after), the part puts right
what it was doing (``recover``), and the work runs again after a back-off that doubles up to
RESTART_MAX_S (a run of HEALTHY_S starts it over)."""

from __future__ import annotations

import contextlib
import logging
import os
import queue
import select
import threading
import time
from collections.abc import Callable
from typing import Any, Protocol

from notifier.core.text import clean
from notifier.system.log import LogOnce

log = logging.getLogger(__name__)

RESTART_MIN_S = 0.2  # a failed part runs again after this, doubling …
RESTART_MAX_S = 30.0  # … up to this
HEALTHY_S = 60.0  # a run this long resets the back-off


class Backoff:
    """The one back-off: :meth:`next` is the wait before the next try, doubling from ``least_s``
    up to ``most_s``; a try that ran ``healthy_s`` or longer (from :meth:`began`) starts it over."""

    def __init__(self, least_s: float = RESTART_MIN_S, most_s: float = RESTART_MAX_S, healthy_s: float = HEALTHY_S):
        self.least_s = least_s
        self.most_s = most_s
        self.healthy_s = healthy_s
        self._delay = least_s
        self._began = time.monotonic()

    def began(self) -> None:
        """A try starts now."""
        self._began = time.monotonic()

    def reset(self) -> None:
        """A try succeeded: the next wait is the least again."""
        self._delay = self.least_s

    def next(self) -> float:
        """The wait before the next try (the try that began last has ended)."""
        if time.monotonic() - self._began >= self.healthy_s:
            self._delay = self.least_s
        wait = self._delay
        self._delay = min(self._delay * 2, self.most_s)
        return wait


class FailureLog:
    """What went wrong and was recovered from (any thread): the engine restarted, an output
    failed. The tray is handed its lines as they change (:meth:`listen`), ``doctor`` asks for
    it; each kind of failure is logged with its traceback once, later ones of the same kind
    only counted."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._problems: dict[str, dict[str, Any]] = {}
        self._seen = LogOnce(log)  # (name, kind): the first failure of each is logged in full
        self._listeners: list[Callable[[tuple[str, ...]], None]] = []

    def listen(self, listener: Callable[[tuple[str, ...]], None]) -> None:
        """Hand ``listener`` the :meth:`lines` after each change (on the thread that failed or
        recovered: keep it short)."""
        self._listeners.append(listener)

    def _changed(self) -> None:
        if self._listeners:
            lines = self.lines()
            for listener in self._listeners:
                listener(lines)

    def failed(self, name: str, exc: BaseException, doing: str) -> bool:
        """Record a failure of the part ``name``; True the first time this kind is seen (log it fully)."""
        kind = type(exc).__name__
        with self._lock:
            count = self._problems.get(name, {}).get("count", 0) + 1
            error = f"{kind}: {clean(exc, 200)}" if str(exc) else kind
            self._problems[name] = {"count": count, "error": error, "doing": doing, "at": time.time()}
        self._changed()
        return self._seen.first(name, kind)

    def recovered(self, name: str) -> None:
        with self._lock:
            if name in self._problems:
                self._problems[name]["recovered"] = True
        self._changed()

    def report(self) -> dict[str, dict[str, Any]]:
        with self._lock:
            return {k: dict(v) for k, v in self._problems.items()}

    def lines(self) -> tuple[str, ...]:
        """One short line per part that failed (for the tray's tooltip)."""
        out = []
        for name, p in sorted(self.report().items()):
            times = f"{p['count']}×" if p["count"] > 1 else "once"
            out.append(f"{name} failed {times} ({p['error']}); {p['doing']}")
        return tuple(out)


class Stop(threading.Event):
    """The app's stop: an Event (set from anywhere: a signal, Quit, a closed pipe) that also runs,
    once, on the thread that sets it, what :meth:`then` was given. A loop that cannot wait on an
    Event (the tray's, on the main thread) is ended from there, with no thread kept waiting for it."""

    def __init__(self) -> None:
        super().__init__()
        self._then: list[Callable[[], object]] = []
        self._then_lock = threading.Lock()

    def then(self, fn: Callable[[], object]) -> None:
        """Run ``fn`` when set (now, on this thread, if it is set already)."""
        with self._then_lock:
            if not self.is_set():
                self._then.append(fn)
                return
        fn()

    def set(self) -> None:
        super().set()
        with self._then_lock:
            due, self._then = self._then, []
        for fn in due:
            try:
                fn()
            except Exception:
                log.exception("stopping: a part failed to stop; carrying on")


class Supervisor:
    """Runs one part's work on the calling thread until it returns or ``stop`` is set, running it
    again after each failure. ``name``: what it runs (its thread's name), as logged and in ``health``;
    ``failed``: the last failure while the part waits to run again."""

    def __init__(self, name: str, stop: threading.Event, health: FailureLog | None = None) -> None:
        self.name = name
        self.health = health if health is not None else FailureLog()
        self.failed: BaseException | None = None
        self.restarts = 0
        self._stop = stop

    def run(self, work: Callable[[], None], recover: Callable[[], None] | None = None) -> None:
        """``recover``: called after each failure, before the back-off (what ``work`` was doing
        is put right there; what it raises is logged)."""
        backoff = Backoff()
        while not self._stop.is_set():
            backoff.began()
            try:
                work()
                return
            except BaseException as exc:
                if self._stop.is_set():
                    return
                self.failed = exc
                delay = backoff.next()
                if self.health.failed(self.name, exc, f"restarted {self.restarts + 1}×"):
                    log.error("the %s failed; restarting it in %.1f s", self.name, delay, exc_info=exc)
                else:
                    said = clean(exc, 200)
                    log.error("the %s failed again (%s); restarting it in %.1f s", self.name, said, delay)
            if recover is not None:
                try:
                    recover()
                except Exception:
                    log.exception("putting the %s right after its failure failed", self.name)
            if self._stop.wait(delay):
                return
            self.restarts += 1
            self.failed = None
            self.health.recovered(self.name)


class Part(Protocol):
    """What runs on a :class:`Worker` besides the jobs handed to it: its own timers."""

    def due_in(self) -> float | None:
        """Before the worker waits: seconds until it wants :meth:`run_due` by itself (None: not
        before a job or a change). (A file is :meth:`Worker.watch`ed, not a part's.)"""

    def run_due(self) -> None:
        """After each round of jobs or on its timer: do what is due."""


class Worker:
    """One thread, kept running by a :class:`Supervisor`, for the parts that deliver what the
    engine hands out (the notifier, the tray and the window, the bus connection): each hands it
    jobs (:meth:`put`, any thread, run in order); it wakes for the jobs, the nearest time one of
    its :class:`Part` asks for, or a file it :meth:`watch`es — whose reader alone is called then,
    so a file that says nothing costs the other rounds nothing. What a job raises is the
    supervisor's (the loop runs again, the job is dropped)."""

    def __init__(self, name: str, stop: threading.Event, health: FailureLog | None = None) -> None:
        """``name``: the thread's (``pi-notifier-NAME``), as logged and in ``health``."""
        self._stop = stop
        self._supervisor = Supervisor(name, stop, health)
        self._jobs: queue.SimpleQueue[Callable[[], object]] = queue.SimpleQueue()
        self._parts: list[Part] = []
        self._files: dict[int, tuple[Callable[[], None], float | None]] = {}  # a file's reader, how often
        self._polls: dict[int, float] = {}  # time.monotonic() a file is read next, ready or not
        self._lock = threading.Lock()
        self._wake_r, self._wake_w = os.pipe()  # (wakes the loop while it selects)
        for fd in (self._wake_r, self._wake_w):
            os.set_blocking(fd, False)
        self._thread = threading.Thread(target=self._supervisor.run, args=(self._loop,), name=f"pi-notifier-{name}",
                                        daemon=True)

    def start(self) -> None:
        """Start the thread (once; later calls do nothing)."""
        with self._lock, contextlib.suppress(RuntimeError):
            self._thread.start()

    def add(self, part: Part) -> None:
        with self._lock:
            self._parts.append(part)
        self.wake()

    def remove(self, part: Part) -> None:
        with self._lock, contextlib.suppress(ValueError):
            self._parts.remove(part)

    def watch(self, fd: int, read: Callable[[], None], every: float | None = None) -> None:
        """Call ``read()`` on the worker's thread whenever ``fd`` is ready, and (``every``) that
        many seconds after the last time, ready or not (until :meth:`unwatch`)."""
        with self._lock:
            self._files[fd] = (read, every)
        self.wake()

    def unwatch(self, fd: int) -> None:
        with self._lock:
            self._files.pop(fd, None)
            self._polls.pop(fd, None)
        self.wake()

    def put(self, job: Callable[[], object]) -> None:
        """Run ``job`` on the worker's thread, after those handed before it."""
        self._jobs.put(job)
        self.wake()

    def wake(self) -> None:
        """Let the loop look at its parts again (any thread)."""
        with contextlib.suppress(OSError):  # (full: a wake is on its way already)
            os.write(self._wake_w, b"\0")

    @property
    def on_thread(self) -> bool:
        return threading.current_thread() is self._thread

    def sync(self, timeout: float) -> bool:
        """Wait until what was handed before now has run (at most ``timeout`` s; at once when the
        thread does not run, or the loop's end once it is stopping): True if it has."""
        if self.on_thread:
            return True  # (called from a job: what was handed before it has run)
        if not self._thread.is_alive():
            return False
        if self._stop.is_set():
            self.wake()
            self._thread.join(timeout)
            return not self._thread.is_alive()
        done = threading.Event()
        self.put(done.set)
        return done.wait(timeout)

    def _loop(self) -> None:
        while not self._stop.is_set():
            with self._lock:
                parts, files = list(self._parts), dict(self._files)
            plans = [p.due_in() for p in parts]
            now = time.monotonic()
            with self._lock:
                polls = {fd: self._polls.setdefault(fd, now + every) for fd, (_, every) in files.items() if every}
            waits = [due for due in plans if due is not None] + [at - now for at in polls.values()]
            fds = [self._wake_r, *files]
            try:
                ready = set(select.select(fds, [], [], max(0.0, min(waits)) if waits else None)[0])
            except OSError:  # a file closed before it was unwatched: the next round goes without it
                ready = set()
                self._drop_closed(files)
            with contextlib.suppress(OSError):
                os.read(self._wake_r, 4096)
            while not self._jobs.empty():  # (this thread alone takes jobs)
                self._jobs.get_nowait()()
            if self._stop.is_set():
                return
            now = time.monotonic()
            for fd in (ready | {fd for fd, at in polls.items() if at <= now}) & files.keys():
                self._read(fd, now)
            for p in parts:
                p.run_due()

    def _read(self, fd: int, now: float) -> None:
        """A watched file is ready, or due: its reader (unless it was unwatched meanwhile)."""
        with self._lock:
            read, every = self._files.get(fd, (None, None))
            if every:
                self._polls[fd] = now + every
        if read is not None:
            read()

    def _drop_closed(self, files: dict[int, Any]) -> None:
        for fd in files:
            try:
                os.fstat(fd)
            except OSError:
                log.debug("file %d closed while watched: no longer watched", fd)
                self.unwatch(fd)
