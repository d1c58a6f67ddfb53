"""Startup cost over many sessions: `status --json` on 5,000 files / ~2 GB, against a script that
only reads the last 16 KB of every file (the floor). Target (docs/contract.md §7): ≤ 3× the floor, and the
cost grows with the number of files, not their bytes. Measured cold (no scan cache: every file's
bounded tail is read) and warm (the scan cache of the run before: unchanged files are not read),
and both must print the same status.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from common import OUT, ROOT, adopt_orphans, reap_orphans, save  # noqa: E402

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


# Peak memory of a cold ``status``: the process itself, and the largest of the processes it made
# (a worker reading its share of the files; the one writing the scan cache, which outlives it and
# is waited for here as an orphan). The arguments are status's own: a run that fails says so
# instead of a figure.
RSS = r"""
import resource, sys
sys.path.insert(0, sys.argv[1])
from common import adopt_orphans, reap_orphans
adopted = adopt_orphans()
from notifier.cli.parser import main
if main(sys.argv[2:]):  # (given its arguments, main returns instead of leaving the process)
    raise SystemExit("status failed")
sys.stdout.flush()
own = [l.split()[1] for l in open("/proc/self/status") if l.startswith("VmHWM")][0]
reap_orphans()
print(own, resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss, int(adopted), file=sys.stderr)
"""


def line(obj: dict) -> bytes:
    return (json.dumps(obj, separators=(",", ":")) + "\n").encode()


def generate(root: Path, files: int, total_bytes: int, seed: int = 7) -> dict:
    marker = root / ".generated.json"
    want = {"files": files, "bytes": total_bytes, "seed": seed, "layout": 2}
    if marker.exists() and json.loads(marker.read_text()).get("spec") == want:
        return json.loads(marker.read_text())
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
) -> dict:
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
        return json.loads(marker.read_text())
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
    loaded machine the wall time includes waiting for a core, the CPU time much less so). The
    CPU time includes the process that writes a cold run's scan cache after it exited: it is
    waited for after the run (see ``adopt_orphans`` in main), so the next run starts alone and a
    warm run finds the cache written."""
    env = dict(os.environ, XDG_STATE_HOME=state) if state else None
    before = _children_cpu()
    t0 = time.perf_counter()
    # (run from the repository: ``-m notifier`` takes the package of the current folder first)
    out = subprocess.run(cmd, capture_output=True, text=True, env=env, cwd=ROOT)
    wall = time.perf_counter() - t0
    if out.returncode != 0:
        raise SystemExit(f"{' '.join(cmd[:4])}… ended with {out.returncode}: {out.stderr[-2000:]}")
    reap_orphans()
    CPU.setdefault(id(cmd), []).append(_children_cpu() - before)
    return wall, out.stdout


def compile_package() -> None:
    """Byte-compile the package first, as an installed one is (pip compiles at install time):
    otherwise every run would compile its sources again where PYTHONDONTWRITEBYTECODE is set."""
    import compileall

    compileall.compile_dir(str(Path(__file__).resolve().parents[1] / "notifier"), quiet=1)


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
    if not adopt_orphans():
        raise SystemExit("cannot wait for the process that writes a cold status's scan cache (Linux only)")
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
        [py, "-c", RSS, str(Path(__file__).resolve().parent), *status[3:]],  # (status's arguments)
        capture_output=True,
        text=True,
        env=dict(os.environ, XDG_STATE_HOME=tempfile.mkdtemp(prefix="pi-notifier-bench-")),
        cwd=ROOT,
    )
    if rss.returncode != 0:
        raise SystemExit(f"status (memory run) ended with {rss.returncode}: {rss.stderr[-2000:]}")
    own_kb, child_kb, adopted = rss.stderr.strip().splitlines()[-1].split()
    if adopted != "1":
        raise SystemExit("the memory run could not wait for the process writing the scan cache")
    result["status_json_cold_peak_rss_mb"] = round(int(own_kb) / 1024, 1)
    result["status_json_cold_peak_rss_child_mb"] = round(int(child_kb) / 1024, 1)
    result["corpus"] = name if args.dense else "default"
    save(f"scale-{name}" if args.dense else "scale", result)


if __name__ == "__main__":
    main()
