"""The guard that fails a test run which touched the invoking user's own pi-notifier files: its
listing sees a file created, changed or removed. (The guard failing a real run:
tests/processes/test_user_state.py.)"""

from __future__ import annotations

import os
from pathlib import Path

from ..user_state import changes, listing, places


def _user(tmp_path: Path) -> dict[str, str]:
    home = tmp_path / "user"
    runtime = home / "run"
    runtime.mkdir(parents=True, mode=0o700)
    return {"HOME": str(home), "XDG_RUNTIME_DIR": str(runtime), "PATH": os.environ["PATH"]}


def test_listing_sees_a_file_created_changed_or_removed(tmp_path: Path) -> None:
    roots = places(_user(tmp_path))
    state = next(r for r in roots if r.parts[-3:] == (".local", "state", "pi-notifier"))
    state.mkdir(parents=True)
    (state / "state.sqlite3").write_bytes(b"x")
    before = listing(roots)
    assert changes(before, listing(roots)) == []
    (state / "state.sqlite3").write_bytes(b"xy")
    assert changes(before, listing(roots)) == [f"changed: {state / 'state.sqlite3'}"]
    (state / "state.sqlite3").unlink()
    assert f"removed: {state / 'state.sqlite3'}" in changes(before, listing(roots))
    config = next(r for r in roots if r.parts[-2:] == (".config", "pi-notifier"))
    config.mkdir(parents=True)
    assert f"created: {config}" in changes(before, listing(roots))


