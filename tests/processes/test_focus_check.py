"""The cheap part of the focus check, on real processes: a focused window can show a session only
when a tmux client or a pi of the session's folder runs under its process."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from notifier.system.focus import may_show

from ..conftest import wait_for


def _child(tmp_path: Path, name: str, cwd: Path) -> subprocess.Popen[bytes]:
    """A process of this one named ``name`` (a script of that name), in ``cwd``."""
    script = tmp_path / "bin" / name
    script.parent.mkdir(exist_ok=True)
    script.write_text(f"#!{sys.executable}\nimport time\ntime.sleep(60)\n")
    script.chmod(0o755)
    proc = subprocess.Popen([str(script)], cwd=cwd)
    wait_for(lambda: Path(f"/proc/{proc.pid}/cmdline").read_bytes().count(b"\0") >= 2, 10, "the child started")
    return proc


def test_a_pi_of_the_folder_or_a_tmux_client_under_the_window(tmp_path: Path) -> None:
    project, elsewhere = tmp_path / "project", tmp_path / "elsewhere"
    project.mkdir()
    elsewhere.mkdir()
    me = os.getpid()
    assert not may_show(me, {str(project)})  # nothing of the kind runs under this process
    pi = _child(tmp_path, "pi", project)
    try:
        assert may_show(me, {str(project)})
        assert not may_show(me, {str(elsewhere)})
        assert not may_show(pi.pid, {str(project)})  # (only what runs *under* the window's process)
    finally:
        pi.kill()
        pi.wait()
    tmux = _child(tmp_path, "tmux", elsewhere)  # a tmux client: it may show any pane
    try:
        assert may_show(me, {str(project)})
    finally:
        tmux.kill()
        tmux.wait()
    assert not may_show(2**22 + 12345, {str(project)})  # a process that is gone
