from __future__ import annotations

import time
from pathlib import Path

import pytest

from notifier.core.planner import Silences
from notifier.store import Store


def test_snoozes_round_trip_by_scope() -> None:
    store = Store(None)  # in memory
    store.snooze(100.0)
    store.snooze(200.0, session="/s/a.jsonl")
    store.snooze(300.0, project="shop")
    store.snooze(5.0, project="old")
    assert store.silences(50.0) == Silences(100.0, sessions={"/s/a.jsonl": 200.0}, projects={"shop": 300.0})
    store.clear_snoozes()
    assert store.silences(0.0) == Silences()


def test_the_standalone_window_snoozes_projects_too(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """`pi-notifier show` without a running app stores what its buttons ask for."""
    from notifier import app as choices
    from notifier import app as local
    from notifier.config import Config
    from notifier.core.commands import Mute, Snooze

    monkeypatch.setattr(choices, "open_store", lambda *_: Store(str(tmp_path / "state.sqlite3")))
    source = local.LocalSource(Config())
    source.engine = object()  # type: ignore[assignment]  # deliberately not an Engine: commands only need it to exist
    now = time.time()
    source.command(Snooze(now + 3600, project="shop"))
    source.command(Snooze(now + 900, session="/s/a.jsonl"))
    source.command(Mute("hushed"))
    check = Store(str(tmp_path / "state.sqlite3"))
    assert check.silences(now) == Silences(
        sessions={"/s/a.jsonl": now + 900}, projects={"shop": now + 3600}, muted=frozenset({"hushed"})
    )


def test_silences_have_one_keeper_that_persists_and_hands_them_out(tmp_path: Path) -> None:
    from notifier.app import SilencesKeeper
    from notifier.core.commands import Mute, Snooze

    store = Store(str(tmp_path / "state.sqlite3"))
    keeper = SilencesKeeper(store, 1000.0)
    seen: list[Silences] = []
    keeper.listen(seen.append)
    assert seen == [Silences()]  # the current value at once
    keeper.apply(Snooze(5000.0), 1000.0)
    keeper.apply(Snooze(2000.0, project="shop"), 1000.0)
    keeper.apply(Mute("hushed"), 1000.0)
    assert seen[-1] == keeper.value == Silences(5000.0, projects={"shop": 2000.0}, muted=frozenset({"hushed"}))
    assert len(seen) == 4
    assert store.flush()  # (written by the store's own thread: no caller waits for the file)
    # restored at start: a new keeper on the same store has the same choices (minus ended snoozes)
    assert SilencesKeeper(Store(str(tmp_path / "state.sqlite3")), 1000.0).value == keeper.value
    assert SilencesKeeper(store, 3000.0).value == Silences(5000.0, muted=frozenset({"hushed"}))
    keeper.apply(Snooze(0.0), 1500.0)  # resume: every snooze lifted, mutes stay
    assert keeper.value == Silences(muted=frozenset({"hushed"}))
    assert store.silences(0.0) == Silences(muted=frozenset({"hushed"}))
    keeper.apply(Mute("hushed", on=False), 1500.0)
    assert SilencesKeeper(store, 1500.0).value == Silences()


def test_a_choice_saved_by_another_process_reaches_the_keepers_listeners_once(tmp_path: Path) -> None:
    """A headless run serves no control channel: the command line saves in the store, and the
    run's keeper, told the store was written, re-reads it and hands a change on (once; a write
    that changed no choice, or a snooze that merely ran out, hands nothing)."""
    from notifier.app import SilencesKeeper
    from notifier.core.commands import Mute, Snooze

    path = str(tmp_path / "state.sqlite3")
    store = Store(path)
    keeper = SilencesKeeper(store, 1000.0)
    seen: list[Silences] = []
    keeper.listen(seen.append)  # (handed the current value first)
    keeper.apply(Snooze(1100.0, session="/s/a"), 1000.0)  # (its own: ends at 1100)
    assert store.flush()

    def elsewhere(command: Snooze | Mute) -> None:  # the CLI without an app: its own store, closed
        other = Store(path)
        SilencesKeeper(other, 1000.0).apply(command, 1000.0)
        other.close()

    elsewhere(Snooze(5000.0, project="shop"))
    assert keeper.reload(1000.0) == Silences(sessions={"/s/a": 1100.0}, projects={"shop": 5000.0})
    assert seen[-1] == keeper.value and len(seen) == 1 + 2
    assert keeper.reload(1000.0) == keeper.value and len(seen) == 1 + 2  # (nothing new: nothing handed on)
    assert keeper.reload(1200.0) == keeper.value and len(seen) == 1 + 2  # (its snooze ran out: the planner knows)
    elsewhere(Mute("hushed"))
    elsewhere(Snooze(0.0))  # snooze off: every snooze lifted
    assert keeper.reload(1000.0) == seen[-1] == Silences(muted=frozenset({"hushed"})) and len(seen) == 1 + 3
    keeper.apply(Mute("loud"), 1000.0)  # (its own change, then re-read: the same)
    assert store.flush() and keeper.reload(1000.0) == Silences(muted=frozenset({"hushed", "loud"}))
    assert len(seen) == 1 + 4


def test_a_choice_not_yet_written_is_not_undone_by_a_re_read(tmp_path: Path) -> None:
    """While this run's changes wait for the file (another process holds its lock), the copy is
    what counts: a re-read leaves it; once written, the file holds them."""
    import sqlite3

    path = str(tmp_path / "state.sqlite3")
    store = Store(path)
    holder = sqlite3.connect(path, isolation_level=None)
    holder.execute("BEGIN IMMEDIATE")  # (another process writing)
    try:
        store.mute("hushed", True)
        assert store.unwritten
        assert not store.reread(("mutes",))
        assert store.silences(0.0, reread=True).muted == {"hushed"}
    finally:
        holder.execute("ROLLBACK")
        holder.close()
    assert store.flush()
    assert store.reread(("mutes",)) and store.silences(0.0).muted == {"hushed"}
    store.close()


def test_reminder_counts_survive_and_old_stores_are_migrated(tmp_path: Path) -> None:
    import sqlite3

    path = tmp_path / "state.sqlite3"
    old = sqlite3.connect(path)  # a store from before reminders were remembered
    old.execute(
        "CREATE TABLE notified (file TEXT NOT NULL, call_id TEXT NOT NULL, at REAL NOT NULL,"
        " PRIMARY KEY (file, call_id))"
    )
    old.execute("INSERT INTO notified VALUES ('/s/a.jsonl', 'c1', 1.0)")
    old.commit()
    old.close()
    store = Store(str(path))
    assert store.persistent
    assert store.notified() == {("/s/a.jsonl", "c1")} and store.reminders() == {}
    store.mark_notified([("/s/b.jsonl", "c2")], now=2.0)
    store.mark_reminded({("/s/a.jsonl", "c1"): 1, ("/s/never-shown.jsonl", "c3"): 1})
    store.mark_reminded({("/s/a.jsonl", "c1"): 0})  # never lowered
    store.close()
    again = Store(str(path))
    assert again.reminders() == {("/s/a.jsonl", "c1"): 1}
    assert again.notified() == {("/s/a.jsonl", "c1"), ("/s/b.jsonl", "c2")}  # only what was shown


def test_pushed_questions_survive_and_old_stores_get_the_table(tmp_path: Path) -> None:
    import sqlite3

    path = tmp_path / "state.sqlite3"
    old = sqlite3.connect(path)  # a store from before pushes were remembered: no "pushed" table
    old.execute(
        "CREATE TABLE notified (file TEXT NOT NULL, call_id TEXT NOT NULL, at REAL NOT NULL,"
        " PRIMARY KEY (file, call_id))"
    )
    old.commit()
    old.close()
    store = Store(str(path))
    assert store.persistent and store.pushed() == set()
    store.mark_pushed("@devbox:/s/a.jsonl", "c1", now=10.0)
    store.mark_pushed("@devbox:/s/a.jsonl", "c1", now=11.0)  # twice: still one
    store.mark_pushed("/s/b.jsonl", "c2", now=30.0)
    store.close()
    again = Store(str(path))
    assert again.pushed() == {("@devbox:/s/a.jsonl", "c1"), ("/s/b.jsonl", "c2")}
    again.prune(20.0)  # kept as long as the history
    assert again.pushed() == {("/s/b.jsonl", "c2")}


def test_a_deleted_state_folder_is_recreated_and_keeps_what_it_knew(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    import logging
    import shutil

    caplog.set_level(logging.WARNING)
    folder = tmp_path / "state"
    path = str(folder / "state.sqlite3")
    store = Store(path)
    store.mark_notified([("/s/a.jsonl", "q1")], now=10.0)
    store.mute("shop", True)
    shutil.rmtree(folder)  # deleted while running
    store.mark_notified([("/s/b.jsonl", "q2")], now=11.0)  # the next write notices
    assert store.flush()
    assert (folder / "state.sqlite3").exists()
    assert store.notified() == {("/s/a.jsonl", "q1"), ("/s/b.jsonl", "q2")}
    store.snooze(99.0)
    said = [r for r in caplog.records if "was deleted while running" in r.getMessage()]
    assert len(said) == 1 and store.persistent
    shutil.rmtree(folder)  # deleted again, and no write before the app quits
    store.close()
    again = Store(path)  # the next start
    assert again.notified() == {("/s/a.jsonl", "q1"), ("/s/b.jsonl", "q2")}
    assert again.silences(0.0).muted == {"shop"}
    again.close()


def test_silences_changed_from_many_threads_lose_nothing(tmp_path: Path) -> None:
    """The tray, the control channel and the notifier change them at once: one lock, no lost update."""
    import threading

    from notifier.app import SilencesKeeper
    from notifier.core.commands import Mute, Snooze

    store = Store(str(tmp_path / "state.sqlite3"))
    keeper = SilencesKeeper(store, 1000.0)
    seen: list[Silences] = []
    keeper.listen(seen.append)  # (handed the current value first)

    def work(n: int) -> None:
        for i in range(15):
            keeper.apply(Mute(f"p{n}-{i}"), 1000.0)
            keeper.apply(Snooze(2000.0 + i, session=f"/s/{n}-{i}"), 1000.0)

    threads = [threading.Thread(target=work, args=(n,)) for n in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(keeper.value.muted) == 60 and len(keeper.value.sessions) == 60
    assert seen[-1] == keeper.value and len(seen) == 1 + 120
    assert store.flush()
    assert SilencesKeeper(store, 1000.0).value == keeper.value  # and all of it persisted


def test_answers_are_kept_and_old_histories_get_the_column(tmp_path: Path) -> None:
    import sqlite3

    from notifier.core.model import Question, QuestionItem, SessionRef, Transition

    path = str(tmp_path / "state.db")
    old = sqlite3.connect(path)  # a history from before answers were recorded
    old.execute(
        "CREATE TABLE history (file TEXT NOT NULL, call_id TEXT NOT NULL, session_id TEXT, cwd TEXT, "
        "name TEXT, tool TEXT, text TEXT, header TEXT, options TEXT, count INTEGER, asked_at REAL NOT NULL, "
        "resolved_at REAL, outcome TEXT, waited_s REAL, PRIMARY KEY (file, call_id))"
    )
    old.execute("INSERT INTO history (file, call_id, asked_at, outcome) VALUES ('/s/a.jsonl', 'c0', 1.0, 'answered')")
    old.commit()
    old.close()
    store = Store(path)
    ref, q = SessionRef("/s/a.jsonl", "id", "/p", None), Question("c1", "bash", (QuestionItem("Allow?"),), time.time())
    store.record([Transition("needs_input", ref, q, q.asked_at)])
    store.record([Transition("resolved", ref, q, q.asked_at + 2, outcome="answered", answer="No\x1b[31m", waited_s=2)])
    rows = {r["call_id"]: r for r in store.history()}
    store.close()
    assert rows["c0"]["answer"] is None and rows["c1"]["answer"] == "No"  # (sanitized as stored)


def test_a_huge_question_or_answer_keeps_one_bounded_history_row(tmp_path: Path) -> None:
    """History keeps a record, not a copy: a call id, a file name or an answer of any size (a
    companion's dialog may send them) makes one row of bounded size, answered as recorded."""
    import os

    from notifier.core.model import Question, QuestionItem, SessionRef, Transition

    path = str(tmp_path / "state.db")
    store = Store(path)
    huge = "x" * 900_000
    for n in range(3):
        ref = SessionRef(f"/s/{n}{huge}.jsonl", "id", "/p", None)
        q = Question(f"{n}{huge}", "bash", (QuestionItem("Allow?"),), time.time())
        store.record([Transition("needs_input", ref, q, q.asked_at)])
        store.record([Transition("resolved", ref, q, q.asked_at + 2, outcome="answered", answer=huge, waited_s=2)])
    rows = store.history()
    store.close()
    assert len(rows) == 3 and all(r["outcome"] == "answered" and len(r["answer"]) <= 4000 for r in rows)
    assert all(len(r["call_id"]) <= 512 and len(r["file"]) <= 4096 for r in rows)
    assert os.path.getsize(path) < 200_000


def test_a_dialogs_history_row_is_not_ended_by_its_gated_tools_result(tmp_path: Path) -> None:
    """At start the history looks up how its open questions ended in their files: a question
    tool's call by its toolResult; an extension's dialog keyed by the call it gates is not ended
    by that tool's result (the bash output is no answer to "Allow?")."""
    from notifier.core.model import Question, QuestionItem, SessionRef, SessionView, Snapshot, Transition
    from tests.writer import answer, append, header, user

    f = tmp_path / "s.jsonl"
    append(f, header(), user(), answer("call_q", "User selected: 1. Yes"), answer("call_b", "total 0", tool="bash"))
    ref = SessionRef(str(f), "id", "/p", None)
    store = Store(str(tmp_path / "state.db"))
    asked = time.time() - 10
    gate = Question("call_b", "bash", (QuestionItem("Allow rm -rf build?"),), asked, kind="dialog", dialog="select")
    ask = Question("call_q", "question", (QuestionItem("Go on?"),), asked)
    store.record([Transition("needs_input", ref, q, asked) for q in (gate, ask)])
    store.settle(Snapshot((SessionView(ref, "working", (), (), None, asked),), asked))
    rows = {r["call_id"]: r for r in store.history()}
    store.close()
    assert (rows["call_q"]["outcome"], rows["call_q"]["answer"]) == ("answered", "User selected: 1. Yes")
    assert rows["call_b"]["outcome"] is None


def test_the_starts_history_look_up_waits_out_a_write_of_another_thread(tmp_path: Path) -> None:
    """Another thread writing the store as the start looks up how its open questions ended (the
    notifier recording a bubble): the look-up waits for that write, briefly, and is not skipped
    until the next start."""
    import threading

    from notifier.core.model import Question, QuestionItem, SessionRef, SessionView, Snapshot, Transition
    from tests.writer import answer, append, header, user

    f = tmp_path / "s.jsonl"
    append(f, header(), user(), answer("call_q", "User selected: 1. Yes"))
    ref = SessionRef(str(f), "id", "/p", None)
    store = Store(str(tmp_path / "state.db"))
    asked = time.time() - 10
    store.record([Transition("needs_input", ref, Question("call_q", "question", (QuestionItem("Go on?"),), asked), asked)])
    store.flush(2.0)
    held, asked_for = threading.Event(), threading.Event()
    lock = store._file_lock

    class Watched:  # the file's lock, saying when the look-up asks for it
        def acquire(self, blocking: bool = True, timeout: float = -1) -> bool:
            asked_for.set()
            return lock.acquire(blocking, timeout)

        def release(self) -> None:
            lock.release()

        __enter__ = acquire

        def __exit__(self, *exc: object) -> None:
            lock.release()

    def write() -> None:  # (another thread's write, until the look-up asks for the file)
        with lock:
            held.set()
            asked_for.wait(10)

    writer = threading.Thread(target=write)
    writer.start()
    held.wait(10)
    store._file_lock = Watched()  # type: ignore[assignment]
    store.settle(Snapshot((SessionView(ref, "working", (), (), None, asked),), asked))
    store._file_lock = lock
    writer.join()
    (row,) = store.history()
    store.close()
    assert (row["outcome"], row["answer"]) == ("answered", "User selected: 1. Yes")
