"""Latency from a line appended by another process to the `needs_input` event on stdout.

A writer process appends N question lines (one write(2) each, ~20 ms apart with jitter) and
reports the CLOCK_MONOTONIC time just before each write; this process timestamps each event line
as it arrives from `pi-notifier run --json`. Target (docs/contract.md §7): p50 ≤ 1 ms, p99 ≤ 10 ms.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import textwrap
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from common import Reader, pct, save, start_run, stop  # noqa: E402

WRITER = textwrap.dedent(
    r"""
    import json, os, random, sys, time
    path, n = sys.argv[1], int(sys.argv[2])
    def line(o): return (json.dumps(o, separators=(",", ":")) + "\n").encode()
    fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
    os.write(fd, line({"type": "session", "version": 3, "id": "bench", "timestamp": "2026-11-30T00:00:00.000Z", "cwd": "/bench"}))
    time.sleep(0.3)
    for i in range(n):
        ask = line({"type": "message", "id": f"a{i}", "parentId": None, "timestamp": "2026-11-30T00:00:01.000Z",
                    "message": {"role": "assistant", "stopReason": "toolUse", "content": [
                        {"type": "toolCall", "id": f"q{i}", "name": "question",
                         "arguments": {"question": f"Question {i}?", "options": [{"label": "Yes"}, {"label": "No"}]}}]}})
        t0 = time.monotonic()
        os.write(fd, ask)
        print(f"ask {i} {t0!r}", flush=True)
        time.sleep(0.01 + random.random() * 0.01)
        res = line({"type": "message", "id": f"r{i}", "parentId": f"a{i}", "timestamp": "2026-11-30T00:00:02.000Z",
                    "message": {"role": "toolResult", "toolCallId": f"q{i}", "toolName": "question",
                                "content": [{"type": "text", "text": "User selected: 1. Yes"}],
                                "details": {"answer": "Yes"}, "isError": False}})
        t1 = time.monotonic()
        os.write(fd, res)
        print(f"res {i} {t1!r}", flush=True)
        time.sleep(0.01 + random.random() * 0.01)
    """
)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("-n", type=int, default=300)
    ap.add_argument(
        "--idle-sessions", type=int, default=0, help="other (idle) sessions present, as on a real machine"
    )
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        (root / "--bench--").mkdir()
        for i in range(args.idle_sessions):
            folder = root / f"--idle{i % 100}--"
            folder.mkdir(exist_ok=True)
            head = {
                "type": "session",
                "version": 3,
                "id": f"i{i}",
                "timestamp": "2026-11-30T00:00:00.000Z",
                "cwd": f"/idle/{i}",
            }
            done = {
                "type": "message",
                "id": "a",
                "parentId": None,
                "timestamp": "2026-11-30T00:00:01.000Z",
                "message": {
                    "role": "assistant",
                    "stopReason": "stop",
                    "content": [{"type": "text", "text": "done"}],
                },
            }
            (folder / f"{i}.jsonl").write_text(json.dumps(head) + "\n" + json.dumps(done) + "\n")
        proc = start_run(root)
        reader = Reader(proc)
        reader.start()
        if not reader.ready.wait(30):
            raise SystemExit("pi-notifier did not become ready")
        writer = subprocess.run(
            [sys.executable, "-c", WRITER, str(root / "--bench--" / "s.jsonl"), str(args.n)],
            capture_output=True,
            text=True,
            check=True,
        )
        deadline = time.monotonic() + 10
        while (
            sum(1 for _, e in reader.events if e["event"] == "resolved") < args.n
            and time.monotonic() < deadline
        ):
            time.sleep(0.01)
        stop(proc, reader)
    sent = {}
    for row in writer.stdout.split("\n"):
        if row:
            kind, n, t = row.split()
            sent[(kind, f"q{n}")] = float(t)
    lat: dict[str, list[float]] = {"needs_input": [], "resolved": []}
    for seen, e in reader.events:
        if e["event"] in lat:
            key = ("ask" if e["event"] == "needs_input" else "res", e["question"]["tool_call_id"])
            lat[e["event"]].append((seen - sent[key]) * 1000)
    result = {"questions": args.n, "idle_sessions": args.idle_sessions}
    for kind, values in lat.items():
        if len(values) != args.n:  # (a lost event must not leave the figures looking better)
            raise SystemExit(f"{len(values)} {kind} events for {args.n} questions")
        result[kind] = {
            "count": len(values),
            "p50_ms": round(pct(values, 50), 3),
            "p99_ms": round(pct(values, 99), 3),
            "max_ms": round(max(values), 3) if values else None,
        }
    save(f"latency-idle-{args.idle_sessions}" if args.idle_sessions else "latency", result)


if __name__ == "__main__":
    main()
