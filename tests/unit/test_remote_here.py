"""A remote session as seen on this machine: never "in front of you" here. (Resumed and reached
through ssh, every name quoted for both shells: tests/processes/test_remote_here.py.)"""

from __future__ import annotations

import functools
from typing import Any

from notifier.core.model import Item, Question, QuestionItem, SessionRef, remote_key
from notifier.system import focus
from notifier.system.locate import Location
from notifier.system.window_manager import X11, Backend, Method, Window

Q = Question("c1", "question", (QuestionItem("Deploy?"),), 100.0)
LOCAL = SessionRef("/home/dev/.pi/s.jsonl", "abc", "/home/dev/webshop", None)
REMOTE = SessionRef(remote_key("devbox", "/home/dev/.pi/s.jsonl"), "abc", "/home/dev/webshop", None, "devbox")


def InFront(now: list[tuple[int, int]]) -> Method:  # noqa: N802 (a stand-in focus method)
    """The focus method, asked afresh: window ``now[0]`` is in front (pid 1's window is 7, pid 2's 8);
    no display is opened."""
    backend = Backend(
        "x11", "stand-in", "{}", "{}", windows=lambda _: {1: 7, 2: 8}, focused=lambda _: now[0], ask=X11.ask
    )
    return Method(backend)


def found_in_window_7(wanted: Any) -> dict[str, Location]:
    """Every session is found, its pi (pid 1) in window 7 (as the focus method knows it)."""
    return {w.key: Location(pid=1, tty=None, window_id=7, window=Window("x11", 7)) for w in wanted}


def test_a_remote_question_is_never_focused_here() -> None:
    """A local pi in the same folder path, in the active terminal, says nothing about a remote
    session: its notification is never skipped as "already looked at"."""
    asked: list[list[str]] = []

    def locate(wanted: Any) -> dict[str, Location]:
        asked.append([w.key for w in wanted])
        return found_in_window_7(wanted)

    focused = functools.partial(
        focus.items_focused,
        front=lambda: focus.UNKNOWN,  # (no watcher: ask)
        method=lambda: InFront([(7, 1)]),  # the pi's window is in front
        locate=locate,
    )
    local, remote = Item((LOCAL.key, "c1"), LOCAL, Q), Item((REMOTE.key, "c1"), REMOTE, Q)
    assert focused([local])  # the stand-ins do say "focused" for a local one
    assert not focused([remote])
    assert not focused([local, remote])
    assert asked == [[LOCAL.key]]  # a remote session is not even looked for here


def test_a_skip_is_decided_on_what_is_focused_now() -> None:
    """The focus watcher last heard that the pi's terminal (window 7) is in front; the user has
    just moved to window 8 and that event is still on its way: the notification is not skipped.
    (The CI race of tests/desktop/test_desktops_focus.py, made certain.)"""
    now = [(8, 2)]
    focused = functools.partial(
        focus.items_focused,
        front=lambda: (7, 1),  # what the watcher last heard
        method=lambda: InFront(now),
        shows=lambda pid, folders: True,
        locate=found_in_window_7,
    )
    local = Item((LOCAL.key, "c1"), LOCAL, Q)
    assert not focused([local])
    now[0] = (7, 1)  # the pi's terminal really is in front: skipped
    assert focused([local])
    # a focused window that can show none of these sessions is not asked about any further
    assert not focus.items_focused(
        [local], front=lambda: (7, 1), method=lambda: InFront(now), shows=lambda pid, folders: False,
        locate=found_in_window_7,
    )
