"""Idle cost of `pi-notifier run --json --no-tray --no-notify` over the 5,000-session folder made
by bench/scale.py: CPU seconds used while nothing changes, and resident memory. The app runs in a
state folder of its own, started twice: once to build its scan cache (a first start), then the
measured run, started as every later start is (with the cache of the run before).
Targets (docs/contract.md §7): ≈ 0 CPU (no polling), RSS ≤ 60 MB."""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
from common import OUT, Reader, compile_package, cpu_s, rss_mb, running, save, start_run, stop  # noqa: E402


def start_and_ready(root: Path, state: str, keep: bool = False) -> tuple[float, Any, Any]:
    """Start the app and wait for ``ready``: the seconds it took, and (``keep``) the running
    app and its reader (else the app is stopped)."""
    t0 = time.monotonic()
    proc = start_run(root, state=state)
    reader = Reader(proc)
    reader.start()
    if not reader.ready.wait(120):
        stop(proc, reader)
        raise SystemExit("pi-notifier did not become ready")
    took = time.monotonic() - t0
    if not keep:
        stop(proc, reader)
        return took, None, None
    return took, proc, reader


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--dir", default=str(OUT / "sessions-5000"))
    ap.add_argument("--seconds", type=float, default=20.0)
    args = ap.parse_args()
    root = Path(args.dir)
    if not root.exists():
        raise SystemExit(f"{root} is missing: run bench/scale.py first")
    compile_package()  # (each start imports the package: never measure its compiling)
    state = tempfile.mkdtemp(prefix="pi-notifier-bench-state-")
    first_s, _, _ = start_and_ready(root, state)  # (builds the scan cache, then stops)
    ready_s, proc, reader = start_and_ready(root, state, keep=True)
    time.sleep(1.0)  # let start-up work (first liveness check etc.) finish before measuring
    running(proc)
    c0 = cpu_s(proc.pid)
    time.sleep(args.seconds)
    running(proc)
    c1 = cpu_s(proc.pid)
    rss = rss_mb(proc.pid)
    stop(proc, reader)
    ready = next(e for _, e in reader.events if e["event"] == "ready")
    save(
        "idle",
        {
            "sessions": ready["sessions"],
            "pending_at_start": ready["pending"],
            "first_ready_after_s": round(first_s, 2),  # no scan cache yet
            "ready_after_s": round(ready_s, 2),  # with the cache of the run before
            "scan_s": ready["scan_s"],
            "idle_seconds": args.seconds,
            "idle_cpu_s": round(c1 - c0, 3),
            "idle_cpu_percent": round(100 * (c1 - c0) / args.seconds, 3),
            "rss_mb": round(rss, 1),
        },
    )


if __name__ == "__main__":
    main()
