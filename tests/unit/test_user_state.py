"""The guard that fails a test run which touched the invoking user's own pi-notifier files: its
listing sees a file created, changed or removed, and of those it blames on the run what the run
could have done. (The guard on real runs, beside the user's own app: tests/processes/test_user_state.py.)"""

from __future__ import annotations

import os
from pathlib import Path

from ..user_state import Change, blamed, changes, listing, places


def _user(tmp_path: Path) -> dict[str, str]:
    home = tmp_path / "user"
    runtime = home / "run"
    runtime.mkdir(parents=True, mode=0o700)
    return {"HOME": str(home), "XDG_RUNTIME_DIR": str(runtime), "PATH": os.environ["PATH"]}


def _state(roots: list[Path]) -> Path:
    return next(r for r in roots if r.parts[-3:] == (".local", "state", "pi-notifier"))


def test_listing_sees_a_file_created_changed_or_removed(tmp_path: Path) -> None:
    roots = places(_user(tmp_path))
    state = _state(roots)
    state.mkdir(parents=True)
    (state / "state.sqlite3").write_bytes(b"x")
    before = listing(roots)
    assert changes(before, listing(roots)) == []
    (state / "state.sqlite3").write_bytes(b"xy")
    assert list(map(str, changes(before, listing(roots)))) == [f"changed: {state / 'state.sqlite3'}"]
    (state / "state.sqlite3").unlink()
    assert Change("removed", str(state / "state.sqlite3")) in changes(before, listing(roots))
    config = next(r for r in roots if r.parts[-2:] == (".config", "pi-notifier"))
    config.mkdir(parents=True)
    assert Change("created", str(config)) in changes(before, listing(roots))


def test_a_folder_is_listed_by_what_is_in_it_not_by_its_time(tmp_path: Path) -> None:
    """A socket made and removed again in the runtime folder (a pi of the user's, started and
    stopped meanwhile) leaves the folder's time changed and nothing else: no change."""
    roots = places(_user(tmp_path))
    runtime = next(r for r in roots if r.name == "pi-notifier" and r.parent.name == "run")
    runtime.mkdir()
    before = listing(roots)
    (runtime / "companion-1.sock").write_bytes(b"")
    (runtime / "companion-1.sock").unlink()
    os.utime(runtime, ns=(1, 1))
    assert changes(before, listing(roots)) == []


def test_blamed_is_what_the_run_could_have_done(tmp_path: Path) -> None:
    """In a place no process outside the run holds, every change is the run's; in one that the
    user's own app holds, only a file naming one of the run's temporary folders is."""
    roots = places(_user(tmp_path))
    state, config = _state(roots), next(r for r in roots if r.parts[-2:] == (".config", "pi-notifier"))
    run_folder = str(tmp_path / "pytest-7") + os.sep
    state.mkdir(parents=True)
    before = listing(roots)
    (state / "state.sqlite3-wal").write_bytes(b"\0" * 70000 + b"/home/u/.pi/agent/sessions/--p--/s.jsonl")
    (state / "escaped.sqlite3").write_bytes(b"\0" * ((1 << 20) - 5) + os.fsencode(run_folder) + b"sessions/--p--/s.jsonl")
    config.mkdir(parents=True)
    found = changes(before, listing(roots))
    busy = {state: "pid 1 (pi-notifier)"}
    assert blamed(found, roots, busy, [run_folder]) == [
        Change("created", str(config)),
        Change("created", str(state / "escaped.sqlite3")),
    ]
    assert blamed(found, roots, {}, [run_folder]) == found
