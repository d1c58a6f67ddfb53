"""Start-up and live watching agree, and nothing in a sessions folder can stop either: a FIFO,
a socket, a device or a symlink to one named *.jsonl; a file reached by two names; folders
deeper than pi's own layout; many nested folders (no false watch-limit line); a huge file."""

from __future__ import annotations

import json
import logging
import os
import socket
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from ..app_process import AppProcess
from ..conftest import ROOT, cli, wait_for
from ..harness import Harness
from ..writer import answer, append, ask, header, line, user


def status(sessions: Path) -> dict[str, Any]:
    out = cli("status", "--json", "--liveness", "off", "--sessions-dir", str(sessions), timeout=60)
    assert out.returncode == 0, out.stderr
    obj: dict[str, Any] = json.loads(out.stdout)
    return obj


def test_a_question_answered_before_start_up_is_not_announced(tmp_path: Path, fixtures: Path) -> None:
    """Cold cache, a real capture cut right after the answer (the toolResult is the last line)."""
    lines = (fixtures / "question-answer" / "B-answered.jsonl").read_bytes().splitlines(keepends=True)
    assert b'"toolResult"' in lines[6]
    f = tmp_path / "--p--" / "s.jsonl"
    append(f, *lines[:7])
    with AppProcess(
        "run", "--json", "--no-tray", "--no-notify", "--liveness", "off", "--sessions-dir", str(tmp_path)
    ) as app:
        (ready,) = app.wait("ready")
        assert ready["pending"] == 0 and ready["sessions"] == 1
        append(f, ask("q2", "Then this?"))
        app.wait("needs_input")
        assert [e["event"] for e in app.events] == ["ready", "needs_input"]  # no needs_input + resolved pair


def _odd_files(folder: Path) -> list[Path]:
    folder.mkdir(parents=True, exist_ok=True)
    fifo = folder / "fifo.jsonl"
    os.mkfifo(fifo)
    (folder / "to-fifo.jsonl").symlink_to(fifo)
    (folder / "to-null.jsonl").symlink_to("/dev/null")
    (folder / "dangling.jsonl").symlink_to(folder / "nowhere")
    sock = socket.socket(socket.AF_UNIX)
    sock.bind(str(folder / "sock.jsonl"))
    sock.close()
    return [fifo, folder / "to-fifo.jsonl", folder / "to-null.jsonl", folder / "sock.jsonl"]


def test_fifos_sockets_devices_never_block_start_up_or_live(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    odd = _odd_files(tmp_path / "--p--")
    append(tmp_path / "--p--" / "good.jsonl", header("/p"), user(), ask("q1", "Still here?"))
    caplog.set_level(logging.INFO)
    with Harness([tmp_path]) as h:
        (t,) = h.wait("needs_input")
        assert t.question.text == "Still here?" and t.initial
        os.mkfifo(tmp_path / "--p--" / "late.jsonl")  # live: the watcher reports it; never opened
        os.utime(odd[0])
        append(tmp_path / "--p--" / "good2.jsonl", header("/p"), user(), ask("q2", "And now?"))
        asked = h.wait("needs_input", 2)
        assert asked[1].question.text == "And now?"
        wait_for(lambda: "late.jsonl" in caplog.text, what="the late FIFO logged")
    for path in [*odd, tmp_path / "--p--" / "late.jsonl"]:
        said = [r for r in caplog.records if r.getMessage().startswith(f"{path}:")]
        assert len(said) == 1 and "not a regular file" in said[0].getMessage(), path
    assert status(tmp_path)["pending"] == 2  # status skips them too (and returns)


def test_one_file_by_two_names_is_one_session(tmp_path: Path) -> None:
    a = tmp_path / "--a--" / "s.jsonl"
    append(a, header("/p"), user(), ask("q1", "Once?"))
    (tmp_path / "--b--").mkdir()
    os.link(a, tmp_path / "--b--" / "s.jsonl")
    (tmp_path / "--c--").mkdir()
    (tmp_path / "--c--" / "s.jsonl").symlink_to(a)
    data = status(tmp_path)
    assert data["pending"] == 1 and len(data["sessions"]) == 1
    assert data["sessions"][0]["file"] == str(a)
    with Harness([tmp_path]) as h:
        assert len(h.wait("needs_input")) == 1
        append(tmp_path / "--b--" / "s.jsonl", answer("q1"))  # written through the other name
        (r,) = h.wait("resolved")
        assert r.session.key == str(a)
        assert len(h.engine.board.local) == 1 and h.collected.snapshot.pending_count == 0


def test_one_file_by_two_names_under_two_roots_is_one_session_whatever_the_cache(tmp_path: Path) -> None:
    """A cold status lists files without a stat and tells two names of one file apart after
    reading them; a warm one by the walk's stat: both keep the name under the first root, and
    the second name in the same folder order (a hard link sorted after its file)."""
    one, two = tmp_path / "one", tmp_path / "two"
    a = one / "--a--" / "s.jsonl"
    append(a, header("/p"), user(), ask("q1", "Once?"))
    os.link(a, one / "--a--" / "t.jsonl")
    (two / "--b--").mkdir(parents=True)
    os.link(a, two / "--b--" / "s.jsonl")
    args = ("status", "--json", "--liveness", "off", "--sessions-dir", str(one), "--sessions-dir", str(two))
    for run in ("cold", "warm"):
        out = cli(*args, timeout=60)
        assert out.returncode == 0, out.stderr
        data = json.loads(out.stdout)
        assert data["pending"] == 1 and [s["file"] for s in data["sessions"]] == [str(a)], run


def test_deep_folders_are_sessions_at_start_up_live_and_in_status(tmp_path: Path) -> None:
    deep = tmp_path.joinpath(*[f"d{i}" for i in range(8)])
    append(deep / "s.jsonl", header("/p"), user(), ask("q1", "Deep?"))
    assert status(tmp_path)["pending"] == 1
    with Harness([tmp_path]) as h:
        assert h.wait("needs_input")[0].question.text == "Deep?"
        deeper = deep.joinpath(*[f"e{i}" for i in range(6)])
        deeper.mkdir(parents=True)
        append(deeper / "t.jsonl", header("/p"), user(), ask("q2", "Deeper?"))
        assert h.wait("needs_input", 2)[1].question.text == "Deeper?"
    assert status(tmp_path)["pending"] == 2


def test_many_nested_folders_give_no_watch_limit_line(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    for i in range(30):
        tmp_path.joinpath(f"a{i}", *[f"b{j}" for j in range(6)]).mkdir(parents=True)
    with Harness([tmp_path]) as h:
        for i in range(30):  # created while watching: watchdog adds these watches as we look
            leaf = tmp_path.joinpath(f"n{i}", *[f"m{j}" for j in range(8)])
            leaf.mkdir(parents=True)
            append(leaf / "s.jsonl", header("/p"), user(), ask(f"q{i}", f"N{i}?"))
        assert len(h.wait("needs_input", 30, timeout=20)) == 30
    assert "watch limit" not in caplog.text


def test_a_huge_file_costs_bounded_memory(tmp_path: Path) -> None:
    """~150 MB of small non-message entries after a question: status stays small (the old scan
    held the whole tail several times over)."""
    f = tmp_path / "--p--" / "s.jsonl"
    noise = b"".join(
        line({"type": t, "id": f"{i:08x}", "parentId": None, "customType": "x", "data": {"n": i}})
        for i, t in enumerate(["custom", "label", "model_change"] * 700)
    )
    append(f, header("/p"), user(), ask("q1", "Big?"))
    with f.open("ab") as fh:
        for _ in range(150 * (1 << 20) // len(noise)):
            fh.write(noise)
    code = (
        "import sys\n"
        "from notifier.cli.parser import main\n"  # (given its arguments: it returns, so we can look)
        "main(['status', '--json', '--liveness', 'off', '--sessions-dir', sys.argv[1]])\n"
        "sys.stdout.flush()\n"
        # VmHWM, not ru_maxrss: the latter keeps the parent's peak across fork + exec
        "print([l.split()[1] for l in open('/proc/self/status') if l.startswith('VmHWM')][0], file=sys.stderr)\n"
    )
    headless = {
        k: v
        for k, v in os.environ.items()
        if k not in ("DISPLAY", "WAYLAND_DISPLAY", "DBUS_SESSION_BUS_ADDRESS")
    }
    out = subprocess.run(
        [sys.executable, "-c", code, str(tmp_path)],
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=120,
        env=headless,
    )
    assert json.loads(out.stdout)["pending"] == 1, out.stderr
    peak_mb = int(out.stderr.strip().splitlines()[-1]) / 1024
    assert peak_mb < 60, f"status peaked at {peak_mb:.0f} MB"
