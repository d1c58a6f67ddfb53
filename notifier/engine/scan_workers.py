"""Reading many session files on several cores (a cold ``status`` scan): the files are shared
out between forked worker processes, which send back each file's summary (plain data, the same
as the scan cache keeps); the caller restores them as it would cache hits.

Only where it is safe and pays: on Linux, in a process with no other thread (a fork copies only
the calling thread, so a lock held by another one would stay locked in the child), with more
than one core and enough files. A worker that fails, dies or sends something unreadable costs
nothing but time: its share is read by the caller itself.
"""

from __future__ import annotations

import marshal
import os
import sys
from collections.abc import Callable, Sequence
from typing import Any

MIN_FILES = 256  # below this, forking costs more than it saves
MAX_WORKERS = 8
CALLER_WEIGHT, WORKER_WEIGHT = 19, 20
_RESULT_LIMIT = 256 << 20  # bytes a worker may send back


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


def shares(n: int, workers: int) -> list[list[int]]:
    """The indexes of ``n`` items for each of ``workers`` processes, the caller's first. Spread
    evenly (neighbouring files are often alike), the caller taking ``CALLER_WEIGHT`` items for
    every ``WORKER_WEIGHT`` a worker takes: it also restores what the workers send."""
    weights = [CALLER_WEIGHT] + [WORKER_WEIGHT] * (workers - 1)
    total = sum(weights)
    credit = [0] * workers
    pattern = []  # smooth weighted round robin over one period of ``total`` items
    for _ in range(total):
        credit = [c + w for c, w in zip(credit, weights, strict=True)]
        k = credit.index(max(credit))
        credit[k] -= total
        pattern.append(k)
    out: list[list[int]] = [[] for _ in range(workers)]
    for i in range(n):
        out[pattern[i % total]].append(i)
    return out


def share_out(
    items: Sequence[str],
    read: Callable[[str], Any],
    take: Callable[[str, Any], None],
    here: Callable[[str], None],
    workers: int,
) -> None:
    """Every item handled once, ``workers`` processes sharing the work (the caller is one):
    a worker runs ``read(item)`` (which must return plain data, what ``marshal`` carries) and
    sends what it read ``FRAME`` items at a time; the caller ``take(item, that)`` between its
    own items (so taking overlaps the workers' reading) and after them. The caller's own share,
    and what a worker that fails did not send, go to ``here(item)``."""
    n = len(items)
    children: list[_Child] = []
    own, *others = shares(n, workers)
    for share in others:

        def send(write: Callable[[bytes], None], share: list[int] = share) -> None:
            for start in range(0, len(share), FRAME):  # (the worker: its share, frame by frame)
                payload = marshal.dumps([read(items[i]) for i in share[start : start + FRAME]])
                write(len(payload).to_bytes(4, "big") + payload)

        spawned = spawn(send)
        if spawned is None:
            break
        pid, rfd = spawned
        os.set_blocking(rfd, False)
        children.append(_Child(pid, rfd, share))
    for share in others[len(children) :]:  # (no more processes: read by the caller)
        own += share
    for k, i in enumerate(own):
        here(items[i])
        if k % _TAKE_EVERY == 0:
            for child in children:
                child.drain(items, take)
    for child in children:
        child.drain(items, take, wait=True)
        for i in child.finish():
            here(items[i])


FRAME = 64  # items a worker sends at a time
_SIGKILL = 9  # (signal.SIGKILL on Linux, the only system where workers are forked)
_TAKE_EVERY = 16  # own items between two looks at what the workers sent


class _Child:
    """A worker process seen from the caller: what it sent so far, taken frame by frame."""

    def __init__(self, pid: int, fd: int, share: list[int]) -> None:
        self.pid, self.fd, self.share = pid, fd, share
        self.taken = 0  # items of ``share`` taken so far (in order)
        self.received = 0  # bytes
        self.broken = False  # it sent something unreadable: nothing more is taken from it
        self._buffer = bytearray()

    def drain(self, items: Sequence[str], take: Callable[[str, Any], None], wait: bool = False) -> None:
        """Take what the worker sent (``wait``: everything, up to its end)."""
        if self.fd < 0:
            return
        if wait:
            os.set_blocking(self.fd, True)
        while not self.broken:
            try:
                chunk = os.read(self.fd, 1 << 20)
            except BlockingIOError:
                return
            except OSError:
                self.broken = True
                break
            if not chunk:
                break
            self.received += len(chunk)
            if self.received > _RESULT_LIMIT:
                self.broken = True
                break
            self._buffer += chunk
            self._frames(items, take)
        os.close(self.fd)
        self.fd = -1

    def _frames(self, items: Sequence[str], take: Callable[[str, Any], None]) -> None:
        buffer = self._buffer
        while len(buffer) >= 4:
            size = int.from_bytes(buffer[:4], "big")
            if len(buffer) < 4 + size:
                return
            try:
                values = marshal.loads(bytes(buffer[4 : 4 + size]))
            except (EOFError, ValueError, TypeError):
                values = None
            del buffer[: 4 + size]
            if not isinstance(values, list) or self.taken + len(values) > len(self.share):
                self.broken = True
                return
            for value in values:
                take(items[self.share[self.taken]], value)
                self.taken += 1

    def finish(self) -> list[int]:
        """Reap the worker; the items of its share it did not send (all sent: none)."""
        if self.fd >= 0:
            os.close(self.fd)
            self.fd = -1
        if self.broken or self.taken < len(self.share):
            _kill(self.pid)  # (it may be blocked writing what is no longer read)
        try:
            os.waitpid(self.pid, 0)
        except ChildProcessError:
            pass
        return self.share[self.taken :]


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
