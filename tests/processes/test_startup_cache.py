"""The scan cache of a one-shot command: ``status`` writes it itself, after its output and
before it exits, so the next run finds it whole. (What it holds: tests/unit/test_startup_cache.py.)"""

from __future__ import annotations

import json
import os
import sqlite3
import time
from pathlib import Path

from notifier.core.board import Board
from notifier.pi.parse import QuestionCatalog
from notifier.sessions import BoardReader, EngineOptions, StartupCache

from ..conftest import FIXTURES, cli

CAPTURES = sorted(p for p in FIXTURES.rglob("*.jsonl") if "timeline" not in p.name) if FIXTURES else []


def _rows(db: Path) -> int:
    with sqlite3.connect(f"file:{db}?mode=ro", uri=True) as c:
        return int(c.execute("SELECT count(*) FROM scan").fetchone()[0])


def _scan(root: Path, cache_path: Path, tools: tuple[str, ...] = ()) -> tuple[StartupCache, BoardReader]:
    options = EngineOptions(roots=[str(root)], catalog=QuestionCatalog(list(tools)), liveness=False)
    cache = StartupCache(str(cache_path), options.catalog.key, [str(root)], options.max_line)
    files = BoardReader(options, Board(liveness=False), time.time)
    files.scan(str(root), initial=True, cache=cache)
    cache.save(files.tailers, files.board)
    return cache, files


def test_status_writes_its_cache_before_it_exits(tmp_path: Path) -> None:
    assert CAPTURES, "the real pi captures (tests/data/pi-sessions) are missing"
    sessions = tmp_path / "sessions"
    for i, capture in enumerate(CAPTURES):
        target = sessions / f"--p{i}--" / "s.jsonl"
        target.parent.mkdir(parents=True)
        target.write_bytes(capture.read_bytes())
    env = {**os.environ, "XDG_STATE_HOME": str(tmp_path / "state")}
    args = ("status", "--json", "--liveness", "off", "--sessions-dir", str(sessions))
    cold = cli(*args, env=env)
    assert cold.returncode == 0, cold.stderr
    (db,) = (tmp_path / "state").rglob("scan-cache.sqlite3")
    assert _rows(db) == len(CAPTURES)  # (whole as soon as the command has returned)
    warm = cli(*args, env=env)
    assert warm.returncode == 0 and json.loads(warm.stdout) == json.loads(cold.stdout)
    cache, _ = _scan(sessions, db)
    assert cache.hits == len(CAPTURES)


