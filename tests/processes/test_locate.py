"""Finding pi processes in the real process table: the /proc pre-filter finds every pi psutil
finds, start times are the processes' own, and without a pi liveness does not import psutil."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from ..conftest import wait_for


def test_the_proc_prefilter_finds_every_pi_that_psutil_finds(tmp_path: Path) -> None:
    """``status`` lists the processes that may be pi from /proc before asking psutil: it must
    keep every pi (by its own name or a node running pi's CLI), from real processes."""
    import shutil
    import subprocess
    import sys

    from notifier.system import processes
    from notifier.system.processes import maybe_pi, pi_processes

    def whole_table() -> set[int]:
        """The pi processes of psutil's whole table (as where /proc cannot tell)."""
        with pytest.MonkeyPatch.context() as mp:
            mp.setattr(processes, "maybe_pi", lambda proc_dir="/proc": None)
            return {p.pid for p in pi_processes()}

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
        wait_for(lambda: ours <= whole_table(), 10, "psutil sees the pi processes")
        before = whole_table()
        candidates = maybe_pi()
        after = whole_table()
        assert candidates is not None
        assert ours <= set(candidates)
        assert other.pid not in candidates
        # Every pi of psutil's whole table (that ran all along: other pi processes may come and
        # go on this machine meanwhile) is among the candidates, and only pi are kept of them.
        assert before & after <= {p.pid for p in pi_processes(candidates)} <= before | after
        assert pi_processes([]) == []
        assert ours <= {p.pid for p in pi_processes()}  # (by default, among the candidates)
        # liveness reads the candidates too: the same pi processes as psutil's whole table
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
