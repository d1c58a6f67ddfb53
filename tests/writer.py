"""Builds pi-shaped session lines for tests (the shapes come from the real captures)."""

from __future__ import annotations

import json
import time
import uuid
from datetime import datetime, timezone
from pathlib import Path
from typing import Any


def ts(at: float | None = None) -> str:
    return (
        datetime.fromtimestamp(at or time.time(), timezone.utc)
        .isoformat(timespec="milliseconds")
        .replace("+00:00", "Z")
    )


def line(obj: dict[str, Any]) -> bytes:
    return (json.dumps(obj, separators=(",", ":"), ensure_ascii=False) + "\n").encode()


def header(cwd: str = "/home/dev/proj", sid: str | None = None) -> bytes:
    return line(
        {"type": "session", "version": 3, "id": sid or str(uuid.uuid4()), "timestamp": ts(), "cwd": cwd}
    )


def user(text: str = "hi") -> bytes:
    return line(
        {
            "type": "message",
            "id": uuid.uuid4().hex[:8],
            "parentId": None,
            "timestamp": ts(),
            "message": {"role": "user", "content": [{"type": "text", "text": text}]},
        }
    )


def ask(
    call_id: str,
    text: str = "Which one?",
    tool: str = "question",
    options: list[str] | None = None,
    args: dict[str, Any] | None = None,
    at: float | None = None,
) -> bytes:
    arguments = (
        args
        if args is not None
        else {"question": text, "options": [{"label": o} for o in (options or ["A", "B"])]}
    )
    return line(
        {
            "type": "message",
            "id": uuid.uuid4().hex[:8],
            "parentId": None,
            "timestamp": ts(at),
            "message": {
                "role": "assistant",
                "stopReason": "toolUse",
                "content": [{"type": "toolCall", "id": call_id, "name": tool, "arguments": arguments}],
            },
        }
    )


def answer(
    call_id: str,
    text: str = "User selected: 1. A",
    tool: str = "question",
    details: dict[str, Any] | None = None,
    is_error: bool = False,
    at: float | None = None,
) -> bytes:
    return line(
        {
            "type": "message",
            "id": uuid.uuid4().hex[:8],
            "parentId": None,
            "timestamp": ts(at),
            "message": {
                "role": "toolResult",
                "toolCallId": call_id,
                "toolName": tool,
                "content": [{"type": "text", "text": text}],
                "details": details if details is not None else {"answer": "A"},
                "isError": is_error,
            },
        }
    )


def append(path: Path, *chunks: bytes) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("ab") as fh:
        for chunk in chunks:
            fh.write(chunk)
