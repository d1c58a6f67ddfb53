"""A remote session as seen on this machine: resumed and reached through ssh with every name
quoted for both shells (the local one and the remote one), checked by running them."""

from __future__ import annotations

import json
import os
import shlex
import subprocess
from pathlib import Path
from typing import Any

import pytest

from notifier.core import text as shellcmd
from notifier.core.text import clean
from notifier.window.view import resume_command


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
    from notifier.actions import goto as over_ssh
    from notifier.remote import Remote

    name = "my work $(touch pwned) 'x'"
    bin_dir = _fake_bin(tmp_path)
    (bin_dir / "pi-notifier").write_text(
        "#!/bin/sh\necho " + _sh_quote(json.dumps({"pid": 5, "tty": None, "tmux": {
            "socket": "/tmp/x", "session": name, "window": "2", "pane": "%3"}})) + "\n"
    )
    (bin_dir / "pi-notifier").chmod(0o755)
    monkeypatch.setenv("PATH", f"{bin_dir}:{os.environ['PATH']}")
    monkeypatch.chdir(tmp_path)
    cmd = shellcmd.join(over_ssh.goto_argv(Remote("devbox", ssh="me@devbox", ssh_options=("-p", "2222")), "abc"))
    assert cmd.startswith("ssh -t -p 2222 me@devbox tmux -S /tmp/x attach -t ")
    subprocess.run(["sh", "-c", cmd], check=True, timeout=30, cwd=tmp_path)
    assert json.loads((tmp_path / "tmux.json").read_text()) == ["-S", "/tmp/x", "attach", "-t", f"{name}:2"]
    assert not (tmp_path / "pwned").exists()
    # a plain name stays plain
    (bin_dir / "pi-notifier").write_text(
        '#!/bin/sh\necho \'{"pid": 5, "tty": null, "tmux": {"socket": "/tmp/x", "session": "work", "window": "2"}}\'\n'
    )
    plain = shellcmd.join(over_ssh.goto_argv(Remote("devbox", ssh="me@devbox", ssh_options=("-p", "2222")), "abc"))
    assert plain == "ssh -t -p 2222 me@devbox tmux -S /tmp/x attach -t work:2"


def test_a_remote_answering_hostile_json_is_refused_not_a_crash(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """What the remote prints is read through the one bounded parse: a line nested deeper than
    the interpreter can recurse is a refusal with a reason, never a RecursionError."""
    from notifier.actions import goto as over_ssh
    from notifier.remote import Remote

    bin_dir = _fake_bin(tmp_path)
    nested = tmp_path / "nested.json"
    nested.write_text('{"tmux": ' * 100_000 + "1" + "}" * 100_000 + "\n")
    (bin_dir / "pi-notifier").write_text(f'#!/bin/sh\ncat "{nested}"\necho "no tmux here" >&2\n')
    (bin_dir / "pi-notifier").chmod(0o755)
    monkeypatch.setenv("PATH", f"{bin_dir}:{os.environ['PATH']}")
    with pytest.raises(over_ssh.RemoteRefused, match="devbox: no tmux here"):
        over_ssh.goto_argv(Remote("devbox", ssh="me@devbox"), "abc")


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


# ---- a remote's names reach this terminal only through the sanitizer, and commands only checked ----

HOSTILE_NAMES = [
    # an OSC 52 clipboard write and a screen clear in the session name
    {"session": "work\x1b]52;c;dG91Y2ggUFdORUQ=\x07\x1b[2J", "window": "2"},
    # a bracketed-paste end: pasted into bash through tmux, what follows would run
    {"session": "w\x1b[201~;touch PWNED;#", "window": "1"},
    {"session": "two\nlines", "window": "1"},
    {"session": "work", "window": "1\r\x1b[Kfake"},
    {"session": "\u202egnp.exe", "window": "1"},
    {"session": "c1\x9b2J", "window": "1"},
]


def _remote_says(tmp_path: Path, tmux: dict[str, Any]) -> Path:
    """Stand-ins: ssh (as OpenSSH: the words after the destination to a shell) and the remote's
    pi-notifier, whose ``goto --print`` says the pi runs in ``tmux``; a config naming the remote."""
    bin_dir = _fake_bin(tmp_path)
    where = json.dumps({"pid": 5, "tty": None, "tmux": {"socket": "/tmp/x", "pane": "%3", **tmux}})
    (bin_dir / "pi-notifier").write_text("#!/bin/sh\nprintf '%s\\n' " + _sh_quote(where) + "\n")  # (no echo: dash's expands \\n)
    (bin_dir / "pi-notifier").chmod(0o755)
    cfg = tmp_path / "config.toml"
    cfg.write_text('[[remotes]]\nname = "devbox"\nssh = "me@devbox"\nssh_options = ["-p", "2222"]\n')
    return cfg


def _cli_env(tmp_path: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in ("DISPLAY", "WAYLAND_DISPLAY")}
    return {**env, "PATH": f"{tmp_path / 'bin'}:{os.environ['PATH']}"}


def _raw(text: str) -> list[str]:
    """What a terminal would act on, or that reorders or hides what is seen."""
    import unicodedata

    return [c for c in text if c != "\n" and unicodedata.category(c) in ("Cc", "Cf", "Zl", "Zp")]


@pytest.mark.parametrize("tmux", HOSTILE_NAMES)
def test_goto_print_never_prints_a_remote_name_raw(tmp_path: Path, tmux: dict[str, Any]) -> None:
    from ..conftest import cli

    cfg = _remote_says(tmp_path, tmux)
    r = cli("goto", "devbox:abc", "--print", "--config", str(cfg), env=_cli_env(tmp_path))
    assert r.returncode == 1 and r.stdout == "", (r.stdout, r.stderr)
    assert not _raw(r.stderr) and len(r.stderr.splitlines()) == 1, repr(r.stderr)
    assert "no command to attach to it is offered: its tmux session or window name holds " in r.stderr
    assert "PWNED" not in r.stderr and "52;" not in r.stderr  # the reason says what, never the name
    assert not (tmp_path / "PWNED").exists()


@pytest.mark.parametrize("tmux", HOSTILE_NAMES[:2])
def test_goto_from_the_window_says_why_instead_of_a_command(tmp_path: Path, tmux: dict[str, Any],
                                                            monkeypatch: pytest.MonkeyPatch) -> None:
    from notifier.actions import goto
    from notifier.config import (  # (in parentheses: the codemod leaves it whole)
        load,
    )

    cfg = _remote_says(tmp_path, tmux)
    for k, v in _cli_env(tmp_path).items():
        monkeypatch.setenv(k, v)
    monkeypatch.delenv("DISPLAY", raising=False)
    monkeypatch.delenv("WAYLAND_DISPLAY", raising=False)
    # no snapshot, deliberately: a remote session's goto never reads the local one
    code, said = goto.go(load(str(cfg), True), None, "@devbox:/home/dev/.pi/s.jsonl")  # type: ignore[arg-type]
    assert code == 1 and not _raw(said) and "run:" not in said
    assert said.startswith("devbox: its pi runs in tmux, but no command to attach to it is offered: ")


def test_goto_print_of_a_tricky_printable_name_parses_back_and_runs_as_meant(tmp_path: Path) -> None:
    from ..conftest import cli

    name = "my  work $(touch PWNED) 'x' \"y\" `touch PWNED`;#"
    cfg = _remote_says(tmp_path, {"session": name, "window": "2"})
    r = cli("goto", "devbox:abc", "--print", "--config", str(cfg), env=_cli_env(tmp_path))
    assert r.returncode == 0, r.stderr
    line = r.stdout.rstrip("\n")
    assert "\n" not in line and not _raw(line) and clean(line) == line
    words = shlex.split(line)
    assert words[:5] == ["ssh", "-t", "-p", "2222", "me@devbox"]
    assert shlex.split(" ".join(words[5:])) == ["tmux", "-S", "/tmp/x", "attach", "-t", f"{name}:2"]  # the remote shell's view
    subprocess.run(["bash", "--norc", "-c", line], check=True, timeout=30, cwd=tmp_path, env=_cli_env(tmp_path))
    assert json.loads((tmp_path / "tmux.json").read_text()) == ["-S", "/tmp/x", "attach", "-t", f"{name}:2"]
    assert not (tmp_path / "PWNED").exists()


def test_goto_of_a_remote_session_with_nothing_to_open_it_in_exits_1(tmp_path: Path) -> None:
    """Without --print, goto's 0 means the user was taken there: with no display to open a
    terminal on, the line to run is printed and goto exits 1 saying why."""
    from ..conftest import cli

    cfg = _remote_says(tmp_path, {"session": "work", "window": "2"})
    r = cli("goto", "devbox:abc", "--config", str(cfg), env=_cli_env(tmp_path))
    assert r.returncode == 1, (r.stdout, r.stderr)
    assert r.stdout == "ssh -t -p 2222 me@devbox tmux -S /tmp/x attach -t work:2\n"
    assert "no display" in r.stderr and r.stderr.count("\n") == 1


def test_no_terminal_here_the_window_is_told_the_same_line(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from notifier.actions import goto
    from notifier.config import (  # (in parentheses: the codemod leaves it whole)
        load,
    )

    cfg = _remote_says(tmp_path, {"session": "a  b", "window": "2"})
    monkeypatch.setenv("PATH", _cli_env(tmp_path)["PATH"])
    monkeypatch.delenv("DISPLAY", raising=False)
    monkeypatch.delenv("WAYLAND_DISPLAY", raising=False)
    # no snapshot, deliberately: a remote session's goto never reads the local one
    code, said = goto.go(load(str(cfg), True), None, "@devbox:/home/dev/.pi/s.jsonl")  # type: ignore[arg-type]
    assert code == 1 and said.startswith("no terminal to open here; run: ")
    line = said.removeprefix("no terminal to open here; run: ")
    assert shlex.split(" ".join(shlex.split(line)[5:])) == ["tmux", "-S", "/tmp/x", "attach", "-t", "a  b:2"]  # spaces kept


def test_a_new_terminal_gets_the_argv_not_a_shell_line(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from notifier.actions import goto as over_ssh

    from ..conftest import wait_for

    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    record = tmp_path / "term.json"
    term = bin_dir / "x-terminal-emulator"
    term.write_text(
        f'#!/bin/sh\nexec "{_python()}" -c \'import json,sys; print(json.dumps(sys.argv[1:]))\' "$@" > "{record}"\n'
    )
    term.chmod(0o755)
    monkeypatch.setenv("PATH", f"{bin_dir}:{os.environ['PATH']}")
    argv = ["ssh", "-t", "me@devbox", "tmux", "attach", "-t", "'a $(touch PWNED)'"]
    assert over_ssh.open_in_terminal(argv)
    assert wait_for(lambda: record.exists() and record.read_text(), 10, "the terminal's arguments")
    assert json.loads(record.read_text()) == ["-e", *argv]
    assert not (tmp_path / "PWNED").exists()
