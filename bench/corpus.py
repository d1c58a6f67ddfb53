"""The corpora bench/scale.py measures: 5,000 session files / ~2 GB as pi writes them (large
entries), and a line-dense one (small entries), each generated once under bench/out."""

from __future__ import annotations

import json
import random
from pathlib import Path
from typing import Any


def line(obj: dict[str, Any]) -> bytes:
    return (json.dumps(obj, separators=(",", ":")) + "\n").encode()


def generate(root: Path, files: int, total_bytes: int, seed: int = 7) -> dict[str, Any]:
    marker = root / ".generated.json"
    want = {"files": files, "bytes": total_bytes, "seed": seed, "layout": 2}
    if marker.exists() and json.loads(marker.read_text()).get("spec") == want:
        generated: dict[str, Any] = json.loads(marker.read_text())
        return generated
    rng = random.Random(seed)
    root.mkdir(parents=True, exist_ok=True)
    system = line(
        {
            "type": "message",
            "id": "s0",
            "parentId": None,
            "timestamp": "2026-01-01T00:00:00.000Z",
            "message": {"role": "system", "content": "", "sections": {"preamble": "p" * 9000}},
        }
    )
    per_file = total_bytes // files
    written = pending = 0
    for i in range(files):
        folder = root / f"--home-user-project{i % 250}--"
        folder.mkdir(exist_ok=True)
        # sizes vary a lot (most small, a few huge), averaging per_file
        target = int(per_file * rng.choice([0.05, 0.1, 0.2, 0.5, 1, 1, 2, 5]) / 1.23)
        out = bytearray()
        out += line(
            {
                "type": "session",
                "version": 3,
                "id": f"sess-{i}",
                "timestamp": "2026-01-01T00:00:00.000Z",
                "cwd": f"/home/user/project{i % 250}",
            }
        )
        out += system
        n = 0
        while len(out) < target:
            n += 1
            out += line(
                {
                    "type": "message",
                    "id": f"u{n}",
                    "parentId": None,
                    "timestamp": "2026-01-01T00:00:01.000Z",
                    "message": {"role": "user", "content": [{"type": "text", "text": "do the thing " * 20}]},
                }
            )
            out += line(
                {
                    "type": "message",
                    "id": f"a{n}",
                    "parentId": None,
                    "timestamp": "2026-01-01T00:00:02.000Z",
                    "message": {
                        "role": "assistant",
                        "stopReason": "toolUse",
                        "content": [
                            {
                                "type": "toolCall",
                                "id": f"b{n}",
                                "name": "bash",
                                "arguments": {"command": "cat big"},
                            }
                        ],
                    },
                }
            )
            size = min(rng.choice([200, 2000, 20000, 200000, 1500000]), max(200, target - len(out)))
            out += line(
                {
                    "type": "message",
                    "id": f"r{n}",
                    "parentId": None,
                    "timestamp": "2026-01-01T00:00:03.000Z",
                    "message": {
                        "role": "toolResult",
                        "toolCallId": f"b{n}",
                        "toolName": "bash",
                        "content": [{"type": "text", "text": "x" * size}],
                        "isError": False,
                    },
                }
            )
        if i % 50 == 0:
            pending += 1
            out += line(
                {
                    "type": "message",
                    "id": "q",
                    "parentId": None,
                    "timestamp": "2026-01-01T00:00:04.000Z",
                    "message": {
                        "role": "assistant",
                        "stopReason": "toolUse",
                        "content": [
                            {
                                "type": "toolCall",
                                "id": f"q{i}",
                                "name": "question",
                                "arguments": {"question": f"Pick for {i}?", "options": ["a", "b"]},
                            }
                        ],
                    },
                }
            )
            if i % 100 == 0:  # a big tool result written after the question call (parallel batch)
                out += line(
                    {
                        "type": "message",
                        "id": "r",
                        "parentId": None,
                        "timestamp": "2026-01-01T00:00:05.000Z",
                        "message": {
                            "role": "toolResult",
                            "toolCallId": "other",
                            "toolName": "bash",
                            "content": [{"type": "text", "text": "y" * 300000}],
                            "isError": False,
                        },
                    }
                )
        else:
            out += line(
                {
                    "type": "message",
                    "id": "end",
                    "parentId": None,
                    "timestamp": "2026-01-01T00:00:04.000Z",
                    "message": {
                        "role": "assistant",
                        "stopReason": "stop",
                        "content": [{"type": "text", "text": "done"}],
                    },
                }
            )
        (folder / f"2026-01-01T00-00-00-000Z_sess-{i}.jsonl").write_bytes(out)
        written += len(out)
    info = {"spec": want, "files": files, "bytes": written, "pending": pending}
    marker.write_text(json.dumps(info))
    return info


TS = "2026-01-01T00:00:05.000Z"


DENSE_TAILS = (0, 50, 400)


def generate_dense(
    root: Path, files: int, total_bytes: int, seed: int = 11, tails: tuple[int, ...] = DENSE_TAILS
) -> dict[str, Any]:
    """Line-dense sessions: many small entries (93–148 bytes, as pi writes them with an id, a
    parent and a time: about 140 per 16 KB), as pi writes when a session is full of labels,
    custom entries, model changes and short messages. ``tails``: how
    many entries that change nothing follow the last message, one of these per file (400 of
    them, about 40 KB, put the entry that decides the state beyond the last 16 KB)."""
    marker = root / ".generated.json"
    want = {"files": files, "bytes": total_bytes, "seed": seed, "layout": "dense-2"}
    if tails != DENSE_TAILS:
        want["tails"] = list(tails)
    if marker.exists() and json.loads(marker.read_text()).get("spec") == want:
        generated: dict[str, Any] = json.loads(marker.read_text())
        return generated
    rng = random.Random(seed)
    root.mkdir(parents=True, exist_ok=True)
    per_file = total_bytes // files
    small = [
        line({"type": "label", "id": "l", "parentId": None, "timestamp": TS, "label": "x"}),
        line(
            {
                "type": "custom",
                "id": "c",
                "parentId": None,
                "timestamp": TS,
                "customType": "k",
                "data": {"n": 1},
            }
        ),
        line(
            {
                "type": "model_change",
                "id": "m",
                "parentId": None,
                "timestamp": TS,
                "provider": "p",
                "modelId": "m1",
            }
        ),
        line({"type": "message", "id": "u", "timestamp": TS, "message": {"role": "user", "content": "ok"}}),
        line(
            {
                "type": "message",
                "id": "r",
                "timestamp": TS,
                "message": {"role": "toolResult", "toolCallId": "b", "toolName": "bash", "content": "1"},
            }
        ),
        line(
            {
                "type": "message",
                "id": "a",
                "timestamp": TS,
                "message": {"role": "assistant", "stopReason": "stop", "content": "k"},
            }
        ),
    ]
    written = pending = 0
    for i in range(files):
        folder = root / f"--home-user-project{i % 250}--"
        folder.mkdir(exist_ok=True)
        target = int(per_file * rng.choice([0.05, 0.1, 0.2, 0.5, 1, 1, 2, 5]) / 1.23)
        out = bytearray(
            line({"type": "session", "version": 3, "id": f"d-{i}", "cwd": f"/home/user/project{i % 250}"})
        )
        block = b"".join(rng.choice(small) for _ in range(512))
        while len(out) < target:
            out += block
        if i % 50 == 0:
            pending += 1
            out += line(
                {
                    "type": "message",
                    "id": "q",
                    "timestamp": TS,
                    "message": {
                        "role": "assistant",
                        "stopReason": "toolUse",
                        "content": [
                            {
                                "type": "toolCall",
                                "id": f"q{i}",
                                "name": "question",
                                "arguments": {"question": f"Pick {i}?"},
                            }
                        ],
                    },
                }
            )
        else:
            out += small[5]
        # a dense tail after the last message: hundreds of small non-message entries
        out += b"".join(rng.choice(small[:3]) for _ in range(rng.choice(list(tails))))
        (folder / f"2026-01-01T00-00-00-000Z_d-{i}.jsonl").write_bytes(out)
        written += len(out)
    info = {"spec": want, "files": files, "bytes": written, "pending": pending}
    marker.write_text(json.dumps(info))
    return info
