"""Remote hosts: another machine's ``run --json`` stream (usually OpenSSH running ``pi-notifier
run --json`` there) merged into the board.

- the stream (docs/contract.md §2) read back: one line → one typed event (:func:`parse_line`);
  every line is untrusted, parsed with the channel's bounds (:mod:`notifier.channel`), strings
  bounded and cleaned, anything else a :class:`~notifier.channel.BadLine` (skipped with one log line);
- :class:`Link`: one remote's command, kept running by the one back-off
  (:class:`notifier.system.supervisor.Backoff`); one that fails before its stream ever said
  ``ready`` (no pi-notifier there, authentication refused, host unreachable) is reported once and
  retried slowly. Lines are read with a bounded length and at the channel's pace, stderr keeps
  only its last bytes, so memory and CPU are bounded whatever the remote prints;
- :class:`Inbox`: what a link read and the engine has not applied yet: bounded, folded and paced.
  A remote that floods must neither hold up the engine nor make memory grow: at most
  :data:`MAX_ITEMS` wait (a full inbox makes the link wait too), the engine takes at most
  :data:`TAKE_MAX` per call (its own messages come between two batches), and a question asked
  and ended again before the engine took it is *folded*: only its end is kept, and counted;
- :class:`Remotes`: every link of the app, applied to the board on the engine thread.
"""

from __future__ import annotations

import contextlib
import logging
import os
import shlex
import subprocess
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from functools import partial
from typing import IO, TYPE_CHECKING, Any, get_args

from notifier.channel import MAX_LINE, BadLine, follow, parse_object, read_lines
from notifier.core import codec
from notifier.core.codec import parse_iso
from notifier.core.model import (
    GENERIC_QUESTION,
    Option,
    Outcome,
    Question,
    QuestionItem,
    QuestionKey,
    SessionRef,
    Transition,
    remote_key,
)
from notifier.core.text import clean
from notifier.system.log import LogOnce
from notifier.system.supervisor import Backoff

if TYPE_CHECKING:
    from notifier.core.board import Board

log = logging.getLogger(__name__)
say_once = LogOnce(log)


# ---- the stream ----

MAX_PATH = 4096
# A question from another machine is bounded in bytes (a host that floods with huge questions
# must not make this app grow by their size): its text, header and options are cut to these.
MAX_TEXT = 4000
MAX_HEADER = 300
MAX_OPTIONS = 20
MAX_OPTION = 200
MAX_COUNT = 100  # questions of one questionnaire
OUTCOMES = get_args(Outcome)
MORE = "(one more question: see the session)"


@dataclass(frozen=True)
class Ready:
    """The remote finished its start-up scan: every question pending there has been sent."""


@dataclass(frozen=True)
class RemoteAsked:
    session: SessionRef
    question: Question
    initial: bool
    at: float


@dataclass(frozen=True)
class RemoteEnded:
    """Resolved (``outcome`` set) or abandoned (``outcome`` None) on the remote."""

    session: SessionRef
    question: Question
    at: float
    outcome: Outcome | None = None
    answer: str | None = None
    waited_s: float | None = None


StreamEvent = Ready | RemoteAsked | RemoteEnded


def parse_line(line: bytes, host: str, now: float | None = None) -> StreamEvent | None:
    """One line of a remote's stream → an event (``None`` for a blank line or an event kind this
    version does not know: the stream may grow, see contract.md). ``now`` bounds the times the
    remote reports (its clock may be wrong)."""
    if not line.strip():
        return None
    now = time.time() if now is None else now
    obj = codec.shrink(parse_object(line, MAX_LINE))
    kind = obj.get("event")
    if kind == "ready":
        return Ready()
    if kind not in ("needs_input", "resolved", "abandoned"):
        if isinstance(kind, str):
            return None
        raise BadLine("no event name")
    at = now if (ts := parse_iso(obj.get("at"))) is None else min(ts, now)
    session = _session(obj.get("session"), host)
    question = _question(obj.get("question"), at)
    if kind == "needs_input":
        return RemoteAsked(session, question, obj.get("initial") is True, at)
    if kind == "abandoned":
        return RemoteEnded(session, question, at)
    outcome = obj.get("outcome")
    if outcome not in OUTCOMES:
        raise BadLine("unknown outcome")
    answer = obj.get("answer")
    waited = codec.finite_number(obj.get("waited_s"))
    return RemoteEnded(session, question, at, outcome, clean(answer, 2000) if isinstance(answer, str) else None,
                       waited if waited is not None and 0 <= waited <= 1e9 else None)


def _opt_str(value: Any, limit: int) -> str | None:
    return value if isinstance(value, str) and 0 < len(value) <= limit else None


def _text(value: Any, limit: int) -> str:
    """A text to show, cleaned and cut to ``limit`` ("" for anything but a string)."""
    return clean(value, limit) if isinstance(value, str) else ""


def _session(value: Any, host: str) -> SessionRef:
    if not isinstance(value, dict):
        raise BadLine("no session")
    file = _opt_str(value.get("file"), MAX_PATH)
    if file is None:
        raise BadLine("no session file")
    name = _text(value.get("name"), 200) or None
    return SessionRef(remote_key(host, file), _opt_str(value.get("id"), 200), _opt_str(value.get("cwd"), MAX_PATH),
                      name, host)


def _question(value: Any, at: float) -> Question:
    if not isinstance(value, dict):
        raise BadLine("no question")
    cid = _opt_str(value.get("tool_call_id"), 512)
    tool = _opt_str(value.get("tool"), 128)
    if cid is None or tool is None:
        raise BadLine("no question id or tool")
    text = _text(value.get("text"), MAX_TEXT)
    header = _text(value.get("header"), MAX_HEADER)
    labels: Any = value.get("options") if isinstance(value.get("options"), list) else []
    options = tuple(Option(label) for o in labels[:MAX_OPTIONS] if (label := _text(o, MAX_OPTION)))
    asked = codec.finite_number(value.get("count"))
    count = min(int(asked), MAX_COUNT) if asked is not None and 1 <= asked <= 1e15 else 1
    first = QuestionItem(text or GENERIC_QUESTION, header or None, options=options)
    items = (first,) + tuple(QuestionItem(MORE) for _ in range(count - 1))
    # When it was asked there, as there (a part of its token: an answer from here carries the token
    # the remote computes); a remote of a version before that field: when the event says.
    asked_at = parse_iso(value.get("asked_at"))
    return Question(clean(cid, 512), clean(tool, 128) or "?", items, at if asked_at is None else asked_at)


# ---- what waits for the engine ----

MAX_ITEMS = 2000  # events waiting for the engine, per remote
TAKE_MAX = 500  # events applied in one engine call


@dataclass(frozen=True)
class Down:
    """The link went down (after the events read before it)."""


Item = StreamEvent | Down


class Inbox:
    def __init__(self, size: int = MAX_ITEMS) -> None:
        self.size = size
        self._cond = threading.Condition()
        self._items: dict[tuple[QuestionKey | None, int], Item] = {}  # in order, by (question, n)
        self._latest: dict[QuestionKey, tuple[QuestionKey | None, int]] = {}  # a question's newest slot
        self._n = 0
        self._scheduled = False  # the engine has been asked to take (and has not emptied it yet)
        self._closed = False
        self.folded = 0  # questions asked and ended before the engine saw them (all time)

    def __len__(self) -> int:
        with self._cond:
            return len(self._items)

    def put(self, item: Item) -> bool:
        """Add what the link read (waits while the inbox is full). True: the caller must ask the
        engine to :meth:`take` (no such call is outstanding)."""
        with self._cond:
            while len(self._items) >= self.size and not self._closed:
                self._cond.wait(0.5)
            if self._closed:
                return False
            question = isinstance(item, (RemoteAsked, RemoteEnded))
            if not question:  # (the link's state changed: nothing after it takes a place before it)
                self._latest.clear()
            key = (item.session.key, item.question.tool_call_id) if question else None  # type: ignore[union-attr]
            slot = self._latest.get(key, (None, 0)) if key is not None else (None, 0)  # ((None, 0): none)
            waiting = self._items.get(slot)
            if isinstance(item, RemoteEnded) and isinstance(waiting, RemoteAsked) and not waiting.initial:
                self._items[slot] = item  # asked and ended between two looks: only the end
                self.folded += 1
            elif waiting is not None and type(waiting) is type(item):
                self._items[slot] = item  # the newer word on it, in the older one's place
            else:
                self._n += 1
                self._items[(key, self._n)] = item
                if key is not None:
                    self._latest[key] = (key, self._n)
            scheduled, self._scheduled = self._scheduled, True
            return not scheduled

    def take(self, limit: int = TAKE_MAX) -> tuple[list[Item], bool]:
        """Up to ``limit`` events, oldest first, and whether more wait (then the caller asks the
        engine again; else the next :meth:`put` does)."""
        with self._cond:
            slots = list(self._items)[:limit]
            taken = set(slots)
            for key, _ in slots:
                if key is not None and self._latest.get(key) in taken:
                    del self._latest[key]
            out = [self._items.pop(slot) for slot in slots]
            self._scheduled = bool(self._items)
            self._cond.notify_all()
            return out, self._scheduled

    def close(self) -> None:
        """Stop: a link waiting on a full inbox goes on (and what it adds is dropped)."""
        with self._cond:
            self._closed = True
            self._cond.notify_all()




# ---- one link ----

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
    base = ["ssh", "-t" if tty else "-T", *SSH_BASE[2:]]
    return base + list(remote.ssh_options) + ["--", remote.ssh, " ".join(shlex.quote(a) for a in remote_args)]


def remote_from_config(item: dict[str, Any]) -> Remote:
    """A ``[[remotes]]`` table, as the config checked it (notifier.config)."""
    return Remote(item["name"], item.get("ssh"), tuple(item.get("command") or ()), tuple(item.get("ssh_options") or ()))


class Link:
    """Runs one remote's command over and over; hands ``put`` (on this link's thread) every
    event it reads, and :class:`Down` when the link went down."""

    def __init__(self, remote: Remote, put: Callable[[str, Item], None]) -> None:
        self.remote = remote
        self.put = put
        self._stop = threading.Event()
        self._proc: subprocess.Popen[bytes] | None = None
        self._thread = threading.Thread(target=self._run, name=f"pi-notifier-remote {remote.name}", daemon=True)
        self.connections = 0  # how many times its stream reached ready
        self._stop_on_eof = True  # (False once the remote said it does not know the option)

    def start(self) -> None:
        self._thread.start()

    def stop(self) -> None:
        self._stop.set()
        if self._proc is not None:
            _hang_up(self._proc)

    def _run(self) -> None:
        name = self.remote.name
        backoff = Backoff(BACKOFF_MIN_S, BACKOFF_MAX_S, healthy_s=BACKOFF_MAX_S)
        while not self._stop.is_set():
            backoff.began()
            try:
                ready, why = self._once()
            except Exception as exc:  # a bug here must cost one try, not the link
                log.exception("remote %s: the link failed", name)
                ready, why = False, clean(exc, 200)
            if self._stop.is_set():
                return
            if not ready and self._stop_on_eof and self.remote.ssh is not None and STOP_ON_EOF in why:
                # an older pi-notifier there: "unrecognized arguments: --stop-on-eof"
                log.info("remote %s: its pi-notifier has no %s; running it without", name, STOP_ON_EOF)
                self._stop_on_eof = False
                continue
            if ready:  # (one that stayed up a while starts again at once-a-second)
                for trouble in ("fails", "down"):  # (the link's: what its lines were is said once a run)
                    say_once.forget(f"remote {name}", trouble)
                log.warning("remote %s: the link ended (%s); reconnecting", name, why)
                wait = backoff.next()
            elif self.connections == 0:
                say_once(f"remote {name}", "fails", "cannot be reached: %s; retrying every %d s", why, SLOW_RETRY_S)
                wait = SLOW_RETRY_S
            else:
                say_once(f"remote {name}", "down", "reconnecting failed (%s); retrying", why)
                wait = backoff.next()
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
            _hang_up(proc)
        err = [b""]
        drain = threading.Thread(target=_drain, args=(proc.stderr, err), daemon=True)
        drain.start()
        ready = False
        name = self.remote.name
        assert proc.stdout is not None
        try:
            events: Iterator[StreamEvent] = follow(
                read_lines(proc.stdout), partial(parse_line, host=name), self._stop, say_once, f"remote {name}"
            )
            for event in events:
                if isinstance(event, Ready) and not ready:
                    ready = True
                    self.connections += 1
                    log.info("remote %s: connected", name)
                self.put(name, event)
        finally:
            _hang_up(proc)
            with contextlib.suppress(OSError):
                proc.stdout.close()
            try:
                code = proc.wait(5)
            except subprocess.TimeoutExpired:
                proc.kill()
                code = proc.wait()
            drain.join(1)
            self._proc = None
            self.put(name, Down())
        tail = clean(err[0][-300:].decode("utf-8", "replace"), 300)
        why = f"exit code {code}" + (f": {tail}" if tail else "")
        return ready, why


def _hang_up(proc: subprocess.Popen[bytes]) -> None:
    """Close its input (the remote run sees it end: it stops too) and end it."""
    with contextlib.suppress(OSError, ValueError, AttributeError):
        proc.stdin.close()  # type: ignore[union-attr]
    if proc.poll() is None:
        with contextlib.suppress(OSError):
            proc.terminate()


def _drain(stream: IO[bytes], keep: list[bytes]) -> None:
    """Reads stderr to its end, keeping only its last STDERR_KEEP bytes in ``keep[0]``."""
    with contextlib.suppress(OSError, ValueError), stream:
        while chunk := os.read(stream.fileno(), 4096):
            keep[0] = (keep[0] + chunk)[-STDERR_KEEP:]


# ---- every link of the app, on the board ----

MAX_STILL = 20_000  # questions re-sent since connecting that are remembered (bounded like the board)


class Remotes:
    """The links of one app's remotes. What a link reads waits in its host's :class:`Inbox` and
    is applied to the board on the engine thread (``engine.call``), so remote questions become
    the same transitions as local ones and every output just works. No output of the engine:
    :meth:`start` has the links start once the engine is ready (its board is the one that stays)."""

    def __init__(self, remotes: Sequence[Remote], engine: Any) -> None:
        self.engine = engine  # (notifier.engine.Engine: its board, its call)
        self.boxes = {r.name: Inbox() for r in remotes}
        self.links = [Link(r, self._put) for r in remotes]
        self._still: dict[str, set[tuple[str, str]]] = {}  # engine thread: re-sent since connecting
        self._stopped = False

    def start(self) -> None:
        """After the engine started: the links start on its thread, after its start-up scan
        (the calls queued before it are taken once it is ready)."""
        if self.links:
            self.engine.call(self._start_links)

    def _start_links(self) -> list[Transition]:
        if not self._stopped:  # (stopped before the engine was ready: never started)
            for link in self.links:
                link.start()
        return []

    def stop(self) -> None:
        self._stopped = True
        for link in self.links:
            link.stop()
        for box in self.boxes.values():
            box.close()

    # ---- link threads → engine thread ----

    def _put(self, host: str, item: Item) -> None:
        """Into the host's inbox; the engine is asked to take it when no such call is out."""
        if self.boxes[host].put(item):
            self.engine.call(partial(self._take, host))

    # ---- engine thread ----

    def _take(self, host: str) -> list[Transition]:
        """Apply a batch of what the host sent: one set of transitions (the engine hands them to
        every output); ask for the next batch behind whatever else the engine has to do."""
        box = self.boxes[host]
        items, more = box.take()
        try:
            out: list[Transition] = []
            for item in items:
                out += self._apply(host, item)
            for (who, why), count in self.engine.board.remote.take_refused().items():
                limit = "sessions" if why == "sessions" else "questions in one session"
                say_once(f"remote {who}", why, "has more %s than are kept; ignoring the rest (%d so far)", limit, count)
            if box.folded:
                say_once(f"remote {host}", "folded", "sends faster than it is looked at: questions asked "
                         "and ended in between are folded (%d so far)", box.folded)
            return out
        finally:
            if more:  # (also after a failure: the rest must not wait for the next event)
                self.engine.call(partial(self._take, host))

    def _apply(self, host: str, event: Item) -> list[Transition]:
        board: Board = self.engine.board
        now = time.time()
        if isinstance(event, Down):
            self._still.pop(host, None)
            board.remote.offline(host, now)
            return []
        if isinstance(event, Ready):
            return board.remote.synced(host, self._still.pop(host, set()), now)
        if isinstance(event, RemoteAsked):
            still = self._still.setdefault(host, set())
            if len(still) < MAX_STILL:
                still.add((event.session.key, event.question.tool_call_id))
            return board.remote.asked(event.session, event.question, now, event.initial)
        return board.remote.ended(event.session, event.question, now, event.outcome, event.answer, event.waited_s)
