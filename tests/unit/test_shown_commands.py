"""Every command shown, printed or copied for the user to paste (issue 19 part 5): the resume
command (window, details pane, goto, answer), goto's tmux attach hint, built from checked names.
Either it parses back to the argv meant and a real bash runs just that, or no command is offered
and the user is told which name and why. The remote side is in test_remote_here.py."""

from __future__ import annotations

import json
import os
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

from notifier.actions import goto
from notifier.core.model import Question, QuestionItem, SessionRef, SessionView, remote_key
from notifier.core.text import clean
from notifier.system.tmux import TmuxPane
from notifier.ui.view import details_text, question_obj, resume_command

from ..conftest import cli
from ..live.writer import ask, header, user

Q = Question("c1", "question", (QuestionItem("Deploy?"),), 100.0)
# A folder name no shell may run: ESC before a quote made clean() eat the quote shlex.quote put
# there, and the pasted line ran `touch`.
HOSTILE = "/tmp/x\x1b'\x1b';touch /tmp/PWNED;#"
# Printable, but full of shell syntax: offered, and must reach pi intact.
TRICKY = "it's $(touch PWNED) `touch PWNED` ;touch PWNED;#  two  spaces \\ \"q\" !! ~ *"


def view(cwd: str | None, file: str = "/s/a.jsonl", host: str | None = None) -> SessionView:
    key = remote_key(host, file) if host else file
    return SessionView(SessionRef(key, "abc", cwd, None, host), "needs_input", (Q,), (), False, 100.0)


def test_a_folder_with_control_characters_gets_no_resume_command() -> None:
    v = view(HOSTILE)
    advice = goto.resume_advice(v)
    assert advice == "no resume command is offered: the folder of the session holds an escape character (U+001B)"
    q = question_obj(v, Q, True)
    assert q["resume"] is None and q["resume_refused"] == advice
    text = details_text(q, 200.0)
    assert f"Resume:  {advice}" in text and "\x1b" not in text
    with pytest.raises(ValueError, match="escape character"):
        resume_command(HOSTILE, "/s/a.jsonl")


@pytest.mark.parametrize(
    ("cwd", "file", "why"),
    [
        ("/w", "/s/a\u202eb.jsonl", "the session file name holds a bidirectional control (U+202E)"),
        ("/w\nx", "/s/a.jsonl", "the folder of the session holds a line break (U+000A)"),
        ("/w", "/s/\x1b[201~;touch x", "the session file name holds an escape character (U+001B)"),
        ("/w\u00a0x", "/s/a.jsonl", "the folder of the session holds a space that is not a plain space (U+00A0)"),
    ],
)
def test_which_name_is_refused_is_said(cwd: str, file: str, why: str) -> None:
    assert goto.resume_advice(view(cwd, file)) == f"no resume command is offered: {why}"


def test_a_printable_folder_is_offered_and_parses_back() -> None:
    v = view(TRICKY, "/s/a b.jsonl")
    advice = goto.resume_advice(v)
    line = advice.removeprefix("resume it with: ")
    assert shlex.split(line) == ["cd", TRICKY, "&&", "pi", "--session", "/s/a b.jsonl"]
    assert advice == f"resume it with: {line}"
    assert clean(line) == line  # callers that sanitize the message keep it whole
    q = question_obj(v, Q, True)
    assert q["resume"] == line and q["resume_refused"] is None
    assert f"Resume:  {line}" in details_text(q, 200.0)
    plain = goto.resume_advice(view(None, "/s/x y.jsonl"))
    assert shlex.split(plain) == ["resume", "it", "with:", "pi", "--session", "/s/x y.jsonl"]


def test_a_remote_session_is_resumed_through_ssh_with_both_shells_in_mind() -> None:
    q = question_obj(view(TRICKY, "/s/a.jsonl", "devbox"), Q, False)
    ssh, flag, host, remote = shlex.split(q["resume"])
    assert (ssh, flag, host) == ("ssh", "-t", "devbox")
    assert shlex.split(remote) == ["cd", TRICKY, "&&", "pi", "--session", "/s/a.jsonl"]
    refused = question_obj(view("/w\x1b]52;c;cHduZWQ=\x07", "/s/a.jsonl", "devbox"), Q, False)
    assert refused["resume"] is None and "folder of the session holds an escape" in refused["resume_refused"]


def test_the_tmux_attach_hint() -> None:
    pane = TmuxPane("/tmp/my socket/s", "my  work", "2", "@3", "%5", 0)
    hint = goto.attach_hint(pane)
    assert hint.startswith("run: ") and clean(hint) == hint
    assert shlex.split(hint[len("run: "):]) == ["tmux", "-S", "/tmp/my socket/s", "attach", "-t", "my  work:2"]
    evil = goto.attach_hint(TmuxPane("/tmp/s", "w\x1b]0;x\x07;touch PWNED", "2", "@3", "%5", 0))
    assert evil == (
        "attach to it yourself (no command is offered: the tmux session or window name holds an escape character (U+001B))"
    )


# ---- the command line: what `goto` and `answer` print for a session nobody runs ----


def _fake_pi(tmp_path: Path) -> Path:
    """A `pi` that records where it ran and with what (so a pasted line can be run safely)."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir(exist_ok=True)
    pi = bin_dir / "pi"
    pi.write_text(
        f"#!/bin/sh\nexec {shlex.quote(sys.executable)} -c 'import json,os,sys; print(json.dumps("
        f'{{"cwd": os.getcwd(), "argv": sys.argv[1:]}}))\' "$@" > {shlex.quote(str(tmp_path / "pi.json"))}\n'
    )
    pi.chmod(0o755)
    return bin_dir


def _sessions(tmp_path: Path, cwd: str, name: str = "a.jsonl") -> tuple[Path, Path]:
    sessions = tmp_path / "sessions"
    (sessions / "--p--").mkdir(parents=True, exist_ok=True)
    f = sessions / "--p--" / name
    f.write_bytes(header(cwd) + user() + ask("c1"))
    return sessions, f


def _said(sessions: Path, f: Path) -> list[str]:
    """stderr of goto, goto --print and answer (liveness off: pending, but no pi found; on: abandoned)."""
    out = []
    for args in (["goto", str(f)], ["goto", str(f), "--print"], ["answer", str(f), "1"]):
        for liveness in ("off", "auto"):
            r = cli(*args, "--sessions-dir", str(sessions), "--liveness", liveness)
            assert r.returncode == 1, (args, r.stderr)
            assert r.stdout in ("", "null\n"), r.stdout
            assert len(r.stderr.splitlines()) == 1, r.stderr
            out.append(r.stderr)
    return out


def _offered(said: str) -> str | None:
    """The command a line offers to paste (after "resume it with: "), None when it offers none."""
    if "no resume command is offered" in said:
        return None
    assert "resume it with: " in said, said
    return said.split("resume it with: ", 1)[1].rstrip("\n")


def _paste(line: str, tmp_path: Path, bin_dir: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        ["bash", "--norc", "--noprofile", "-c", line],
        capture_output=True,
        text=True,
        timeout=30,
        cwd=tmp_path,
        env={"PATH": f"{bin_dir}:{os.environ['PATH']}", "LC_ALL": "C.UTF-8", "HOME": str(tmp_path)},
    )


def test_cli_offers_no_command_for_a_hostile_folder(tmp_path: Path) -> None:
    cwd = f"{tmp_path}/x\x1b'\x1b';touch {tmp_path}/PWNED;#"
    sessions, f = _sessions(tmp_path, cwd)
    for said in _said(sessions, f):
        assert "\x1b" not in said and "touch" not in said, said
        assert _offered(said) is None and "the folder of the session holds an escape character (U+001B)" in said
    assert not (tmp_path / "PWNED").exists()


def test_cli_offers_a_command_that_bash_runs_as_meant(tmp_path: Path) -> None:
    folder = tmp_path / TRICKY
    folder.mkdir()
    sessions, f = _sessions(tmp_path, str(folder), "it's $(touch PWNED)  a.jsonl")
    bin_dir = _fake_pi(tmp_path)
    for said in _said(sessions, f):
        line = _offered(said)
        assert line is not None, said
        assert shlex.split(line) == ["cd", str(folder), "&&", "pi", "--session", str(f)]
        (tmp_path / "pi.json").unlink(missing_ok=True)
        done = _paste(line, tmp_path, bin_dir)
        assert done.returncode == 0, done.stderr
        assert json.loads((tmp_path / "pi.json").read_text()) == {"cwd": str(folder), "argv": ["--session", str(f)]}
        assert not (tmp_path / "PWNED").exists() and not (folder / "PWNED").exists()


def test_goto_print_json_writes_what_a_terminal_acts_on_as_escapes() -> None:
    from notifier.cli.goto import terminal_json

    where = {"pid": 5, "tmux": {"session": "w\x9b2J\u202egnp\u2028x\x7f\x1b]0;t\x07", "window": "1", "pane": "%3"}}
    text = terminal_json(where)
    assert json.loads(text) == where
    assert text.isascii() and text.isprintable(), text
    assert terminal_json({"cwd": "/home/u/日本語 ✓"}) == '{"cwd":"/home/u/日本語 ✓"}'  # the rest as it is
