"""A remote session as seen on this machine: never "in front of you" here, resumed and reached
through ssh with every name quoted for both shells (the local one and the remote one)."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path
from typing import Any

import pytest

from notifier.core.model import Question, QuestionItem, SessionRef, SessionView, remote_key
from notifier.core.planner import Item
from notifier.system import focus
from notifier.system.locate import Location
from notifier.ui.view import resume_command

Q = Question("c1", "question", (QuestionItem("Deploy?"),), 100.0)
LOCAL = SessionRef("/home/dev/.pi/s.jsonl", "abc", "/home/dev/webshop", None)
REMOTE = SessionRef(remote_key("devbox", "/home/dev/.pi/s.jsonl"), "abc", "/home/dev/webshop", None, "devbox")


def test_a_remote_question_is_never_focused_here(monkeypatch: pytest.MonkeyPatch) -> None:
    """A local pi in the same folder path, in the active terminal, says nothing about a remote
    session: its notification is never skipped as "already looked at"."""
    asked: list[list[str]] = []

    def locate(wanted: Any) -> dict[str, Location]:  # every session found, in the active window
        keys = [w.ref.key if isinstance(w, SessionView) else w.key for w in wanted]
        asked.append(keys)
        return {key: Location(pid=1, tty=None, window_id=7) for key in keys}

    monkeypatch.setattr(focus, "locate_sessions", locate)
    monkeypatch.setattr(focus, "is_focused", lambda location: location is not None)
    local, remote = Item((LOCAL.key, "c1"), LOCAL, Q), Item((REMOTE.key, "c1"), REMOTE, Q)
    assert focus.items_focused([local])  # the stand-ins do say "focused" for a local one
    assert not focus.items_focused([remote])
    assert not focus.items_focused([local, remote])
    assert focus.is_session_focused(SessionView(LOCAL, "needs_input", (Q,), (), True, 100.0))
    assert not focus.is_session_focused(SessionView(REMOTE, "needs_input", (Q,), (), None, 100.0))
    assert asked == [[LOCAL.key], [LOCAL.key]]  # a remote session is not even looked for here


def test_resume_command_of_a_remote_session_runs_there(tmp_path: Path) -> None:
    assert resume_command("/w", "/s.jsonl") == "cd /w && pi --session /s.jsonl"
    folder = tmp_path / "it's here $(touch pwned)"
    folder.mkdir()
    cmd = resume_command(str(folder), "/s/a b.jsonl", "devbox")
    assert cmd.startswith("ssh -t devbox ")
    # what pi finally gets: unquoted once by the local shell, once by the remote one
    env = {**os.environ, "PATH": f"{_fake_bin(tmp_path)}:{os.environ['PATH']}"}
    subprocess.run(["sh", "-c", cmd], check=True, timeout=30, env=env, cwd=tmp_path)
    ran = json.loads((tmp_path / "pi.json").read_text())
    assert ran == {"cwd": str(folder), "argv": ["--session", "/s/a b.jsonl"]}
    assert not (tmp_path / "pwned").exists()


def test_remote_goto_quotes_the_tmux_target_for_the_remote_shell(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The remote says where its pi runs; the ssh line we print must reach tmux with the session
    name intact (spaces, quotes, shell syntax) through the local and the remote shell."""
    from notifier.app import remotes
    from notifier.remote.link import Remote

    name = "my work $(touch pwned) 'x'"
    bin_dir = _fake_bin(tmp_path)
    (bin_dir / "pi-notifier").write_text(
        "#!/bin/sh\necho " + _sh_quote(json.dumps({"pid": 5, "tty": None, "tmux": {
            "socket": "/tmp/x", "session": name, "window": "2", "pane": "%3"}})) + "\n"
    )
    (bin_dir / "pi-notifier").chmod(0o755)
    monkeypatch.setenv("PATH", f"{bin_dir}:{os.environ['PATH']}")
    monkeypatch.chdir(tmp_path)
    cmd = remotes.goto_command(Remote("devbox", ssh="me@devbox", ssh_options=("-p", "2222")), "abc")
    assert cmd.startswith("ssh -t -p 2222 me@devbox tmux attach -t ")
    subprocess.run(["sh", "-c", cmd], check=True, timeout=30, cwd=tmp_path)
    assert json.loads((tmp_path / "tmux.json").read_text()) == ["attach", "-t", f"{name}:2"]
    assert not (tmp_path / "pwned").exists()
    # a plain name stays plain
    (bin_dir / "pi-notifier").write_text(
        '#!/bin/sh\necho \'{"pid": 5, "tty": null, "tmux": {"socket": "/tmp/x", "session": "work", "window": "2"}}\'\n'
    )
    plain = remotes.goto_command(Remote("devbox", ssh="me@devbox", ssh_options=("-p", "2222")), "abc")
    assert plain == "ssh -t -p 2222 me@devbox tmux attach -t work:2"


# ---- a stand-in ssh: joins its remote arguments with spaces for a shell, as OpenSSH does ----


def _sh_quote(text: str) -> str:
    return "'" + text.replace("'", "'\"'\"'") + "'"


def _fake_bin(tmp_path: Path) -> Path:
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir(exist_ok=True)
    scripts = {
        # skip the options up to the destination (anything with "devbox"), then run the rest
        "ssh": '#!/bin/sh\nwhile [ $# -gt 0 ]; do case "$1" in *devbox) shift; break;; esac; shift; done\n'
        'exec /bin/sh -c "$*"\n',
        "tmux": f'#!/bin/sh\nexec "{_python()}" -c \'import json,sys; print(json.dumps(sys.argv[1:]))\' "$@"'
        f' > "{tmp_path}/tmux.json"\n',
        "pi": f'#!/bin/sh\nexec "{_python()}" -c \'import json,os,sys;'
        f' print(json.dumps({{"cwd": os.getcwd(), "argv": sys.argv[1:]}}))\' "$@" > "{tmp_path}/pi.json"\n',
    }
    for name, text in scripts.items():
        (bin_dir / name).write_text(text)
        (bin_dir / name).chmod(0o755)
    return bin_dir


def _python() -> str:
    import sys

    return sys.executable
