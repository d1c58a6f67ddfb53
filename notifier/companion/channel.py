"""Talking to one companion extension socket: connect (same user only), read its events, answer a
dialog. Blocking calls with timeouts; :mod:`notifier.companion.watcher` runs them on threads."""

from __future__ import annotations

import contextlib
import os
import socket
import stat
import time
from collections.abc import Iterator
from dataclasses import dataclass

from notifier.companion import protocol
from notifier.companion.protocol import Dialog, Event, Hello, ProtocolError, Result
from notifier.companion.sockets import list_sockets as list_sockets
from notifier.companion.sockets import socket_folder as socket_folder
from notifier.control.peer import server_not_ours, socket_not_ours


class ChannelError(OSError):
    """The socket cannot be used: missing, not ours, refused, closed, or speaking nonsense."""


def check_owner(path: str) -> None:
    """The socket and its folder must belong to this user, the folder private (0700) and not a
    link, all checked without following links: nobody else can have put it there, so a dialog
    answered through it goes to our own pi."""
    uid = os.getuid() if hasattr(os, "getuid") else None
    try:
        folder = os.lstat(os.path.dirname(path) or ".")
        why = socket_not_ours(path)
    except OSError as exc:
        raise ChannelError(f"cannot reach the socket ({exc.strerror or exc})") from exc
    if why is not None:
        raise ChannelError(why)
    if stat.S_ISLNK(folder.st_mode) or not stat.S_ISDIR(folder.st_mode):
        raise ChannelError("the socket's folder is a link or not a folder")
    if uid is not None and folder.st_uid != uid:
        raise ChannelError("the socket's folder belongs to another user")
    if stat.S_IMODE(folder.st_mode) & 0o077:
        raise ChannelError("the socket's folder is open to other users")


class Channel:
    """One connection to one pi's companion extension. ``events()`` yields what it announces
    (first a :class:`Hello`); ``send`` writes one request."""

    def __init__(self, path: str, timeout: float = 2.0) -> None:
        self.path = path
        check_owner(path)
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.sock.settimeout(timeout)
        try:
            self.sock.connect(path)
        except OSError as exc:
            self.sock.close()
            raise ChannelError(f"cannot connect ({exc.strerror or exc})") from exc
        why = server_not_ours(self.sock)
        if why is not None:
            self.sock.close()
            raise ChannelError(f"not this user's pi: {why}")
        self._buf = b""

    def __enter__(self) -> Channel:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        with contextlib.suppress(OSError):  # wakes a reader blocked in recv; pi sees the end at once
            self.sock.shutdown(socket.SHUT_RDWR)
        with contextlib.suppress(OSError):
            self.sock.close()

    def settimeout(self, timeout: float | None) -> None:
        self.sock.settimeout(timeout)

    def send(self, data: bytes) -> None:
        try:
            self.sock.sendall(data)
        except OSError as exc:
            raise ChannelError(f"cannot send ({exc.strerror or exc})") from exc

    def read_event(self) -> Event | None:
        """The next event (``None`` for one this version does not know). Raises
        :class:`ChannelError` when the connection ends or times out."""
        while b"\n" not in self._buf:
            if len(self._buf) > protocol.MAX_LINE:
                raise ChannelError("a line longer than the protocol allows")
            try:
                chunk = self.sock.recv(65536)
            except OSError as exc:  # socket.timeout is an OSError
                raise ChannelError(f"no answer ({exc.strerror or exc or 'timed out'})") from exc
            if not chunk:
                raise ChannelError("pi closed the connection")
            self._buf += chunk
        line, self._buf = self._buf.split(b"\n", 1)
        try:
            return protocol.parse(line)
        except ProtocolError as exc:
            raise ChannelError(f"a malformed message ({exc})") from exc

    def events(self) -> Iterator[Event]:
        """Every event until the connection ends (no timeout: for reader threads)."""
        while True:
            try:
                event = self.read_event()
            except ChannelError:
                return
            if event is not None:
                yield event

    def hello(self) -> Hello:
        event = self.read_event()
        if not isinstance(event, Hello):
            raise ChannelError("no hello from the extension")
        if event.protocol != protocol.PROTOCOL:
            raise ChannelError(f"protocol {event.protocol} (this pi-notifier speaks {protocol.PROTOCOL})")
        return event


def connect(path: str, attempts: int = 5, timeout: float = 2.0) -> Channel:
    """Connect, retrying briefly: a socket seen the moment it is bound may not listen yet."""
    delay = 0.01
    for attempt in range(attempts):
        try:
            return Channel(path, timeout)
        except ChannelError:
            if attempt == attempts - 1:
                raise
            time.sleep(delay)
            delay *= 3
    raise ChannelError("cannot connect")  # pragma: no cover


@dataclass(frozen=True)
class AnswerResult:
    ok: bool
    error: str | None = None
    closed: bool = False
    screen: tuple[str, ...] | None = None


def answer_dialog(
    socket_path: str,
    dialog_id: str,
    value: str | bool | None = None,
    keys: list[str] | None = None,
    timeout: float = 5.0,
) -> AnswerResult:
    """Answer one dialog of one pi: exactly for select / confirm / input (``value``; ``None``
    cancels a select or input), by forwarding ``keys`` (key names or raw input) to a custom
    dialog; refused for editor. A dialog that is no longer open is refused, nothing is done."""
    try:
        with connect(socket_path, timeout=timeout) as chan:
            hello = chan.hello()
            dialog = next((d for d in hello.dialogs if d.id == dialog_id), None)
            if dialog is None:
                return AnswerResult(False, "that dialog is no longer open")
            why = protocol.check_answer(dialog, value, keys)
            if why:
                return AnswerResult(False, why)
            if keys is not None:
                chan.send(protocol.keys_request(dialog_id, protocol.key_sequence(keys)))
                request = "keys"
            else:
                chan.send(protocol.answer_request(dialog_id, value))
                request = "answer"
            deadline = time.monotonic() + timeout
            while True:
                chan.settimeout(max(deadline - time.monotonic(), 0.001))
                event = chan.read_event()
                if isinstance(event, Result) and event.request == request and event.id == dialog_id:
                    return AnswerResult(event.ok, event.error, event.closed, event.screen)
    except ChannelError as exc:
        return AnswerResult(False, f"pi cannot be reached: {exc}")


def open_dialogs(socket_path: str, timeout: float = 2.0) -> tuple[Hello, tuple[Dialog, ...]]:
    """What one pi says on connect: who it is and the dialogs it waits on."""
    with connect(socket_path, timeout=timeout) as chan:
        hello = chan.hello()
        return hello, hello.dialogs


def all_open_dialogs(folder: str | None = None, timeout: float = 1.0) -> list[tuple[str, Dialog]]:
    """Every dialog every reachable pi waits on now, with its socket (unreachable ones skipped)."""
    out: list[tuple[str, Dialog]] = []
    for path in list_sockets(folder):
        try:
            _hello, dialogs = open_dialogs(path, timeout)
        except (ChannelError, OSError):
            continue
        out += [(path, d) for d in dialogs]
    return out


def announced_sessions(folder: str | None = None, timeout: float = 1.0) -> dict[int, str]:
    """pid → session file, as each reachable pi's extension announces itself now: exact evidence
    of which pi has which session (``notifier.system.locate.locate_one(announced=…)``)."""
    out: dict[int, str] = {}
    for path in list_sockets(folder):
        try:
            hello, _dialogs = open_dialogs(path, timeout)
        except (ChannelError, OSError):
            continue
        if hello.pid and hello.session_file:
            out[hello.pid] = hello.session_file
    return out
