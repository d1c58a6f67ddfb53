"""Remote hosts over a real OpenSSH server on loopback, and pushes through apprise to a local
HTTP endpoint. The sshd runs on a free port with a throw-away host key and user key; the remote
command is this checkout's ``python -m notifier`` (a ``pi-notifier`` shim on the remote PATH)."""

from __future__ import annotations

import http.server
import json
import os
import shlex
import shutil
import signal
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from notifier.core import text as shellcmd
from notifier.core.text import clean

from ..app_process import AppProcess
from ..conftest import ROOT, cli, wait_for
from ..writer import answer, append, ask, header

SSHD = shutil.which("sshd") or ("/usr/sbin/sshd" if os.path.exists("/usr/sbin/sshd") else None)
needs_ssh = pytest.mark.skipif(
    not (SSHD and shutil.which("ssh") and shutil.which("ssh-keygen")) and not os.environ.get("NOTIFIER_REQUIRE_DESKTOP"),
    reason="openssh-server is not installed (apt-get install openssh-server)",
)


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


class Sshd:
    """One sshd on 127.0.0.1 whose every session runs the command through ``wrapper``: the
    remote PATH holds a ``pi-notifier`` shim for this checkout, watching ``sessions``."""

    def __init__(self, base: Path) -> None:
        self.dir = base
        base.mkdir(parents=True)
        self.sessions = base / "sessions"
        self.sessions.mkdir()
        self.port = free_port()
        key = base / "host_key"
        self.user_key = base / "user_key"
        for k in (key, self.user_key):
            subprocess.run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", str(k)], check=True)
        shutil.copy(f"{self.user_key}.pub", base / "authorized_keys")
        (base / "bin").mkdir()
        shim = base / "bin" / "pi-notifier"
        shim.write_text(
            "#!/bin/sh\n"
            f'echo $$ > "{base}/remote.pid"\n'
            f'if [ -e "{base}/block" ]; then echo "pi-notifier: blocked by the test" >&2; exit 1; fi\n'
            # an older pi-notifier: no --stop-on-eof (argparse's own words)
            f'if [ -e "{base}/old" ]; then for a in "$@"; do [ "$a" = --stop-on-eof ] &&'
            ' { echo "pi-notifier: error: unrecognized arguments: --stop-on-eof" >&2; exit 2; }; done; fi\n'
            'case "$1" in run|goto|answer|status) cmd=$1; shift;'
            f' exec "{sys.executable}" -m notifier "$cmd" --liveness off --sessions-dir "{self.sessions}" "$@";; esac\n'
            f'exec "{sys.executable}" -m notifier "$@"\n'
        )
        wrapper = base / "wrapper"
        state = base / "state"
        wrapper.write_text(
            "#!/bin/sh\n"
            f'export PATH="{base}/bin:$PATH" PYTHONPATH="{ROOT}" HOME="{state}"'
            f' XDG_STATE_HOME="{state}" XDG_CONFIG_HOME="{state}/config" XDG_RUNTIME_DIR="{state}/run"\n'
            f'mkdir -p "{state}/run" && chmod 700 "{state}/run"\n'
            'exec /bin/sh -c "$SSH_ORIGINAL_COMMAND"\n'
        )
        shim.chmod(0o755)
        wrapper.chmod(0o755)
        (base / "sshd_config").write_text(
            f"ListenAddress 127.0.0.1\nPort {self.port}\nHostKey {key}\nPidFile {base}/sshd.pid\n"
            f"AuthorizedKeysFile {base}/authorized_keys\nStrictModes no\nUsePAM no\n"
            "PasswordAuthentication no\nKbdInteractiveAuthentication no\nPermitRootLogin prohibit-password\n"
            f"ForceCommand {wrapper}\nLogLevel ERROR\n"
        )
        if os.geteuid() == 0:
            os.makedirs("/run/sshd", mode=0o755, exist_ok=True)  # sshd's privilege-separation folder
        self.proc = subprocess.Popen(
            [str(SSHD), "-D", "-e", "-f", str(base / "sshd_config")],
            stdin=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            text=True,
        )
        wait_for(self._listening, 20, "sshd listening")

    def _listening(self) -> bool:
        if self.proc.poll() is not None:
            raise AssertionError(f"sshd exited: {self.proc.stderr.read() if self.proc.stderr else ''}")
        with socket.socket() as s:
            return s.connect_ex(("127.0.0.1", self.port)) == 0

    def remote(self, name: str) -> dict[str, Any]:
        return {
            "name": name,
            "ssh": f"{os.environ.get('USER') or 'root'}@127.0.0.1" if os.geteuid() else "root@127.0.0.1",
            "ssh_options": [
                "-p", str(self.port), "-i", str(self.user_key), "-o", "StrictHostKeyChecking=no",
                "-o", "UserKnownHostsFile=/dev/null", "-o", "LogLevel=ERROR", "-o", "IdentitiesOnly=yes",
            ],
        }

    def remote_pid(self) -> int:
        return int((self.dir / "remote.pid").read_text())

    def stop(self) -> None:
        self.proc.terminate()
        try:
            self.proc.wait(5)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()


@pytest.fixture
def sshd(tmp_path: Path) -> Iterator[Any]:
    started: list[Sshd] = []

    def make(name: str = "a") -> Sshd:
        server = Sshd(tmp_path / f"sshd-{name}")
        started.append(server)
        return server

    yield make
    for server in started:
        server.stop()


def toml(value: Any) -> str:
    return json.dumps(value)  # strings and lists of strings are the same in TOML


def write_config(path: Path, remotes: list[dict[str, Any]], push: dict[str, Any] | None = None) -> Path:
    lines = []
    for r in remotes:
        lines.append("[[remotes]]")
        lines += [f"{k} = {toml(v)}" for k, v in r.items()]
    if push:
        lines.append("[push]")
        lines += [f"{k} = {toml(v)}" for k, v in push.items()]
    path.write_text("\n".join(lines) + "\n")
    return path


def local_app(tmp_path: Path, config: Path) -> AppProcess:
    local = tmp_path / "local-sessions"
    local.mkdir(exist_ok=True)
    return AppProcess(
        "run", "--json", "--no-tray", "--no-notify", "--liveness", "off",
        "--sessions-dir", str(local), "--config", str(config),
    )


def session_file(root: Path, name: str = "s1") -> Path:
    return root / "--home-dev-webshop--" / f"2026-01-01T00-00-00-000Z_{name}.jsonl"


def remote_needs(app: AppProcess, host: str) -> list[dict[str, Any]]:
    return [e for e in app.of("needs_input") if e["session"].get("host") == host]


@needs_ssh
def test_a_remote_question_appears_locally_with_its_host(tmp_path: Path, sshd: Any) -> None:
    server = sshd()
    f = session_file(server.sessions)
    append(f, header("/home/dev/webshop"), ask("call_r1", "Deploy to staging?", options=["Yes", "No"]))
    cfg = write_config(tmp_path / "config.toml", [server.remote("devbox")])
    with local_app(tmp_path, cfg) as app:
        app.wait("ready")
        got = wait_for(lambda: remote_needs(app, "devbox"), 30, "the remote question")[0]
        assert got["session"]["file"] == str(f)
        assert got["question"]["text"] == "Deploy to staging?"
        assert got["question"]["options"] == ["Yes", "No"]
        assert got["initial"] is True
        # a question asked there now comes as it happens, and its answer too
        append(f, answer("call_r1", "User selected: 1. Yes"), ask("call_r2", "And prod?"))
        later = wait_for(lambda: [e for e in remote_needs(app, "devbox") if e["question"]["tool_call_id"] == "call_r2"], 30, "the live remote question")[0]
        assert later["initial"] is False
        resolved = app.wait("resolved")[0]
        assert resolved["session"]["host"] == "devbox" and resolved["outcome"] == "answered"
        # history keeps the host, and the remote's own file name
        def remote_rows() -> list[dict[str, Any]]:
            rows = json.loads(cli("history", "--json").stdout)["questions"]
            return [r for r in rows if r["session"]["host"] == "devbox" and r["outcome"] == "answered"]

        row = wait_for(remote_rows, 20, "the remote question in history")[0]
        assert row["session"]["file"] == str(f) and row["question"]["tool_call_id"] == "call_r1"
        assert "devbox · webshop" in cli("history").stdout  # (the text names the host too)
        # local sessions carry host null
        local = tmp_path / "local-sessions"
        append(session_file(local, "loc"), header("/home/dev/local"), ask("call_l1", "Local?"))
        mine = wait_for(lambda: [e for e in app.of("needs_input") if e["question"]["tool_call_id"] == "call_l1"], 20, "the local question")[0]
        assert mine["session"]["host"] is None


def test_a_command_remote(tmp_path: Path) -> None:
    """Any command printing the run --json stream is a remote (no ssh at all)."""
    there = tmp_path / "there"
    f = session_file(there)
    append(f, header("/home/dev/api"), ask("call_c1", "Which port?"))
    state = tmp_path / "remote-state"
    command = [
        "env", f"XDG_STATE_HOME={state}", f"XDG_RUNTIME_DIR={state}", sys.executable, "-m", "notifier",
        "run", "--json", "--no-tray", "--no-notify", "--liveness", "off", "--sessions-dir", str(there),
    ]
    cfg = write_config(tmp_path / "config.toml", [{"name": "ci", "command": command}])
    with local_app(tmp_path, cfg) as app:
        got = wait_for(lambda: remote_needs(app, "ci"), 30, "the command remote's question")[0]
        assert got["question"]["text"] == "Which port?"
        append(f, answer("call_c1"))
        done = app.wait("resolved")[0]
        assert done["session"]["host"] == "ci"


@needs_ssh
def test_a_remote_killed_mid_question_goes_offline_then_resyncs_without_a_second_notice(
    tmp_path: Path, sshd: Any
) -> None:
    server = sshd()
    f = session_file(server.sessions)
    append(f, header("/home/dev/webshop"), ask("call_k1", "Keep going?"))
    cfg = write_config(tmp_path / "config.toml", [server.remote("devbox")])
    with local_app(tmp_path, cfg) as app:
        wait_for(lambda: remote_needs(app, "devbox"), 30, "the remote question")
        first_pid = server.remote_pid()
        (server.dir / "block").touch()  # reconnecting fails until the test allows it
        os.kill(first_pid, signal.SIGKILL)
        app.log_has("remote devbox: the link ended")
        app.log_has("remote devbox: reconnecting failed")
        # Meanwhile a second question is asked there; the first stays (offline, not resolved).
        append(session_file(server.sessions, "s2"), header("/home/dev/api"), ask("call_k2", "And this?"))
        assert not app.of("resolved")
        (server.dir / "block").unlink()
        wait_for(lambda: app.log_has("remote devbox: connected") and sum("remote devbox: connected" in line for line in app.stderr) >= 2, 90, "the reconnect")
        second = wait_for(lambda: [e for e in remote_needs(app, "devbox") if e["question"]["tool_call_id"] == "call_k2"], 30, "the question asked while offline")
        assert second[0]["initial"] is True
        # call_k1 was announced once only, and was not resolved by the resync
        assert [e["question"]["tool_call_id"] for e in remote_needs(app, "devbox")].count("call_k1") == 1
        assert not app.of("resolved")
        # answered there while we watch: resolved once
        append(f, answer("call_k1"))
        assert app.wait("resolved")[0]["question"]["tool_call_id"] == "call_k1"


def _gone(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    return False


@needs_ssh
@pytest.mark.parametrize("old", [False, True], ids=["stops-with-the-link", "older-remote"])
def test_the_remote_run_ends_with_the_app(tmp_path: Path, sshd: Any, old: bool) -> None:
    """The remote run --json is told the link ended (its input closes): it stops with the app
    instead of living on there. A remote too old for that option is run without it."""
    server = sshd()
    if old:
        (server.dir / "old").touch()
    append(session_file(server.sessions), header("/home/dev/webshop"), ask("call_e1", "Still there?"))
    cfg = write_config(tmp_path / "config.toml", [server.remote("devbox")])
    with local_app(tmp_path, cfg) as app:
        wait_for(lambda: remote_needs(app, "devbox"), 30, "the remote question")
        pid = server.remote_pid()
        assert not _gone(pid)
        if old:
            assert app.log_has("remote devbox: its pi-notifier has no --stop-on-eof; running it without")
    if old:  # (it lives on until it next writes, as every remote did before --stop-on-eof)
        os.kill(pid, signal.SIGTERM)  # (not left behind by this test)
    wait_for(lambda: _gone(pid), 20, "the remote run --json ending with the app")


def test_run_stop_on_eof_ends_when_its_input_closes(tmp_path: Path) -> None:
    """``run --stop-on-eof`` ends cleanly (exit 0) when standard input closes; without the
    option, a closed input (< /dev/null) changes nothing."""
    sessions = tmp_path / "s"
    sessions.mkdir()
    base = [sys.executable, "-m", "notifier", "run", "--json", "--no-tray", "--no-notify", "--liveness", "off"]
    proc = subprocess.Popen(
        [*base, "--stop-on-eof", "--sessions-dir", str(sessions)],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, cwd=ROOT,
    )
    assert proc.stdout is not None and proc.stdin is not None
    assert b'"event":"ready"' in proc.stdout.readline()
    proc.stdin.close()
    assert proc.wait(20) == 0
    quiet = subprocess.Popen(
        [*base, "--sessions-dir", str(sessions)],
        stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE, cwd=ROOT,
    )
    try:
        assert quiet.stdout is not None and b'"event":"ready"' in quiet.stdout.readline()
        # still running with its input closed from the start: it reports a question asked now
        append(session_file(sessions), header("/home/dev/webshop"), ask("call_q1", "Here?"))
        assert b'"event":"needs_input"' in quiet.stdout.readline()
    finally:
        quiet.terminate()
        quiet.wait(10)


def test_offline_questions_are_listed_but_not_counted() -> None:
    """The board side of 'offline': listed with the time, not pending, not in the badge."""
    from notifier.core.board import Board
    from notifier.core.model import Question, QuestionItem, SessionRef, remote_key
    from notifier.outputs.tray import UiState, menu

    board = Board()
    ref = SessionRef(remote_key("devbox", "/s.jsonl"), "id", "/home/dev/webshop", None, "devbox")
    q = Question("c1", "question", (QuestionItem("Deploy?"),), 1000.0)
    assert [t.kind for t in board.remote.asked(ref, q, 1000.0, False)] == ["needs_input"]
    assert board.snapshot(1001).pending_count == 1
    board.remote.offline("devbox", 1002.0)
    snap = board.snapshot(1003)
    assert snap.pending_count == 0 and not snap.pending
    labels = [e.label for e in menu(UiState(snap), 1004)]
    assert any("devbox · webshop" in label and "devbox offline since" in label for label in labels)
    assert board.remote.asked(ref, q, 1005.0, True) == []  # re-sent at reconnect: no second notice
    assert board.remote.synced("devbox", {(ref.key, "c1")}, 1006.0) == []
    assert board.snapshot(1007).pending_count == 1


@needs_ssh
def test_garbage_on_the_stream_is_skipped_with_one_log_line(tmp_path: Path) -> None:
    there = tmp_path / "there"
    f = session_file(there)
    append(f, header("/home/dev/api"), ask("call_g1", "Still fine?"))
    script = tmp_path / "noisy.py"
    script.write_text(
        "import subprocess, sys\n"
        "print('Welcome to devbox!\\n{not json\\n[1,2]\\n{\"event\": 5}', flush=True)\n"
        "print('x' * 3_000_000, flush=True)\n"
        # (--stop-on-eof: the run it starts ends when the link closes its input, as docs/configuration.md
        # advises for command remotes; the link stops only this script)
        f"sys.exit(subprocess.call({[sys.executable, '-m', 'notifier', 'run', '--json', '--no-tray', '--no-notify', '--stop-on-eof', '--liveness', 'off', '--sessions-dir', str(there)]!r}))\n"
    )
    state = tmp_path / "remote-state"
    cfg = write_config(
        tmp_path / "config.toml",
        [{"name": "noisy", "command": ["env", f"XDG_STATE_HOME={state}", sys.executable, str(script)]}],
    )
    with local_app(tmp_path, cfg) as app:
        got = wait_for(lambda: remote_needs(app, "noisy"), 30, "the question after the garbage")[0]
        assert got["question"]["text"] == "Still fine?"
        assert sum("skipped a line that is not an event" in line for line in app.stderr) == 1
        assert sum("skipped a line longer than" in line for line in app.stderr) == 1
        assert app.proc.poll() is None


def test_a_remote_that_keeps_ending_says_its_bad_line_once_a_run(tmp_path: Path) -> None:
    """A remote whose stream says ready, then a line that is no event, then ends: the link comes
    back again and again (said each time), the bad line is said once for the app's run."""
    script = "import sys; print('{\"event\": \"ready\"}'); print('not json'); sys.stdout.flush()"
    cfg = write_config(tmp_path / "config.toml", [{"name": "flaky", "command": [sys.executable, "-c", script]}])
    with local_app(tmp_path, cfg) as app:
        wait_for(lambda: sum("the link ended" in line for line in app.stderr) >= 2, 30, "the link back twice")
        assert sum("skipped a line that is not an event" in line for line in app.stderr) == 1, app.stderr


@needs_ssh
def test_a_missing_remote_is_reported_once(tmp_path: Path) -> None:
    closed = free_port()
    remote = {
        "name": "gone",
        "ssh": "root@127.0.0.1",
        "ssh_options": ["-p", str(closed), "-o", "ConnectTimeout=5", "-o", "StrictHostKeyChecking=no",
                        "-o", "UserKnownHostsFile=/dev/null"],
    }
    cfg = write_config(tmp_path / "config.toml", [remote])
    with local_app(tmp_path, cfg) as app:
        app.wait("ready")
        line = app.log_has("remote gone: cannot be reached")
        assert "refused" in line.lower() or "exit code 255" in line
        append(session_file(tmp_path / "local-sessions"), header("/home/dev/x"), ask("call_m1", "Here?"))
        app.wait("needs_input")  # the app carries on
        assert sum("remote gone" in line for line in app.stderr) == 1


@needs_ssh
def test_several_remotes(tmp_path: Path, sshd: Any) -> None:
    a, b = sshd("a"), sshd("b")
    append(session_file(a.sessions), header("/home/dev/one"), ask("call_a", "From A?"))
    append(session_file(b.sessions), header("/home/dev/two"), ask("call_b", "From B?"))
    # gamma is the same machine as alpha under another name: the same file on two "hosts"
    cfg = write_config(tmp_path / "config.toml", [a.remote("alpha"), b.remote("beta"), a.remote("gamma")])
    with local_app(tmp_path, cfg) as app:
        wait_for(
            lambda: all(remote_needs(app, h) for h in ("alpha", "beta", "gamma")), 40, "all three remotes"
        )
        assert remote_needs(app, "alpha")[0]["question"]["text"] == "From A?"
        assert remote_needs(app, "beta")[0]["question"]["text"] == "From B?"
        # the same file path on two hosts never collides: each is its own session
        assert remote_needs(app, "gamma")[0]["session"]["file"] == remote_needs(app, "alpha")[0]["session"]["file"]
        assert len(app.of("needs_input")) == 3


@needs_ssh
def test_doctor_checks_remotes_and_push_urls(tmp_path: Path, sshd: Any) -> None:
    server = sshd()
    gone = {"name": "gone", "ssh": "root@127.0.0.1", "ssh_options": ["-p", str(free_port())]}
    cfg = write_config(
        tmp_path / "config.toml",
        [server.remote("devbox"), gone],
        {"urls": ["json://127.0.0.1:9/x", "nosuchscheme://x"]},
    )
    done = subprocess.run(
        [sys.executable, "-m", "notifier", "doctor", "--config", str(cfg)],
        capture_output=True, text=True, timeout=90, cwd=ROOT,
    )
    out = done.stdout
    from notifier import __version__

    assert f"[ok  ] remote devbox: reachable, pi-notifier {__version__}" in out, out
    assert "[FAIL] remote gone:" in out
    assert "[ok  ] push URL 1 (json://…): ok" in out and "[FAIL] push URL 2 (nosuchscheme://…)" in out
    assert "127.0.0.1:9/x" not in out  # a URL may hold a token
    assert done.returncode == 1


@needs_ssh
def test_goto_and_answer_go_through_the_same_ssh(tmp_path: Path, sshd: Any) -> None:
    """No pi runs there (only its file): the remote's own goto and answer say so, through ssh,
    and the local command passes that on (exit 1), naming the remote."""
    server = sshd()
    f = session_file(server.sessions)
    append(f, header("/home/dev/webshop"), ask("call_g", "Go?"))
    cfg = write_config(tmp_path / "config.toml", [server.remote("devbox")])
    run = [sys.executable, "-m", "notifier"]
    done = subprocess.run(
        [*run, "goto", f"devbox:{f}", "--print", "--config", str(cfg)], capture_output=True, text=True,
        timeout=60, cwd=ROOT,
    )
    assert done.returncode == 1 and "devbox: " in done.stderr and "no running pi" in done.stderr, done.stderr
    done = subprocess.run(
        [*run, "answer", f"devbox:{f}", "1", "--config", str(cfg)], capture_output=True, text=True,
        timeout=60, cwd=ROOT,
    )
    assert done.returncode == 1 and "devbox: " in done.stderr and "no running pi" in done.stderr, done.stderr
    done = subprocess.run(
        [*run, "answer", "devbox:nosuchsession", "1", "--config", str(cfg)], capture_output=True, text=True,
        timeout=60, cwd=ROOT,
    )
    assert done.returncode == 2, done.stderr  # the remote's bad-usage code comes back as is


@needs_ssh
def test_next_is_the_question_waiting_longest_a_remotes_too(tmp_path: Path, sshd: Any) -> None:
    """goto and answer without SESSION (``next``), and answer --token alone, take the question
    waiting longest (the one with the token) also when it is a remote's, which only the running
    app knows: they go through ssh (no pi runs there: the remote's own refusal, named after it)."""
    from .test_lifecycle import headless_env

    server = sshd()
    f = session_file(server.sessions)
    append(f, header("/home/dev/webshop"), ask("call_n", "Ship it?", options=["Yes", "No"]))
    cfg = write_config(tmp_path / "config.toml", [server.remote("devbox")])
    (tmp_path / "local-sessions").mkdir()
    local = ["--sessions-dir", str(tmp_path / "local-sessions"), "--liveness", "off", "--config", str(cfg)]
    env = headless_env()

    def remote_pending() -> list[dict[str, Any]]:
        status = json.loads(cli("status", "--json", *local, env=env).stdout)
        return [q for s in status["sessions"] if s["host"] == "devbox" for q in s["pending"]]

    with AppProcess("run", "--no-notify", *local, env=env):  # (the app: its control channel answers)
        token = wait_for(remote_pending, 30, "the remote question")[0]["token"]
        for words in (["goto", "--print"], ["goto", "next", "--print"], ["answer", "1"], ["answer", "next", "1"],
                      ["answer", "next", "--text", "hi"], ["answer", "--token", token, "1"]):
            done = cli(*words, *local, env=env, timeout=90)
            assert done.returncode == 1 and "devbox: " in done.stderr and "no running pi" in done.stderr, (words, done.stderr)


@needs_ssh
@pytest.mark.skipif(not shutil.which("tmux"), reason="tmux is not installed")
def test_goto_print_through_real_ssh_and_tmux_parses_back_and_runs_as_meant(tmp_path: Path, sshd: Any) -> None:
    """End to end: a stand-in pi in a real tmux session whose name is full of shell syntax, found
    by the remote's own ``goto --print`` through a real sshd; the line printed here, run by bash,
    reaches the remote's tmux with the target intact and runs nothing else."""
    server = sshd()
    marker = tmp_path / "PWNED"
    assert "." not in str(marker) and ":" not in str(marker)  # (tmux would rewrite them in the name)
    name = f"my  work $(touch {marker}) 'x' `touch {marker}`;touch {marker};#"
    real_tmux = shutil.which("tmux")
    # the remote's tmux: attach (on the socket given) only says what it was asked (no terminal
    # here); all else is tmux
    (server.dir / "bin" / "tmux").write_text(
        f'#!/bin/sh\nif [ "$3" = attach ]; then exec "{sys.executable}" -c'
        f" 'import json,sys; print(json.dumps(sys.argv[1:]))' \"$@\" > \"{tmp_path}/attached.json\"; fi\n"
        f'exec "{real_tmux}" "$@"\n'
    )
    (server.dir / "bin" / "tmux").chmod(0o755)
    fake = tmp_path / "bin" / "pi"
    fake.parent.mkdir()
    fake.write_text(f"#!{sys.executable}\n" + (ROOT / "tests" / "desktop" / "fake_pi.py").read_text())
    fake.chmod(0o755)
    project = tmp_path / "project"
    project.mkdir()
    socket_path = str(tmp_path / "tmux.sock")
    tmux = [str(real_tmux), "-S", socket_path]
    capture = "A-pending.jsonl"
    src = ROOT / "tests" / "data" / "pi-sessions" / "question-answer" / capture
    subprocess.run(
        [*tmux, "new-session", "-d", "-s", name, "-x", "80", "-y", "24", "-c", str(project),
         "-e", f"FAKE_PI_SESSIONS={server.sessions}", str(fake), str(src)],
        check=True, timeout=30,
    )  # fmt: skip
    try:
        assert subprocess.run([*tmux, "list-sessions", "-F", "#{session_name}"], capture_output=True, text=True,
                              timeout=30).stdout.strip() == name
        f = wait_for(lambda: next(server.sessions.rglob("*.jsonl"), None), 20, "the stand-in pi's session")
        cfg = write_config(tmp_path / "config.toml", [server.remote("devbox")])
        done = cli("goto", f"devbox:{f}", "--print", "--config", str(cfg), timeout=90)
        assert done.returncode == 0, done.stderr
        line = done.stdout.rstrip("\n")
        assert "\n" not in line and clean(line) == line
        words = shlex.split(line)
        assert words[:2] == ["ssh", "-t"] and words[-7] == server.remote("devbox")["ssh"]
        # (the pi's own tmux server: its socket, not the remote user's default)
        assert shlex.split(" ".join(words[-6:])) == ["tmux", "-S", socket_path, "attach", "-t", f"{name}:0"]
        pasted = subprocess.run(["bash", "--norc", "--noprofile", "-c", line], capture_output=True, text=True,
                                timeout=60, cwd=tmp_path, stdin=subprocess.DEVNULL)
        assert pasted.returncode == 0, pasted.stderr
        assert json.loads((tmp_path / "attached.json").read_text()) == ["-S", socket_path, "attach", "-t", f"{name}:0"]
        assert not marker.exists()
    finally:
        subprocess.run([*tmux, "kill-server"], timeout=30, capture_output=True)


def test_goto_command_from_the_remote_location(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """What goto prints once the remote says where its pi runs (a stand-in ssh prints the JSON)."""
    from notifier.actions.goto import goto_argv
    from notifier.remote import Remote

    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    fake = bin_dir / "ssh"
    fake.write_text('#!/bin/sh\necho \'{"pid": 5, "tty": null, "tmux": {"socket": "/tmp/x", "session": "work", "window": "2", "pane": "%3"}}\'\n')
    fake.chmod(0o755)
    monkeypatch.setenv("PATH", f"{bin_dir}:{os.environ['PATH']}")
    cmd = shellcmd.join(goto_argv(Remote("devbox", ssh="me@devbox", ssh_options=("-p", "2222")), "abc"))
    assert cmd == "ssh -t -p 2222 me@devbox tmux -S /tmp/x attach -t work:2"


# ---- pushes ----


class InboxServer(http.server.ThreadingHTTPServer):
    """Keeps the bodies posted to it."""

    received: list[dict[str, Any]]


class Inbox(http.server.BaseHTTPRequestHandler):
    received: list[dict[str, Any]] = []

    def do_POST(self) -> None:
        body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
        assert isinstance(self.server, InboxServer)
        self.server.received.append(json.loads(body))
        self.send_response(200)
        self.end_headers()

    def log_message(self, *args: Any) -> None:
        pass


@pytest.fixture
def inbox() -> Iterator[InboxServer]:
    server = InboxServer(("127.0.0.1", 0), Inbox)
    server.received = []
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield server
    server.shutdown()


def test_a_question_is_pushed_at_once_with_after_0(tmp_path: Path, inbox: InboxServer) -> None:
    url = f"json://127.0.0.1:{inbox.server_address[1]}/push"
    cfg = write_config(tmp_path / "config.toml", [], {"urls": [url], "after": 0})
    with local_app(tmp_path, cfg) as app:
        app.wait("ready")
        append(session_file(tmp_path / "local-sessions"), header("/home/dev/webshop"), ask("call_p", "Ship it?"))
        got = wait_for(lambda: inbox.received, 30, "the push")[0]
        assert got["title"] == "webshop needs an answer"
        assert "Ship it?" in got["message"]


def test_a_push_in_flight_does_not_hold_up_the_quit(tmp_path: Path) -> None:
    """The app asked to stop while a push waits on a service that never answers ends at once
    (it held the quit 4 s and more: apprise's own pool, waited for at exit, 3 of 3)."""
    hole = socket.socket()
    hole.bind(("127.0.0.1", 0))
    hole.listen(8)
    hole.settimeout(30)
    cfg = write_config(tmp_path / "config.toml", [], {"urls": [f"json://127.0.0.1:{hole.getsockname()[1]}/"], "after": 0})
    with local_app(tmp_path, cfg) as app, hole:
        app.wait("ready")
        append(session_file(tmp_path / "local-sessions"), header("/home/dev/webshop"), ask("call_p", "Ship it?"))
        conn, _ = hole.accept()  # (the push is on the wire, and never answered)
        with conn:
            began = time.monotonic()
            app.proc.terminate()
            app.proc.wait(10)
            assert time.monotonic() - began < 2.0, app.stderr[-5:]


def test_a_push_waits_after_and_skips_questions_answered_before(tmp_path: Path, inbox: InboxServer) -> None:
    url = f"json://127.0.0.1:{inbox.server_address[1]}/push"
    cfg = write_config(tmp_path / "config.toml", [], {"urls": [url], "after": 0.05})
    f = session_file(tmp_path / "local-sessions")
    with local_app(tmp_path, cfg) as app:
        app.wait("ready")
        append(f, header("/home/dev/webshop"), ask("call_q1", "Answered quickly?"), answer("call_q1"))
        append(f, ask("call_q2", "Still waiting?"))
        app.wait("needs_input", 2)
        assert not inbox.received  # 3 s have not passed: only a stalled machine could fail this
        got = wait_for(lambda: inbox.received, 30, "the push")
        assert len(got) == 1 and "Still waiting?" in got[0]["message"]
        assert all("Answered quickly?" not in g["message"] for g in inbox.received)


def test_push_hides_the_text_without_show_text(tmp_path: Path, inbox: InboxServer) -> None:
    url = f"json://127.0.0.1:{inbox.server_address[1]}/push"
    cfg = write_config(tmp_path / "config.toml", [], {"urls": [url], "after": 0})
    cfg.write_text(cfg.read_text() + "[notifications]\nshow_text = false\n")
    with local_app(tmp_path, cfg) as app:
        app.wait("ready")
        append(session_file(tmp_path / "local-sessions"), header("/home/dev/webshop"), ask("call_s", "Secret plan?"))
        got = wait_for(lambda: inbox.received, 30, "the push")[0]
        assert "Secret plan?" not in got["message"] and got["title"] == "webshop needs an answer"


def test_a_pushed_question_is_not_pushed_again_after_a_restart(tmp_path: Path, inbox: InboxServer) -> None:
    """Which questions were pushed is in the state store: after a restart, one still pending is
    seen again (a start-up needs_input) but not pushed a second time."""
    url = f"json://127.0.0.1:{inbox.server_address[1]}/push"
    cfg = write_config(tmp_path / "config.toml", [], {"urls": [url], "after": 0})
    root = tmp_path / "local-sessions"
    with local_app(tmp_path, cfg) as app:
        app.wait("ready")
        append(session_file(root, "s1"), header("/home/dev/webshop"), ask("call_r1", "Pushed before the restart?"))
        wait_for(lambda: inbox.received, 30, "the first push")
    with local_app(tmp_path, cfg) as app:
        (seen,) = app.wait("needs_input")
        assert seen["initial"] and seen["question"]["tool_call_id"] == "call_r1"  # still pending
        app.wait("ready")
        append(session_file(root, "s2"), header("/home/dev/shop"), ask("call_r2", "Asked after the restart?"))
        # call_r1 was handed to the push output first: pushed again, it would arrive first
        wait_for(lambda: len(inbox.received) >= 2, 30, "the push of the new question")
        messages = [g["message"] for g in inbox.received]
        assert len(messages) == 2, messages
        assert "Pushed before the restart?" in messages[0] and "Asked after the restart?" in messages[1]


def test_a_question_is_pushed_by_the_one_process_that_notifies(tmp_path: Path, inbox: InboxServer) -> None:
    """A headless run that notifies and a `run --json` beside it, both with push set: one push
    per question, from the one that notifies (as its desktop notifications are)."""
    from .test_lifecycle import headless_env

    url = f"json://127.0.0.1:{inbox.server_address[1]}/push"
    cfg = write_config(tmp_path / "config.toml", [], {"urls": [url], "after": 0})
    root = tmp_path / "local-sessions"
    root.mkdir()
    args = ("--sessions-dir", str(root), "--liveness", "off", "--config", str(cfg))
    env = headless_env()
    with AppProcess("run", "--json", "--no-tray", *args, env=env) as first:
        first.wait("ready")
        with AppProcess("run", "--json", "--no-tray", *args, env=env) as beside:
            beside.wait("ready")
            append(session_file(root, "s1"), header("/home/dev/webshop"), ask("call_o1", "Once?"))
            wait_for(lambda: inbox.received, 30, "the push")
            append(session_file(root, "s2"), header("/home/dev/shop"), ask("call_o2", "And this one?"))
            beside.wait("needs_input", 2)
            # (the second question's push comes after any second push of the first would have)
            wait_for(lambda: any("And this one?" in g["message"] for g in inbox.received), 30, "the second push")
    messages = [g["message"] for g in inbox.received]
    assert sum("Once?" in m for m in messages) == 1 and sum("And this one?" in m for m in messages) == 1, messages
