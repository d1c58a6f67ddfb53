"""Property tests for the control protocol: whatever a client sends, the parser and the app's
real handler (``App.handle``) give a well-formed reply or a clean drop, never an exception."""

from __future__ import annotations

import json
import logging
import math
import os
import socket
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from notifier import control
from notifier.app import App, WindowProcess
from notifier.channel import MAX_DEPTH, BadLine, Lines, encode, parse_object
from notifier.config import Config
from notifier.control import Connection, Server, answer
from notifier.core.commands import Focus

FIELDS = [
    "cmd",
    "focus",
    "seconds",
    "session",
    "project",
    "call",
    "on",
    "roots",
    "liveness",
    "question_tools",
    "verb",
    "arg",
]
COMMANDS = ["ping", "show", "status", "subscribe", "snooze", "mute", "clear", "act", "quit", "nope"]
VERBS = ["show", "clear", "snooze", "unmute", "quit", "explode"]

scalars = (
    st.none()
    | st.booleans()
    | st.integers()
    | st.floats(allow_nan=True, allow_infinity=True)
    | st.text(max_size=12)
    | st.sampled_from(["tomorrow", "off", "auto", "", "/tmp"])
)
values = st.recursive(
    scalars,
    lambda kids: st.lists(kids, max_size=4) | st.dictionaries(st.text(max_size=6), kids, max_size=4),
    max_leaves=10,
)
# well-shaped values too, so the handler's accepting paths run as often as its refusals
shaped = (
    values
    | st.lists(st.text(min_size=1, max_size=10), min_size=2, max_size=2)
    | st.lists(st.text(max_size=10), max_size=3)
)
targeted = st.sampled_from(COMMANDS).flatmap(
    lambda cmd: st.fixed_dictionaries(
        {"cmd": st.just(cmd)},
        optional={
            name: (st.sampled_from(VERBS) | values if name == "verb" else shaped) for name in FIELDS[1:]
        },
    )
)
requests = targeted | st.dictionaries(st.sampled_from(FIELDS) | st.text(max_size=6), shaped, max_size=5)


class QuietWindow(WindowProcess):
    """Opening a window (a new process) is recorded instead."""

    def __init__(self) -> None:
        super().__init__("unused")
        self.shown: list[Focus | None] = []

    def show(self, focus: Focus | None = None, wait: float = 0.0, said: str | None = None) -> str:
        self.shown.append(focus)
        return "raised"


class QuietApp(App):
    """The real app's handler and commands; only the window is a stand-in."""

    def __init__(self) -> None:
        super().__init__(Config(), json_out=False, notify=False, socket="unused")
        self.window = QuietWindow()


class Failures(logging.Handler):
    """Collects 'control request failed' warnings: the handler raised something unexpected."""

    def __init__(self) -> None:
        super().__init__(logging.WARNING)
        self.messages: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.messages.append(record.getMessage())


@contextmanager
def watched_log() -> Iterator[Failures]:
    failures = Failures()
    logger = logging.getLogger("notifier.control")
    logger.addHandler(failures)
    try:
        yield failures
    finally:
        logger.removeHandler(failures)


def well_formed(reply: dict[str, Any]) -> bool:
    if not isinstance(reply.get("ok"), bool):
        return False
    if reply["ok"] is False and "error" in reply and not isinstance(reply["error"], str):
        return False
    encode(reply)  # raises if it could not be sent
    return True


@pytest.fixture
def app() -> Iterator[QuietApp]:
    """One app for all the examples of a test (its store is in the test's private folder)."""
    app = QuietApp()
    yield app
    app.store.close()


@pytest.fixture
def served(app: QuietApp, tmp_path: Path) -> Iterator[tuple[QuietApp, Server]]:
    server = Server(str(tmp_path / "control.sock"), app.handle)
    server.start()
    yield app, server
    server.stop()


@settings(max_examples=300, deadline=None)
@given(st.binary(max_size=300) | st.text(max_size=200).map(lambda t: t.encode("utf-8", "surrogatepass")))
def test_any_bytes_parse_to_an_object_or_a_bad_request(data: bytes) -> None:
    try:
        parsed = parse_object(data, max_depth=MAX_DEPTH)
    except BadLine as exc:
        assert str(exc)
    else:
        assert isinstance(parsed, dict)


@settings(max_examples=60, deadline=None)
@given(st.integers(min_value=MAX_DEPTH + 1, max_value=20_000), st.sampled_from(["[", '{"a":']))
def test_deep_nesting_is_a_bad_request_not_a_recursion_error(depth: int, opener: str) -> None:
    closer = "]" if opener == "[" else "}"
    line = ('{"cmd":"ping","x":' + opener * depth + "1" + closer * depth + "}").encode()
    try:
        parse_object(line, max_depth=MAX_DEPTH)
    except BadLine as exc:
        assert "nested" in str(exc)
    else:
        raise AssertionError("a request nested deeper than the limit was accepted")


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(requests)
def test_the_handler_answers_every_request_well_formed(app: QuietApp, req: dict[str, Any]) -> None:
    a, b = socket.socketpair()
    try:
        conn = Connection(a)
        with watched_log() as failures:
            reply = answer(app.handle, req, conn)
        assert failures.messages == [], (req, failures.messages)
        if reply is None:
            assert req.get("cmd") == "subscribe"
            assert app.window.subscribers and app.window.subscribers[-1] is conn
        else:
            assert well_formed(reply), (req, reply)
            # a well-typed snooze is accepted; a mistyped one is refused, never half-applied
            if req.get("cmd") == "snooze":
                seconds = req.get("seconds")
                good = seconds is None or (
                    isinstance(seconds, (int, float))
                    and not isinstance(seconds, bool)
                    and math.isfinite(seconds)
                )
                good = good and all(
                    req.get(k) is None or (isinstance(req.get(k), str) and len(req[k]) <= 4096)
                    for k in ("session", "project")
                )
                assert reply["ok"] is good, (req, reply)
    finally:
        app.window.close()
        a.close()
        b.close()


payloads = (
    st.binary(max_size=1500)
    | requests.map(lambda r: json.dumps(r).encode())
    | st.lists(requests.map(lambda r: json.dumps(r).encode()), max_size=4).map(b"\n".join)
    | st.integers(min_value=1, max_value=5000).map(lambda n: b"[" * n + b"]" * n)
)


@settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(payloads)
def test_the_real_server_answers_or_drops_cleanly_and_keeps_serving(
    served: tuple[QuietApp, Server], payload: bytes
) -> None:
    app, server = served
    with watched_log() as failures:
        sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        sock.settimeout(20)
        sock.connect(server.path)
        try:
            sock.sendall(payload + b'\n{"cmd":"ping"}\n')
            buf = b""
            answered = False
            while not answered:
                try:
                    chunk = sock.recv(1 << 16)
                except ConnectionResetError:
                    chunk = b""
                if not chunk:
                    break  # a clean drop
                buf += chunk
                while b"\n" in buf:
                    line, buf = buf.split(b"\n", 1)
                    message = json.loads(line)
                    assert isinstance(message, dict)
                    if "window" in message or "focus" in message:
                        continue  # pushed to a connection that subscribed
                    assert well_formed(message), message
                    answered = answered or "pid" in message
            assert answered  # whatever came before it on the connection
        finally:
            sock.close()
        assert failures.messages == []
    reply = control.request({"cmd": "ping"}, path=server.path, timeout=20)
    assert reply == {"ok": True, "pid": os.getpid(), "roots": app.config["sessions_dirs"]}


# ---- the one line cutter (channel.Lines): any line, any chunking ----

LIMIT = 64
stream_lines = st.lists(
    st.binary(max_size=3 * LIMIT).map(lambda b: b.replace(b"\n", b"")) | st.integers(LIMIT - 1, 5 * LIMIT).map(b"y".__mul__),
    max_size=12,
)


@settings(max_examples=300, deadline=None)
@given(stream_lines, st.lists(st.integers(1, 4 * LIMIT), min_size=1, max_size=40), st.booleans())
def test_lines_gives_each_line_or_none_for_a_long_one_however_it_is_cut(
    lines: list[bytes], cuts: list[int], ended: bool
) -> None:
    data = b"".join(line + b"\n" for line in lines) + (b"tail" if not ended else b"")
    cutter = Lines(LIMIT)
    got: list[bytes | None] = []
    at, i = 0, 0
    while at < len(data):
        piece = cuts[i % len(cuts)]
        cutter.feed(data[at : at + piece])
        at, i = at + piece, i + 1
        assert len(cutter.buf) <= LIMIT + 1 + piece  # never a long line held whole
        got += list(cutter)
    assert got == [line if len(line) <= LIMIT else None for line in lines]
    assert bytes(cutter.buf) == (b"" if ended else b"tail")  # an unended line is held for its end
