"""The state folder holds question text and paths: files 0600, folder 0700, even when the folder
already existed with 0755 and the umask lets everything through."""

from __future__ import annotations

import logging
import logging.handlers
import os
import stat
from collections.abc import Iterator
from pathlib import Path

import pytest

from notifier.cli import parser
from notifier.system import paths
from tests.writer import append, ask, header, user

from ..app_process import AppProcess

pytestmark = pytest.mark.skipif(os.name != "posix", reason="file modes are POSIX")


def mode(p: Path) -> int:
    return stat.S_IMODE(p.stat().st_mode)


@pytest.fixture
def open_umask() -> Iterator[None]:
    old = os.umask(0)  # inherited by the app we start: nothing is private by accident
    try:
        yield
    finally:
        os.umask(old)


def test_state_folder_and_files_are_private(tmp_path: Path, open_umask: None) -> None:
    state = Path(os.environ["XDG_STATE_HOME"]) / "pi-notifier"
    state.mkdir(parents=True, mode=0o755)
    os.chmod(state, 0o755)
    old_log = state / "pi-notifier.log.1"  # rotated by an older version
    old_log.write_text("question text\n")
    os.chmod(old_log, 0o644)
    sessions = tmp_path / "s"
    append(sessions / "--p--" / "a.jsonl", header("/home/u/p"), user(), ask("c1", "Secret plan?"))

    with AppProcess(
        "run", "--no-tray", "--json", "--liveness", "off", "--sessions-dir", str(sessions)
    ) as app:
        app.wait("needs_input")
        app.wait("ready")
        # while it runs: the store (and SQLite's side files) exist
        files = [p for p in state.iterdir() if p.is_file()]
        assert {"state.sqlite3", "pi-notifier.log"} <= {p.name for p in files}
        assert {p.name: oct(mode(p)) for p in files} == {p.name: oct(0o600) for p in files}
    assert mode(state) == 0o700
    files = [p for p in state.iterdir() if p.is_file()]
    assert "scan-cache.sqlite3" in {p.name for p in files}
    assert {p.name: oct(mode(p)) for p in files} == {p.name: oct(0o600) for p in files}


def test_rotated_logs_stay_private(tmp_path: Path, open_umask: None) -> None:
    path = tmp_path / "state" / "x.log"
    handler = parser._private_log(str(path))
    assert isinstance(handler, logging.handlers.RotatingFileHandler)
    handler.maxBytes = 200
    logger = logging.getLogger("test-rotation")
    logger.propagate = False
    logger.addHandler(handler)
    try:
        for n in range(40):
            logger.warning("question %d with a name that is not UTF-8: \udcff", n)
    finally:
        logger.removeHandler(handler)
        handler.close()
    logs = sorted(path.parent.iterdir())
    assert len(logs) == 1 + parser.BACKUPS
    assert all(mode(p) == 0o600 for p in logs), {p.name: oct(mode(p)) for p in logs}
    assert mode(path.parent) == 0o700
    assert "\\udcff" in path.read_text(encoding="utf-8")


def test_private_dir_fixes_only_what_we_own(tmp_path: Path) -> None:
    d = tmp_path / "mine"
    d.mkdir(mode=0o755)
    os.chmod(d, 0o755)
    paths.private_dir(str(d))
    assert mode(d) == 0o700
    f = d / "db"
    f.write_text("")
    os.chmod(f, 0o664)
    for side in ("-wal", "-shm"):
        (d / f"db{side}").write_text("")
        os.chmod(d / f"db{side}", 0o644)
    paths.private_file(str(f))
    assert [oct(mode(p)) for p in sorted(d.iterdir())] == [oct(0o600)] * 3
