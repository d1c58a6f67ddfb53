"""Timestamps out of range, NaN/inf, huge and of the wrong type: status --json, run --json and
history (also rows written by older versions) keep working."""

from __future__ import annotations

import json
import os
import sqlite3
import time
from datetime import datetime
from pathlib import Path
from typing import Any

import pytest

from notifier.core.codec import MAX_TIME, MIN_TIME, iso, parse_iso
from notifier.pi.entries import parse_time
from notifier.store import Store
from tests.writer import ask, header, user

from ..app_process import AppProcess
from ..conftest import cli

# Raw JSON text for the "timestamp" of the question's entry (Python's json reads NaN/Infinity).
ODD = [
    '"9999-12-31T23:59:59-14:00"',
    '"0001-01-01T00:00:00+14:00"',
    '"-000001-01-01T00:00:00Z"',
    '"not a time"',
    '""',
    "1e15",
    "-1",
    "0",
    "1" + "0" * 400,
    "1e400",
    "-1e400",
    "NaN",
    "Infinity",
    "true",
    "null",
    "[1]",
    '{"t": 1}',
]


def strict_json(text: str) -> Any:
    def no_constant(name: str) -> None:
        raise AssertionError(f"{name} is not JSON")

    return json.loads(text, parse_constant=no_constant)


def iso_seconds(value: str) -> float:
    return datetime.fromisoformat(value.replace("Z", "+00:00")).timestamp()


@pytest.mark.parametrize("raw", ODD)
def test_parse_time_ignores_what_is_not_a_sane_time(raw: str) -> None:
    assert parse_time(json.loads(raw), 1234.5) == 1234.5


@pytest.mark.parametrize("seconds", [MIN_TIME, 1767225600.25, MAX_TIME])
def test_parse_iso_reads_back_what_iso_writes(seconds: float) -> None:
    assert parse_iso(iso(seconds)) == seconds
    assert parse_iso(iso(seconds)[:-1]) == seconds  # (no zone: UTC, as pi's own)
    assert parse_iso(iso(seconds).replace("Z", "+02:00")) == (seconds - 7200 if seconds > MIN_TIME else None)


@pytest.mark.parametrize("raw", ODD)
def test_parse_iso_refuses_what_is_not_a_sane_time(raw: str) -> None:
    assert parse_iso(json.loads(raw)) is None


def test_parse_time_reads_sane_times() -> None:
    assert parse_time("2026-01-01T00:00:00Z", 0) == 1767225600.0
    assert parse_time(1767225600000, 0) == 1767225600.0  # Unix ms
    assert parse_time(1767225600.25, 0) == 1767225600.25


def write_sessions(root: Path) -> None:
    for n, raw in enumerate(ODD):
        entry = json.loads(ask(f"c{n}", f"Odd time {n}?"))
        entry["timestamp"] = "@TIME@"
        line = json.dumps(entry).replace('"@TIME@"', raw) + "\n"
        path = root / f"--p{n}--" / "s.jsonl"
        path.parent.mkdir(parents=True)
        path.write_bytes(header(f"/home/u/p{n}") + user() + line.encode())


def test_odd_timestamps_through_status_run_and_history(tmp_path: Path) -> None:
    sessions = tmp_path / "s"
    write_sessions(sessions)
    before = time.time()
    status = cli("status", "--json", "--liveness", "off", "--sessions-dir", str(sessions))
    assert status.returncode == 0, status.stderr
    data = strict_json(status.stdout)
    assert data["pending"] == len(ODD)
    for s in data["sessions"]:
        assert MIN_TIME <= iso_seconds(s["updated_at"]) <= MAX_TIME
    text = cli("status", "--liveness", "off", "--sessions-dir", str(sessions))
    assert text.returncode == 0 and f"{len(ODD)} pending questions" in text.stdout, text.stderr

    with AppProcess(
        "run", "--no-tray", "--json", "--liveness", "off", "--sessions-dir", str(sessions)
    ) as app:
        app.wait("needs_input", len(ODD))
        app.wait("ready")
    hist = cli("history", "--json")
    assert hist.returncode == 0, hist.stderr
    rows = strict_json(hist.stdout)["questions"]
    assert len(rows) == len(ODD)
    for q in rows:  # an unusable time was replaced by when it was seen
        assert before - 5 <= iso_seconds(q["asked_at"]) <= time.time() + 5
    shown = cli("history")
    assert shown.returncode == 0 and f"{len(ODD)} questions" in shown.stdout, shown.stderr


def test_history_rows_of_older_versions_render(tmp_path: Path) -> None:
    """Rows stored before times were checked: huge, infinite, negative, not numbers."""
    path = Path(os.environ["XDG_STATE_HOME"]) / "pi-notifier" / "state.sqlite3"
    Store(str(path)).close()  # the real schema
    bad = [1e300, float("inf"), float("-inf"), -5.0, 253402300800.0, "yesterday", 2**62]
    with sqlite3.connect(path) as db:
        for n, at in enumerate(bad):
            db.execute(
                "INSERT INTO history (file, call_id, cwd, text, options, count, asked_at, resolved_at, outcome,"
                " waited_s) VALUES (?,?,?,?,?,?,?,?,?,?)",
                (f"/f{n}", "c", "/home/u/old", f"Old {n}?", "A\x1fB", "x", at, at, "answered", at),
            )
    hist = cli("history", "--json", "--since", "36500")
    assert hist.returncode == 0, hist.stderr
    data = strict_json(hist.stdout)
    assert len(data["questions"]) >= 4  # those whose asked_at is within the window
    for q in data["questions"]:
        assert MIN_TIME <= iso_seconds(q["asked_at"]) <= MAX_TIME
        assert q["waited_s"] is None or 0 <= q["waited_s"] < float("inf")
    every = cli("history", "--json")
    assert every.returncode == 0 and len(strict_json(every.stdout)["questions"]) == len(bad), every.stderr
    shown = cli("history")
    assert shown.returncode == 0 and "Old 0?" in shown.stdout and "Traceback" not in shown.stderr, (
        shown.stderr
    )
