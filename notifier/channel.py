"""The one JSON-lines channel: one JSON object per line, over a user-only Unix socket (the control
socket, each companion extension's socket) or a child's pipe (a remote's ssh stream), with ONE set
of limits that every door shares.

- :func:`encode`: one message on the wire (ASCII: a lone surrogate from a badly encoded file name
  still travels, as an escape);
- :class:`Lines`: the one way complete lines are cut from what came, bounded in size (a longer
  line is skipped to its end and said as ``None``); :class:`Client`: one client connection
  (:func:`dial`): messages sent, the lines read off it with an optional deadline;
  :func:`read_lines`: the lines off a pipe (the same rule);
- :func:`parse_object`: one foreign line → a dict, parsed with bounds (size and nesting), or
  :class:`BadLine`;
- :class:`Pace`: how many lines a second one peer may make us read (a token bucket);
  :func:`follow`: a peer's events read at that pace, bad lines skipped and said once;
- who may talk: :func:`listen_private`, :func:`peer_uid`, :func:`socket_not_ours`,
  :func:`dial` (only this user, checked both ways on every connection).

No ``socket`` or ``struct`` import at the top: ``status`` checks a socket file before it knows
there is an app to talk to."""

from __future__ import annotations

import contextlib
import json
import os
import stat
import sys
import threading
import time
from collections.abc import Callable, Iterable, Iterator
from typing import IO, TYPE_CHECKING, Any, TypeVar

from notifier.core import codec
from notifier.core.text import clean
from notifier.system import paths

if TYPE_CHECKING:
    import socket

    from notifier.system.log import LogOnce

T = TypeVar("T")

# ---- the limits, one set for every door ----
MAX_LINE = 1 << 20  # one line in: a control request, a companion event, a remote event
# Nesting: a control request nests two or three levels (16 allowed); a peer's event carries a
# question as the tool wrote it, held to the codec's bound (codec.MAX_DEPTH, 64) like a session line.
MAX_DEPTH = 16
MAX_REPLY = 64 << 20  # one reply or pushed message, as a client reads it (status of many sessions)
RATE = 1000.0  # cost units a second one peer may make us read: a line costs 1 + its bytes / BYTES_PER_UNIT
BURST = 4000.0  # (the start-up re-sync of a remote, a hello with every open dialog)
BYTES_PER_UNIT = 1024
MAX_CONNECTIONS = 64  # open control connections
MAX_PEERS = 64  # companion sockets followed at once (one pi each)
MAX_DIALOGS = 16  # open dialogs one pi may have on the board (pi shows one at a time)
# Characters in all strings of one dialog as the app keeps it (its title, a gate's whole command,
# its options, the arguments of the tool that opened it; one string at most codec.MAX_STR): with
# MAX_PEERS and MAX_DIALOGS, what extensions can make the app hold is bounded (tens of MB).
DIALOG_CHARS = 32 << 10
MAX_OUTPUT = 4 << 20  # bytes queued for one control connection (beyond the message being written)
READ_PAUSE = 256 << 10  # with this much of its answers unread, a client's next requests wait
IDLE_TIMEOUT = 10.0  # seconds a control connection that is not subscribed may sit without a request
STALL_TIMEOUT = 5.0  # seconds queued output may wait for a peer that reads nothing at all
EVICT_GRACE = 0.5  # a connection this young is never evicted (its request is on the way)


class BadLine(ValueError):
    """A line that cannot be read (too long, too deep, not JSON, not an object, not an event of
    its protocol), or a request field of the wrong type or shape; the peer gets the message as
    its error."""


def encode(obj: dict[str, Any]) -> bytes:
    """One message on the wire."""
    return (json.dumps(obj, separators=(",", ":"), allow_nan=False) + "\n").encode("ascii")


def parse_object(line: bytes | str, max_bytes: int = MAX_LINE, max_depth: int = codec.MAX_DEPTH) -> dict[str, Any]:
    """One foreign line (without its newline) → the object it holds, or :class:`BadLine`."""
    try:
        obj = codec.loads(line, max_bytes=max_bytes, max_depth=max_depth)
    except UnicodeDecodeError:
        raise BadLine("not UTF-8") from None
    except ValueError as exc:  # BoundedJSONError
        raise BadLine(clean(exc, 120)) from None
    if not isinstance(obj, dict):
        raise BadLine("not a JSON object")
    return obj


class Lines:
    """The one way lines are cut from a byte stream (a socket's chunks as they come): complete
    lines of at most ``limit`` bytes, in order, and ``None`` for a longer one once its end comes
    (the peer's next line is read as usual). A longer line is never held whole: past ``limit``
    its bytes are dropped as they come (:func:`read_lines`: the same rule for a pipe)."""

    def __init__(self, limit: int = MAX_LINE) -> None:
        self.limit = limit
        self.buf = bytearray()
        self.skipping = False  # the line coming is too long: its bytes are dropped up to its end

    def feed(self, chunk: bytes) -> None:
        if self.skipping:
            end = chunk.find(b"\n")
            if end < 0:
                return
            chunk, self.skipping = chunk[end:], False
        self.buf += chunk
        if len(self.buf) > self.limit:
            begun = self.buf.rfind(b"\n") + 1  # (where the last line begins)
            if len(self.buf) - begun > self.limit:  # kept one byte over the limit: it is said as None
                del self.buf[begun + self.limit + 1 :]
                self.skipping = True

    def __iter__(self) -> Iterator[bytes | None]:
        """The complete lines held now (without their newline), each taken out as it is given;
        ``None`` for a line longer than the limit."""
        while (end := self.buf.find(b"\n")) >= 0:
            line = bytes(self.buf[:end])
            del self.buf[: end + 1]
            yield line if len(line) <= self.limit else None


class Client:
    """One connection: :meth:`send` writes a message; iterating gives the lines the socket sends
    (:class:`Lines`: ``None`` for one longer than ``limit``, skipped), and ends at EOF; raises
    OSError (TimeoutError once ``deadline`` passes). A context manager: it hangs up at the end."""

    def __init__(self, sock: socket.socket, deadline: float | None = None, limit: int = MAX_LINE) -> None:
        self.sock = sock
        self.deadline = deadline  # None: wait as long as it takes
        self.lines = Lines(limit)

    def __iter__(self) -> Iterator[bytes | None]:
        while True:
            yield from self.lines
            left = None if self.deadline is None else self.deadline - time.monotonic()
            if left is not None and left <= 0:
                raise TimeoutError("timed out")
            self.sock.settimeout(left)
            chunk = self.sock.recv(1 << 16)
            if not chunk:
                return
            self.lines.feed(chunk)

    def __enter__(self) -> Client:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def send(self, message: dict[str, Any] | bytes) -> None:
        self.sock.sendall(message if isinstance(message, bytes) else encode(message))

    def close(self) -> None:
        """Hang up (a reader blocked in recv wakes; the peer sees the end at once)."""
        import socket

        with contextlib.suppress(OSError):
            self.sock.shutdown(socket.SHUT_RDWR)
        with contextlib.suppress(OSError):
            self.sock.close()

    def objects(self) -> Iterator[dict[str, Any]]:
        """The well-formed objects among the lines (a malformed line is skipped)."""
        for line in self:
            with contextlib.suppress(BadLine):
                if line is not None:
                    yield parse_object(line, self.lines.limit)


def read_lines(stream: IO[bytes], limit: int = MAX_LINE) -> Iterator[bytes | None]:
    """Complete lines of a pipe, of at most ``limit`` bytes; ``None`` for a longer one (skipped to
    its end, bounded chunks at a time)."""
    while line := stream.readline(limit + 1):
        if len(line) > limit and not line.endswith(b"\n"):
            while (rest := stream.readline(limit + 1)) and not rest.endswith(b"\n"):
                pass
            yield None
        else:
            yield line


class Pace:
    """A token bucket: :meth:`spend` waits (on ``stop``) until the cost of one more line fits, so
    a peer that floods is read no faster (its own output waits in its socket or pipe)."""

    def __init__(self, rate: float = RATE, burst: float = BURST, clock: Callable[[], float] = time.monotonic) -> None:
        self.rate = rate
        self.burst = burst
        self.clock = clock
        self._tokens = burst
        self._at = clock()
        self.waited = 0  # how many lines had to wait

    def _fill(self) -> None:
        now = self.clock()
        self._tokens = min(self.burst, self._tokens + (now - self._at) * self.rate)
        self._at = now

    def due(self, cost: float = 1.0) -> float:
        """Seconds until ``cost`` fits (0: it does now)."""
        self._fill()
        return max(0.0, (cost - self._tokens) / self.rate)

    def spend(self, size: int, stop: threading.Event | None = None) -> bool:
        """Take one line of ``size`` bytes, waiting on ``stop`` until it fits (without ``stop``:
        at once, in debt); True when it did not fit at once (the peer floods)."""
        cost = min(self.burst, 1.0 + size / BYTES_PER_UNIT)
        wait = self.due(cost)
        if wait and stop is not None:
            self.waited += 1
            stop.wait(wait)
            self._fill()
        self._tokens -= cost
        return wait > 0


def follow(
    lines: Iterable[bytes | None],
    parse: Callable[[bytes], T | None],
    stop: threading.Event,
    say: LogOnce,
    subject: str,
) -> Iterator[T]:
    """The events a peer's ``lines`` hold (``None``: a line too long), read at the channel's pace
    until ``stop``: a line too long or one ``parse`` refuses (:class:`BadLine`) is skipped, each
    kind of trouble said once (``say``, about ``subject``: the peer)."""
    pace = Pace()
    for line in lines:
        if pace.spend(MAX_LINE if line is None else len(line), stop):
            say(subject, "pace", "sends faster than %d lines a second; reading it no faster", int(RATE))
        if stop.is_set():
            return
        try:
            event = parse(line) if line is not None else None
        except BadLine as exc:
            say(subject, "garbage", "skipped a line that is not an event (%s)", exc)
            continue
        if line is None:
            say(subject, "long", "skipped a line longer than %d bytes", MAX_LINE)
        elif event is not None:
            yield event


# ---- who may talk: only this user ----


def listen_private(path: str) -> socket.socket:
    """A non-blocking listening Unix socket at ``path`` that only this user can connect to
    (its folder must be ours and not a link, and is made 0700; the socket 0600; a stale socket
    there is replaced). Raises :class:`~notifier.system.paths.NotOurs` for a folder that is not
    ours: nothing is created, changed or removed in it."""
    import socket

    paths.own_folder(os.path.dirname(path) or ".", parents=True)
    with contextlib.suppress(FileNotFoundError):
        if stat.S_ISSOCK(os.lstat(path).st_mode):  # (anything else there makes bind fail)
            os.unlink(path)
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    old = os.umask(0o177)
    try:
        sock.bind(path)
    except OSError:
        sock.close()
        raise
    finally:
        os.umask(old)
    os.chmod(path, 0o600)
    sock.listen(socket.SOMAXCONN)
    sock.setblocking(False)
    return sock


def peer_uid(sock: socket.socket) -> int | None:
    """The uid of the process at the other end of a Unix socket; None where it cannot be known."""
    import socket
    import struct

    try:
        if hasattr(socket, "SO_PEERCRED"):  # Linux: struct ucred {pid, uid, gid}
            creds = sock.getsockopt(socket.SOL_SOCKET, socket.SO_PEERCRED, struct.calcsize("3i"))
            return int(struct.unpack("3i", creds)[1])
        if sys.platform == "darwin" or "bsd" in sys.platform:
            # getpeereid(3) is LOCAL_PEERCRED at SOL_LOCAL: struct xucred {u_int version; uid_t uid; …}
            data = sock.getsockopt(0, 0x001, 76)
            return int(struct.unpack_from("2I", data)[1])
    except (OSError, struct.error):
        return None
    return None


def socket_not_ours(path: str) -> str | None:
    """Why the socket file at ``path`` cannot have been made by this user (None: it can): a link,
    something other than a socket, or a socket another user owns. Checked without following
    links; raises OSError (FileNotFoundError) when there is nothing there."""
    st = os.lstat(path)
    if not stat.S_ISSOCK(st.st_mode):
        return "it is a symbolic link" if stat.S_ISLNK(st.st_mode) else "it is not a socket"
    if hasattr(os, "getuid") and st.st_uid != os.getuid():
        return f"it belongs to uid {st.st_uid}"
    return None


def dial(path: str, timeout: float, limit: int = MAX_LINE) -> Client:
    """A connection to this user's socket file at ``path``, served by a process of this user (or
    the system does not tell), its lines due within ``timeout`` (``deadline`` None: as long as it
    takes). Raises OSError: ``FileNotFoundError`` (nothing there),
    :class:`~notifier.system.paths.NotOurs` (the file or the serving process is another user's,
    said why), ``BlockingIOError`` (a full backlog), ``TimeoutError``, or any other connect
    failure."""
    why = socket_not_ours(path)
    if why is not None:
        raise paths.NotOurs(why)
    sock = paths.connect_unix(path, timeout)
    uid = peer_uid(sock)
    if uid is not None and uid != os.getuid():
        sock.close()
        raise paths.NotOurs(f"it is served by uid {uid}")
    return Client(sock, time.monotonic() + timeout, limit)
