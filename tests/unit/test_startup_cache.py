"""The scan cache of a one-shot command: written after the output, by a process of its own that
the command does not wait for. It ends up whole (the next run reads no file), it never holds the
command's output open, and a Ctrl-C or hang-up meant for the command leaves it be."""

from __future__ import annotations

import json
import os
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest

from notifier.core.board import Board
from notifier.engine.files import SessionFiles
from notifier.engine.options import EngineOptions
from notifier.engine.startup_cache import BACKGROUND_ROWS, StartupCache
from notifier.watch.cache import ScanCache, fingerprint

from ..conftest import ROOT, cli
from .test_scan_workers import CAPTURES, _tree

linux_only = pytest.mark.skipif(sys.platform != "linux", reason="fork, /proc")

# Holds the database given (its write lock) until a line arrives on stdin.
HOLD = """
import sqlite3, sys
db = sqlite3.connect(sys.argv[1], isolation_level=None)
db.execute("BEGIN IMMEDIATE")
print("held", flush=True)
sys.stdin.readline()
db.execute("COMMIT")
"""


def _rows(db: Path) -> int:
    """The rows of the scan cache; -1 where it cannot be read (yet)."""
    try:
        with sqlite3.connect(f"file:{db}?mode=ro", uri=True, timeout=5) as c:
            return int(c.execute("SELECT count(*) FROM scan").fetchone()[0])
    except sqlite3.Error:
        return -1


def _others(pid: int) -> list[str]:
    """What the process ``pid`` holds open beyond its standard streams and the cache files."""
    out = []
    for fd in os.listdir(f"/proc/{pid}/fd"):
        if int(fd) > 2:
            try:
                target = os.readlink(f"/proc/{pid}/fd/{fd}")
            except OSError:
                continue
            if ".sqlite3" not in target:
                out.append(target)
    return out


def _until(condition: object, what: str, deadline_s: float = 30.0) -> None:
    end = time.monotonic() + deadline_s
    while not condition():  # type: ignore[operator]
        if time.monotonic() > end:
            pytest.fail(f"not within {deadline_s} s: {what}")
        time.sleep(0.02)


@linux_only
def test_status_prints_first_and_its_cache_is_whole_soon_after(tmp_path: Path) -> None:
    if not CAPTURES:
        pytest.fail("the real pi captures (tests/data/pi-sessions) are missing")
    sessions, state = tmp_path / "sessions", tmp_path / "state"
    count = BACKGROUND_ROWS + 10
    _tree(sessions, count)
    env = dict(os.environ, XDG_STATE_HOME=str(state))
    args = ("status", "--json", "--liveness", "off", "-v", "--sessions-dir", str(sessions))
    first = cli(*args, env=env)
    assert first.returncode == 0, first.stderr
    db = state / "pi-notifier" / "scan-cache.sqlite3"
    _until(lambda: _rows(db) == count + 20, "the scan cache holds every file")
    second = cli(*args, env=env)
    assert f" session files, {count + 20} unchanged since the last scan" in second.stderr, second.stderr
    assert json.loads(second.stdout) == json.loads(first.stdout)


# Scans the folder given into the cache given, saves it as a one-shot command does, says the
# writer's pid, then waits for it once a line arrives on stdin and says how it ended. (A process of
# its own: a fork is made only where no other thread runs, which a test process cannot promise.)
SAVE = """
import os, sys, time
from notifier.core.board import Board
from notifier.engine.files import SessionFiles
from notifier.engine.options import EngineOptions
from notifier.engine.startup_cache import StartupCache
sessions, path = sys.argv[1], sys.argv[2]
options = EngineOptions(roots=[sessions])
cache = StartupCache(path, options.catalog.names, [sessions], options.max_line)
files = SessionFiles(options, Board(), time.time)
files.scan(sessions, initial=True, cache=cache)
given = os.pipe()  # (a pipe the command was given, which someone may wait on)
cache.save(files.tailers, files.board, detach=True)
print(cache._child, flush=True)
sys.stdin.readline()
print(os.waitpid(cache._child, 0)[1] if cache._child else -1, flush=True)
"""


@linux_only
def test_the_cache_writer_is_on_its_own(tmp_path: Path) -> None:
    """While the writer waits for the database (held by another process), it is seen in its own
    session with its standard streams on /dev/null; once the database is free it writes every row."""
    if not CAPTURES:
        pytest.fail("the real pi captures (tests/data/pi-sessions) are missing")
    sessions = tmp_path / "sessions"
    count = BACKGROUND_ROWS + 10
    _tree(sessions, count)
    path = tmp_path / "cache.sqlite3"
    ScanCache(str(path), fingerprint(EngineOptions(roots=[]).catalog.names)).close()  # (so that it can be held)
    holder = subprocess.Popen([sys.executable, "-c", HOLD, str(path)], stdin=subprocess.PIPE, stdout=subprocess.PIPE)
    saver = subprocess.Popen(
        [sys.executable, "-c", SAVE, str(sessions), str(path)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        cwd=ROOT,
    )
    try:
        assert holder.stdout is not None and holder.stdout.readline() == b"held\n"
        assert saver.stdout is not None
        pid = int(saver.stdout.readline())
        assert pid > 0 and pid != saver.pid
        # (a new session: the command's Ctrl-C is not its; the streams: nobody waits on it)
        _until(lambda: os.getsid(pid) == pid, "the writer is in a session of its own")
        _until(
            lambda: all(os.readlink(f"/proc/{pid}/fd/{fd}") == os.devnull for fd in (0, 1, 2)),
            "the writer's standard streams are /dev/null",
        )
        # (no file of the command's: only the cache it waits for; no folder kept busy)
        _until(lambda: _others(pid) == [], f"the writer holds only its cache open (not {_others(pid)})")
        assert os.readlink(f"/proc/{pid}/cwd") == "/"
        assert _rows(path) == 0
    finally:
        holder.communicate(b"go\n", timeout=30)
    out, _ = saver.communicate(b"go\n", timeout=60)
    assert out.strip() == b"0"  # (the writer ended well)
    assert _rows(path) == count + 20


def test_few_rows_are_written_by_the_command_itself(tmp_path: Path) -> None:
    sessions = tmp_path / "sessions"
    (sessions / "--p--").mkdir(parents=True)
    (sessions / "--p--" / "a.jsonl").write_text(json.dumps({"type": "session", "id": "a", "cwd": "/p"}) + "\n")
    path = tmp_path / "cache.sqlite3"
    options = EngineOptions(roots=[str(sessions)])
    cache = StartupCache(str(path), options.catalog.names, [str(sessions)], options.max_line)
    files = SessionFiles(options, Board(), time.time)
    files.scan(str(sessions), initial=True, cache=cache)
    cache.save(files.tailers, files.board, detach=True)
    assert cache._child == 0 and _rows(path) == 1
