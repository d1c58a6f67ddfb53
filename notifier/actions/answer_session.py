"""What both ways of answering share: the session file as the judge of whether a question still waits, and
of how it ended.

Nothing is sent unless, just before, the session file still has the tool call unanswered; afterwards the answer
is confirmed from the same file (with a deadline).
"""

from __future__ import annotations

import json
import os
import time
from dataclasses import dataclass
from typing import Any

from notifier.actions.goto import Refused
from notifier.core import codec as jsonbound
from notifier.core.model import Question, Transition
from notifier.core.text import clean
from notifier.pi.outcomes import result_text
from notifier.sessions import EngineOptions, FollowedFile
from notifier.tail import open_regular

STEP_TIMEOUT_S = 5.0
RESULT_TIMEOUT_S = 15.0
# The dialog variant a tool's own dialog most likely is (used to check the usage before looking).
GUESS = {"question": "question", "questionnaire": "questionnaire", "ask_user_question": "pi-ask"}


@dataclass(frozen=True)
class Answered:
    question: Question
    outcome: str | None
    answer: str | None
    note: str | None = None  # something the user should check although this answer was recorded


class SessionFile:
    """One session file read like the engine reads it, then followed as it grows: which
    questions were asked (``later``) and which ended (``resolved``) since the first look."""

    def __init__(self, options: EngineOptions, path: str) -> None:
        self.path = path
        self.file = FollowedFile(path, options.catalog)
        self.resolved: dict[str, Transition] = {}
        self.later: dict[str, Question] = {}  # questions asked after the first look
        self._known: set[str] | None = None  # the questions of the first look
        self._tool: str | None = None  # the other tool running at the first look, if any
        self.started: str | None = None  # another tool started after the first look

    def pending(self, call_id: str) -> bool:
        """Whether the file, with what it gained since the last look, still has ``call_id``
        unanswered (how each question it resolved ended is kept in ``resolved``)."""
        changes = self.file.read()
        first = self._known is None
        if first:
            self._known = {t.question.tool_call_id for t in changes}
        for t in changes:
            if t.kind == "resolved" and not first:
                self.resolved[t.question.tool_call_id] = t
            elif t.kind == "needs_input" and t.question.tool_call_id not in (self._known or ()):
                self.later[t.question.tool_call_id] = t.question
        view = self.file.view()
        tool = view.current_tool if view is not None else None
        if first:
            self._tool = tool
        elif tool is not None and tool != self._tool:
            self.started = tool
        return view is not None and any(q.tool_call_id == call_id for q in view.pending)

    def waits_alone(self, call_id: str) -> str | None:
        """Why a key may not be typed for ``call_id`` now (``None``: it may): the file must
        still have it unanswered, and no question asked after it (pi has not moved on)."""
        if not self.pending(call_id):
            return "pi has recorded an end of this question"
        if self.later:
            asked = next(iter(self.later.values()))
            return f"pi has asked another question since ({clean(asked.text, 60)!r})"
        if self.started is not None:
            return f"pi has started another tool call since ({clean(self.started, 40)})"
        return None

    def others_ended(self, call_id: str) -> list[Transition]:
        """The questions other than ``call_id`` that ended since the first look."""
        self.pending(call_id)
        return [t for c, t in self.resolved.items() if c != call_id]


def wait_until(predicate: object, timeout: float) -> bool:
    deadline = time.monotonic() + timeout
    delay = 0.01
    while True:
        if predicate():  # type: ignore[operator]
            return True
        if time.monotonic() > deadline:
            return False
        time.sleep(delay)
        delay = min(delay * 2, 0.1)


def recorded(session: SessionFile, question: Question, result_timeout: float) -> Answered:
    """Wait for the session file to record the answer; how it ended (Refused past the deadline)."""
    if not wait_until(lambda: not session.pending(question.tool_call_id), result_timeout):
        raise Refused(f"keys were sent but the session file recorded no answer within {result_timeout:g}s")
    done = session.resolved.get(question.tool_call_id)
    return Answered(question, done.outcome if done else None, done.answer if done else None)


TAIL_BYTES = 8 << 20  # the toolResult is among the last lines; past 8 MB of later lines it is not looked for


def tool_result(path: str, call_id: str) -> tuple[str, Any] | None:
    """The text and ``details`` of the toolResult pi wrote for ``call_id`` (``None``: none found).
    The file is read as every session file is: a regular file only, opened without blocking, each
    line through the one bounded parse."""
    needle = json.dumps(call_id).encode()
    try:
        fd, st = open_regular(path)
    except OSError:
        return None
    try:
        data = os.pread(fd, min(st.st_size, TAIL_BYTES), max(0, st.st_size - TAIL_BYTES))
    except OSError:
        return None
    finally:
        os.close(fd)
    for line in reversed(data.split(b"\n")):
        if needle not in line or b'"toolResult"' not in line:
            continue
        try:
            entry = jsonbound.loads(line)
        except ValueError:  # (BoundedJSONError, and bytes that are not UTF-8)
            continue
        message = entry.get("message") if isinstance(entry, dict) else None
        if isinstance(message, dict) and message.get("role") == "toolResult" and message.get("toolCallId") == call_id:
            return result_text(message.get("content")), message.get("details")
    return None
