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


def fresh_env(state: str | None = None) -> dict[str, str]:
    """The environment of an app the bench starts: its own state folder (``state``, else a new
    empty one) and an empty config folder, never the user's (whose scan cache, history and
    settings would change what is measured, and would be changed by it)."""
    return dict(
        os.environ,
        XDG_STATE_HOME=state or tempfile.mkdtemp(prefix="pi-notifier-bench-state-"),
        XDG_CONFIG_HOME=tempfile.mkdtemp(prefix="pi-notifier-bench-config-"),
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
    with open(f"/proc/{pid}/stat") as fh:
        fields = fh.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
