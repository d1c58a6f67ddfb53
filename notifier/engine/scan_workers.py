"""Reading many session files on several cores (a cold ``status`` scan): the files are shared
out between forked worker processes, which send back each file's summary (plain data, the same
as the scan cache keeps); the caller restores them as it would cache hits.

The sharing is dynamic: the files are cut into chunks whose numbers wait in a pipe, and every
process (the caller included) claims the next chunk when it has finished the last one. Which
process is faster depends on the files and on what else the machine does, so a static split
left one process idle while the other still read, on a busy machine for tens of milliseconds.

Only where it is safe and pays: on Linux, in a process with no other thread (a fork copies only
the calling thread, so a lock held by another one would stay locked in the child), with more
than one core and enough files. A worker that fails, dies or sends something unreadable costs
nothing but time: what it claimed and did not send is read by the caller itself.
"""

from __future__ import annotations

import marshal
import os
import sys
from collections.abc import Callable, Sequence
from typing import Any

MIN_FILES = 256  # below this, forking costs more than it saves
MAX_WORKERS = 8
FRAME = 64  # items in a chunk, and so in what a worker sends at a time (fewer near the end)
TOKEN_SIZE = 2  # bytes of a chunk's number, in the pipe and at the head of a frame
# Chunks at most: their numbers fill one page, the least a Linux pipe holds (64 KiB by default,
# a page for a user who has very many pipes already) and PIPE_BUF, so they go in by one write
# that cannot stop short; more items make bigger chunks. (Asking the pipe, F_GETPIPE_SZ, would
# import fcntl, 1.3 ms of a status; 2048 chunks are plenty: 100,000 files make chunks of 98.)
_MOST_CHUNKS = 4096 // TOKEN_SIZE
_TAIL = 4  # near the end a chunk is at most 1 / (_TAIL × processes) of the items left
_TAKE_EVERY = 16  # own items between two looks at what the workers sent
_RESULT_LIMIT = 256 << 20  # bytes a worker may send back
_HEAD = TOKEN_SIZE + 4  # a frame: the chunk's number, the payload's size, the payload
_SIGKILL = 9  # (signal.SIGKILL on Linux, the only system where workers are forked)


def fork_is_safe() -> bool:
    """True where this process may fork a child that runs Python code: Linux, no other thread.
    (A process that never imported ``threading`` started no thread of its own: ``status`` does
    not import it, a millisecond of its start.)"""
    threading = sys.modules.get("threading")
    return sys.platform == "linux" and (threading is None or threading.active_count() == 1)


def workers_for(files: int) -> int:
    """How many processes (the caller included) should read ``files`` files: 1 = no fork."""
    if files < MIN_FILES or not fork_is_safe():
        return 1
    try:
        cores = len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        cores = os.cpu_count() or 1
    return max(1, min(cores, MAX_WORKERS, files // (MIN_FILES // 2)))


def chunks(n: int, processes: int, most: int) -> list[int]:
    """Where each chunk of ``n`` items starts, then ``n``: at most ``most`` chunks (what the
    pipe of chunk numbers holds). A chunk is ``FRAME`` items (more where that would make too
    many), and smaller near the end, down to a sixteenth of that: the last chunks claimed are
    short, so the processes finish at nearly the same time. Neighbouring items stay together
    (files of one folder: read one after the other, they share the disk's and the kernel's
    caches)."""
    size = max(FRAME, -(-2 * n // max(most, 1)))  # (half the chunks at most, before the end)
    while True:
        least = max(1, size // 16)
        bounds = [0]
        while bounds[-1] < n:
            left = n - bounds[-1]
            bounds.append(bounds[-1] + min(left, size, max(least, -(-left // (_TAIL * processes)))))
        if len(bounds) - 1 <= most:
            return bounds
        size *= 2


def share_out(
    items: Sequence[str],
    read: Callable[[str], Any],
    take: Callable[[str, Any], None],
    here: Callable[[str], None],
    workers: int,
) -> None:
    """Every item handled once, ``workers`` processes sharing the work (the caller is one):
    each claims a chunk of items after another (see :func:`chunks`). A worker runs
    ``read(item)`` (which must return plain data, what ``marshal`` carries) over its chunk and
    sends the lot, with the chunk's number; the caller runs ``here(item)`` over its own chunks
    and, every few items, ``take(item, that)`` for what the workers sent (so taking overlaps
    their reading), then waits for the rest. The caller claims less than a worker by itself,
    as taking costs it time too. Once the workers are gone, every item no worker sent (it
    failed, died or sent something unreadable) goes to ``here(item)``."""
    n = len(items)
    queued = _queue(n, workers) if workers > 1 and n > 0 else None
    if queued is None:
        for item in items:
            here(item)
        return
    queue, bounds = queued
    work = _Work(items, bounds, take)

    def send(write: Callable[[bytes], None]) -> None:  # (a worker: chunk after chunk, until none is left)
        while (chunk := _claim(queue, work.count)) is not None:
            values = [read(items[i]) for i in range(bounds[chunk], bounds[chunk + 1])]
            write(_frame(chunk, values))

    children: list[_Child] = []
    try:
        for _ in range(min(workers, work.count) - 1):
            spawned = spawn(send)
            if spawned is None:
                break  # (no more processes: more chunks for the others)
            pid, rfd = spawned
            os.set_blocking(rfd, False)
            children.append(_Child(pid, rfd))
        mine = 0
        while (chunk := _claim(queue, work.count)) is not None:
            work.done[chunk] = True  # (claimed here: a frame that says otherwise is a lie)
            for i in range(bounds[chunk], bounds[chunk + 1]):
                here(items[i])
                mine += 1
                if mine % _TAKE_EVERY == 0:
                    for child in children:
                        child.drain(work)
        for child in children:
            child.drain(work, wait=True)
    finally:
        os.close(queue)
        for child in children:
            child.finish()
    for chunk in range(work.count):  # (what the workers claimed and did not send)
        if not work.done[chunk]:
            for i in range(bounds[chunk], bounds[chunk + 1]):
                here(items[i])


def _queue(n: int, processes: int) -> tuple[int, list[int]] | None:
    """The chunks of ``n`` items and the read end of a pipe that holds every chunk's number;
    its write end is closed, so that a read of the empty pipe returns at once (no work left)
    instead of waiting. None where no pipe can be made."""
    try:
        rfd, wfd = os.pipe()
    except OSError:
        return None
    try:
        bounds = chunks(n, processes, _MOST_CHUNKS)  # (all numbers must be in before the fork)
        # (should they not fit after all, the write stops short instead of waiting: a chunk whose
        # number was not written is claimed by nobody, and read by the caller at the end)
        os.set_blocking(wfd, False)
        os.write(wfd, b"".join(c.to_bytes(TOKEN_SIZE, "big") for c in range(len(bounds) - 1)))
    except OSError:
        os.close(rfd)
        return None
    finally:
        os.close(wfd)
    return rfd, bounds


def _claim(queue: int, count: int) -> int | None:
    """The number of the next chunk nobody has claimed, taken out of the pipe; None when none
    is left. Every number was written before the first read, and a read of a pipe takes its bytes
    under one lock: two processes never get one number, nor a number in halves."""
    token = os.read(queue, TOKEN_SIZE)
    chunk = int.from_bytes(token, "big")
    return chunk if len(token) == TOKEN_SIZE and chunk < count else None


def _frame(chunk: int, values: list[Any]) -> bytes:
    """What a worker sends for a chunk it read: its number, the size of the values, the values."""
    payload = marshal.dumps(values)
    return chunk.to_bytes(TOKEN_SIZE, "big") + len(payload).to_bytes(4, "big") + payload


class _Work:
    """The items cut in chunks, as the caller sees them: which chunks are done (handled by the
    caller, or taken from a worker: every item once, never twice)."""

    def __init__(self, items: Sequence[str], bounds: list[int], take: Callable[[str, Any], None]) -> None:
        self.items, self.bounds, self.take = items, bounds, take
        self.count = len(bounds) - 1
        self.done = [False] * self.count


class _Child:
    """A worker process seen from the caller: what it sent so far, taken chunk by chunk."""

    def __init__(self, pid: int, fd: int) -> None:
        self.pid, self.fd = pid, fd
        self.received = 0  # bytes
        self.broken = False  # it sent something wrong: killed, nothing more is taken from it
        self._buffer = bytearray()

    def drain(self, work: _Work, wait: bool = False) -> None:
        """Take what the worker sent (``wait``: everything, up to its end)."""
        if self.fd < 0:
            return
        if wait:
            os.set_blocking(self.fd, True)
        while not self.broken:
            try:
                data = os.read(self.fd, 1 << 20)
            except BlockingIOError:
                return
            except OSError:
                self.broken = True
                break
            if not data:
                break  # (a chunk it did not send whole is dropped)
            self.received += len(data)
            if self.received > _RESULT_LIMIT:
                self.broken = True
                break
            self._buffer += data
            self._frames(work)
        if self.broken:
            _kill(self.pid)  # (so that it claims no more chunks, which the caller would read again)
        os.close(self.fd)
        self.fd = -1

    def _frames(self, work: _Work) -> None:
        buffer = self._buffer
        while len(buffer) >= _HEAD:
            chunk = int.from_bytes(buffer[:TOKEN_SIZE], "big")
            size = int.from_bytes(buffer[TOKEN_SIZE:_HEAD], "big")
            if len(buffer) < _HEAD + size:
                return
            try:
                values = marshal.loads(bytes(buffer[_HEAD : _HEAD + size]))
            except (EOFError, ValueError, TypeError):
                values = None
            del buffer[: _HEAD + size]
            if (
                chunk >= work.count
                or work.done[chunk]  # (not claimed by this worker, or sent twice)
                or not isinstance(values, list)
                or len(values) != work.bounds[chunk + 1] - work.bounds[chunk]
            ):
                self.broken = True
                return
            work.done[chunk] = True
            for i, value in zip(range(work.bounds[chunk], work.bounds[chunk + 1]), values, strict=True):
                work.take(work.items[i], value)

    def finish(self) -> None:
        """Reap the worker (killed first unless all it sent was read: it may be blocked writing
        what is no longer read, or the caller may be leaving on an error)."""
        if self.fd >= 0:
            os.close(self.fd)
            self.fd = -1
            _kill(self.pid)
        try:
            os.waitpid(self.pid, 0)
        except ChildProcessError:
            pass


def beside(work: Callable[[], Any], here: Callable[[], None]) -> Any:
    """``work()`` run in a forked child while the caller runs ``here()`` (both on one core each);
    ``work`` must return plain data (what ``marshal`` carries). Where no child can be made, or
    it fails, the caller runs ``work()`` itself: only time is lost."""
    spawned = spawn(lambda write: write(marshal.dumps(work()))) if fork_is_safe() else None
    if spawned is None:
        here()
        return work()
    pid, rfd = spawned
    try:
        here()
    finally:
        data = _read_all(rfd)
        if data is None:
            _kill(pid)
        try:
            _, status = os.waitpid(pid, 0)
        except ChildProcessError:
            status = -1
    if data is not None and status == 0:
        try:
            return marshal.loads(data)
        except (EOFError, ValueError, TypeError):
            pass
    return work()


def spawn(send: Callable[[Callable[[bytes], None]], None]) -> tuple[int, int] | None:
    """A forked child that runs ``send(write)`` (``write`` puts bytes down a pipe) and leaves
    without cleanup: ``(its pid, the read end of the pipe)``; None where none can be made."""
    try:
        rfd, wfd = os.pipe()
    except OSError:
        return None
    try:
        pid = os.fork()
    except OSError:
        os.close(rfd)
        os.close(wfd)
        return None
    if pid == 0:
        code = 1
        try:
            os.close(rfd)

            def write(data: bytes) -> None:
                view = memoryview(data)
                while view:
                    view = view[os.write(wfd, view) :]

            send(write)
            code = 0
        finally:
            os._exit(code)
    os.close(wfd)
    return pid, rfd


def _kill(pid: int) -> None:
    try:
        os.kill(pid, _SIGKILL)
    except OSError:
        pass


def _read_all(fd: int) -> bytes | None:
    chunks: list[bytes] = []
    size = 0
    try:
        while chunk := os.read(fd, 1 << 20):
            size += len(chunk)
            if size > _RESULT_LIMIT:
                return None
            chunks.append(chunk)
    except OSError:
        return None
    finally:
        os.close(fd)
    return b"".join(chunks)
