"""Startup cost over many sessions: `status --json` on 5,000 files / ~2 GB, against a script that
only reads the last 16 KB of every file (the floor). Target (DESIGN §7): cold ≤ 5× and warm ≤ 2.5× the floor, and the
cost grows with the number of files, not their bytes. Measured cold (no scan cache: every file's
bounded tail is read) and warm (the scan cache of the run before: unchanged files are not read),
and both must print the same status.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from common import OUT, ROOT, compile_package, fresh_env, save  # noqa: E402
from corpus import DENSE_TAILS, generate, generate_dense  # noqa: E402

FLOOR = r"""
import os, sys
n = 0
for d, _, files in os.walk(sys.argv[1]):
    for f in files:
        if f.endswith(".jsonl"):
            with open(os.path.join(d, f), "rb") as fh:
                fh.seek(0, 2)
                size = fh.tell()
                fh.seek(max(0, size - 16384))
                fh.read()
            n += 1
print(n)
"""


# Peak memory of a cold ``status`` (it writes its scan cache itself, before it exits). The
# arguments are status's own: a run that fails says so instead of a figure.
RSS = r"""
import sys
from notifier.cli.parser import main
if main(sys.argv[1:]):
    raise SystemExit("status failed")
sys.stdout.flush()
print([l.split()[1] for l in open("/proc/self/status") if l.startswith("VmHWM")][0], file=sys.stderr)
"""


CPU: dict[int, list[float]] = {}  # id of a command → CPU seconds (user + system) of each run


def _children_cpu() -> float:
    """CPU seconds (user + system) of the waited-for children so far, to the microsecond
    (``os.times`` counts in clock ticks of 10 ms, too coarse for runs of a few tenths)."""
    try:
        import resource
    except ImportError:  # (not on Windows)
        t = os.times()
        return t.children_user + t.children_system
    r = resource.getrusage(resource.RUSAGE_CHILDREN)
    return r.ru_utime + r.ru_stime


def timed(cmd: list[str], state: str | None = None) -> tuple[float, str]:
    """Wall seconds and stdout of one run, until it exits; its CPU seconds go to ``CPU`` (on a
    loaded machine the wall time includes waiting for a core, the CPU time much less so)."""
    env = fresh_env(state) if state else None  # (status: its own home and folders, never the user's)
    before = _children_cpu()
    t0 = time.perf_counter()
    # (run from the repository: ``-m notifier`` takes the package of the current folder first)
    out = subprocess.run(cmd, capture_output=True, text=True, env=env, cwd=ROOT)
    wall = time.perf_counter() - t0
    if out.returncode != 0:
        raise SystemExit(f"{' '.join(cmd[:4])}… ended with {out.returncode}: {out.stderr[-2000:]}")
    CPU.setdefault(id(cmd), []).append(_children_cpu() - before)
    return wall, out.stdout


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--files", type=int, default=5000)
    ap.add_argument("--gb", type=float, default=2.0)
    ap.add_argument("--dir", default=str(OUT / "sessions-5000"))
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--dense", action="store_true", help="the line-dense corpus (about 140 entries per 16 KB)")
    ap.add_argument(
        "--tails",
        default=",".join(map(str, DENSE_TAILS)),
        help="dense corpus: entries that change nothing after each file's last message, one of "
        "these counts per file (default %(default)s)",
    )
    args = ap.parse_args()
    tails = tuple(int(t) for t in args.tails.split(","))
    name = "dense" if tails == DENSE_TAILS else "dense-tails-" + "-".join(map(str, tails))
    if args.dense and args.dir == str(OUT / "sessions-5000"):
        args.dir = str(OUT / f"sessions-5000-{name}")
    root = Path(args.dir)
    t0 = time.perf_counter()
    if args.dense:
        info = generate_dense(root, args.files, int(args.gb * (1 << 30)), tails=tails)
    else:
        info = generate(root, args.files, int(args.gb * (1 << 30)))
    gen_s = time.perf_counter() - t0
    py = sys.executable
    compile_package()
    load_before = os.getloadavg()
    status = [py, "-m", "notifier", "status", "--json", "--liveness", "off", "--sessions-dir", str(root)]
    floor = [py, "-c", FLOOR, str(root)]
    empty = tempfile.mkdtemp(prefix="pi-notifier-bench-empty-")
    # the fixed cost: interpreter, imports, config, output, over a folder with no session
    noop = [py, "-m", "notifier", "status", "--json", "--liveness", "off", "--sessions-dir", empty]
    timed(floor)  # warm the page cache for both alike
    timed(status, tempfile.mkdtemp(prefix="pi-notifier-bench-"))  # … and for what status reads beyond
    CPU.clear()
    # The floor is timed between the runs it is compared with (not all before them): a shared
    # machine that speeds up or slows down meanwhile moves both alike, not the ratio. Each ratio
    # takes the best of as many floor runs as status runs (the best of more runs is lower).
    floor_cold: list[float] = []
    # cold: a fresh state folder each time, so no scan cache: every file's bounded tail is read
    cold = []
    for _ in range(args.runs):
        floor_cold.append(timed(floor)[0])
        cold.append(timed(status, tempfile.mkdtemp(prefix="pi-notifier-bench-")))
    cold_s = min(r[0] for r in cold)
    cold_cpu = min(CPU.pop(id(status)))
    # warm: the scan cache from the run before; unchanged files are not read at all
    state = tempfile.mkdtemp(prefix="pi-notifier-bench-")
    timed(status, state)
    floor_warm: list[float] = []
    warm = []
    for _ in range(args.runs):
        floor_warm.append(timed(floor)[0])
        warm.append(timed(status, state))
    warm_s = min(r[0] for r in warm)
    floor_s, floor_warm_s = min(floor_cold), min(floor_warm)
    warm_cpu = min(CPU[id(status)][1:])  # (not the run that wrote the cache)
    floor_cpu = min(CPU[id(floor)][: args.runs])
    floor_warm_cpu = min(CPU[id(floor)][args.runs :])
    data = json.loads(cold[0][1])
    if any(json.loads(r[1]) != data for r in cold[1:]):
        raise SystemExit("two cold runs of status printed different status")
    if any(json.loads(r[1]) != data for r in warm):
        raise SystemExit("status with the scan cache differs from status without it")
    if data["pending"] != info["pending"]:
        raise SystemExit("status found a different number of pending questions than were written")
    startup_s = min(timed(noop, tempfile.mkdtemp(prefix="pi-notifier-bench-"))[0] for _ in range(args.runs))
    result = {
        "files": info["files"],
        "gib": round(info["bytes"] / (1 << 30), 2),
        "generated_in_s": round(gen_s, 1),
        "floor_read_last_16k_s": round(floor_s, 3),
        "status_json_cold_s": round(cold_s, 3),
        "ratio_cold": round(cold_s / floor_s, 2),
        "status_json_warm_s": round(warm_s, 3),
        "floor_read_last_16k_warm_s": round(floor_warm_s, 3),  # (the floor runs between the warm ones)
        "ratio_warm": round(warm_s / floor_warm_s, 2),
        "status_no_sessions_s": round(startup_s, 3),
        "cores": len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count(),
        "cpu_floor_s": round(floor_cpu, 4),
        "cpu_cold_s": round(cold_cpu, 4),
        "cpu_ratio_cold": round(cold_cpu / floor_cpu, 2),
        "cpu_warm_s": round(warm_cpu, 4),
        "cpu_ratio_warm": round(warm_cpu / floor_warm_cpu, 2),
        "runs": args.runs,
        "load_avg_1m_before_after": [round(load_before[0], 2), round(os.getloadavg()[0], 2)],
        "status_sessions": len(data["sessions"]),
        "status_pending": data["pending"],
        "expected_pending": info["pending"],
    }
    rss = subprocess.run(
        [py, "-c", RSS, *status[3:]],  # (status's arguments)
        capture_output=True,
        text=True,
        env=fresh_env(),
        cwd=ROOT,
    )
    if rss.returncode != 0:
        raise SystemExit(f"status (memory run) ended with {rss.returncode}: {rss.stderr[-2000:]}")
    own_kb = rss.stderr.strip().splitlines()[-1]
    result["status_json_cold_peak_rss_mb"] = round(int(own_kb) / 1024, 1)
    result["corpus"] = name if args.dense else "default"
    save(f"scale-{name}" if args.dense else "scale", result)


if __name__ == "__main__":
    main()
