"""Shared helpers: where the real pi captures are, and waiting for a condition with a deadline."""

from __future__ import annotations

import json
import os
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

import pytest

ROOT = Path(__file__).resolve().parents[1]
T = TypeVar("T")


def _find_fixtures() -> Path | None:
    env = os.environ.get("PI_NOTIFIER_FIXTURES")
    candidates = [Path(env)] if env else []
    candidates += [
        ROOT.parent / "shared" / "fixtures" / "pi-sessions",
        ROOT / "tests" / "data" / "pi-sessions",
    ]
    for c in candidates:
        if (c / "README.md").exists():
            return c
    return None


FIXTURES = _find_fixtures()


def wait_for(predicate: Callable[[], T], timeout: float = 10.0, what: str = "condition") -> T:
    """Poll ``predicate`` until it returns something truthy; fail after ``timeout`` seconds."""
    deadline = time.monotonic() + timeout
    delay = 0.002
    while True:
        value = predicate()
        if value:
            return value
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out after {timeout}s waiting for {what}")
        time.sleep(delay)
        delay = min(delay * 2, 0.05)


@pytest.fixture
def fixtures() -> Path:
    if FIXTURES is None:
        pytest.fail("the real pi captures (shared/fixtures/pi-sessions) are missing")
    return FIXTURES


def scenario(name: str) -> dict[str, Any]:
    assert FIXTURES is not None
    return json.loads((FIXTURES / name / "scenario.json").read_text())
