"""A remote session as seen on this machine: never "in front of you" here. (Resumed and reached
through ssh, every name quoted for both shells: tests/processes/test_remote_here.py.)"""

from __future__ import annotations

from typing import Any

import pytest

from notifier.core.model import Question, QuestionItem, SessionRef, SessionView, remote_key
from notifier.core.notices import Item
from notifier.system import focus
from notifier.system.locate import Location

Q = Question("c1", "question", (QuestionItem("Deploy?"),), 100.0)
LOCAL = SessionRef("/home/dev/.pi/s.jsonl", "abc", "/home/dev/webshop", None)
REMOTE = SessionRef(remote_key("devbox", "/home/dev/.pi/s.jsonl"), "abc", "/home/dev/webshop", None, "devbox")


def test_a_remote_question_is_never_focused_here(monkeypatch: pytest.MonkeyPatch) -> None:
    """A local pi in the same folder path, in the active terminal, says nothing about a remote
    session: its notification is never skipped as "already looked at"."""
    asked: list[list[str]] = []

    def locate(wanted: Any) -> dict[str, Location]:  # every session found, in the active window
        keys = [w.ref.key if isinstance(w, SessionView) else w.key for w in wanted]
        asked.append(keys)
        return {key: Location(pid=1, tty=None, window_id=7) for key in keys}

    monkeypatch.setattr(focus, "locate_sessions", locate)
    monkeypatch.setattr(focus, "is_focused", lambda location, *front: location is not None)
    monkeypatch.setattr(focus, "current_front", lambda: focus.UNKNOWN)  # (no watcher: ask)
    local, remote = Item((LOCAL.key, "c1"), LOCAL, Q), Item((REMOTE.key, "c1"), REMOTE, Q)
    assert focus.items_focused([local])  # the stand-ins do say "focused" for a local one
    assert not focus.items_focused([remote])
    assert not focus.items_focused([local, remote])
    assert asked == [[LOCAL.key]]  # a remote session is not even looked for here


def test_a_skip_is_decided_on_what_is_focused_now(monkeypatch: pytest.MonkeyPatch) -> None:
    """The focus watcher last heard that the pi's terminal (window 7) is in front; the user has
    just moved to window 8 and that event is still on its way: the notification is not skipped.
    (The CI race of tests/desktop/test_desktops_focus.py, made certain.)"""
    now = [(8, 2)]

    class Method:  # the focus method, asked afresh
        name = "stand-in"

        def focused(self) -> tuple[int, int]:
            return now[0]

        def windows(self) -> dict[int, int]:
            return {1: 7, 2: 8}  # pid → window

    monkeypatch.setattr(focus, "current_front", lambda: (7, 1))  # what the watcher last heard
    monkeypatch.setattr(focus, "may_show", lambda pid, folders: True)
    monkeypatch.setattr(focus, "focus_method", Method)
    monkeypatch.setattr(focus, "window_for", lambda pids, windows: windows.get(pids[0]))
    monkeypatch.setattr(
        focus, "locate_sessions", lambda wanted: {w.key: Location(pid=1, tty=None, window_id=7) for w in wanted}
    )
    local = Item((LOCAL.key, "c1"), LOCAL, Q)
    assert not focus.items_focused([local])
    now[0] = (7, 1)  # the pi's terminal really is in front: skipped
    assert focus.items_focused([local])
