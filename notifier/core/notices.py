"""What the planner says (pure values): raise or replace a notification (:class:`Notice`) about
some questions (:class:`Item`), or withdraw one (:class:`Withdraw`). The planner
(:mod:`notifier.core.planner`) decides them; the notification sink shows them.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from notifier.core.model import Question, SessionRef
from notifier.core.text import project_name

Key = tuple[str, str]  # (session file, toolCallId)
Kind = Literal["question", "reminder", "burst", "startup", "idle", "failed"]


def key_of(ref: SessionRef, question: Question) -> Key:
    return (ref.key, question.tool_call_id)


@dataclass(frozen=True)
class Item:
    key: Key
    ref: SessionRef
    question: Question
    asked: float | None = None  # when it was asked, on the planner's clock (None: question.asked_at)

    @property
    def since(self) -> float:
        return self.question.asked_at if self.asked is None else self.asked

    @property
    def project(self) -> str:
        return project_name(self.ref.name, self.ref.cwd, self.ref.host)


@dataclass(frozen=True)
class Notice:
    """Raise (or replace, when ``handle`` is already showing) one notification."""

    handle: int
    kind: Kind
    items: tuple[Item, ...]
    waited_s: float = 0.0
    critical: bool = False
    restored: bool = False  # put back on screen after a restart: notified before, not a new one


@dataclass(frozen=True)
class Withdraw:
    handle: int


Action = Notice | Withdraw
