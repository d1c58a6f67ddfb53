"""``goto``, ``answer`` and ``doctor`` on a remote session (SESSION given as ``HOST:SPEC``): through
the same ssh as the remote's stream, by pi-notifier on that machine."""

from __future__ import annotations

import shutil
import subprocess
from collections.abc import Sequence

from notifier.config import Config
from notifier.core import codec as jsonbound
from notifier.core import text as shellcmd
from notifier.core.text import clean
from notifier.remote import Remote, remote_from_config, ssh_argv
from notifier.system import processes as programs

SSH_TIMEOUT_S = 15.0
PRINT_LIMIT = 1 << 20  # bytes of the remote's 'goto --print' line (a location object: a few hundred)


def configured(config: Config) -> list[Remote]:
    return [remote_from_config(item) for item in config["remotes"]]


def split(config: Config, spec: str | None) -> tuple[Remote, str] | None:
    """``devbox:SPEC`` (or a key ``@devbox:FILE`` from the window) names a session on a remote."""
    if not spec:
        return None
    text = spec[1:] if spec.startswith("@") else spec
    host, sep, rest = text.partition(":")
    if not sep or not rest:
        return None
    for remote in configured(config):
        if remote.name == host:
            return remote, rest
    return None


def _need_ssh(remote: Remote) -> None:
    if remote.ssh is None:
        raise RemoteRefused(f"remote {remote.name} is a command, not ssh: go to that machine to do this")


class RemoteRefused(Exception):
    """Cannot be done on the remote; the message says why (exit code 1)."""


def _ssh(remote: Remote, words: list[str], timeout: float) -> subprocess.CompletedProcess[str]:
    """``words`` run by the remote's ssh; :class:`RemoteRefused` when it cannot be reached."""
    _need_ssh(remote)
    try:
        return programs.run_or_raise(ssh_argv(remote, words), timeout)
    except programs.CannotRun as exc:
        raise RemoteRefused(f"cannot reach {clean(remote.name)}: {exc}") from None


def goto_argv(remote: Remote, spec: str) -> list[str]:
    """``ssh -t HOST tmux attach -t SESSION:WINDOW`` for the remote session's tmux pane (asked of
    the remote's own ``pi-notifier goto --print`` through the same ssh), as an argv: the words
    after HOST are quoted once for the remote shell (ssh joins them with spaces for it). The
    remote's names are checked first: one that cannot be shown in a command (control
    characters…) is :class:`RemoteRefused`, with the reason."""
    done = _ssh(remote, ["pi-notifier", "goto", spec, "--print"], SSH_TIMEOUT_S)
    try:
        where = jsonbound.loads(done.stdout.strip().splitlines()[-1], max_bytes=PRINT_LIMIT)
    except (ValueError, IndexError):
        where = None
    tm = where.get("tmux") if isinstance(where, dict) else None
    if not isinstance(tm, dict) or not isinstance(tm.get("session"), str):
        reason = clean(done.stderr, 300) or "it does not run in tmux there"
        raise RemoteRefused(f"{clean(remote.name)}: {reason}")
    window = tm.get("window")
    has_window = isinstance(window, (str, int)) and not isinstance(window, bool)
    target = f"{tm['session']}:{window}" if has_window else tm["session"]
    try:
        there = shellcmd.remote_words(["tmux", "attach", "-t", shellcmd.Arg("its tmux session or window name", target)])
        argv = ["ssh", "-t", *remote.ssh_options, remote.ssh or "", *there]
        shellcmd.join(argv)  # (every local word can be shown too: options and destination)
    except shellcmd.Unsafe as exc:
        raise RemoteRefused(
            f"{clean(remote.name)}: its pi runs in tmux, but no command to attach to it is offered: {exc}"
        ) from None
    return argv


def open_in_terminal(argv: Sequence[str]) -> bool:
    """Run ``argv`` in a new terminal window where one is known (best effort; no shell here)."""
    for term, flag in (("x-terminal-emulator", "-e"), ("xterm", "-e"), ("gnome-terminal", "--")):
        path = shutil.which(term)
        if path:
            try:
                subprocess.Popen([path, flag, *argv], stdin=subprocess.DEVNULL, start_new_session=True)
                return True
            except OSError:
                continue
    return False


def answer_remote(remote: Remote, spec: str, args: Sequence[str], timeout: float) -> tuple[int, str, str]:
    """Runs ``pi-notifier answer SPEC ARGS…`` on the remote: (exit code, stdout, stderr)."""
    done = _ssh(remote, ["pi-notifier", "answer", spec, *args], timeout + SSH_TIMEOUT_S)
    code = done.returncode if done.returncode in (0, 1, 2) else 1
    return code, done.stdout, done.stderr


# ---- doctor ----


def check_remote(remote: Remote, timeout: float = SSH_TIMEOUT_S) -> tuple[bool, str]:
    """Is it reachable, with pi-notifier there, and which version (one line)."""
    argv = ssh_argv(remote, ["pi-notifier", "--version"]) if remote.ssh else [*remote.command[:1], "--version"]
    if remote.ssh is None and "run" in remote.command:  # a command remote: its program, asked for its version
        argv = [*remote.command[: remote.command.index("run")], "--version"]
    try:
        done = programs.run_or_raise(argv, timeout, new_session=bool(remote.ssh))
    except programs.CannotRun as exc:
        return False, str(exc)
    out = clean(done.stdout, 120)
    if done.returncode == 0 and out:
        return True, out
    err = clean(done.stderr, 200)
    if done.returncode == 127 or "not found" in err:
        return False, "reachable, but pi-notifier is not installed there (or not on its PATH)"
    return False, err or f"exit code {done.returncode}"
