"""Idle cost of `pi-notifier run --json --no-tray --no-notify` over the 5,000-session folder made
by bench/scale.py: CPU seconds used while nothing changes, and resident memory.
Targets (docs/contract.md §7): ≈ 0 CPU (no polling), RSS ≤ 60 MB."""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from common import OUT, Reader, cpu_s, rss_mb, save, start_run  # noqa: E402


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--dir", default=str(OUT / "sessions-5000"))
    ap.add_argument("--seconds", type=float, default=20.0)
    args = ap.parse_args()
    root = Path(args.dir)
    if not root.exists():
        raise SystemExit(f"{root} is missing: run bench/scale.py first")
    t0 = time.monotonic()
    proc = start_run(root)
    reader = Reader(proc)
    reader.start()
    if not reader.ready.wait(120):
        raise SystemExit("pi-notifier did not become ready")
    ready_s = time.monotonic() - t0
    time.sleep(1.0)  # let start-up work (first liveness check etc.) finish before measuring
    c0 = cpu_s(proc.pid)
    time.sleep(args.seconds)
    c1 = cpu_s(proc.pid)
    rss = rss_mb(proc.pid)
    proc.terminate()
    proc.wait(5)
    ready = next(e for _, e in reader.events if e["event"] == "ready")
    save(
        "idle",
        {
            "sessions": ready["sessions"],
            "pending_at_start": ready["pending"],
            "ready_after_s": round(ready_s, 2),
            "scan_s": ready["scan_s"],
            "idle_seconds": args.seconds,
            "idle_cpu_s": round(c1 - c0, 3),
            "idle_cpu_percent": round(100 * (c1 - c0) / args.seconds, 3),
            "rss_mb": round(rss, 1),
        },
    )


if __name__ == "__main__":
    main()
