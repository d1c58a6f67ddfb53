"""A remote that floods (a command remote printing the run --json stream as fast as it can):
the app's memory stays bounded, a local question is still reported at once, and what is dropped
is said once. Bounded in time (the flood runs while a few local questions are asked) and on
loopback only; bench/remote_flood.py runs the full trial and reports the figures."""

from __future__ import annotations

import sys
import time
from pathlib import Path
from typing import Any

from ..app_process import AppProcess
from ..conftest import wait_for
from ..writer import append, ask, header

FLOOD = Path(__file__).with_name("flood_remote.py")
RSS_LIMIT_MB = 200


def rss_mb(pid: int) -> float:
    with open(f"/proc/{pid}/status") as fh:
        for line in fh:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    raise AssertionError("no VmRSS")


def flooded_app(tmp_path: Path, mode: str, n: int) -> tuple[AppProcess, Path]:
    local = tmp_path / "local"
    (local / "--home-dev-mine--").mkdir(parents=True)
    config = tmp_path / "config.toml"
    config.write_text(
        f'[[remotes]]\nname = "flood"\ncommand = ["{sys.executable}", "{FLOOD}", "{mode}", "{n}"]\n'
    )
    app = AppProcess(
        "run",
        "--json",
        "--no-tray",
        "--no-notify",
        "--liveness",
        "off",
        "--sessions-dir",
        str(local),
        "--config",
        str(config),
    )
    return app, local / "--home-dev-mine--" / "2026-12-01T00-00-00-000Z_mine.jsonl"


def remote_needs(app: AppProcess) -> list[dict[str, Any]]:
    return [e for e in app.of("needs_input") if e["session"].get("host") == "flood"]


def local_latency(app: AppProcess, session: Path, n: int) -> float:
    """Ask a local question; seconds until the app reported it."""
    began = time.monotonic()
    append(session, ask(f"local-{n}", f"Local {n}?"))
    wait_for(
        lambda: any(e["question"]["tool_call_id"] == f"local-{n}" for e in app.of("needs_input")),
        20,
        f"local question {n}",
    )
    return time.monotonic() - began


def test_a_remote_flooding_with_huge_questions_keeps_memory_bounded(tmp_path: Path) -> None:
    app, session = flooded_app(tmp_path, "big", 20_000)
    with app:
        app.wait("ready")
        append(session, header("/home/dev/mine"))
        app.log_has("reading it no faster", 30)  # the flood is on
        peak, slowest = 0.0, 0.0
        for n in range(8):  # spread over the flood: one each time more of it was taken in

            def more(seen: int = len(remote_needs(app))) -> bool:
                return len(remote_needs(app)) > seen

            wait_for(more, 20, "more of the flood")
            slowest = max(slowest, local_latency(app, session, n))
            peak = max(peak, rss_mb(app.proc.pid))
        remote = remote_needs(app)
        assert remote, "the remote's questions are still read"
        assert all(len(str(e["question"]["text"])) <= 4000 for e in remote)  # bounded in bytes
        assert peak <= RSS_LIMIT_MB, f"RSS {peak:.0f} MB"
        assert slowest < 2.0, f"a local question took {slowest:.2f} s"
        assert sum("reading it no faster" in line for line in app.stderr) == 1
        assert app.proc.poll() is None


def test_a_remote_flooding_with_small_events_does_not_hold_up_local_questions(tmp_path: Path) -> None:
    app, session = flooded_app(tmp_path, "small", 300_000)
    with app:
        app.wait("ready")
        append(session, header("/home/dev/mine"))
        app.log_has("reading it no faster", 30)
        slowest = max(local_latency(app, session, n) for n in range(8))
        assert slowest < 2.0, f"a local question took {slowest:.2f} s (27.7 s before the fix)"
        assert app.proc.poll() is None
