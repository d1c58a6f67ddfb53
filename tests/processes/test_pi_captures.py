"""The real pi captures through the real command: ``status --json`` on each pending snapshot
(the captures through the watcher and engine: tests/fixtures/test_pi_captures.py)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from ..conftest import FIXTURES, cli, scenario
from ..fixtures.test_pi_captures import CASES, EXPECTED_TEXT, place

pytestmark = pytest.mark.skipif(FIXTURES is None, reason="real pi captures missing")


@pytest.mark.parametrize("name", sorted(CASES))
def test_status_json_on_pending_snapshot(tmp_path: Path, name: str) -> None:
    place(tmp_path, name)
    out = cli("status", "--json", "--liveness", "off", "--sessions-dir", str(tmp_path))
    assert out.returncode == 0, out.stderr
    data = json.loads(out.stdout)
    assert data["pending"] == 1
    (session,) = data["sessions"]
    assert session["state"] == "needs_input" and session["alive"] is None
    assert session["cwd"].endswith("/project")
    (q,) = session["pending"]
    assert q["text"] == EXPECTED_TEXT
    assert q["options"] == ["PostgreSQL", "SQLite"]
    assert q["tool"] == scenario(name)["tool"]
    assert q["count"] == 1
