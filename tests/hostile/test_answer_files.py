"""The session file read back after an answer (how pi recorded it) and for a session's name is
as untrusted as any session line: a FIFO in its place, a line nested past every parser's
recursion limit, bytes that are not UTF-8 — each is passed over, never a traceback or a hang,
and the real entry beside it is still found."""

from __future__ import annotations

import json
import os
import threading
from pathlib import Path

from notifier.actions.answer import tool_result
from notifier.tail import name_before

DEEP = 200_000  # far past the interpreter's recursion limit: json.loads raises RecursionError


def _result(call_id: str, text: str) -> bytes:
    entry = {"type": "message", "id": "r1", "parentId": "a1", "timestamp": "2026-12-02T00:00:00.000Z",
             "message": {"role": "toolResult", "toolCallId": call_id, "toolName": "question",
                         "content": [{"type": "text", "text": text}], "details": {"answer": "Yes"}}}  # fmt: skip
    return json.dumps(entry).encode() + b"\n"


def _hostile(call_id: str) -> list[bytes]:
    """Lines that hold the call id and "toolResult", as the search for the result looks for them."""
    deep = b'{"role":"toolResult","toolCallId":' + json.dumps(call_id).encode() + b',"x":' + b"[" * DEEP + b"]" * DEEP + b"}\n"
    not_utf8 = b'{"role":"toolResult","toolCallId":' + json.dumps(call_id).encode() + b',"x":"\xff\xfe"}\n'
    return [deep, not_utf8]


def test_a_hostile_line_after_the_result_is_passed_over(tmp_path: Path) -> None:
    path = tmp_path / "s.jsonl"
    path.write_bytes(_result("call_1", "User selected: 1. Yes") + b"".join(_hostile("call_1")))
    assert tool_result(str(path), "call_1") == ("User selected: 1. Yes", {"answer": "Yes"})
    only = tmp_path / "only-hostile.jsonl"
    only.write_bytes(b"".join(_hostile("call_1")))
    assert tool_result(str(only), "call_1") is None


def test_a_fifo_in_the_session_files_place_does_not_block(tmp_path: Path) -> None:
    fifo = tmp_path / "s.jsonl"
    os.mkfifo(fifo)  # (no writer: an open() for reading would wait for one forever)
    got: list[object] = []

    def read() -> None:
        got.append(tool_result(str(fifo), "call_1"))

    reader = threading.Thread(target=read, daemon=True)  # (a hang fails the test, not the run)
    reader.start()
    reader.join(10)
    assert not reader.is_alive(), "reading a FIFO blocked"
    assert got == [None]


def test_a_hostile_session_info_line_is_passed_over_for_the_name(tmp_path: Path) -> None:
    info = json.dumps({"type": "session_info", "name": "real name"}).encode() + b"\n"
    deep = b'{"type":"session_info","name":' + b"[" * DEEP + b"]" * DEEP + b"}\n"
    path = tmp_path / "s.jsonl"
    path.write_bytes(info + deep + b'{"type":"session_info","name":"\xff"}\n')
    with path.open("rb") as fh:
        assert name_before(fh.fileno(), path.stat().st_size) == "real name"
