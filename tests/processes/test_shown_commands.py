"""Every command shown, printed or copied for the user to paste (issue 19 part 5), run for real:
what the CLI offers for a folder a real bash runs as meant, and for a hostile folder it offers
none. (Built and parsed back: tests/unit/test_shown_commands.py.)"""

from __future__ import annotations

import json
import os
import shlex
import subprocess
import sys
from pathlib import Path

from ..conftest import cli
from ..writer import ask, header, user

# Printable, but full of shell syntax: offered, and must reach pi intact.
TRICKY = "it's $(touch PWNED) `touch PWNED` ;touch PWNED;#  two  spaces \\ \"q\" !! ~ *"


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


