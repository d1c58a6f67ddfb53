"""The optional companion pi extension, seen from pi-notifier: its sockets, its
protocol (typed events from its JSON lines, requests that answer a dialog), a connection to one
socket (same user only, over the one channel: :mod:`notifier.channel`), and what it announces
put on the board (:class:`DialogFeed`, on the engine thread).

The extension itself ships as the folder ``notifier/resources/pi-extension/pi-notifier/``
(``index.ts``, pi's entry point, and the modules it imports; docs/companion-extension.md);
installing it is :mod:`notifier.cli.install`. Finding sockets as pis start:
:class:`CompanionWatcher`.

Strings are kept as the extension sent them (bounded); whoever shows or logs them passes them
through :func:`notifier.core.text.clean`. A dialog the extension announces becomes a pending
question of its session, ``kind: "dialog"``: ``dialog`` adds it (keyed by socket and dialog id),
``closed`` resolves it, a lost connection (pi gone) abandons its dialogs, and a ``hello`` (on every
(re)connect) brings the board in line with what pi shows now. A question tool's own ``custom``
dialog is that question (already read from the session file): it is not shown twice. A dialog not
known to wait for a human (a loader while an extension calls the model) is not on the board. A
dialog pi shows before it has a session file (project trust at start-up) belongs to that pi, known
by its process and folder (:func:`notifier.core.board.startup_key`), until its session starts.
One pi may keep at most :data:`~notifier.channel.MAX_DIALOGS` dialogs on the board and is read at
most at the channel's pace.
"""

from __future__ import annotations

import contextlib
import logging
import math
import os
import stat
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import MISSING, dataclass, fields, replace
from typing import TYPE_CHECKING, Any, Literal, Protocol, TypeVar, get_args

from notifier.channel import (
    DIALOG_CHARS,
    MAX_DIALOGS,
    MAX_LINE,
    MAX_PEERS,
    BadLine,
    Client,
    dial,
    encode,
    follow,
    parse_object,
)
from notifier.core.board import add_dialogs, startup_key
from notifier.core.codec import Budget, shrink
from notifier.core.model import (
    GENERIC_QUESTION,
    Option,
    Outcome,
    Question,
    QuestionItem,
    SessionRef,
    Snapshot,
    Transition,
)
from notifier.core.text import clean
from notifier.pi.parse import ID_LIMIT, QuestionCatalog, extract
from notifier.system import paths
from notifier.system.log import LogOnce
from notifier.system.paths import NotOurs, is_socket_name, list_sockets
from notifier.system.supervisor import Backoff

if TYPE_CHECKING:
    from notifier.core.board import Board
    from notifier.sessions import EngineOptions
    from notifier.watch import Watch

log = logging.getLogger(__name__)
say_once = LogOnce(log)


class BoardOwner(Protocol):
    """The engine, as a feed of its board sees it (:class:`notifier.engine.Engine`)."""

    @property
    def board(self) -> Board: ...

    @property
    def options(self) -> EngineOptions: ...

    def call(self, fn: Callable[[], list[Transition]]) -> None: ...


# ---- the protocol ----

PROTOCOL = 1
NOBODY_LISTENS = (ConnectionRefusedError, FileNotFoundError)  # a dead pi's socket, or none
LOOKS_AT_ONCE = 8  # sockets a one-shot look asks at the same time
# A pi's connection that ended while it runs is made again (the one back-off) after …
RECONNECT_LEAST_S = 0.05  # … this, doubling …
RECONNECT_MOST_S = 5.0  # … up to this; a connection that lasted …
RECONNECT_HEALTHY_S = 10.0  # … this long starts it over

Kind = Literal["select", "confirm", "input", "editor", "custom"]
KINDS = get_args(Kind)

# Key names a caller may use instead of raw terminal input (what a terminal sends for the key).
KEYS: dict[str, str] = {
    "up": "\x1b[A",
    "down": "\x1b[B",
    "right": "\x1b[C",
    "left": "\x1b[D",
    "enter": "\r",
    "escape": "\x1b",
    "tab": "\t",
    "backspace": "\x7f",
    "space": " ",
}


@dataclass(frozen=True)
class ExtensionDialog:
    """A dialog pi shows. ``remote`` says how it can be answered from here: ``"value"`` (select,
    confirm, input: exactly), ``"keys"`` (custom: keys forwarded to its component) or ``None``.
    ``waits``: known to wait for a human (False: a loader shown while an extension calls the model,
    a custom dialog that takes no input, or one announced only by pi's prompt events).
    ``session_file`` is ``None`` before pi has a session (a start-up dialog: project trust); the
    pi is known by ``pid`` and ``cwd`` then, and ``session_dir`` says where its sessions go."""

    id: str
    kind: Kind
    title: str | None
    options: tuple[str, ...] | None
    tool: str | None
    tool_call_id: str | None
    tool_input: Any
    session_file: str | None
    cwd: str | None
    pid: int | None
    at: float | None  # seconds since the epoch, when pi opened it
    remote: Literal["value", "keys"] | None
    screen: tuple[str, ...] | None  # a custom dialog's text, as the terminal shows it
    waits: bool = True
    session_dir: str | None = None
    # a nested tool call's dialog (a codemode script's tool call): the model's own call it runs
    # under, the only one the session file has while it runs
    outer_tool_call_id: str | None = None

    @property
    def command(self) -> str | None:
        """The shell command a gate asks about, when the gated tool call is a bash call."""
        value = self.tool_input.get("command") if isinstance(self.tool_input, dict) else None
        return value if isinstance(value, str) else None


@dataclass(frozen=True)
class Hello:
    protocol: int = 0
    pi_version: str | None = None
    pid: int | None = None
    session_file: str | None = None
    session_id: str | None = None
    cwd: str | None = None
    mode: str = "events"  # "wrap": every dialog, answerable; "events": from pi's prompt events only
    dialogs: tuple[ExtensionDialog, ...] = ()


@dataclass(frozen=True)
class Closed:
    """``answer``: what the dialog returned (a choice, a text; a confirm's "Yes" / "No"), ``None``
    for nothing; ``timed_out``: closed by its timeout or abort signal (then ``how`` is cancelled)."""

    id: str
    how: str = "answered"  # answered | cancelled | remote
    answer: str | None = None
    timed_out: bool = False

    @property
    def outcome(self) -> Literal["answered", "cancelled"]:
        return "cancelled" if self.how == "cancelled" or self.timed_out else "answered"


@dataclass(frozen=True)
class Bye:
    """pi closes its session (quit, ``/new``, ``/resume``, ``/reload``): a connection lost without
    it means pi died (killed, crashed) in the middle of its session."""

    reason: str | None


@dataclass(frozen=True)
class DialogText:
    """A custom dialog's text changed: its lines as the terminal shows them now."""

    id: str
    lines: tuple[str, ...] = ()


@dataclass(frozen=True)
class Result:
    request: str | None
    id: str | None
    ok: bool = False
    error: str | None = None
    closed: bool = False
    screen: tuple[str, ...] | None = None


@dataclass(frozen=True)
class Disconnected:
    """A companion socket's pi went away (quit or reloaded): forget its dialogs."""

    path: str


Event = Hello | ExtensionDialog | Closed | DialogText | Result | Bye
EVENTS: dict[str, type[Event]] = {"dialog": ExtensionDialog, "closed": Closed, "bye": Bye, "screen": DialogText,
                                  "result": Result, "hello": Hello}
_TYPES = {"str": str, "int": int, "bool": bool, "tuple[str, ...]": tuple}
E = TypeVar("E", bound=Event)


def _typed(cls: type[E], obj: dict[str, Any], **known: Any) -> E:
    """``cls`` from a message: each field (but those ``known``) read by its declared type: lines
    of text keep their strings; a missing field, or one of the wrong type, is its default (None
    where it may be), and the message is malformed (:class:`~notifier.channel.BadLine`) without one."""
    for f in fields(cls):
        want = str(f.type).removesuffix(" | None")
        value = known[f.name] if f.name in known else obj.get(f.name)
        if want.startswith("tuple[str") and isinstance(value, list):
            value = tuple(v for v in value if isinstance(v, str))
        if f.name in known or want == "Any" or (
            isinstance(value, _TYPES[want]) and not (want == "int" and isinstance(value, bool))
        ):
            known[f.name] = value
        elif f.default is not MISSING:
            known[f.name] = f.default
        elif str(f.type).endswith(" | None"):
            known[f.name] = None
        else:
            raise BadLine(f"{f.name} is not a {want}")
    return cls(**known)


# What a dialog says (held to DIALOG_CHARS in all), and the text of a custom dialog as the terminal
# shows it (held to as much again); every other field (where it is: its session, folder, ids) is
# held only to codec.MAX_STR a string, never cut short by how much the dialog says.
_SAYS = ("title", "options", "tool_input")
_SHOWS = ("screen",)


_IDS = ("id", "tool_call_id", "outer_tool_call_id")  # (cut as a session line's are: the same call matches)


def _bounded(obj: dict[str, Any]) -> dict[str, Any]:
    says, shows = Budget(chars=DIALOG_CHARS), Budget(chars=DIALOG_CHARS)
    return {
        k: shrink(v, None, ID_LIMIT) if k in _IDS else shrink(v, says if k in _SAYS else shows if k in _SHOWS else None)
        for k, v in obj.items()
    }


def dialog_from(obj: dict[str, Any]) -> ExtensionDialog:
    obj = _bounded(obj)  # (what it costs to hold, and to record)
    kind, options, at, remote = obj.get("kind"), obj.get("options"), obj.get("at"), obj.get("remote")
    if kind not in KINDS:
        raise BadLine("unknown dialog kind")
    if options is None and kind == "confirm":
        options = ["Yes", "No"]  # (an older extension's confirm: pi shows these two)
    if options is not None and not (isinstance(options, list) and all(isinstance(o, str) for o in options)):
        raise BadLine("options is not a list of strings")
    return _typed(
        ExtensionDialog, obj, kind=kind,
        options=tuple(options) if options is not None else None,
        at=at / 1000.0 if isinstance(at, (int, float)) and not isinstance(at, bool) else None,
        remote=remote if remote in ("value", "keys") else None,
    )


def parse(line: bytes | str) -> Event | None:
    """One line from the extension as a typed event; ``None`` for an event this version does not
    know (new events are additive). Raises :class:`BadLine` for a malformed line."""
    obj = parse_object(line, MAX_LINE)
    cls = EVENTS.get(str(obj.get("event")))
    if cls is ExtensionDialog:
        return dialog_from(obj)
    raw = obj.pop("dialogs", None)  # (a hello's: each bounded on its own, below)
    obj = {k: shrink(v) for k, v in obj.items()}  # (a closed dialog's answer is recorded: one string, cut)
    if cls is Hello:
        return _typed(Hello, obj, dialogs=tuple(dialog_from(d) for d in raw[:MAX_DIALOGS] if isinstance(d, dict))
                      if isinstance(raw, list) else ())
    return None if cls is None else _typed(cls, obj)


def key_sequence(keys: list[str]) -> list[str]:
    """Key names (``"down"``, ``"enter"``…) as terminal input; anything else is typed as text."""
    return [KEYS.get(k.lower(), k) if len(k) > 1 else k for k in keys]


def request(dialog_id: str, value: str | bool | None = None, keys: list[str] | None = None) -> bytes:
    """The line that answers a dialog: with ``value``, or (``keys`` given) by forwarding keys."""
    if keys is not None:
        return encode({"keys": {"id": dialog_id, "keys": key_sequence(keys)}})
    return encode({"answer": {"id": dialog_id, "value": value}})


def check_answer(dialog: ExtensionDialog, value: str | bool | None = None, keys: list[str] | None = None) -> str | None:
    """Why this answer cannot be given to this dialog (``None``: it can). The extension checks the
    same again; this lets a caller refuse without a round trip and say why."""
    if dialog.kind == "editor":
        return "an editor dialog cannot be answered from here; answer it in the terminal"
    if dialog.remote is None:
        return "this pi announces dialogs only (its companion extension could not take them over)"
    if keys is not None:
        if dialog.remote != "keys":
            return f"a {dialog.kind} dialog is answered with a value, not keys"
        return None if keys else "no keys"
    if dialog.remote != "value":
        return f"a {dialog.kind} dialog is answered with keys"
    if dialog.kind == "select":
        if value is None or (isinstance(value, str) and dialog.options is not None and value in dialog.options):
            return None
        return "not one of the options"
    if dialog.kind == "confirm":
        return None if isinstance(value, bool) else "a confirm dialog takes yes or no"
    return None if value is None or isinstance(value, str) else "an input dialog takes a text"


# ---- one connection ----


def check_owner(path: str) -> None:
    """The socket's folder must belong to this user, be private (0700) and not a link, checked
    without following links (the socket itself: :func:`~notifier.channel.dial`): nobody else can
    have put it there, so a dialog answered through it goes to our own pi. Raises OSError
    (:class:`~notifier.system.paths.NotOurs`: said why)."""
    folder = os.lstat(os.path.dirname(path) or ".")
    if stat.S_ISLNK(folder.st_mode) or not stat.S_ISDIR(folder.st_mode):
        raise NotOurs("the socket's folder is a link or not a folder")
    if hasattr(os, "getuid") and folder.st_uid != os.getuid():
        raise NotOurs("the socket's folder belongs to another user")
    if stat.S_IMODE(folder.st_mode) & 0o077:
        raise NotOurs("the socket's folder is open to other users")


def connect(path: str, attempts: int = 5, timeout: float = 2.0, patient: bool = True) -> Client:
    """A connection to one pi's companion extension (only ours: :func:`check_owner`), tried up to
    ``attempts`` times (a full backlog drains); ``patient``: a refused connection too (a socket
    seen the moment it is bound may not listen yet), where a one-shot look takes a socket nobody
    listens on for a dead pi's at once. Never tried again: another user's socket, a timeout.
    Raises OSError."""
    check_owner(path)
    backoff = Backoff(0.03, 0.5, healthy_s=math.inf)
    tried = 1
    while True:
        try:
            return dial(path, timeout)
        except (NotOurs, TimeoutError):
            raise
        except OSError as exc:
            if tried >= attempts or (not patient and isinstance(exc, NOBODY_LISTENS)):
                raise
        tried += 1
        time.sleep(backoff.next())


def owner_gone(path: str) -> bool:
    """Whether the pi behind a socket is surely gone: its socket file is not there, or the process
    the socket's name gives (``ext-<pid>-<token>.sock``, as the extension names it) does not run.
    A name without a pid says nothing (False)."""
    if not os.path.lexists(path):
        return True
    pid, dash, _ = os.path.basename(path).removeprefix(paths.SOCKET_PREFIX).partition("-")
    if not (dash and pid.isdecimal() and pid.isascii() and int(pid) > 0):
        return False
    try:
        os.kill(int(pid), 0)
    except (ProcessLookupError, OverflowError):  # (OverflowError: no process has such a number)
        return True
    except OSError:  # EPERM: it runs, as another user (a reused number): said by the connection
        pass
    return False


def read_event(peer: Client) -> Event | None:
    """The next event (``None`` for one this version does not know, or a line too long, skipped),
    by the peer's deadline. Raises OSError when the connection ends or times out,
    :class:`BadLine` for nonsense."""
    for line in peer:
        return None if line is None else parse(line)
    raise ConnectionError("pi closed the connection")


def hello_of(socket_path: str, timeout: float = 2.0) -> Hello:
    """What one pi says on connect (a one-shot look): who it is and the dialogs it waits on."""
    with connect(socket_path, timeout=timeout, patient=False) as peer:
        return hello(peer)


def hello(peer: Client) -> Hello:
    """The extension's first word on a new connection."""
    event = read_event(peer)
    if not isinstance(event, Hello):
        raise BadLine("no hello from the extension")
    if event.protocol != PROTOCOL:
        raise BadLine(f"protocol {event.protocol} (this pi-notifier speaks {PROTOCOL})")
    return event


CLOSED = "the dialog is no longer open (answered or cancelled meanwhile)"


def answer_dialog(
    socket_path: str,
    dialog_id: str,
    value: str | bool | None = None,
    keys: list[str] | None = None,
    timeout: float = 5.0,
) -> Result:
    """Answer one dialog of one pi: exactly for select / confirm / input (``value``; ``None``
    cancels a select or input), by forwarding ``keys`` (key names or raw input) to a custom
    dialog; refused for editor. A dialog that is no longer open is refused, nothing is done."""
    try:
        with connect(socket_path, timeout=timeout, patient=False) as peer:
            dialog = next((d for d in hello(peer).dialogs if d.id == dialog_id), None)
            why = CLOSED if dialog is None else check_answer(dialog, value, keys)
            if why:
                return Result(None, dialog_id, False, why)
            peer.send(request(dialog_id, value, keys))
            kind = "keys" if keys is not None else "answer"
            peer.deadline = time.monotonic() + timeout  # (for its result)
            while True:
                event = read_event(peer)
                if isinstance(event, Result) and event.request == kind and event.id == dialog_id:
                    return event
    except (OSError, BadLine) as exc:
        return Result(None, dialog_id, False, f"pi cannot be reached: {clean(exc, 200) or 'timed out'}")


def hellos(folder: str | None = None, timeout: float = 1.0) -> dict[str, Hello | None]:
    """What every pi with the extension loaded says on connect now, by socket (None: no answer),
    asked at once (:data:`LOOKS_AT_ONCE` at a time, each within ``timeout``); a socket whose pi is
    gone (:func:`owner_gone`) is not asked, one that refuses is not asked again."""

    def ask(path: str) -> Hello | None:
        if owner_gone(path):
            return None
        try:
            return hello_of(path, timeout)
        except (OSError, BadLine):
            return None

    found = list_sockets(folder)
    if len(found) < 2:
        return {path: ask(path) for path in found}
    from concurrent.futures import ThreadPoolExecutor

    with ThreadPoolExecutor(min(LOOKS_AT_ONCE, len(found)), thread_name_prefix="pi-notifier-look") as pool:
        return dict(zip(found, pool.map(ask, found), strict=True))


def all_open_dialogs(folder: str | None = None) -> list[tuple[str, ExtensionDialog]]:
    """Every dialog every reachable pi waits on now, with its socket."""
    return [(path, d) for path, said in hellos(folder).items() if said for d in said.dialogs]


def announced_sessions(folder: str | None = None) -> dict[int, str]:
    """pid → session file, as each reachable pi's extension announces itself now: exact evidence
    of which pi has which session (``notifier.system.locate.locate_one(announced=…)``)."""
    return {h.pid: h.session_file for h in hellos(folder).values() if h and h.pid and h.session_file}


# ---- the board side ----


def question_of(d: ExtensionDialog, now: float, catalog: QuestionCatalog | None = None) -> Question:
    """The pending question a dialog is: ``text`` = its title (one line, as every JSON text), the
    full title (and a gate's whole command) line by line in ``detail``, for the window. A dialog
    with no title of its own (a custom component) that a question tool's call opened (by name or
    by its arguments' shape, as the file's calls are judged: a codemode script's question) asks
    what that call's arguments ask."""
    at = d.at if d.at is not None else now
    if d.title is None and catalog is not None and d.tool is not None and d.tool_call_id is not None:
        kind = "question" if d.tool in catalog else catalog.kind(d.tool, d.tool_input)
        if kind is not None:
            asked = extract(d.tool, d.tool_input, d.tool_call_id, at, elsewhere=kind == "elsewhere")
            return replace(asked, kind="dialog", dialog=d.kind)
    title = d.title or ""
    lines = title.splitlines()
    command = d.command
    if command and clean(command) not in clean(title):  # the gate's title does not show it all
        lines += ["", "Command:", *command.splitlines()]
    text = clean(title) or clean(command) or GENERIC_QUESTION
    detail = "\n".join(clean(line) for line in lines).strip("\n") or None  # (every line sanitized, kept)
    item = QuestionItem(text=text, detail=detail, options=tuple(Option(clean(o)) for o in d.options or ()))
    return Question(d.tool_call_id or d.id, clean(d.tool, 60) or "dialog", (item,), at, kind="dialog", dialog=d.kind)


def _under(path: str, roots: Sequence[str], itself: bool = False) -> str | None:
    """``path`` spelled under the watched folder it is in, as the session files there are named
    (a pi may give its file by another path to the same place: a symlink, a bind mount); None
    when it is in none. ``itself``: the folder itself counts."""
    real = os.path.realpath(path)
    for root in roots:
        top = os.path.realpath(root).rstrip(os.sep)
        if real.startswith(top + os.sep):
            return os.path.join(root, real[len(top) + 1 :])
        if itself and real == top:
            return root
    return None


def ref_of(d: ExtensionDialog, roots: Sequence[str]) -> SessionRef | None:
    """The session a dialog belongs to, when its file is in one of the watched folders (keyed as
    the file is read there); before pi has a session, its pi (by process and folder), when its
    sessions will go to a watched folder."""
    if d.session_file:
        key = _under(d.session_file, roots)
        return SessionRef(key, None, d.cwd, None) if key is not None else None
    if d.pid is not None and d.session_dir and _under(d.session_dir, roots, itself=True) is not None:
        return SessionRef(startup_key(d.pid), None, d.cwd, None)
    return None


def counts(d: ExtensionDialog, catalog: QuestionCatalog) -> bool:
    """Whether a dialog is a pending question on the board: it waits for a human, and it is not
    a question tool's own dialog (its custom component, or the select / input it falls back to:
    the question itself, read from the session file; a question tool by its name, or by its
    arguments' shape, as the file's call is judged)."""
    if not d.waits:
        return False
    # (a nested call's dialog, a codemode script's question tool, is the question: the file has
    # only the call it runs under)
    if d.tool_call_id is None or d.tool is None or d.outer_tool_call_id is not None:
        return True
    return d.tool not in catalog and catalog.kind(d.tool, d.tool_input) is None


class DialogFeed:
    """The companion extension's events → the board, on the engine thread."""

    def __init__(self, engine: BoardOwner, folder: str | None = None, wall: Callable[[], float] = time.time) -> None:
        self.engine = engine
        self.wall = wall
        self.started = wall()
        self._files: dict[str, str | None] = {}  # socket → the session file its pi said it writes
        self._bye: set[str] = set()  # sockets whose pi said it closes its session
        self.watcher = CompanionWatcher(self._event, folder)

    @classmethod
    def attach(cls, engine: BoardOwner, folder: str | None = None) -> DialogFeed | None:
        """Start following the extension's sockets for ``engine``; ``None`` if it cannot here."""
        feed = cls(engine, folder)
        try:
            feed.watcher.start()
        except Exception as exc:  # no runtime folder, no inotify left: everything else still works
            log.warning("cannot follow the companion pi extension (%s); dialogs are not shown", exc)
            return None
        return feed

    def stop(self) -> None:
        self.watcher.stop()

    def _event(self, path: str, event: object) -> None:
        """On the socket's reader thread: to the engine thread."""
        if isinstance(event, (Hello, ExtensionDialog, Closed, Disconnected, Bye)):
            self.engine.call(lambda: self.apply(path, event))

    def apply(self, path: str, event: object) -> list[Transition]:
        """On the engine thread: change the board; the transitions (the engine hands them to
        every output)."""
        board, now = self.engine.board, self.wall()
        out: list[Transition] = []
        if isinstance(event, Bye):
            self._bye.add(path)
        if isinstance(event, Hello):
            file = event.session_file
            self._files[path] = _under(file, self.engine.options.roots) if file else None  # (as the board keys it)
            self._bye.discard(path)
            open_ids = {d.id for d in event.dialogs if d.waits}
            for src in board.dialogs.sources(path):
                if src[1] not in open_ids:  # closed while we were not connected: how, we cannot know
                    out += board.dialogs.close(src, "superseded", now)
            for d in event.dialogs:
                out += self._add(path, d, now, initial=d.at is not None and d.at < self.started)
        elif isinstance(event, ExtensionDialog):
            out += self._add(path, event, now, initial=False)
        elif isinstance(event, Closed):
            outcome: Outcome = event.outcome
            answer = clean(event.answer) if outcome == "answered" and event.answer is not None else None
            out += board.dialogs.close((path, event.id), outcome, now, answer)
        elif isinstance(event, Disconnected):  # pi quit (or reloaded: its new socket says hello)
            for src in board.dialogs.sources(path):
                out += board.dialogs.close(src, None, now)
            file = self._files.pop(path, None)
            if path not in self._bye and file:  # it died in the middle of its session
                board.local.pi_gone(file)
            self._bye.discard(path)
        return out

    def _add(self, path: str, d: ExtensionDialog, now: float, initial: bool) -> list[Transition]:
        asked = on_board(d, self.engine.options, now)
        if asked is None:
            return []
        held = self.engine.board.dialogs.sources(path)
        if len(held) >= MAX_DIALOGS and (path, d.id) not in held:
            say_once(path, "dialogs", "a pi has more than %d dialogs open; ignoring the rest", MAX_DIALOGS)
            return []
        return self.engine.board.dialogs.open((path, d.id), *asked, now, initial)


def on_board(d: ExtensionDialog, options: EngineOptions, now: float) -> tuple[SessionRef, Question] | None:
    """The session and the pending question a dialog is on the board (None: it is not there)."""
    ref = ref_of(d, options.roots)
    return None if ref is None or not counts(d, options.catalog) else (ref, question_of(d, now, options.catalog))


def with_open_dialogs(snapshot: Snapshot, options: EngineOptions, folder: str | None = None) -> Snapshot:
    """``snapshot`` (a one-shot scan: ``status``, ``answer``) with the dialogs pi shows right now."""
    now = time.time()
    found = [asked for _, d in all_open_dialogs(folder) if (asked := on_board(d, options, now)) is not None]
    return add_dialogs(snapshot, found) if found else snapshot


Callback = Callable[[str, "Event | Disconnected"], None]


class CompanionWatcher:
    """Finds companion extension sockets as they appear in the runtime folder (the app's one
    watchdog Observer, :func:`notifier.watch.watch_folder`, imported only here: ``status`` never
    loads watchdog), keeps one connection per pi, and hands every event to a callback:
    ``(socket_path, event)`` where event is a protocol event or :class:`Disconnected` (that pi quit
    or reloaded: forget its dialogs)."""

    def __init__(self, callback: Callback, folder: str | None = None) -> None:
        self.callback = callback
        self.folder = folder or paths.runtime_dir()
        self._lock = threading.Lock()
        self._channels: dict[str, Client | None] = {}  # None: connecting
        self._passed_over = False  # a socket was found while MAX_PEERS were followed: looked for once one ends
        self._watch: Watch | None = None
        self._stop = threading.Event()

    def start(self) -> None:
        paths.own_folder(self.folder, parents=True)  # (NotOurs: no watch in another user's folder)
        from notifier.watch import watch_folder  # (watchdog: only where sockets are followed)

        self._watch = watch_folder(self.folder, self._found)
        for path in list_sockets(self.folder):  # after the watch starts: nothing falls between
            self._found(path)

    def stop(self) -> None:
        self._stop.set()
        watch, self._watch = self._watch, None
        from notifier.watch import unschedule

        unschedule(watch)
        with self._lock:
            channels = [c for c in self._channels.values() if c is not None]
        for peer in channels:
            peer.close()

    def connected(self) -> list[str]:
        with self._lock:
            return sorted(p for p, c in self._channels.items() if c is not None)

    def _found(self, path: str) -> None:
        if self._stop.is_set() or not is_socket_name(os.path.basename(path)):
            return
        if owner_gone(path):  # (a socket left by a pi killed outright)
            log.debug("companion socket %s: its pi is gone", path)
            return
        with self._lock:
            if path in self._channels:
                return
            if len(self._channels) >= MAX_PEERS:  # (one thread each: bounded)
                say_once("companion", "peers", "more than %d companion sockets; ignoring the rest", MAX_PEERS)
                self._passed_over = True
                return
            self._channels[path] = None
        threading.Thread(target=self._serve, args=(path,), name="pi-notifier-companion", daemon=True).start()

    def _serve(self, path: str) -> None:
        """Follow one pi for as long as it runs: a connection that ends (or cannot be made) while
        its socket is there and its process runs is made again, after the one back-off (its hello
        brings the board in line); the pi is gone (:class:`Disconnected`, if it was followed)
        once its socket or its process is, or nobody listens there any more."""
        backoff = Backoff(RECONNECT_LEAST_S, RECONNECT_MOST_S, RECONNECT_HEALTHY_S)
        followed = False
        try:
            while not self._stop.is_set():
                backoff.began()
                try:
                    peer = connect(path)
                except (*NOBODY_LISTENS, NotOurs) as exc:
                    log.debug("companion socket %s: %s", path, exc)
                    return
                except OSError as exc:  # timed out, a full backlog: again while the pi runs
                    log.debug("companion socket %s: %s", path, exc)
                else:
                    followed = True
                    self._follow(path, peer)
                if owner_gone(path) or self._stop.wait(backoff.next()):
                    return
                log.debug("companion socket %s: connecting again", path)
        finally:
            with self._lock:
                self._channels.pop(path, None)
                look_again, self._passed_over = followed and self._passed_over, self._passed_over and not followed
            if followed and not self._stop.is_set():
                with contextlib.suppress(Exception):
                    self.callback(path, Disconnected(path))
            if look_again and not self._stop.is_set():  # (a place is free: a pi passed over is followed now)
                with contextlib.suppress(OSError):
                    for other in list_sockets(self.folder):
                        self._found(other)

    def _follow(self, path: str, peer: Client) -> None:
        """Hand on one connection's events until it ends (or the watcher stops)."""
        with peer:
            with self._lock:
                if self._stop.is_set():
                    return
                self._channels[path] = peer
            peer.deadline = None  # (as long as pi runs)
            events: Iterator[Event] = follow(peer, parse, self._stop, say_once, f"the pi at {path}")
            try:
                for event in events:
                    try:
                        self.callback(path, event)
                    except Exception:  # an output's bug must not end the connection
                        log.exception("companion event handler failed")
            except OSError as exc:
                log.debug("companion socket %s: %s", path, exc)
            finally:
                with self._lock:
                    if path in self._channels:
                        self._channels[path] = None
