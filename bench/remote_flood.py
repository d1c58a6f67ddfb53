"""A remote that floods, against the app (issue 22, part 2): RSS and the state folder's size over
time, and the latency of local questions asked meanwhile (write → the ``needs_input`` line).

``big``: 20,000 questions of ~48 KB from one remote; ``small``: 300,000 small events. The remote
is a command (tests/hostile/flood_remote.py) on this machine: loopback only.

    python bench/remote_flood.py big --seconds 40
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from common import ROOT, Reader, pct, rss_mb, running, save, start_run, stop  # noqa: E402

FLOOD = ROOT / "tests" / "hostile" / "flood_remote.py"


def ask_line(n: int) -> bytes:
    import json

    return (
        json.dumps(
            {
                "type": "message",
                "id": f"a{n}",
                "parentId": None,
                "timestamp": "2026-12-01T00:00:01.000Z",
                "message": {
                    "role": "assistant",
                    "stopReason": "toolUse",
                    "content": [
                        {
                            "type": "toolCall",
                            "id": f"local-{n}",
                            "name": "question",
                            "arguments": {
                                "question": f"Local {n}?",
                                "options": [{"label": "Yes"}, {"label": "No"}],
                            },
                        }
                    ],
                },
            }
        )
        + "\n"
    ).encode()


def folder_mb(path: str) -> float:
    total = 0
    for base, _, files in os.walk(path):
        for f in files:
            try:
                total += os.path.getsize(os.path.join(base, f))
            except OSError:
                pass
    return total / 1e6


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("mode", choices=["big", "small"])
    ap.add_argument("--seconds", type=float, default=40.0)
    args = ap.parse_args()
    n = 20_000 if args.mode == "big" else 300_000
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        local = root / "local" / "--bench--"
        local.mkdir(parents=True)
        config = root / "config.toml"
        config.write_text(
            f'[[remotes]]\nname = "flood"\ncommand = ["{sys.executable}", "{FLOOD}", "{args.mode}", "{n}"]\n'
        )
        state = str(root / "state")
        proc = start_run(root / "local", "--config", str(config), state=state)
        reader = Reader(proc)
        reader.start()
        if not reader.ready.wait(30):
            raise SystemExit("pi-notifier did not become ready")
        session = local / "s.jsonl"
        fd = os.open(session, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
        os.write(
            fd,
            b'{"type":"session","version":3,"id":"b","timestamp":"2026-12-01T00:00:00.000Z","cwd":"/bench"}\n',
        )
        began = time.monotonic()
        sent: dict[str, float] = {}
        samples: list[dict[str, float]] = []
        i = 0
        while time.monotonic() - began < args.seconds:
            running(proc)
            sent[f"local-{i}"] = time.monotonic()
            os.write(fd, ask_line(i))
            i += 1
            time.sleep(0.25)
            samples.append(
                {
                    "t_s": round(time.monotonic() - began, 1),
                    "rss_mb": round(rss_mb(proc.pid), 1),
                    "state_mb": round(folder_mb(state), 2),
                }
            )
        os.close(fd)
        remote = sum(1 for _, e in reader.events if e["event"] == "needs_input" and e["session"].get("host"))
        stop(proc, reader)
    lat = [
        (seen - sent[e["question"]["tool_call_id"]]) * 1000
        for seen, e in reader.events
        if e["event"] == "needs_input" and e["question"]["tool_call_id"] in sent
    ]
    if len(lat) != len(sent):
        raise SystemExit(f"{len(lat)} of {len(sent)} local questions reported")

    def at(t: float) -> dict[str, float]:
        return min(samples, key=lambda s: abs(s["t_s"] - t))

    save(
        f"remote_flood_{args.mode}",
        {
            "mode": args.mode,
            "events": n,
            "seconds": args.seconds,
            "remote_needs_input": remote,
            "rss_mb_max": max(s["rss_mb"] for s in samples),
            "at_8s": at(8),
            "at_end": samples[-1],
            "local_questions": len(lat),
            "local_p50_ms": round(pct(lat, 50), 3),
            "local_p99_ms": round(pct(lat, 99), 3),
            "local_max_ms": round(max(lat), 3),
        },
    )


if __name__ == "__main__":
    main()
