"""Who notifies a set of folders (:class:`notifier.instance.Notifying`), held by other processes:
a run waiting for its turn gets it when the holder ends, quit or killed (the kernel lets the lock
go: nothing to follow), and a headless run that hands over to the app never loses the turn to
another headless run waiting beside it."""

from __future__ import annotations

import subprocess
import sys
import threading
from pathlib import Path

import pytest

from notifier.instance import Notifying

from ..conftest import wait_for

# Another process: the app (claims) or a headless run (takes); it prints what it got, then on
# each line it reads: "go" lets the notifier's lock go; end of input: it ends (releasing all).
_OTHER = """
import sys
import pytest

from notifier.instance import Notifying
lock = Notifying(sys.argv[1], ["/s"])
print(lock.claim(wait_s=10) if sys.argv[2] == "app" else lock.take() is None, flush=True)
for line in sys.stdin:
    lock.let_go()
"""


def _other(folder: Path, role: str) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-c", _OTHER, str(folder), role], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True
    )


def _said(proc: subprocess.Popen[str]) -> str:
    assert proc.stdout is not None
    return proc.stdout.readline().strip()


def _waiting(lock: Notifying) -> threading.Thread:
    thread = threading.Thread(target=lock.wait, daemon=True)
    thread.start()
    thread.join(0.2)
    assert thread.is_alive() and lock.fd is None  # (not its turn)
    return thread


def test_a_waiting_run_gets_its_turn_when_the_holder_ends_however_it_ends(tmp_path: Path) -> None:
    for role, ends in (("app", "killed"), ("app", "quits"), ("headless", "killed"), ("headless", "quits")):
        other = _other(tmp_path, role)
        assert _said(other) == "True"
        mine = Notifying(str(tmp_path), ["/s"])
        assert mine.take() == other.pid and mine.app_runs() is (role == "app")
        waiting = _waiting(mine)
        if ends == "killed":
            other.kill()  # (no word, no clean-up)
        else:
            assert other.stdin is not None
            other.stdin.close()
        other.wait(10)
        waiting.join(10)
        assert not waiting.is_alive() and mine.fd is not None and mine.after_app is (role == "app")
        mine.release()


def test_a_headless_run_hands_over_to_the_app_not_to_another_waiting_run(tmp_path: Path) -> None:
    """The notifying run lets go once the app started; a run that waited for it meanwhile may
    take the lock for a moment but leaves it to the app, and gets its turn when the app ends."""
    for _ in range(5):
        holder = _other(tmp_path, "headless")
        assert _said(holder) == "True"
        mine = Notifying(str(tmp_path), ["/s"])
        waiting = _waiting(mine)
        app = _other(tmp_path, "app")
        wait_for(mine.app_runs, 10, "the app's lock")
        assert holder.stdin is not None
        holder.stdin.write("go\n")  # (what the run does once it handed over)
        holder.stdin.flush()
        assert _said(app) == "True"  # the app notifies: within its wait, the waiting run did not keep it
        assert waiting.is_alive() and mine.fd is None
        app.kill()
        app.wait(10)
        waiting.join(10)
        assert not waiting.is_alive() and mine.fd is not None and mine.after_app
        mine.release()
        holder.stdin.close()
        holder.wait(10)


def test_a_headless_run_notifies_unless_the_app_or_another_run_of_its_folders_does(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """What ``run --no-tray`` decides as it starts, beside another process that notifies: it
    leaves notifying to the app or the headless run of the same folders (and says so, once),
    never to one of other folders; holding nothing then, it keeps nobody waiting."""
    from notifier.cli.run import HAND_OVER_SAID, PEER_SAID, _claims

    for role, said in (("app", HAND_OVER_SAID + " (until the app ends)"), ("headless", PEER_SAID + " (until it ends)")):
        other = _other(tmp_path, role)
        try:
            assert _said(other) == "True"
            same, elsewhere = Notifying(str(tmp_path), ["/s"]), Notifying(str(tmp_path), ["/t"])
            assert _claims(same, tray=False, later=True) is False and same.fd is None
            assert capsys.readouterr().err == f"pi-notifier: {said.format(pid=other.pid)}\n"
            assert _claims(elsewhere, tray=False, later=False) is True and elsewhere.fd is not None
            elsewhere.release()
        finally:
            assert other.stdin is not None
            other.stdin.close()
            other.wait(10)


def test_the_command_line_sees_which_headless_run_notifies_without_taking_anything(tmp_path: Path) -> None:
    """``snooze`` without an app says who applies what it saved: the headless run that notifies
    (its pid), else nobody (an app's lock is no headless run's); the look creates nothing."""
    look = Notifying(str(tmp_path / "run"), ["/s"])
    assert look.headless() is None and not (tmp_path / "run").exists()
    (tmp_path / "run").mkdir(mode=0o700)
    for role, seen in (("headless", True), ("app", False)):
        other = _other(tmp_path / "run", role)
        try:
            assert _said(other) == "True"
            assert look.headless() == (other.pid if seen else None) and look.fd is None
        finally:
            assert other.stdin is not None
            other.stdin.close()
            other.wait(10)
    assert look.headless() is None  # (it ended: the kernel let its lock go)
