"""The logging set-up: one log line per (subject, problem), sanitized, forgotten subjects said again;
the handlers' filter sanitises every record's arguments."""

from __future__ import annotations

import logging

import pytest

from notifier.system.log import LogOnce, MaskSecrets


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


def test_the_filter_sanitises_every_argument_and_keeps_numbers() -> None:
    """A handler with the filter writes no escape sequence or line break that came as an argument;
    numbers keep their formats; the message itself (ours) is left as it is."""
    import io

    out = io.StringIO()
    handler = logging.StreamHandler(out)
    handler.addFilter(MaskSecrets())
    logger = logging.getLogger("t.filter")
    logger.addHandler(handler)
    logger.propagate = False
    try:
        logger.warning("cannot read %s (%s): %d lines, %.1f s, %x", "/s/a\x1b[31m\nb.jsonl",
                       OSError("bad\x07 \x1b]0;title\x07name"), 3, 1.25, 255)
        logger.warning("as a map: %(name)s", {"name": "x\x1b[2Jy"})
        logger.warning("100% sure, no arguments")
        logger.warning("long: %s", "x" * 5000)
    finally:
        logger.removeHandler(handler)
    lines = out.getvalue().splitlines()
    assert lines == [
        "cannot read /s/a b.jsonl (bad name): 3 lines, 1.2 s, ff",
        "as a map: xy",
        "100% sure, no arguments",
        "long: " + "x" * 1999 + "…",  # (cut to a bound)
    ]


def test_a_traceback_puts_no_escape_sequence_in_the_log() -> None:
    """``log.exception`` of an error whose message a peer or a session file wrote: its traceback's
    lines are sanitised like arguments (indentation kept, each line still a line)."""
    import io

    out = io.StringIO()
    handler = logging.StreamHandler(out)
    handler.addFilter(MaskSecrets())
    logger = logging.getLogger("t.traceback")
    logger.addHandler(handler)
    logger.propagate = False
    try:
        try:
            raise ValueError("bad \x1b]0;pwned\x07 line\u202e\x1b[2J\nsecond\x9b31m line")
        except ValueError:
            logger.exception("the engine failed")
        logger.warning("a stack", stack_info=True)
    finally:
        logger.removeHandler(handler)
    written = out.getvalue()
    assert not [c for c in written if c != "\n" and (not c.isprintable() or c in "\u202e\x9b")]
    lines = written.splitlines()
    assert lines[:2] == ["the engine failed", "Traceback (most recent call last):"]
    assert lines[2].startswith('  File "') and "ValueError: bad line" in written and "second line" in written
    assert "Stack (most recent call last):" in written
