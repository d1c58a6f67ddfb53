"""Immutable values shared by the pi adapter, the reducer, the board and every output, and the
messages between them: each a frozen dataclass (``Snapshot`` without slots: it caches what it
derives with ``cached_property``, which needs an instance dict). Pure.

**What the planner says**: raise or replace a notification (:class:`Notice`) about some
questions (:class:`Item`), or withdraw one (:class:`Withdraw`). The planner
(:mod:`notifier.core.planner`) decides them; the notifier shows them."""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from functools import cached_property
from itertools import chain
from typing import Literal, overload

from notifier.core.text import project_name, project_names

# ---- the values ----

State = Literal["starting", "working", "needs_input", "idle", "failed", "stopped"]
Outcome = Literal["answered", "cancelled", "aborted", "unavailable", "error", "superseded"]
TransitionKind = Literal["needs_input", "resolved", "abandoned"]
QuestionKind = Literal["question", "dialog"]  # a question tool's call, or an extension dialog (companion)
DialogKind = Literal["select", "confirm", "input", "editor", "custom"]

GENERIC_QUESTION = "Answer the pending question"



@dataclass(frozen=True, slots=True)
class Option:
    """One row a question's dialog draws: its label as shown ("" for a row that shows no text),
    and the value the tool returns for it, where the tool has one (pi-ask's ``value``)."""

    label: str
    description: str | None = None
    recommended: bool = False
    value: str | None = None


@dataclass(frozen=True, slots=True)
class QuestionItem:
    """One question of a (possibly multi-question) tool call; all strings already sanitized."""

    text: str
    header: str | None = None
    detail: str | None = None
    options: tuple[Option, ...] = ()
    multi: bool = False
    # What a form's dialog needs to be driven (pi-ask): the question's id, whether it may be
    # skipped, and (parent id, option value): shown only once the parent is answered so.
    key: str | None = None
    required: bool = True
    show_when: tuple[str, str] | None = None
    # The dialog's free-text row ("Type something.", "Other — add your own answer"), if it has one.
    other: bool = True


@dataclass(frozen=True, slots=True)
class Question:
    """A question waiting for the user: a question tool's call, or an extension's dialog
    (``kind``). ``text``/``header``/``options`` describe the first item."""

    tool_call_id: str
    tool: str
    items: tuple[QuestionItem, ...]
    asked_at: float
    title: str | None = None
    kind: QuestionKind = "question"
    dialog: DialogKind | None = None  # for kind "dialog": which ctx.ui dialog pi shows
    instructions: str | None = None  # a form's instructions, shown under its title (window only)

    @property
    def first(self) -> QuestionItem:
        return self.items[0] if self.items else QuestionItem(GENERIC_QUESTION)

    @property
    def text(self) -> str:
        return self.first.text

    @property
    def header(self) -> str | None:
        return self.first.header

    @property
    def options(self) -> tuple[str, ...]:
        return tuple(o.label for o in self.first.options)

    @property
    def count(self) -> int:
        return max(len(self.items), 1)

    @property
    def answerable(self) -> bool:
        """Whether an answer can be picked from here by the question's shape alone, whatever its
        tool: a tool's question (an extension's dialog is answered apart) whose every question has
        options (a form's in turn, a multi-select's ticked). The screen decides the rest."""
        return self.kind == "question" and all(it.options for it in self.items or (self.first,))

    @property
    def answerable_by_text(self) -> bool:
        """Whether a typed answer fits the question's shape: a tool's question asked alone, one
        pick, with a free-text row."""
        items = self.items or (self.first,)
        return self.kind == "question" and len(items) == 1 and not items[0].multi and items[0].other


@dataclass(frozen=True, slots=True)
class SessionRef:
    """Which session: its file (the key), pi's id, folder and name for it, and its host."""

    # The session file path, or ``remote_key(host, file)`` (``@host:file``) for a remote session:
    # session ids are not unique across files.
    key: str
    id: str | None
    cwd: str | None
    name: str | None
    # The remote (its configured name) this session runs on; None: this machine. A remote
    # session's key is ``remote_key(host, file)``, so it never collides with a local file.
    host: str | None = None

    @property
    def file(self) -> str:
        """The session file's path (on ``host`` for a remote session)."""
        return self.key if self.host is None else self.key[len(self.host) + 2 :]


def remote_key(host: str, file: str) -> str:
    """The board key of a remote session: no local absolute path starts with "@"."""
    return f"@{host}:{file}"


def split_key(key: str) -> tuple[str | None, str]:
    """A board key (as stored in history) → (host or None, the session file)."""
    if key.startswith("@") and ":" in key:
        host, _, file = key[1:].partition(":")
        return host, file
    return None, key


@dataclass(frozen=True, slots=True)
class Transition:
    """A question of a session was asked (``needs_input``), ``resolved`` or ``abandoned``."""

    kind: TransitionKind
    session: SessionRef
    question: Question
    at: float
    initial: bool = False
    outcome: Outcome | None = None
    answer: str | None = None
    waited_s: float | None = None


@dataclass(frozen=True, slots=True)
class TurnChange:
    """A live session finished its turn (``idle``: waiting for instructions) or failed."""

    session: SessionRef
    state: State
    at: float


@dataclass(frozen=True, slots=True)
class SessionView:
    """What the UI and ``status`` see of one session."""

    ref: SessionRef
    state: State
    pending: tuple[Question, ...]
    abandoned: tuple[Question, ...]
    alive: bool | None
    updated_at: float
    current_tool: str | None = None
    # A remote session whose link is down: since when (its questions are in ``offline``, listed
    # but neither pending nor counted in the badge).
    offline_since: float | None = None
    offline: tuple[Question, ...] = ()
    # Asking something: the pi last paired with the session, as (pid, start time), when that pi
    # is known to wait for a human (its TUI): its question is notified at once, without the
    # settle window (the board's judgement: the notifier takes it as it is). None: not known.
    asker: tuple[int, float] | None = None
    # Asking something: the pi (pid, start time) a process list read after it asked paired with it
    # in every reading, and that showed it has it (:attr:`notifier.core.owners.Wanted.owner`): exact.
    owner: tuple[int, float] | None = None


class Views(Sequence[SessionView]):
    """An immutable sequence of session views, held as chunks (tuples) that successive snapshots
    share: the board's next snapshot copies the chunk that changed, not thousands of views.
    It behaves as the tuple of its views (iteration, length, indexing, equality, hash)."""

    __slots__ = ("_chunks", "_len")

    def __init__(self, chunks: Sequence[tuple[SessionView, ...]] = (), length: int | None = None) -> None:
        """``length``: the number of views in ``chunks``, if known."""
        self._chunks = tuple(filter(None, chunks))
        self._len = sum(map(len, self._chunks)) if length is None else length

    def __len__(self) -> int:
        return self._len

    def __iter__(self) -> Iterator[SessionView]:
        return chain.from_iterable(self._chunks)

    @overload
    def __getitem__(self, index: int) -> SessionView: ...

    @overload
    def __getitem__(self, index: slice) -> tuple[SessionView, ...]: ...

    def __getitem__(self, index: int | slice) -> SessionView | tuple[SessionView, ...]:
        return tuple(self)[index]  # (no code indexes a snapshot's views: only tests, on a few)

    def __eq__(self, other: object) -> bool:
        if isinstance(other, (Views, tuple)):
            return len(self) == len(other) and tuple(self) == tuple(other)
        return NotImplemented

    def __hash__(self) -> int:
        return hash(tuple(self))

    def __repr__(self) -> str:
        return f"Views({tuple(self)!r})"


@dataclass(frozen=True)
class Snapshot:
    """The whole board at one moment, as the engine made it, handed read-only to every output (the
    tray and the window get it inside a ``notifier.outputs.tray.UiState``, with the user's choices)."""

    sessions: Sequence[SessionView] = ()  # a tuple, or the board's Views
    taken_at: float = 0.0

    @cached_property
    def pending(self) -> tuple[tuple[SessionView, Question], ...]:
        """Every non-abandoned pending question, newest first."""
        return _newest_first((s, q) for s in self.sessions for q in s.pending)

    @cached_property
    def abandoned(self) -> tuple[tuple[SessionView, Question], ...]:
        return _newest_first((s, q) for s in self.sessions for q in s.abandoned)

    @cached_property
    def pending_count(self) -> int:
        return sum(len(s.pending) for s in self.sessions)


def _newest_first(rows: Iterable[tuple[SessionView, Question]]) -> tuple[tuple[SessionView, Question], ...]:
    return tuple(sorted(rows, key=lambda sq: sq[1].asked_at, reverse=True))


# ---- what the planner says ----

QuestionKey = tuple[str, str]  # (session key, toolCallId): a question on the board
Kind = Literal["question", "reminder", "burst", "startup", "idle", "failed"]


def key_of(ref: SessionRef, question: Question) -> QuestionKey:
    return (ref.key, question.tool_call_id)


@dataclass(frozen=True)
class Item:
    key: QuestionKey
    ref: SessionRef
    question: Question
    asked: float | None = None  # when it was asked, on the planner's clock (None: question.asked_at)

    @property
    def since(self) -> float:
        return self.question.asked_at if self.asked is None else self.asked

    @property
    def project(self) -> str:
        return project_name(self.ref.name, self.ref.cwd, self.ref.host)

    @property
    def projects(self) -> tuple[str, str]:
        """The names its project is muted or snoozed by (:func:`~notifier.core.text.project_names`)."""
        return project_names(self.ref.name, self.ref.cwd, self.ref.host)


@dataclass(frozen=True)
class Notice:
    """Raise (or replace, when ``handle`` is already showing) one notification."""

    handle: int
    kind: Kind
    items: tuple[Item, ...]
    waited_s: float = 0.0
    critical: bool = False
    restored: bool = False  # put back on screen after a restart: notified before, not a new one
    # A change to a bubble on screen (a question of a summary ended): replaced in place, silently;
    # nothing pops up where none shows.
    update: bool = False

    @property
    def question_keys(self) -> list[QuestionKey]:
        return [item.key for item in self.items]


@dataclass(frozen=True)
class Withdraw:
    handle: int


Action = Notice | Withdraw
