"""Matching sessions to pi processes, and where the location shows (no real processes needed)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from notifier.core.owners import Wanted
from notifier.system.desktop import Window
from notifier.system.locate import Location, match
from notifier.system.processes import PiProcess
from notifier.system.tmux import TmuxPane
from notifier.ui.view import details_text

from ..conftest import wait_for


def proc(pid: int, cwd: str, started: float) -> PiProcess:
    return PiProcess(pid, cwd, started, "/dev/pts/1", {})


def test_each_process_goes_to_the_newest_session_it_could_have_written() -> None:
    wanted = [
        Wanted("old.jsonl", "/p", 100.0, None),  # written before the live pi started
        Wanted("live.jsonl", "/p/", 500.0, True),
        Wanted("dead.jsonl", "/p", 600.0, False),  # liveness says no pi asked it
        Wanted("other.jsonl", "/q", 500.0, True),
    ]
    found = match(wanted, [proc(7, "/p", 400.0), proc(8, "/q", 450.0)])
    assert {k: p.pid for k, p in found.items()} == {"live.jsonl": 7, "other.jsonl": 8}
    # two sessions, one process: only the newest gets it (a pi writes one session at a time)
    two = match([Wanted("a", "/p", 500.0, True), Wanted("b", "/p", 450.0, True)], [proc(7, "/p", 400.0)])
    assert list(two) == ["a"]
    # two processes that both could have either session: the folder alone never decides
    both = [Wanted("a", "/p", 500.0, True), Wanted("b", "/p", 450.0, True)]
    assert match(both, [proc(7, "/p", 100.0), proc(9, "/p", 300.0)]) == {}
    # ... their arguments do
    named = [
        PiProcess(7, "/p", 100.0, None, {}, ("--session", "/s/b.jsonl")),
        PiProcess(9, "/p", 300.0, None, {}, ()),
    ]
    both = [Wanted("/s/a.jsonl", "/p", 500.0, True), Wanted("/s/b.jsonl", "/p", 450.0, True)]
    assert {k: p.pid for k, p in match(both, named).items()} == {"/s/a.jsonl": 9, "/s/b.jsonl": 7}


def test_location_json_and_the_details_pane() -> None:
    pane = TmuxPane("/tmp/tmux-1/default", "work", "2", "@3", "%5", 1)
    loc = Location(42, "/dev/pts/3", pane, 0x1A00007)
    assert loc.obj() == {
        "pid": 42,
        "tty": "/dev/pts/3",
        "tmux": {"socket": "/tmp/tmux-1/default", "session": "work", "window": "2", "pane": "%5"},
        "window_id": 0x1A00007,
        "window": None,
    }
    assert Location(42, None).obj() == {"pid": 42, "tty": None, "tmux": None, "window_id": None, "window": None}
    on_sway = Location(42, None, window=Window("sway", 7))  # (additive: "window_id" stays X11's)
    assert on_sway.obj()["window"] == {"via": "sway", "id": 7} and on_sway.obj()["window_id"] is None
    assert on_sway.describe() == "pid 42 · sway window 7"
    q = {
        "folder": "proj", "tool": "question", "abandoned": False, "asked_at": 0.0, "items": [],
        "cwd": "/p", "file": "/s.jsonl", "resume": "pi", "location": loc.obj(),
    }  # fmt: skip
    assert "Where:   pid 42 · tmux work:2 %5" in details_text(q, 10.0)
    q["location"] = None
    assert "Where:" not in details_text(q, 10.0)


def test_the_proc_prefilter_finds_every_pi_that_psutil_finds(tmp_path: Path) -> None:
    """``status`` lists the processes that may be pi from /proc before asking psutil: it must
    keep every pi (by its own name or a node running pi's CLI), from real processes."""
    import shutil
    import subprocess
    import sys

    from notifier.system.processes import maybe_pi, pi_processes

    if not os.path.isdir("/proc/self"):
        pytest.skip("no /proc")
    pi = tmp_path / "pi"
    shutil.copy(shutil.which("sleep") or "/bin/sleep", pi)
    cli = tmp_path / "pi-coding-agent" / "dist" / "cli.js"
    cli.parent.mkdir(parents=True)
    cli.write_text("import time; time.sleep(30)")  # (run by python standing in for node)
    procs = [
        subprocess.Popen([str(pi), "30"], cwd=tmp_path),
        subprocess.Popen([sys.executable, str(cli)], cwd=tmp_path),
    ]
    other = subprocess.Popen([shutil.which("sleep") or "/bin/sleep", "30"], cwd=tmp_path)
    try:
        wait_for(lambda: all(os.path.exists(f"/proc/{p.pid}/cmdline") for p in procs), 5, "started")
        ours = {p.pid for p in procs}
        wait_for(lambda: ours <= {p.pid for p in pi_processes()}, 10, "psutil sees the pi processes")
        before = {p.pid for p in pi_processes()}
        candidates = maybe_pi()
        after = {p.pid for p in pi_processes()}
        assert candidates is not None
        assert ours <= set(candidates)
        assert other.pid not in candidates
        # Every pi of psutil's whole table (that ran all along: other pi processes may come and
        # go on this machine meanwhile) is among the candidates, and only pi are kept of them.
        assert before & after <= {p.pid for p in pi_processes(candidates)} <= before | after
        assert pi_processes([]) == []
        # liveness reads the candidates too: the same pi processes as psutil's whole table
        from notifier.system import processes

        here = sorted(p.started for p in processes.running_pi() or [] if p.cwd == str(tmp_path))
        assert len(here) == 2
        every = processes.maybe_pi
        try:
            processes.maybe_pi = lambda proc_dir="/proc": None  # (where /proc cannot tell)
            assert sorted(p.started for p in processes.running_pi() or [] if p.cwd == str(tmp_path)) == here
        finally:
            processes.maybe_pi = every
    finally:
        for p in (*procs, other):
            p.kill()
            p.wait()


def test_the_proc_prefilter_reads_comm_and_the_first_arguments(tmp_path: Path) -> None:
    def fake(pid: int, comm: bytes, cmdline: bytes) -> None:
        (tmp_path / str(pid)).mkdir()
        (tmp_path / str(pid) / "comm").write_bytes(comm + b"\n")
        (tmp_path / str(pid) / "cmdline").write_bytes(cmdline)

    from notifier.system.processes import maybe_pi

    fake(1, b"pi", b"")  # its own name (psutil: the comm)
    fake(2, b"node", b"node\0/usr/lib/node_modules/@x/pi-coding-agent/dist/cli.js\0--flag\0")
    fake(3, b"MainThread", b"/usr/local/bin/omp\0")  # a renamed thread: the first argument
    fake(4, b"node", b"node\0server.js\0" + b"y" * 100_000 + b"\0oh-my-pi\0")  # 4th argument: not pi
    fake(6, b"node", b"/" + b"z" * 100_000 + b"\0x\0/opt/pi-coding-agent/cli.js\0")  # past 64 KB
    fake(5, b"bash", b"bash\0-c\0pi-coding-agent is mentioned here\0")  # (psutil says so too)
    (tmp_path / "self").mkdir()
    assert sorted(maybe_pi(str(tmp_path)) or []) == [1, 2, 3, 5, 6]
    assert maybe_pi(str(tmp_path / "nowhere")) is None


def test_without_a_pi_liveness_does_not_import_psutil() -> None:
    """No process that may be pi (the /proc prefilter): nothing runs, without importing psutil."""
    import subprocess
    import sys

    probe = (
        "import sys; from notifier.system import processes as p; p.maybe_pi = lambda proc_dir='/proc': []; "
        "print(p.running_pi(), 'psutil' in sys.modules)"
    )
    r = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=60)
    assert r.stdout.split() == ["[]", "False"], r.stderr


def test_pi_arguments_are_read_only_where_pi_left_them() -> None:
    from notifier.system.processes import pi_args

    assert pi_args(["node", "/usr/lib/node_modules/@x/pi-coding-agent/dist/cli.js", "-c"]) == ("-c",)
    assert pi_args(["/usr/local/bin/pi", "--session", "a.jsonl"]) == ("--session", "a.jsonl")
    assert pi_args(["/tmp/bin/pi"]) == ()
    assert pi_args(["pi", "", "", ""]) is None  # pi 1.6.0 / 0.73.1 set their process title
    assert pi_args(["MainThread"]) is None and pi_args([]) is None


def test_start_time_is_the_processes_own_to_the_tick() -> None:
    """psutil's create_time is up to a second early (its boot time is whole seconds); the start
    time from /proc lies between the moments before and after the process was started."""
    import subprocess
    import sys
    import time

    from notifier.system.processes import start_time

    if not os.path.isdir("/proc/self"):
        pytest.skip("no /proc")
    before = time.time()
    child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(30)"])
    after = time.time()
    try:
        started = start_time(child.pid, 0.0)
        assert before - 0.05 <= started <= after + 0.05
        assert start_time(child.pid, 0.0) == started  # the same figure every time
        assert start_time(-1, 7.0) == 7.0  # no such process: the fallback
    finally:
        child.kill()
        child.wait()
