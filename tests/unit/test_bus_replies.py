"""Replies matched to calls by serial (notifier.outputs.dbus.Replies): whatever a server sends —
a reply twice, a reply to a serial never used, a reply after its call gave up — each waiting call
gets the first reply to its own serial and nothing else, and nothing else breaks."""

from __future__ import annotations

import queue
import threading

import pytest
from hypothesis import given
from hypothesis import strategies as st

from notifier.outputs.dbus import BusError, Replies

# what happens, in order: a call starts waiting, a reply comes, a call gives up
events = st.lists(
    st.one_of(
        st.tuples(st.just("call"), st.integers(1, 8)),
        st.tuples(st.just("reply"), st.integers(0, 12)),
        st.tuples(st.just("give up"), st.integers(1, 8)),
    ),
    max_size=60,
)


@given(events)
def test_each_call_gets_the_first_reply_to_its_serial_and_nothing_else(script: list[tuple[str, int]]) -> None:
    replies = Replies()
    calls: list[tuple[queue.SimpleQueue[object], list[object]]] = []  # each call: its slot, what it must get
    waiting: dict[int, list[object]] = {}  # serial → what its waiting call must get
    dropped = 0
    for n, (what, serial) in enumerate(script):
        if what == "call" and serial not in waiting:
            waiting[serial] = []
            calls.append((replies.expect(serial), waiting[serial]))
        elif what == "reply":
            message = ("reply", serial, n)
            delivered = replies.deliver(serial, message)
            assert delivered == (serial in waiting)
            if serial in waiting:
                waiting.pop(serial).append(message)
            else:
                dropped += 1
        elif what == "give up" and serial in waiting:
            replies.forget(serial)
            del waiting[serial]
    assert replies.dropped == dropped
    for slot, expected in calls:
        received = []
        while not slot.empty():
            received.append(slot.get_nowait())
        assert received == expected and len(received) <= 1


def test_closing_wakes_every_waiting_call_and_refuses_new_ones() -> None:
    replies = Replies()
    slots = [replies.expect(s) for s in (1, 2, 3)]
    assert replies.deliver(2, "answer")
    results: list[object] = []

    def wait(slot: queue.SimpleQueue[object]) -> None:
        results.append(slot.get(timeout=5))

    threads = [threading.Thread(target=wait, args=(s,)) for s in (slots[0], slots[2])]
    for t in threads:
        t.start()
    replies.close()
    for t in threads:
        t.join(5)
    assert results == [None, None] and slots[1].get_nowait() == "answer"
    assert not replies.deliver(1, "too late")
    with pytest.raises(BusError):
        replies.expect(4)
