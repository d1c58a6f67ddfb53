"""One log line per (subject, problem), sanitized; forgotten subjects are said again."""

from __future__ import annotations

import logging

import pytest

from notifier.system.logonce import LogOnce


def test_said_once_per_subject_and_kind(caplog: pytest.LogCaptureFixture) -> None:
    once = LogOnce(logging.getLogger("t"))
    with caplog.at_level(logging.WARNING, "t"):
        for _ in range(100):
            once("/s/a\x1b[31m.jsonl", "json", "skipped a line that is not JSON")
        once("/s/a\x1b[31m.jsonl", "utf8", "skipped a line that is not UTF-8")
        once("/s/b.jsonl", "json", "skipped a line that is not JSON")
    lines = [r.getMessage() for r in caplog.records]
    assert lines == [
        "/s/a.jsonl: skipped a line that is not JSON",
        "/s/a.jsonl: skipped a line that is not UTF-8",
        "/s/b.jsonl: skipped a line that is not JSON",
    ]
    with caplog.at_level(logging.WARNING, "t"):
        once.forget("/s/a\x1b[31m.jsonl")
        assert once("/s/a\x1b[31m.jsonl", "json", "again")  # a forgotten subject is said again ...
        assert not once("/s/b.jsonl", "json", "not again")  # ... and only that one
    assert [r.getMessage() for r in caplog.records][3:] == ["/s/a.jsonl: again"]


def test_first_shares_the_memory_of_what_was_said() -> None:
    once = LogOnce(logging.getLogger("t"))
    assert once.first("engine", "ValueError") and not once.first("engine", "ValueError")
    assert not once("engine", "ValueError", "said already")
    assert once.first("engine", "KeyError")
