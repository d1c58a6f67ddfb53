"""Whether a pi can wait for a human, from its terminal: raw mode (pi's TUI) or cooked (`pi -p`),
read off a real pseudo-terminal of a real child process; and a pid still being that process."""

from __future__ import annotations

import os
import pty
import subprocess
import sys
import termios
import time
import tty

from notifier.system.processes import raw_terminal, start_time, still_running

from ..conftest import wait_for


def child_on(fd: int) -> subprocess.Popen[bytes]:
    return subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"], stdin=fd, start_new_session=True)


def test_raw_cooked_and_no_terminal() -> None:
    master, slave = pty.openpty()
    proc = child_on(slave)
    try:
        assert raw_terminal(proc.pid) is False  # a new terminal is cooked, as `pi -p` leaves it
        tty.setraw(slave)  # as a TUI sets it
        assert raw_terminal(proc.pid) is True
        attrs = termios.tcgetattr(slave)
        attrs[3] |= termios.ICANON | termios.ECHO
        termios.tcsetattr(slave, termios.TCSANOW, attrs)
        assert raw_terminal(proc.pid) is False
    finally:
        proc.kill()
        proc.wait()
        os.close(master)
        os.close(slave)
    piped = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"], stdin=subprocess.PIPE)
    try:
        assert raw_terminal(piped.pid) is False  # no terminal at all: it cannot wait for a human
    finally:
        piped.kill()
        piped.wait()
    assert raw_terminal(2**22 + 12345) is None  # no such process


def test_still_running_is_that_very_process() -> None:
    proc = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    started = start_time(proc.pid, 0.0)
    assert abs(started - time.time()) < 5
    assert still_running(proc.pid, started)
    assert not still_running(proc.pid, started - 10)  # another process that had this pid
    proc.kill()
    proc.wait()
    wait_for(lambda: not still_running(proc.pid, started), 5, "the process to be gone")
