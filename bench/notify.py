"""Time from a question line appended by a pi to the `Notify` call on a real notification server.

A stand-in pi (a process named `pi`, its terminal a pseudo-terminal in raw mode as pi's TUI sets
it, or cooked as `pi -p` leaves it) writes its session file; `pi-notifier run --no-tray` watches it
and notifies through dunst on a private bus under Xvfb; a D-Bus monitor stamps each Notify call
as the bus delivers it (CLOCK_MONOTONIC, shared by every process). The first question of a pi is
notified after the settle window (the liveness probe has not seen the pi yet); once it has, a TUI
pi's questions go out at once. Target (DESIGN.md §7): ≤ 20 ms for a pi known to be interactive;
a cooked terminal keeps the 250 ms settle window.
"""

from __future__ import annotations

import argparse
import os
import pty
import subprocess
import sys
import tempfile
import textwrap
import time
import tty
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parent))
from common import ROOT, fresh_env, pct, save, stop  # noqa: E402

from tests.conftest import wait_for  # noqa: E402
from tests.desktop.services import Dunst, Monitor, start_bus, start_xvfb  # noqa: E402
from tests.desktop.services import stop as end  # noqa: E402

PI = textwrap.dedent(
    r"""
    import json, os, sys, time
    path, n = sys.argv[1], int(sys.argv[2])
    def line(o): return (json.dumps(o, separators=(",", ":")) + "\n").encode()
    ms, rand = int(time.time() * 1000), os.urandom(10).hex()
    sid = f"{ms >> 16:08x}-{ms & 0xFFFF:04x}-7{rand[:3]}-8{rand[4:7]}-{rand[7:19]}"
    fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
    os.write(fd, line({"type": "session", "version": 3, "id": sid, "timestamp": "2026-11-30T00:00:00.000Z", "cwd": os.getcwd()}))
    for i in range(n):
        sys.stdin.buffer.read(1)  # the bench says when
        ask = line({"type": "message", "id": f"a{i}", "parentId": None, "timestamp": "2026-11-30T00:00:01.000Z",
                    "message": {"role": "assistant", "stopReason": "toolUse", "content": [
                        {"type": "toolCall", "id": f"q{i}", "name": "question",
                         "arguments": {"question": f"Question {i}?", "options": [{"label": "Yes"}, {"label": "No"}]}}]}})
        t0 = time.monotonic()
        os.write(fd, ask)
        print(f"ask {i} {t0!r}", flush=True)
        sys.stdin.buffer.read(1)
        os.write(fd, line({"type": "message", "id": f"r{i}", "parentId": f"a{i}", "timestamp": "2026-11-30T00:00:02.000Z",
                           "message": {"role": "toolResult", "toolCallId": f"q{i}", "toolName": "question",
                                       "content": [{"type": "text", "text": "User selected: 1. Yes"}],
                                       "details": {"answer": "Yes"}, "isError": False}}))
    time.sleep(3600)
    """
)


class StandIn:
    """A stand-in pi on a pseudo-terminal (raw, as pi's TUI; or cooked, as `pi -p`)."""

    def __init__(self, tmp: Path, sessions: Path, n: int, raw: bool) -> None:
        self.master, slave = pty.openpty()
        if raw:
            tty.setraw(slave)
        exe = tmp / "bin" / "pi"
        exe.parent.mkdir(exist_ok=True)
        exe.write_text(f"#!{sys.executable}\n{PI}")
        exe.chmod(0o755)
        project = tmp / ("tui" if raw else "print")
        project.mkdir()
        folder = sessions / f"--{project.name}--"
        folder.mkdir(parents=True)
        self.proc = subprocess.Popen(
            [str(exe), str(folder / "s.jsonl"), str(n)], stdin=slave, stdout=subprocess.PIPE, text=True, cwd=project
        )
        os.close(slave)

    def step(self) -> float | None:
        """Ask the next question; the monotonic time just before its line was written."""
        os.write(self.master, b"\n")
        assert self.proc.stdout is not None
        line = self.proc.stdout.readline().split()
        return float(line[2]) if line else None

    def answer(self) -> None:
        os.write(self.master, b"\n")

    def close(self) -> None:
        end(self.proc)
        os.close(self.master)


def run(n: int) -> dict[str, object]:
    tmp = Path(tempfile.mkdtemp(prefix="pi-notifier-bench-notify-"))
    xvfb, display = start_xvfb()
    bus, address = start_bus(tmp)
    env = dict(fresh_env(), DISPLAY=display, DBUS_SESSION_BUS_ADDRESS=address, NO_AT_BRIDGE="1")
    os.environ.update(DBUS_SESSION_BUS_ADDRESS=address)
    dunst = Dunst(env, tmp)
    monitor = Monitor()
    sessions = tmp / "sessions"
    sessions.mkdir()
    app = subprocess.Popen(
        [sys.executable, "-m", "notifier", "run", "--no-tray", "--sessions-dir", str(sessions)],
        cwd=ROOT, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, text=True,
    )  # fmt: skip
    figures: dict[str, object] = {}
    try:
        time.sleep(1.0)  # the app's start-up scan and watcher (the first question is measured apart)
        for raw in (True, False):
            pi = StandIn(tmp, sessions, n, raw)
            delays = []
            for i in range(n):
                seen = len(monitor.notifies())
                t0 = pi.step()
                assert t0 is not None

                def notified(s: int = seen) -> bool:
                    return len(monitor.notifies()) > s

                wait_for(notified, 10, f"question {i}'s notification")
                delays.append((monitor.stamps("Notify")[-1] - t0) * 1000)
                pi.answer()
                time.sleep(0.3)  # withdrawn, and the next question is not part of a burst
            pi.close()
            kind = "tui" if raw else "cooked"
            figures[f"{kind}_first_ms"] = round(delays[0], 2)
            later = sorted(delays[1:])
            figures[f"{kind}_p50_ms"] = round(pct(later, 50), 2)
            figures[f"{kind}_p99_ms"] = round(pct(later, 99), 2)
            figures[f"{kind}_max_ms"] = round(later[-1], 2)
    finally:
        stop(app)
        monitor.close()
        dunst.stop()
        end(bus)
        end(xvfb)
    return figures


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("-n", type=int, default=20, help="questions per stand-in pi (the first is apart)")
    figures = run(parser.parse_args().n)
    print(figures)
    save("notify", figures)


if __name__ == "__main__":
    main()
