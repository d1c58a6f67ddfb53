"""Notifications a run left on screen when it died (they stay until answered): the next run,
on the very same notification server, closes them once their question is over. Ids of another
server (another bus, or the server restarted: ids start again at 1) are never touched."""

from __future__ import annotations

import dataclasses
from pathlib import Path

from notifier.core.model import Item, Notice, Option, Question, QuestionItem, QuestionKey, SessionRef
from notifier.outputs.dbus import Backend
from notifier.outputs.desktop import Screen
from notifier.outputs.render import Message
from notifier.store import Store


class FakeServer(Backend):
    """A notification server as the screen sees it: ids from 1, what it closed."""

    name = "dbus"
    markup = False

    def __init__(self, server_key: str) -> None:
        self.server_key = server_key
        self.online = True
        self.next_id = 0
        self.closed: list[int] = []
        self.replaced: list[int] = []  # each Notify's replaces_id (0: a new bubble, a pop-up)
        self.messages: list[Message] = []

    def show(self, message: Message, replaces: int) -> int:
        self.replaced.append(replaces)
        self.messages.append(message)
        if replaces:
            return replaces
        self.next_id += 1
        return self.next_id

    def close(self, server_id: int) -> None:
        self.closed.append(server_id)

    def shutdown(self) -> None:
        pass


def _notice(handle: int, session: str, call: str) -> Notice:
    ref = SessionRef(f"/s/{session}.jsonl", session, f"/home/me/{session}", None)
    q = Question(call, "question", (QuestionItem("Go?", options=(Option("Yes"),)),), 1.0)
    return Notice(handle, "question", (Item((ref.key, call), ref, q),))


def _screen(server: FakeServer, store: Store) -> Screen:
    screen = Screen(lambda: (server, "fake"), lambda: 0.0, True, server, store)
    screen.start()
    return screen


A: QuestionKey = ("/s/a.jsonl", "q1")
B: QuestionKey = ("/s/b.jsonl", "q2")


def test_the_next_run_on_the_same_server_closes_what_is_over() -> None:
    store = Store(None)
    server = FakeServer("bus-1/:1.7")
    crashed = _screen(server, store)
    crashed.put(_notice(1, "a", "q1"))
    crashed.put(_notice(2, "b", "q2"))
    assert store.bubbles() == {("bus-1/:1.7", 1): {A}, ("bus-1/:1.7", 2): {B}}
    # (it dies here: nothing closed)
    after = _screen(server, store)
    assert after.bubbles.leftovers == {1: {A}, 2: {B}}
    after.close_leftovers({B})  # the first was answered meanwhile
    assert server.closed == [1] and after.bubbles.leftovers == {2: {B}}
    after.ended({B})
    assert server.closed == [1, 2] and after.bubbles.leftovers == {} and store.bubbles() == {}


def test_a_new_notification_for_the_same_question_replaces_the_left_one() -> None:
    store = Store(None)
    server = FakeServer("bus-1/:1.7")
    _screen(server, store).put(_notice(1, "a", "q1"))
    after = _screen(server, store)
    after.put(_notice(5, "a", "q1"))  # a reminder of the same question, from this run
    assert server.replaced == [0, 1] and server.closed == [] and after.bubbles.leftovers == {}
    assert store.bubbles() == {("bus-1/:1.7", 1): {A}}


def test_a_summary_after_a_crash_re_uses_a_left_bubble_and_closes_the_others() -> None:
    """Two bubbles left by a killed run; the next one puts both questions back as one summary:
    it replaces one of them (no pop-up) and closes the other, never raising a new one."""
    store = Store(None)
    server = FakeServer("bus-1/:1.7")
    crashed = _screen(server, store)
    crashed.put(_notice(1, "a", "q1"))
    crashed.put(_notice(2, "b", "q2"))
    after = _screen(server, store)
    a, b = _notice(0, "a", "q1").items[0], _notice(0, "b", "q2").items[0]
    after.put(Notice(1, "startup", (a, b), restored=True))
    assert server.replaced == [0, 0, 1] and server.closed == [2]
    assert store.bubbles() == {("bus-1/:1.7", 1): {A, B}} and after.bubbles.leftovers == {}
    after.put(_notice(2, "c", "q3"))  # a question of nobody's bubble: a new one
    assert server.replaced[-1] == 0


def test_a_left_summary_some_of_whose_questions_ended_is_redrawn_in_place_silently() -> None:
    """A summary of three left by a killed run; one is answered while nothing runs. The next run
    puts the two back as one summary: the bubble on screen still lists the answered one, so it is
    replaced in place with what waits now (heard before: not heard again), never kept as it reads."""
    store = Store(None)
    server = FakeServer("bus-1/:1.7")
    crashed = _screen(server, store)
    a, b, c = (_notice(0, s, call).items[0] for s, call in (("a", "q1"), ("b", "q2"), ("c", "q3")))
    crashed.put(Notice(1, "burst", (a, b, c)))
    after = _screen(server, store)
    after.close_leftovers({b.key, c.key})  # a was answered meanwhile
    assert server.closed == [] and after.bubbles.leftovers == {1: {b.key, c.key}}
    after.put(Notice(1, "startup", (b, c), restored=True))
    assert server.replaced == [0, 1] and server.closed == []
    assert "2 pi sessions" in server.messages[-1].title and server.messages[-1].silent
    assert store.bubbles() == {("bus-1/:1.7", 1): {b.key, c.key}}
    # one left that reads just so: drawn anew all the same, in place and silently (a server may
    # send a click only to the connection that showed the bubble: the buttons are ours then)
    after = _screen(server, store)
    after.close_leftovers({b.key, c.key})
    after.put(Notice(1, "startup", (b, c), restored=True))
    assert server.replaced == [0, 1, 1] and server.messages[-1].silent and server.closed == []


def test_a_restored_question_never_claims_a_bubble_that_shows_others_too() -> None:
    store = Store(None)
    server = FakeServer("bus-1/:1.7")
    a, b = _notice(0, "a", "q1").items[0], _notice(0, "b", "q2").items[0]
    _screen(server, store).put(Notice(1, "burst", (a, b)))
    after = _screen(server, store)
    after.close_leftovers({a.key, b.key})
    after.put(Notice(1, "question", (a,), restored=True))  # (a planner that puts them back one by one)
    assert server.replaced == [0, 1] and "2 pi sessions" not in server.messages[-1].title


def test_a_put_back_re_uses_one_left_bubble_and_closes_the_others_showing_its_questions() -> None:
    """A run killed as its put-back summary replaced one single, before it closed the other: the
    next run re-uses the summary and closes the single, never leaving a question on two bubbles."""
    store = Store(None)
    server = FakeServer("bus-1/:1.7")
    a, b = _notice(0, "a", "q1").items[0], _notice(0, "b", "q2").items[0]
    store.put_bubble(server.server_key, 2, [a.key, b.key])
    store.put_bubble(server.server_key, 3, [b.key])
    after = _screen(server, store)
    after.close_leftovers({a.key, b.key})
    after.put(Notice(1, "startup", (a, b), restored=True))
    assert server.replaced == [2] and server.closed == [3]
    assert store.bubbles() == {("bus-1/:1.7", 2): {a.key, b.key}} and after.bubbles.leftovers == {}


def test_a_bubble_the_user_dismissed_stays_dismissed_across_a_restart() -> None:
    """Dismissed (NotificationClosed by the user), then the app is killed: the next run does not
    put it back on screen (its next reminder raises it); a question not dismissed is put back.
    Once a question ends, nothing of it is kept."""
    store = Store(None)
    server = FakeServer("bus-1/:1.7")
    crashed = _screen(server, store)
    first, second = _notice(1, "a", "q1"), _notice(2, "b", "q2")
    crashed.put(first)
    crashed.put(second)
    crashed.closed(1)  # the user dismissed the first
    assert store.bubbles() == {("bus-1/:1.7", 2): {B}, ("bus-1/:1.7", -2): {A}}
    after = _screen(server, store)
    after.close_leftovers({A, B})
    after.put(dataclasses.replace(first, restored=True))
    after.put(dataclasses.replace(second, restored=True))
    assert server.replaced == [0, 0, 2] and server.closed == []  # (only the second, in place)
    after.put(dataclasses.replace(first, kind="reminder"))  # its reminder: raised, heard
    assert server.replaced[-1] == 0 and not server.messages[-1].silent and after.bubbles.dismissed == set()
    after.closed(3)
    after.ended({A})
    assert after.bubbles.dismissed == set() and ("bus-1/:1.7", -2) not in store.bubbles()


def test_ids_of_another_server_are_forgotten_never_closed() -> None:
    store = Store(None)
    _screen(FakeServer("bus-1/:1.7"), store).put(_notice(1, "a", "q1"))
    other = FakeServer("bus-2/:1.7")  # the same unique name on a new bus: another server
    after = _screen(other, store)
    assert after.bubbles.leftovers == {} and store.bubbles() == {}
    after.close_leftovers(set())
    assert other.closed == []


def test_a_normal_stop_closes_its_own_and_hands_on_what_is_still_asked() -> None:
    store = Store(None)
    server = FakeServer("bus-1/:1.7")
    _screen(server, store).put(_notice(1, "a", "q1"))
    second = _screen(server, store)
    second.put(_notice(7, "b", "q2"))
    second.stop()  # closes its own; the one left by the first run is still asked: kept
    assert server.closed == [2] and store.bubbles() == {("bus-1/:1.7", 1): {A}}
    third = _screen(server, store)
    assert third.bubbles.leftovers == {1: {A}}


def test_a_remote_question_left_on_screen_waits_for_its_end() -> None:
    """At start-up a remote host's questions are not known yet (its link connects later): its
    notification is not closed then, only when its question ends."""
    store = Store(None)
    server = FakeServer("bus-1/:1.7")
    remote: QuestionKey = ("@devbox:/s/r.jsonl", "q9")
    first = _screen(server, store)
    ref = SessionRef(remote[0], "r", "/home/me/r", None, "devbox")
    q = Question("q9", "question", (QuestionItem("Go?", options=(Option("Yes"),)),), 1.0)
    first.put(Notice(3, "question", (Item(remote, ref, q),)))
    after = _screen(server, store)
    after.close_leftovers(set())
    assert server.closed == [] and after.bubbles.leftovers == {1: {remote}}
    after.ended({remote})
    assert server.closed == [1]


def test_a_replacement_is_recorded_before_the_server_is_called() -> None:
    """What a bubble whose id is known will show is in the store before the Notify that changes
    it: a crash in the middle of the call leaves a record that names every question on it."""
    store = Store(None)
    server = FakeServer("bus-1/:1.7")
    seen: list[dict[tuple[str, int], set[QuestionKey]]] = []
    show = server.show

    def recording(message: Message, replaces: int) -> int:
        seen.append(store.bubbles())
        return show(message, replaces)

    server.show = recording  # type: ignore[method-assign]
    _screen(server, store).put(_notice(1, "a", "q1"))
    after = _screen(server, store)
    a, b = _notice(0, "a", "q1").items[0], _notice(0, "b", "q2").items[0]
    after.put(Notice(4, "startup", (a, b)))  # re-uses bubble 1 for both
    assert seen[-1] == {("bus-1/:1.7", 1): {A, B}}


class WatchedServer(FakeServer):
    """A server that, at each Notify, reads what the store's file says is on screen (what a run
    killed at that moment would leave to the next)."""

    def __init__(self, server_key: str, path: str) -> None:
        super().__init__(server_key)
        self.path = path
        self.seen_at_call: list[set[tuple[int, str]]] = []

    def show(self, message: Message, replaces: int) -> int:
        import sqlite3

        con = sqlite3.connect(self.path)
        try:
            self.seen_at_call.append({(n, c) for n, c in con.execute("SELECT id, call_id FROM bubbles")})
        finally:
            con.close()
        return super().show(message, replaces)


def test_what_may_be_on_screen_is_in_the_file_before_the_call_and_its_id_right_after(tmp_path: Path) -> None:
    """In the file (not queued for the writer thread): the intent before a new bubble's Notify,
    the bubble replaced before a re-use, and the id the server gave the moment the call returns;
    a next run takes an intent whose id never came for no bubble of its own to close."""
    import sqlite3

    from notifier.outputs.desktop import INTENT

    path = str(tmp_path / "state.sqlite3")
    store = Store(path)
    server = WatchedServer("bus-1/:1.7", path)
    screen = _screen(server, store)
    screen.put(_notice(1, "a", "q1"))
    assert server.seen_at_call == [{(INTENT, "q1")}]  # before the call: the intent
    con = sqlite3.connect(path)
    assert con.execute("SELECT id, call_id FROM bubbles").fetchall() == [(1, "q1")]  # right after
    screen.put(_notice(1, "a", "q1"))  # (shown again: replaces its own bubble)
    assert server.seen_at_call[-1] == {(1, "q1")} and server.replaced == [0, 1]
    con.execute("INSERT INTO bubbles VALUES (?, ?, ?, ?)", ("bus-1/:1.7", INTENT, "/s/b.jsonl", "q2"))
    con.commit()
    con.close()
    store.close()
    again = Store(path)
    nxt = _screen(FakeServer("bus-1/:1.7"), again)
    assert set(nxt.bubbles.leftovers) == {1}  # (the intent is no bubble to close)
    assert ("bus-1/:1.7", INTENT) not in again.bubbles()
    again.close()


def test_a_question_put_back_where_no_bubble_is_left_is_not_heard() -> None:
    """The app quit (closing its bubbles), then a run takes notifying over or the app starts
    again: a question it notified and still waiting is put back on screen as a new bubble (none
    is left to replace), and that put-back is not heard: it was announced once already."""
    store = Store(None)
    server = FakeServer("bus-1/:1.7")
    first = _screen(server, store)
    notice = _notice(1, "a", "q1")
    first.put(notice)
    first.stop()
    assert server.closed == [1] and not server.messages[0].silent
    after = _screen(server, store)
    after.close_leftovers({A})
    after.put(dataclasses.replace(notice, restored=True))
    assert server.replaced[-1] == 0 and server.messages[-1].silent


def test_a_left_bubble_the_server_refuses_to_redraw_is_still_closed_with_its_question() -> None:
    """Plasma refuses a notification too like the one before it, too soon after it ("too many
    similar notifications"): a restart's redraw of the bubble a killed run left. That bubble still
    shows the question: it is this run's, and closed once the question is over, never left behind."""
    from notifier.outputs.dbus import BackendError

    class Refusing(FakeServer):
        def show(self, message: Message, replaces: int) -> int:
            if replaces:
                raise BackendError("ExcessNotificationGeneration: Created too many similar notifications")
            return super().show(message, replaces)

    store = Store(None)
    server = Refusing("bus-1/:1.7")
    _screen(server, store).put(_notice(1, "a", "q1"))  # (then killed)
    after = _screen(server, store)
    after.put(dataclasses.replace(_notice(1, "a", "q1"), restored=True))
    assert store.bubbles() == {("bus-1/:1.7", 1): {A}}  # (recorded before the call, and kept)
    after.withdraw(1)  # (the question is over: its notice withdrawn)
    after.ended({A})
    assert server.closed == [1] and store.bubbles() == {}


def test_a_left_bubble_whose_redraw_met_the_bus_going_is_not_sent_to_the_next_server() -> None:
    """The session bus went away during the redraw of a bubble a killed run left: that bubble went
    with its server, and its id is not one of the next server's (ids start again at 1)."""
    from notifier.outputs.dbus import ServerGone

    class BusDies(FakeServer):
        def show(self, message: Message, replaces: int) -> int:
            if replaces:
                self.online = False
                raise ServerGone("bus", "the session bus closed")
            return super().show(message, replaces)

    class NewBus(FakeServer):
        @property
        def connected(self) -> bool:
            return True

    store = Store(None)
    old = BusDies("bus-1/:1.7")
    _screen(old, store).put(_notice(1, "a", "q1"))  # (then killed)
    new = NewBus("bus-2/:1.3")
    after = Screen(lambda: (new, "fake"), lambda: 0.0, True, old, store)
    after.start()
    after.put(dataclasses.replace(_notice(1, "a", "q1"), restored=True))  # (the bus goes)
    after.put(_notice(2, "b", "q2"))
    after.reconnect(0.0)
    assert new.replaced == [0, 0]  # (both drawn anew there: no id of the old server's)
    after.withdraw(2)
    assert new.closed == [2]
