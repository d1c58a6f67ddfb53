"""CPU of `pi-notifier run --json` while agents write, against `tail -F` following the same files.

Ten writer processes (one per session, each in a folder of its own) append what pi writes while an
agent runs tools: an assistant message calling ``bash`` and the tool's result, its output as text
(log and test output, 1–32 KB, brackets and escapes included), one write(2) per line on an
``O_APPEND`` descriptor, paced to ``--mb-per-s`` (4) in all for ``--seconds`` (10). Each ends with
a question, so the app has caught up when it reported all ten; `tail -F -q -n 0` on the same files
has caught up when it printed every byte appended. CPU seconds of each (every thread, user and
system) over the same span, as the scheduler counts them in ns (/proc/PID/task/*/schedstat); the
clock-tick figure of /proc/PID/stat (10 ms samples) is reported beside it, and used instead if a
thread ended during the span. Target (docs/contract.md §7): the app within 10× of `tail -F`.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import textwrap
import threading
import time
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from common import Reader, cpu_between, cpu_s, running, save, start_run, stop, thread_cpu_ns  # noqa: E402

WRITERS = 10

WRITER = textwrap.dedent(
    r"""
    import json, os, random, sys, time
    path, rate, seconds, start, seed = sys.argv[1], float(sys.argv[2]), float(sys.argv[3]), float(sys.argv[4]), int(sys.argv[5])
    rng = random.Random(seed)
    def line(o): return (json.dumps(o, separators=(",", ":")) + "\n").encode()
    def stamp(): return time.strftime("%Y-%m-%dT%H:%M:%S.000Z", time.gmtime())
    LOG = [
        "test_{w}.py::test_{w}_{n} PASSED{pad}[{p:3d}%]",
        "{w}/{w}_{n}.c:{n}:{p}: warning: unused variable '{w}' [-Wunused-variable]",
        '{{"level":"info","msg":"{w} done","took_ms":{n},"ok":true}}',
        "  File \"/home/dev/proj/{w}.py\", line {n}, in {w}\n    return {w}[{p}] \\\\ \"{w}\"",
        "{p:>6} {w:<12} {n:>8}  {w}/{w}/{w}.ts",
    ]
    WORDS = "alpha beta gamma delta parser engine board tailer sink watch reader writer config".split()
    def output(size):
        rows, total = [], 0
        while total < size:
            row = rng.choice(LOG).format(w=rng.choice(WORDS), n=rng.randrange(1, 5000), p=rng.randrange(0, 101), pad=" " * rng.randrange(1, 30))
            rows.append(row)
            total += len(row) + 1
        return "\n".join(rows)
    pool = [output(int(rng.triangular(1024, 32768, 2048))) for _ in range(40)]
    fd = os.open(path, os.O_WRONLY | os.O_APPEND)
    while time.time() < start:
        time.sleep(0.001)
    t0, sent, i, parent = time.monotonic(), 0, 0, "h"
    def put(data):
        global sent
        wait = t0 + sent / rate - time.monotonic()
        if wait > 0:
            time.sleep(wait)
        os.write(fd, data)
        sent += len(data)
    while time.monotonic() - t0 < seconds:
        call = f"call_bash_{seed}_{i}"
        put(line({"type": "message", "id": f"a{i}", "parentId": parent, "timestamp": stamp(),
                  "message": {"role": "assistant", "content": [{"type": "toolCall", "id": call, "name": "bash",
                              "arguments": {"command": f"make test TARGET={rng.choice(WORDS)}", "timeout": 600}}],
                              "api": "openai-completions", "provider": "bench", "model": "bench-model",
                              "usage": {"input": 1200 + i, "output": 40, "cacheRead": 0, "cacheWrite": 0, "totalTokens": 1240 + i},
                              "stopReason": "toolUse", "timestamp": int(time.time() * 1000)}}))
        text = pool[i % len(pool)]
        put(line({"type": "message", "id": f"r{i}", "parentId": f"a{i}", "timestamp": stamp(),
                  "message": {"role": "toolResult", "toolCallId": call, "toolName": "bash",
                              "content": [{"type": "text", "text": text}],
                              "details": {"exitCode": 0, "truncated": False}, "isError": False,
                              "timestamp": int(time.time() * 1000)}}))
        parent, i = f"r{i}", i + 1
    put(line({"type": "message", "id": "q", "parentId": parent, "timestamp": stamp(),
              "message": {"role": "assistant", "stopReason": "toolUse", "content": [
                  {"type": "toolCall", "id": f"q{seed}", "name": "question",
                   "arguments": {"question": "Done: ship it?", "options": [{"label": "Yes"}, {"label": "No"}]}}]}}))
    print(json.dumps({"bytes": sent, "lines": 2 * i + 1, "seconds": time.monotonic() - t0}), flush=True)
    """
)


class Counter(threading.Thread):
    """Counts the bytes `tail -F` prints."""

    def __init__(self, proc: subprocess.Popen[bytes]) -> None:
        super().__init__(daemon=True)
        self.proc = proc
        self.bytes = 0

    def run(self) -> None:
        assert self.proc.stdout is not None
        fd = self.proc.stdout.fileno()
        while chunk := os.read(fd, 1 << 16):
            self.bytes += len(chunk)


def wait_until(done: Callable[[], bool], what: str, timeout: float) -> None:
    deadline = time.monotonic() + timeout
    while not done():
        if time.monotonic() > deadline:
            raise SystemExit(f"timed out waiting for {what}")
        time.sleep(0.01)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--seconds", type=float, default=10.0)
    ap.add_argument("--mb-per-s", type=float, default=4.0, help="all writers together")
    args = ap.parse_args()
    rate = args.mb_per_s * 1e6 / WRITERS
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        files = []
        for w in range(WRITERS):
            folder = root / f"--agent{w}--"
            folder.mkdir()
            f = folder / "s.jsonl"
            head = {"type": "session", "version": 3, "id": f"busy{w}", "timestamp": "2026-11-30T00:00:00.000Z", "cwd": f"/busy/{w}"}
            f.write_text(json.dumps(head) + "\n")
            files.append(f)
        proc = start_run(root)
        reader = Reader(proc)
        reader.start()
        if not reader.ready.wait(30):
            raise SystemExit("pi-notifier did not become ready")
        tail = subprocess.Popen(["tail", "-F", "-q", "-n", "0", *map(str, files)], stdout=subprocess.PIPE)
        counter = Counter(tail)
        counter.start()
        time.sleep(0.5)  # (tail opens its files and sets up its watches)
        running(proc)
        load = os.getloadavg()
        app0, tail0 = cpu_s(proc.pid), cpu_s(tail.pid)
        app0_ns, tail0_ns = thread_cpu_ns(proc.pid), thread_cpu_ns(tail.pid)
        start = time.time() + 0.3
        writers = [
            subprocess.Popen(
                [sys.executable, "-c", WRITER, str(f), str(rate), str(args.seconds), repr(start), str(w)],
                stdout=subprocess.PIPE,
                text=True,
            )
            for w, f in enumerate(files)
        ]
        reports = []
        for writer in writers:
            out, _ = writer.communicate(timeout=args.seconds + 60)
            if writer.returncode != 0:
                raise SystemExit(f"a writer failed ({writer.returncode})")
            reports.append(json.loads(out))
        done = time.monotonic()
        written = sum(r["bytes"] for r in reports)
        asked = lambda: sum(1 for _, e in reader.events if e["event"] == "needs_input") >= WRITERS  # noqa: E731
        wait_until(asked, "the app to report every writer's question", 60)
        wait_until(lambda: counter.bytes >= written, "tail -F to print every byte", 60)
        running(proc)
        app_ns, tail_ns = cpu_between(app0_ns, thread_cpu_ns(proc.pid)), cpu_between(tail0_ns, thread_cpu_ns(tail.pid))
        app_ticks, tail_ticks = cpu_s(proc.pid) - app0, cpu_s(tail.pid) - tail0
        tail.terminate()
        tail.wait(5)
        stop(proc, reader)
    exact = app_ns is not None and tail_ns is not None  # (else a thread ended meanwhile: the ticks)
    app_cpu, tail_cpu = (app_ns, tail_ns) if app_ns is not None and tail_ns is not None else (app_ticks, tail_ticks)
    took = max(r["seconds"] for r in reports)
    behind = max(t for t, e in reader.events if e["event"] == "needs_input") - done
    save(
        "busy",
        {
            "writers": WRITERS,
            "seconds": round(took, 2),
            "mb_written": round(written / 1e6, 2),
            "mb_per_s": round(written / 1e6 / took, 2),
            "lines": sum(r["lines"] for r in reports),
            "app_cpu_s": round(app_cpu, 3),
            "tail_cpu_s": round(tail_cpu, 3),
            "ratio": round(app_cpu / tail_cpu, 2) if tail_cpu > 0 else None,
            "cpu_counted_by": "schedstat (ns)" if exact else "clock ticks",
            "ratio_by_ticks": round(app_ticks / tail_ticks, 2) if tail_ticks > 0 else None,
            "app_cpu_percent": round(100 * app_cpu / took, 1),
            "tail_cpu_percent": round(100 * tail_cpu / took, 2),
            "app_behind_writers_s": round(max(behind, 0.0), 3),  # the last question, after the writers ended
            "load_avg": [round(x, 2) for x in load],
        },
    )


if __name__ == "__main__":
    main()
