from __future__ import annotations

from notifier.system.store import Store


def test_snoozes_round_trip_by_scope() -> None:
    store = Store(None)  # in memory
    store.snooze(100.0)
    store.snooze(200.0, session="/s/a.jsonl")
    store.snooze(300.0, project="shop")
    store.snooze(5.0, project="old")
    assert sorted(store.snoozes(50.0), key=lambda s: s[2]) == [
        (None, None, 100.0),
        ("/s/a.jsonl", None, 200.0),
        (None, "shop", 300.0),
    ]
    store.clear_snoozes()
    assert store.snoozes(0.0) == []


def test_the_standalone_window_snoozes_projects_too(monkeypatch, tmp_path) -> None:  # type: ignore[no-untyped-def]
    """`pi-notifier show` without a running app stores what its buttons ask for."""
    from notifier.app import runtime
    from notifier.system.config import Config

    stores: list[Store] = []

    def fake_store() -> Store:
        stores.append(Store(str(tmp_path / "state.sqlite3")))
        return stores[-1]

    monkeypatch.setattr(runtime, "open_store", fake_store)
    source = runtime.LocalSource(Config())
    source.engine = object()  # type: ignore[assignment]  # commands only need it to exist
    source.command({"cmd": "snooze", "project": "shop", "seconds": 3600})
    source.command({"cmd": "snooze", "session": "/s/a.jsonl", "seconds": 900})
    check = Store(str(tmp_path / "state.sqlite3"))
    assert {(s, p) for s, p, _ in check.snoozes(0.0)} == {(None, "shop"), ("/s/a.jsonl", None)}


def test_reminder_counts_survive_and_old_stores_are_migrated(tmp_path) -> None:  # type: ignore[no-untyped-def]
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


def test_a_deleted_state_folder_is_recreated_and_keeps_what_it_knew(tmp_path, caplog) -> None:  # type: ignore[no-untyped-def]
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
    assert (folder / "state.sqlite3").exists()
    assert store.notified() == {("/s/a.jsonl", "q1"), ("/s/b.jsonl", "q2")}
    store.snooze(99.0)
    said = [r for r in caplog.records if "was deleted while running" in r.getMessage()]
    assert len(said) == 1 and store.persistent
    shutil.rmtree(folder)  # deleted again, and no write before the app quits
    store.close()
    again = Store(path)  # the next start
    assert again.notified() == {("/s/a.jsonl", "q1"), ("/s/b.jsonl", "q2")}
    assert again.mutes() == {"shop"}
    again.close()
