"""One session's state from pi's events (pure): the per-session reducer, its summary for the
scan cache, and the replay of a file's last entries at start-up.

**The reducer**: events in, state and question changes out. The rules (docs/pi-sessions.md
§4–§5): a question tool start moves the session to ``needs_input`` with the call in ``calls`` (keyed by
toolCallId; ``pending`` is the first); its end removes that entry and returns to ``working``; other tool activity never
hides a pending question. A later user message, a new
assistant message, a compaction or a branch summary supersedes calls that never got a result.

One question waits at a time (docs/detection.md, "One question waits at a time"): every question call
without a result belongs to the same assistant message (a new one supersedes the others), and pi
shows one dialog at a time; so the first is ``pending`` (asked, listed, counted) and the others
are queued behind it, silently: each is asked when the ones before it have ended. A call the
tool refused at once (its result is written after the first question's) is never listed.


**The start-up replay** (:class:`Suffix`): a session file's last entries decide its state, so the
start-up read replays only those, not the whole file.

Why this is exact (:meth:`Suffix.add` says which events clear and which set the base, as
:meth:`SessionReducer.apply` does):

- ``pending``, ``running`` and ``current_tool`` are emptied by every *clearing* event (``Input``,
  ``Supersede``); only the entries from the last one on decide them.
- ``base`` is the value set by the last *base-setting* event (everything but ``Header``,
  ``Renamed`` and a ``Supersede`` without a state).

So once the last entries of a file hold a clearing event and a base-setting event, replaying
them oldest first through a fresh reducer gives the state of replaying the whole file.
``name`` and ``updated_at`` come from the entries read (the engine looks a name up further back
for sessions that ask something). tests/hostile/test_scan.py checks this against the reducer."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field, replace
from typing import Any, NamedTuple

from notifier.core.codec import encode
from notifier.core.model import Outcome, Question, State

# ---- the reducer ----

class Header(NamedTuple):
    session_id: str | None
    cwd: str | None


class Renamed(NamedTuple):
    name: str | None


class Input(NamedTuple):
    """A user message: the user is talking to the agent, so nothing earlier is still asked."""

    at: float


class Activity(NamedTuple):
    """Something that means a run is in progress (a system message, a custom message, a context edit)."""

    at: float


class Supersede(NamedTuple):
    """Entries after which no earlier unanswered call can still be waiting (new assistant message,
    compaction, branch summary, a user shell command)."""

    at: float
    state: State | None = None


class ToolStart(NamedTuple):
    at: float
    tool_call_id: str
    tool: str
    question: Question | None = None


class ToolEnd(NamedTuple):
    at: float
    tool_call_id: str
    tool: str
    # How the call ended (its outcome and answer), worked out only if the call was the question
    # asked; None: it ended without a word (answered).
    judge: Callable[[Question], tuple[Outcome, str | None]] | None = None


class TurnEnd(NamedTuple):
    at: float
    state: State


Event = Header | Renamed | Input | Activity | Supersede | ToolStart | ToolEnd | TurnEnd


class Asked(NamedTuple):
    question: Question


class Ended(NamedTuple):
    question: Question
    outcome: Outcome
    answer: str | None
    at: float


Change = Asked | Ended


@dataclass(slots=True)
class SessionReducer:
    """Mutable state of one session, owned by the engine thread. No I/O, no clock."""

    session_id: str | None = None
    cwd: str | None = None
    name: str | None = None
    base: State = "starting"
    calls: dict[str, Question] = field(default_factory=dict)  # question calls without a result, in order
    running: dict[str, str] = field(default_factory=dict)
    current_tool: str | None = None
    updated_at: float = 0.0
    has_header: bool = False

    @property
    def pending(self) -> dict[str, Question]:
        """The question waiting now: the first question call without a result (a new dict)."""
        for cid, q in self.calls.items():
            return {cid: q}
        return {}

    @property
    def state(self) -> State:
        return "needs_input" if self.calls else self.base

    def apply(self, event: Event) -> list[Change]:
        # (``type(event) is``: the event types are final, and this runs for every entry read)
        if isinstance(event, Header):
            if not self.has_header:  # only a file's first header counts
                self.session_id, self.cwd, self.has_header = event.session_id, event.cwd, True
            return []
        if isinstance(event, Renamed):
            self.name = event.name or None
            return []
        at = event.at
        if type(at) is float and at > self.updated_at:
            self.updated_at = at
        if type(event) is ToolStart:
            return self._tool_start(event)
        if type(event) is ToolEnd:
            return self._tool_end(event)
        if type(event) is TurnEnd:
            self.running.clear()
            self.current_tool = None
            self.base = event.state
            return []
        changes = self._supersede(at) if type(event) is not Activity and self._busy else []
        if type(event) is not Supersede:  # (a user message or other activity: a run is under way)
            self.base = "working"
        elif event.state is not None:
            self.base = event.state
        return changes

    @property
    def _busy(self) -> bool:
        """Whether a question, a tool or a queued call is in progress (what superseding ends)."""
        return bool(self.calls or self.running) or self.current_tool is not None

    def _tool_start(self, event: ToolStart) -> list[Change]:
        self.base = "working"
        if event.question is None:
            self.running[event.tool_call_id] = event.tool
            self.current_tool = event.tool
            return []
        if event.tool_call_id in self.calls:
            return []
        self.calls[event.tool_call_id] = event.question
        return [Asked(event.question)] if len(self.calls) == 1 else []  # (else queued behind the one asked)

    def _tool_end(self, event: ToolEnd) -> list[Change]:
        self.base = "working"
        changes: list[Change] = []
        first = next(iter(self.calls), None)
        question = self.calls.pop(event.tool_call_id, None)
        if question is not None and event.tool_call_id == first:
            outcome, answer = event.judge(question) if event.judge is not None else ("answered", None)
            changes.append(Ended(question, outcome, answer, event.at))
            changes += self._next(event.at)
        if self.running.pop(event.tool_call_id, None) is not None:
            self.current_tool = next(reversed(self.running.values()), None)
        return changes

    def drop(self, tool_call_id: str) -> None:
        """Stop holding a question as pending without an end (the user dismissed it, abandoned:
        its pi is gone and will never end it, nor the calls queued behind it)."""
        if next(iter(self.calls), None) == tool_call_id:
            self.calls.clear()
        else:
            self.calls.pop(tool_call_id, None)

    def _next(self, at: float) -> list[Change]:
        """The first ended: the next queued question is asked now (its dialog opens now)."""
        for cid, q in self.calls.items():
            self.calls[cid] = asked = replace(q, asked_at=max(q.asked_at, at))
            return [Asked(asked)]
        return []

    def _supersede(self, at: float) -> list[Change]:
        ended: list[Change] = [Ended(q, "superseded", None, at) for q in self.pending.values()]
        self.calls.clear()
        self.running.clear()
        self.current_tool = None
        return ended


# ---- its summary (for the scan cache) ----

def summarize(r: SessionReducer) -> dict[str, Any]:
    """Everything ``r``'s state needs to be rebuilt without reading its file again: plain JSON
    (pending questions by :func:`~notifier.core.codec.encode`; read back by notifier/sessions.py)."""
    return {
        "sid": r.session_id,
        "cwd": r.cwd,
        "name": r.name,
        "base": r.base,
        "pending": [encode(q) for q in r.calls.values()],
        "running": dict(r.running),
        "tool": r.current_tool,
        "at": r.updated_at,
        "header": r.has_header,
    }


# ---- the start-up replay ----

class Suffix:
    """The events of a file's last entries, fed newest entry first (:meth:`add`)."""

    def __init__(self) -> None:
        self._entries: list[list[Event]] = []  # newest first
        self.cleared = False
        self.based = False
        self.renamed = False  # a session_info was read: the name is known, none to look up

    def __len__(self) -> int:
        return len(self._entries)

    @property
    def settled(self) -> bool:
        """Older entries can no longer change the state a replay of these gives."""
        return self.cleared and self.based

    def add(self, events: list[Event]) -> None:
        """One entry's events (in file order), older than those added before."""
        if not events:
            return
        self._entries.append(events)
        # What SessionReducer.apply does, as the replay needs it: which events empty
        # ``pending``, ``running`` and ``current_tool`` (cleared), and which set ``base`` (based).
        # A new event type is added here and in ``apply`` together (tests/hostile/test_scan.py
        # replays files both ways).
        for event in events:
            kind = type(event)
            self.renamed = self.renamed or kind is Renamed
            self.cleared = self.cleared or kind is Input or kind is Supersede
            if type(event) is Supersede:
                self.based = self.based or event.state is not None
            else:
                self.based = self.based or (kind is not Header and kind is not Renamed)

    def events(self) -> list[Event]:
        """The events added, oldest first."""
        return [event for entry in reversed(self._entries) for event in entry]

    def replay(self, head: list[Event]) -> SessionReducer:
        """A reducer fed ``head`` (the header line's events), then the events added."""
        reducer = SessionReducer()
        for event in head + self.events():
            reducer.apply(event)
        return reducer
