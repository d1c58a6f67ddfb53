"""Hostile peers at the doors, over real sockets: a pi's companion extension that sends lines
longer than the channel's limit or drops its connection while it runs (its dialogs must stay
seen), same-user clients that hold the control socket's places with half a request, and sockets
left by pis killed or stopped (a one-shot look must not wait on each in turn)."""

from __future__ import annotations

import contextlib
import json
import os
import socket
import subprocess
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from notifier import channel, control
from notifier.channel import MAX_CONNECTIONS, MAX_LINE, dial
from notifier.companion import (
    LOOKS_AT_ONCE,
    CompanionWatcher,
    ExtensionDialog,
    Hello,
    answer_dialog,
    hellos,
    owner_gone,
)
from notifier.control import Connection, Server

from ..conftest import wait_for

HELLO = {"event": "hello", "protocol": 1, "pid": 7, "session_file": "/s/a.jsonl", "mode": "wrap", "dialogs": []}


def dialog(n: int) -> dict[str, Any]:
    return {"event": "dialog", "id": f"d{n}", "kind": "select", "title": "Deploy?", "options": ["yes", "no"],
            "session_file": "/s/a.jsonl", "remote": "value"}


def line(obj: dict[str, Any]) -> bytes:
    return json.dumps(obj).encode() + b"\n"


def long_line(size: int) -> bytes:
    """One line of ``size`` bytes (without its newline) that would parse if it were allowed."""
    head, tail = b'{"event":"screen","id":"d0","lines":["', b'"]}'
    return head + b"x" * (size - len(head) - len(tail)) + tail + b"\n"


def folder_of(tmp_path: Path) -> Path:
    folder = tmp_path / "run"
    folder.mkdir(mode=0o700, exist_ok=True)
    return folder


def dead_pid() -> int:
    """The number of a process that has ended (and been reaped)."""
    proc = subprocess.Popen(["true"])
    proc.wait()
    return proc.pid


class Pi:
    """A pi's extension socket, scripted: each connection gets what ``script(n)`` says (n: the
    connection's number from 1), then is held open unless the script ends with ``None``."""

    def __init__(self, path: Path, script: Any) -> None:
        self.path = str(path)
        self.script = script
        self.accepted = 0
        self.conns: list[socket.socket] = []
        self.gone = False
        self.lock = threading.Lock()  # (a connection accepted as pi quits is closed with the others)
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.sock.bind(self.path)
        self.sock.listen(8)
        OPEN.append(self)
        threading.Thread(target=self._serve, daemon=True).start()

    def _serve(self) -> None:
        while True:
            try:
                conn, _ = self.sock.accept()
            except OSError:
                return
            with self.lock:
                if self.gone:
                    conn.close()
                    return
                self.accepted += 1
                self.conns.append(conn)
            threading.Thread(target=self._talk, args=(conn, self.accepted), daemon=True).start()

    def _talk(self, conn: socket.socket, n: int) -> None:
        try:
            for data in self.script(n):
                if data is None:
                    conn.close()
                    return
                conn.sendall(data)
        except OSError:
            pass

    def quit(self) -> None:
        """pi quits: its socket goes, then its connections (one accepted meanwhile too)."""
        with self.lock:
            self.gone = True
        self.sock.close()
        with contextlib.suppress(FileNotFoundError):
            os.unlink(self.path)
        with self.lock:
            conns = list(self.conns)
        for conn in conns:
            conn.close()


OPEN: list[Pi] = []


@pytest.fixture(autouse=True)
def _quit_every_pi() -> Iterator[None]:
    yield
    while OPEN:
        OPEN.pop().quit()


class Events:
    def __init__(self) -> None:
        self.got: list[tuple[str, object]] = []

    def __call__(self, path: str, event: object) -> None:
        self.got.append((path, event))

    def kinds(self) -> list[str]:
        return [type(e).__name__ for _, e in self.got]


@pytest.fixture
def watched(tmp_path: Path) -> Iterator[tuple[Path, Events, list[CompanionWatcher]]]:
    events = Events()
    watchers: list[CompanionWatcher] = []
    yield folder_of(tmp_path), events, watchers
    for w in watchers:
        w.stop()


def watch(folder: Path, events: Events, watchers: list[CompanionWatcher]) -> CompanionWatcher:
    w = CompanionWatcher(events, str(folder))
    watchers.append(w)
    w.start()
    return w


# ---- a pi's lines longer than the limit ----

SIZES = [MAX_LINE + 1, MAX_LINE + 2, MAX_LINE + (1 << 16) + 1, (2 << 20) + 7, (5 << 20) + 3]


@pytest.mark.parametrize("size", SIZES)
def test_a_line_over_the_limit_is_skipped_and_the_pi_stays_followed(
    watched: tuple[Path, Events, list[CompanionWatcher]], size: int
) -> None:
    folder, events, watchers = watched
    pi = Pi(folder / f"ext-{os.getpid()}-a.sock", lambda n: [line(HELLO), long_line(size), line(dialog(n))])
    w = watch(folder, events, watchers)
    wait_for(lambda: "ExtensionDialog" in events.kinds(), 20, "the dialog after the long line")
    assert events.kinds() == ["Hello", "ExtensionDialog"]
    assert w.connected() == [pi.path] and pi.accepted == 1


def test_a_burst_of_long_lines_then_a_good_one(watched: tuple[Path, Events, list[CompanionWatcher]]) -> None:
    folder, events, watchers = watched
    burst = [long_line(s) for s in (MAX_LINE + 1, 3 << 20, MAX_LINE + 10, MAX_LINE + 1, 2 << 20)]
    # (read at the channel's pace: a skipped line costs as much as the longest one)
    Pi(folder / f"ext-{os.getpid()}-b.sock",
       lambda n: [line(HELLO), *burst, line(dialog(n)), long_line(MAX_LINE + 1), line(dialog(9))])
    watch(folder, events, watchers)
    wait_for(lambda: events.kinds().count("ExtensionDialog") == 2, 30, "both dialogs")
    assert events.kinds() == ["Hello", "ExtensionDialog", "ExtensionDialog"]
    assert [e.id for _, e in events.got if isinstance(e, ExtensionDialog)] == ["d1", "d9"]


def test_a_line_exactly_at_the_limit_is_read() -> None:
    a, b = socket.socketpair()
    try:
        exact = long_line(MAX_LINE)

        def send() -> None:
            with b:
                b.sendall(exact + long_line(MAX_LINE + 1) + b"{}\n")

        threading.Thread(target=send, daemon=True).start()
        got = list(channel.Client(a, time.monotonic() + 30))
        assert got == [exact[:-1], None, b"{}"]
    finally:
        a.close()


@pytest.mark.parametrize("piece", [1 << 10, 4093, 1 << 16, 3 << 20])
def test_a_client_skips_long_lines_however_they_arrive(tmp_path: Path, piece: int) -> None:
    path = str(folder_of(tmp_path) / "peer.sock")
    server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    server.bind(path)
    server.listen(1)
    data = b"".join([b"{}\n", long_line(MAX_LINE + 1), long_line(2 << 20), b'{"a":1}\n', long_line(MAX_LINE), b"[]\n"])

    def send() -> None:
        conn, _ = server.accept()
        with conn:
            for i in range(0, len(data), piece):
                conn.sendall(data[i : i + piece])

    threading.Thread(target=send, daemon=True).start()
    try:
        with dial(path, 30) as peer:
            got = list(peer)
        assert got == [b"{}", None, None, b'{"a":1}', long_line(MAX_LINE)[:-1], b"[]"]
    finally:
        server.close()


# ---- a pi's connection that ends while it runs ----


def test_a_connection_that_ends_while_the_pi_runs_is_made_again(
    watched: tuple[Path, Events, list[CompanionWatcher]],
) -> None:
    folder, events, watchers = watched
    # the first two connections end at once (no bye: a glitch), the third stays
    pi = Pi(folder / f"ext-{os.getpid()}-c.sock",
            lambda n: [line(HELLO), line(dialog(n)), *([None] if n < 3 else [])])
    w = watch(folder, events, watchers)
    wait_for(lambda: pi.accepted == 3 and w.connected() == [pi.path] and events.kinds().count("ExtensionDialog") == 3,
             20, "the third connection")
    assert "Disconnected" not in events.kinds()
    pi.quit()  # now it is gone for good
    wait_for(lambda: "Disconnected" in events.kinds(), 20, "the pi gone")
    assert events.kinds()[-1] == "Disconnected" and w.connected() == []


def test_a_pi_that_quits_is_gone_and_not_followed_again(
    watched: tuple[Path, Events, list[CompanionWatcher]],
) -> None:
    folder, events, watchers = watched
    pi = Pi(folder / f"ext-{os.getpid()}-d.sock", lambda n: [line(HELLO)])
    w = watch(folder, events, watchers)
    # (connected once dialled: its hello is read after pi accepts)
    wait_for(lambda: w.connected() == [pi.path] and events.kinds() == ["Hello"], 20, "the connection")
    pi.quit()
    wait_for(lambda: events.kinds() == ["Hello", "Disconnected"], 20, "the pi gone")
    assert pi.accepted == 1


def test_a_socket_left_by_a_dead_pi_is_not_followed(
    watched: tuple[Path, Events, list[CompanionWatcher]],
) -> None:
    folder, events, watchers = watched
    # a listener named for a process that has ended: never connected to
    stale = Pi(folder / f"ext-{dead_pid()}-e.sock", lambda n: [line(HELLO)])
    live = Pi(folder / f"ext-{os.getpid()}-f.sock", lambda n: [line(HELLO)])
    w = watch(folder, events, watchers)
    wait_for(lambda: w.connected() == [live.path], 20, "the live pi")
    assert stale.accepted == 0 and owner_gone(stale.path) and not owner_gone(live.path)


def test_a_pi_whose_process_ends_while_its_socket_stays_is_gone(
    watched: tuple[Path, Events, list[CompanionWatcher]], tmp_path: Path
) -> None:
    folder, events, watchers = watched
    # a stand-in pi process that owns the socket's name: killed outright, its file stays
    proc = subprocess.Popen(["sleep", "60"])
    try:
        pi = Pi(folder / f"ext-{proc.pid}-g.sock", lambda n: [line(HELLO)])
        w = watch(folder, events, watchers)
        wait_for(lambda: w.connected() == [pi.path], 20, "the connection")
        proc.kill()
        proc.wait()
        for conn in pi.conns:
            conn.close()  # (what its end does to the connection; the listener stays: no refusal)
        wait_for(lambda: "Disconnected" in events.kinds(), 20, "the pi gone")
        assert pi.accepted == 1 and os.path.exists(pi.path)
    finally:
        proc.kill()
        proc.wait()


# ---- half a request on every control place ----


@pytest.mark.parametrize("peers", [MAX_CONNECTIONS, MAX_CONNECTIONS + 1, 200])
def test_half_lines_cannot_hold_every_control_place(tmp_path: Path, peers: int) -> None:
    server = Server(str(folder_of(tmp_path) / "control.sock"), lambda req, conn: {"ok": True, "cmd": req.get("cmd")})
    server.start()
    held: list[socket.socket] = []
    try:
        for _ in range(peers):
            s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            held.append(s)
            s.connect(server.path)
            with contextlib.suppress(BrokenPipeError, ConnectionResetError):  # (past the places: refused,
                s.sendall(b'{"cmd":"sta')  # every one held is too young to go; the server may close first)
        wait_for(lambda: server.connections == MAX_CONNECTIONS, 20, "every place held")
        # well before the idle timeout (10 s): the good client gets in
        assert control.request({"cmd": "status"}, path=server.path, timeout=5) == {"ok": True, "cmd": "status"}
        assert control.request({"cmd": "quit"}, path=server.path, timeout=5) == {"ok": True, "cmd": "quit"}
    finally:
        for s in held:
            s.close()
        server.stop()


def test_a_subscriber_is_not_evicted_for_half_lines(tmp_path: Path) -> None:
    kept: list[Connection] = []

    def handle(req: dict[str, Any], conn: Connection) -> dict[str, Any] | None:
        if req.get("cmd") == "subscribe":
            kept.append(conn)
            return None
        return {"ok": True}

    server = Server(str(folder_of(tmp_path) / "control.sock"), handle)
    server.start()
    held: list[socket.socket] = []
    try:
        window = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        window.connect(server.path)
        window.sendall(b'{"cmd":"subscribe"}\n')
        wait_for(lambda: kept, 10, "the subscription")
        for _ in range(100):
            s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            held.append(s)
            s.connect(server.path)
            with contextlib.suppress(BrokenPipeError, ConnectionResetError):  # (refused: every place held,
                s.sendall(b'{"cmd":"pi')  # none idle for long yet; the server may close before this)
        assert control.request({"cmd": "ping"}, path=server.path, timeout=5) == {"ok": True}
        assert not kept[0].closed
    finally:
        for s in held:
            s.close()
        server.stop()


@pytest.mark.parametrize("size", [MAX_LINE + 1, (3 << 20) + 5])
def test_an_oversized_request_is_answered_and_the_next_one_on_the_connection_too(tmp_path: Path, size: int) -> None:
    server = Server(str(folder_of(tmp_path) / "control.sock"), lambda req, conn: {"ok": True, "cmd": req.get("cmd")})
    server.start()
    try:
        giant = b'{"cmd":"big","pad":"' + b"x" * size + b'"}\n'
        exact = b'{"cmd":"exact","pad":"' + b"x" * (MAX_LINE - 24) + b'"}'
        assert len(exact) == MAX_LINE
        with dial(server.path, 30, channel.MAX_REPLY) as peer:
            threading.Thread(target=peer.send, args=(giant + exact + b'\n{"cmd":"ping"}\n',), daemon=True).start()
            got = []
            for message in peer.objects():
                got.append(message)
                if len(got) == 3:
                    break
        assert got[0]["ok"] is False and "longer than" in got[0]["error"]
        assert got[1:] == [{"ok": True, "cmd": "exact"}, {"ok": True, "cmd": "ping"}]
    finally:
        server.stop()


# ---- sockets of pis killed or stopped ----


def refusing(path: Path) -> str:
    """A socket file nobody listens on (its pi was killed outright)."""
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    s.bind(str(path))
    s.close()
    return str(path)


def stopped(path: Path) -> socket.socket:
    """A pi stopped (Ctrl-Z): it listens, the system accepts, it never says hello."""
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    s.bind(str(path))
    s.listen(8)
    return s


@pytest.fixture
def dials(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Every connect a look makes (over the real sockets), by path."""
    from notifier.system import paths

    made: list[str] = []
    real = paths.connect_unix

    def counted(path: str, timeout: float) -> socket.socket:
        made.append(path)
        return real(path, timeout)

    monkeypatch.setattr(paths, "connect_unix", counted)
    return made


def test_a_one_shot_look_asks_a_refusing_socket_once_and_a_dead_pis_never(tmp_path: Path, dials: list[str]) -> None:
    folder = folder_of(tmp_path)
    refused = [refusing(folder / f"ext-{os.getpid()}-r{i}.sock") for i in range(3)]
    refused.append(refusing(folder / "ext-nopid.sock"))
    gone = [folder / f"ext-{dead_pid()}-k{i}.sock" for i in range(2)]
    listeners = [stopped(p) for p in gone]  # (even listening: its pi has ended)
    live = Pi(folder / f"ext-{os.getpid()}-l.sock", lambda n: [line({**HELLO, "dialogs": [dialog(1)]})])
    try:
        said = hellos(str(folder), timeout=5.0)
        assert set(said) == {*refused, *map(str, gone), live.path}
        assert [p for p, h in said.items() if h is not None] == [live.path]
        assert isinstance(said[live.path], Hello)
        assert sorted(dials) == sorted([*refused, live.path])  # each refusing socket once, no dead pi's
        dials.clear()
        result = answer_dialog(refused[0], "d1", "yes")
        assert not result.ok and "cannot be reached" in (result.error or "") and dials == [refused[0]]
    finally:
        for s in listeners:
            s.close()


@pytest.mark.parametrize("count", [2, 4, 9])
def test_stopped_pis_are_asked_at_once_not_in_turn(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, count: int
) -> None:
    """A stopped pi (Ctrl-Z) costs a look its whole timeout: they are asked at once, so the first
    LOOKS_AT_ONCE sockets are all dialled before any of them has answered or timed out (asked in
    turn, the second would wait for the first's timeout, and the meeting never fills)."""
    from notifier.system import paths

    folder = folder_of(tmp_path)
    listeners = [stopped(folder / f"ext-{os.getpid()}-s{i}.sock") for i in range(count)]
    for i in range(3):
        refusing(folder / f"ext-{os.getpid()}-x{i}.sock")
    live = Pi(folder / f"ext-{os.getpid()}-l.sock", lambda n: [line(HELLO)])
    first = min(count + 4, LOOKS_AT_ONCE)  # (the stopped, refusing and live sockets)
    meeting = threading.Barrier(first)
    real = paths.connect_unix
    dialled: list[str] = []
    missed: list[str] = []
    lock = threading.Lock()

    def together(path: str, timeout: float) -> socket.socket:
        with lock:
            dialled.append(path)
            waits = len(dialled) <= first
        if waits:
            try:
                meeting.wait(30.0)  # (a deadline for a broken look, not a measure)
            except threading.BrokenBarrierError:
                missed.append(path)
        return real(path, timeout)

    monkeypatch.setattr(paths, "connect_unix", together)
    try:
        said = hellos(str(folder), timeout=1.0)
        assert [p for p, h in said.items() if h is not None] == [live.path]
        assert not missed and not meeting.broken
    finally:
        for s in listeners:
            s.close()
