"""One remote: a command that prints the ``run --json`` stream (normally OpenSSH running
``pi-notifier run --json`` on another machine), kept running on a thread of its own.

The command is restarted when it ends, after 1 s doubling to 60 s; one that fails before its
stream ever said ``ready`` (no pi-notifier there, authentication refused, host unreachable) is
reported once and retried slowly. Lines are read with a bounded length (a longer one is skipped
to its end) and at a bounded pace (notifier.remote.inbox.Pace: a remote that floods is read no
faster, said once), stderr keeps only its last bytes, so memory and CPU are bounded whatever the
remote prints.
"""

from __future__ import annotations

import collections
import contextlib
import logging
import os
import shlex
import subprocess
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import IO

from notifier.core.text import clean
from notifier.remote.inbox import Pace
from notifier.remote.stream import MAX_LINE, Ready, StreamError, StreamEvent, parse_line
from notifier.system.log import LogOnce

log = logging.getLogger(__name__)
say_once = LogOnce(log)

BACKOFF_MIN_S = 1.0
BACKOFF_MAX_S = 60.0
SLOW_RETRY_S = 60.0  # after a failure before the stream ever said ready
STDERR_KEEP = 2048
SSH_BASE = ("ssh", "-T", "-o", "BatchMode=yes", "-o", "ServerAliveInterval=15", "-o", "ServerAliveCountMax=3")
# --stop-on-eof: the remote run ends when its standard input closes, i.e. when this link's ssh
# ends (the app stops, the link restarts, the machine goes away); without it, it would live on
# until it next writes. A remote too old to know the option is run without it.
STOP_ON_EOF = "--stop-on-eof"
REMOTE_RUN = ("pi-notifier", "run", "--json", "--no-tray", "--no-notify", STOP_ON_EOF)


@dataclass(frozen=True)
class Remote:
    """A configured remote: its name and either an ssh destination or a command."""

    name: str
    ssh: str | None = None
    command: tuple[str, ...] = ()
    ssh_options: tuple[str, ...] = ()

    def argv(self, stop_on_eof: bool = True) -> list[str]:
        if self.ssh is not None:
            return ssh_argv(self, [a for a in REMOTE_RUN if stop_on_eof or a != STOP_ON_EOF])
        return list(self.command)


def ssh_argv(remote: Remote, remote_args: Sequence[str], tty: bool = False) -> list[str]:
    """``ssh … HOST ARGS`` for ``remote`` (which must have an ssh destination). ssh joins the
    remote arguments with spaces for the remote shell, so each is quoted here."""
    assert remote.ssh is not None
    base = list(SSH_BASE)
    if tty:
        base = ["ssh", "-t"] + base[2:]
    return base + list(remote.ssh_options) + ["--", remote.ssh, " ".join(shlex.quote(a) for a in remote_args)]


def remote_from_config(item: dict[str, object]) -> Remote:
    ssh = item.get("ssh")
    command = item.get("command") or []
    options = item.get("ssh_options") or []
    return Remote(
        str(item["name"]),
        ssh if isinstance(ssh, str) else None,
        tuple(str(c) for c in command) if isinstance(command, list) else (),
        tuple(str(o) for o in options) if isinstance(options, list) else (),
    )


def read_lines(stream: IO[bytes], limit: int = MAX_LINE) -> collections.abc.Iterator[bytes | None]:
    """Complete lines of at most ``limit`` bytes; ``None`` for a longer one (skipped to its end)."""
    while True:
        line = stream.readline(limit + 1)
        if not line:
            return
        if len(line) > limit and not line.endswith(b"\n"):
            while True:  # drop the rest of this line, bounded chunks at a time
                rest = stream.readline(limit + 1)
                if not rest or rest.endswith(b"\n"):
                    break
            yield None
            continue
        yield line


class Link:
    """Runs one remote's command over and over; hands events to ``on_event`` and says when the
    link went down (``on_down``). Both are called on this link's thread."""

    def __init__(
        self,
        remote: Remote,
        on_event: Callable[[str, StreamEvent], None],
        on_down: Callable[[str], None],
        on_up: Callable[[str], None] | None = None,
        pace: Pace | None = None,
    ) -> None:
        self.remote = remote
        self.pace = Pace() if pace is None else pace
        self.on_event = on_event
        self.on_down = on_down
        self.on_up = on_up
        self._stop = threading.Event()
        self._proc: subprocess.Popen[bytes] | None = None
        self._thread = threading.Thread(target=self._run, name=f"pi-notifier-remote {remote.name}", daemon=True)
        self.connections = 0  # how many times its stream reached ready
        self._stop_on_eof = True  # (False once the remote said it does not know the option)

    def start(self) -> None:
        self._thread.start()

    def stop(self) -> None:
        self._stop.set()
        proc = self._proc
        if proc is not None and proc.poll() is None:
            _close(proc.stdin)  # (the remote run sees its input end: it stops too)
            with contextlib.suppress(OSError):
                proc.terminate()

    def join(self, timeout: float) -> None:
        self._thread.join(timeout)

    def _run(self) -> None:
        delay = BACKOFF_MIN_S
        while not self._stop.is_set():
            began = time.monotonic()
            try:
                ready, why = self._once()
            except Exception as exc:  # a bug here must cost one try, not the link
                log.exception("remote %s: the link failed", clean(self.remote.name))
                ready, why = False, clean(exc, 200)
            if self._stop.is_set():
                return
            if not ready and self._stop_on_eof and self.remote.ssh is not None and STOP_ON_EOF in why:
                # an older pi-notifier there: "unrecognized arguments: --stop-on-eof"
                log.info(
                    "remote %s: its pi-notifier has no %s; running it without", clean(self.remote.name), STOP_ON_EOF
                )
                self._stop_on_eof = False
                continue
            name = self.remote.name
            if ready:
                # a link that stayed up a while starts again at once-a-second; one that keeps
                # dropping right after connecting backs off like a failure
                delay = BACKOFF_MIN_S if time.monotonic() - began >= BACKOFF_MAX_S else delay
                say_once.forget(name)
                log.warning("remote %s: the link ended (%s); reconnecting", clean(name), why)
                wait = delay
                delay = min(delay * 2, BACKOFF_MAX_S)
            elif self.connections == 0:
                say_once(name, "fails", "remote %s cannot be reached: %s; retrying every %d s",
                         clean(name), why, int(SLOW_RETRY_S))
                wait = SLOW_RETRY_S
            else:
                say_once(name, "down", "remote %s: reconnecting failed (%s); retrying", clean(name), why)
                wait = delay
                delay = min(delay * 2, BACKOFF_MAX_S)
            if self._stop.wait(wait):
                return

    def _once(self) -> tuple[bool, str]:
        """Runs the command until its stream ends: (did it reach ready, why it ended)."""
        argv = self.remote.argv(self._stop_on_eof)
        try:
            proc = subprocess.Popen(
                argv,
                stdin=subprocess.PIPE,  # never written: closed when the link ends (STOP_ON_EOF)
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                start_new_session=True,  # a Ctrl-C in our terminal is ours to handle, not ssh's
            )
        except OSError as exc:
            return False, f"cannot run {clean(argv[0], 80)}: {clean(exc.strerror or exc, 120)}"
        self._proc = proc
        if self._stop.is_set():
            proc.terminate()
        err: collections.deque[bytes] = collections.deque()
        drain = threading.Thread(target=_drain, args=(proc.stderr, err), daemon=True)
        drain.start()
        ready = False
        name = self.remote.name
        assert proc.stdout is not None
        try:
            for line in read_lines(proc.stdout):
                waited = self.pace.waited
                self.pace.spend(MAX_LINE if line is None else len(line), self._stop)
                if self.pace.waited > waited:
                    say_once(name, "pace", "remote %s sends faster than %d events a second; reading it no faster",
                             clean(name), int(self.pace.rate))
                if self._stop.is_set():
                    break
                if line is None:
                    say_once(name, "long", "remote %s: skipped a line longer than %d bytes", clean(name), MAX_LINE)
                    continue
                try:
                    event = parse_line(line, name, time.time())
                except StreamError as exc:
                    say_once(name, "garbage", "remote %s: skipped a line that is not an event (%s)", clean(name), exc)
                    continue
                if event is None:
                    continue
                if isinstance(event, Ready) and not ready:
                    ready = True
                    self.connections += 1
                    log.info("remote %s: connected", clean(name))
                    if self.on_up is not None:
                        self.on_up(name)
                self.on_event(name, event)
        finally:
            _close(proc.stdin)
            with contextlib.suppress(OSError):
                proc.stdout.close()
            if proc.poll() is None:
                with contextlib.suppress(OSError):
                    proc.terminate()
            try:
                code = proc.wait(5)
            except subprocess.TimeoutExpired:
                proc.kill()
                code = proc.wait()
            drain.join(1)
            self._proc = None
            self.on_down(name)
        tail = clean(b"".join(err)[-300:].decode("utf-8", "replace"), 300)
        why = f"exit code {code}" + (f": {tail}" if tail else "")
        return ready, why


def _close(stream: IO[bytes] | None) -> None:
    if stream is not None:
        with contextlib.suppress(OSError, ValueError):
            stream.close()


def _drain(stream: IO[bytes] | None, keep: collections.deque[bytes]) -> None:
    """Reads stderr to its end, keeping only the last STDERR_KEEP bytes."""
    if stream is None:
        return
    size = 0
    try:
        while True:
            chunk = stream.read1(4096) if hasattr(stream, "read1") else os.read(stream.fileno(), 4096)
            if not chunk:
                return
            keep.append(chunk)
            size += len(chunk)
            while size > STDERR_KEEP and len(keep) > 1:
                size -= len(keep.popleft())
    except (OSError, ValueError):
        return
    finally:
        with contextlib.suppress(OSError):
            stream.close()
