"""Shared bench helpers: start `pi-notifier run --json` as another process and read its events."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
OUT = ROOT / "bench" / "out"


def compile_package() -> None:
    """Byte-compile the package first, as an installed one is (pip compiles at install time):
    otherwise every run would compile its sources again where PYTHONDONTWRITEBYTECODE is set."""
    import compileall

    compileall.compile_dir(str(ROOT / "notifier"), quiet=1)


def fresh_env(state: str | None = None) -> dict[str, str]:
    """The environment of an app the bench starts: its own home, state folder (``state``, else a
    new empty one), config, data, cache and runtime folders, never the user's (whose scan cache,
    history, settings and running app would change what is measured, and would be changed by it)."""
    home = tempfile.mkdtemp(prefix="pi-notifier-bench-home-")
    runtime = os.path.join(home, "run")
    os.mkdir(runtime, 0o700)
    env = {k: v for k, v in os.environ.items() if not k.startswith("PI_CODING_AGENT_")}
    return dict(
        env,
        HOME=home,
        XDG_STATE_HOME=state or os.path.join(home, "state"),
        XDG_CONFIG_HOME=os.path.join(home, "config"),
        XDG_DATA_HOME=os.path.join(home, "data"),
        XDG_CACHE_HOME=os.path.join(home, "cache"),
        XDG_RUNTIME_DIR=runtime,
    )


def start_run(sessions: Path, *extra: str, state: str | None = None) -> subprocess.Popen[str]:
    """``run --json`` on ``sessions`` in its own state folder (``state``: this one, e.g. to
    start again where a run before left its scan cache)."""
    return subprocess.Popen(
        [
            sys.executable,
            "-m",
            "notifier",
            "run",
            "--json",
            "--no-tray",
            "--no-notify",
            "--liveness",
            "off",
            "--sessions-dir",
            str(sessions),
            *extra,
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        bufsize=1,
        cwd=ROOT,
        env=fresh_env(state),
    )


class Reader(threading.Thread):
    """Timestamps each event line on arrival (CLOCK_MONOTONIC, shared by every process)."""

    def __init__(self, proc: subprocess.Popen[str]) -> None:
        super().__init__(daemon=True)
        self.proc = proc
        self.events: list[tuple[float, dict[str, Any]]] = []
        self.ready = threading.Event()

    def run(self) -> None:
        assert self.proc.stdout is not None
        for raw in self.proc.stdout:
            now = time.monotonic()
            obj = json.loads(raw)
            self.events.append((now, obj))
            if obj["event"] == "ready":
                self.ready.set()


def stop(proc: subprocess.Popen[str], reader: Reader | None = None) -> None:
    """Stop the app (SIGTERM) and fail the bench unless it was still running and ends cleanly:
    figures from an app that died midway would only look good."""
    alive = proc.poll() is None
    proc.terminate()
    try:
        code = proc.wait(5)
    except subprocess.TimeoutExpired:
        proc.kill()
        code = proc.wait()
    if reader is not None:
        reader.join(5)
    if not alive or code != 0:
        err = proc.stderr.read() if proc.stderr is not None else ""
        raise SystemExit(f"pi-notifier {'had ended' if not alive else 'ended with ' + str(code)}: {err[-2000:]}")


def running(proc: subprocess.Popen[str]) -> None:
    """Fail the bench if the app is no longer running (a dead process reads as idle)."""
    if proc.poll() is not None:
        err = proc.stderr.read() if proc.stderr is not None else ""
        raise SystemExit(f"pi-notifier ended (code {proc.returncode}) while measured: {err[-2000:]}")


def pct(values: list[float], p: float) -> float:
    s = sorted(values)
    if not s:
        return float("nan")
    k = min(len(s) - 1, max(0, round(p / 100 * (len(s) - 1))))
    return s[k]


def save(name: str, data: dict[str, Any]) -> None:
    OUT.mkdir(parents=True, exist_ok=True)
    (OUT / f"{name}.json").write_text(json.dumps(data, indent=2))
    print(json.dumps(data, indent=2))


def rss_mb(pid: int) -> float:
    with open(f"/proc/{pid}/status") as fh:
        for line in fh:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    return float("nan")


def cpu_s(pid: int) -> float:
    """CPU seconds (user + system) of the process and every thread it had, in clock ticks
    (usually 10 ms): counted by sampling, so a figure of a few tenths of a second is coarse."""
    with open(f"/proc/{pid}/stat") as fh:
        fields = fh.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def thread_cpu_ns(pid: int) -> dict[int, int]:
    """Each live thread of ``pid`` → the CPU time it ran, in ns: the scheduler's own account
    (``/proc/PID/task/TID/schedstat``, its first field), exact where :func:`cpu_s` samples. A
    thread that ended is no longer listed (compare the threads of two readings)."""
    out: dict[int, int] = {}
    for tid in os.listdir(f"/proc/{pid}/task"):
        try:
            with open(f"/proc/{pid}/task/{tid}/schedstat") as fh:
                out[int(tid)] = int(fh.read().split()[0])
        except (OSError, ValueError, IndexError):
            continue  # (ended meanwhile)
    return out


def cpu_between(before: dict[int, int], after: dict[int, int]) -> float | None:
    """CPU seconds the threads ran between two :func:`thread_cpu_ns` readings; ``None`` if a
    thread of the first ended before the second (its time would be missing: use :func:`cpu_s`)."""
    if not before.keys() <= after.keys():
        return None
    return sum(after[tid] - before.get(tid, 0) for tid in after) / 1e9
