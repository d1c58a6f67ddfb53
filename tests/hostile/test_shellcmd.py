"""Commands for people to paste (core/text) against hostile names: a line shown parses back
to its argv (shlex and a real shell agree), or no command is offered and the reason says which
argument and why."""

from __future__ import annotations

import os
import shlex
import shutil
import subprocess
import tempfile
from pathlib import Path

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from notifier.core import text
from notifier.core.text import Arg, Unsafe, clean

from .test_text import HOSTILE_CHARS

# What a shell acts on, and what a terminal does, beside the sanitizer's own hostile characters.
SHELL_CHARS = "'\"\\$`!;&|<>(){}[]*?~#=%^ \t\n-"
hostile = st.text(alphabet=st.sampled_from(HOSTILE_CHARS + SHELL_CHARS) | st.characters(), max_size=40)
argvs = st.lists(hostile, min_size=1, max_size=6)
# Text a command may hold: printable (str.isprintable), with shell syntax and runs of spaces.
printable = st.text(
    alphabet=st.sampled_from("'\"\\$`!;&|<>(){}*?~#=%^ -ab/é日👩\u0301\ufe0f")
    | st.characters(blacklist_categories=("Cc", "Cf", "Cs", "Co", "Cn", "Zl", "Zp", "Zs")),
    max_size=30,
).filter(lambda s: text.why_unsafe(s) is None)

HOSTILE_CWD = "/tmp/x\x1b'\x1b';touch /tmp/PWNED;#"


@settings(max_examples=1000)
@given(argvs)
@example(["cd", HOSTILE_CWD])
@example(["a  b", " ", "", "'", "\"'\"", "  lead", "trail  "])
@example(["x\x1b[201~; touch /tmp/PWNED"])  # a bracketed-paste end: what follows it would run
@example(["pay\u202epal", "\u00a0", "a\u2028b", "\udcff", "\ue000", "\u3164"])
def test_a_command_is_refused_or_parses_back_to_its_argv(argv: list[str]) -> None:
    try:
        line = text.join(argv)
    except Unsafe as exc:
        assert any(text.why_unsafe(a) for a in argv)
        reason = str(exc)
        assert reason.startswith("argument ") and " holds " in reason
        assert clean(reason) == reason and reason.isascii()  # one plain line, no untrusted text
        return
    assert shlex.split(line) == argv
    assert line.isprintable() and "  " not in line
    assert clean(line) == line  # a message that carries it may be sanitized, as prose is


@settings(max_examples=400)
@given(st.lists(printable, min_size=1, max_size=6))
def test_printable_names_are_never_refused(argv: list[str]) -> None:
    line = text.join(argv)
    assert shlex.split(line) == argv and clean(line) == line


@given(st.lists(printable, min_size=1, max_size=4), st.lists(printable, min_size=1, max_size=4))
def test_chained_commands_split_at_their_and(first: list[str], second: list[str]) -> None:
    line = text.chain(first, second)
    assert shlex.split(line) == [*first, "&&", *second]


@settings(max_examples=300)
@given(st.lists(printable, min_size=1, max_size=5))
def test_words_for_a_remote_shell_survive_both_shells(argv: list[str]) -> None:
    """ssh joins the words after HOST with spaces for the remote shell: unquoted once here, once there."""
    line = text.join(["ssh", "-t", "me@devbox", *text.remote_words(argv)])
    local = shlex.split(line)
    assert local[:3] == ["ssh", "-t", "me@devbox"]
    assert shlex.split(" ".join(local[3:])) == argv
    assert clean(line) == line


@pytest.mark.parametrize(
    ("value", "why"),
    [
        (HOSTILE_CWD, "an escape character (U+001B)"),
        ("a\nb", "a line break (U+000A)"),
        ("a\x00", "a NUL character (U+0000)"),
        ("a\x9bb", "a control character (U+009B)"),
        ("a\x7f", "a control character (U+007F)"),
        ("pay\u202elap", "a bidirectional control (U+202E)"),
        ("zero\u200bwidth", "an invisible format character (U+200B)"),
        ("no\u00a0break", "a space that is not a plain space (U+00A0)"),
        ("a\u2028b", "a line break (U+2028)"),
        ("bad\udcffbyte", "a byte that is not UTF-8 (U+DCFF)"),
        ("\ue000", "a private-use character (U+E000)"),
        ("\uffff", "an unassigned code point or noncharacter (U+FFFF)"),
        ("\u3164", "an invisible character (U+3164)"),
    ],
)
def test_the_reason_names_the_argument_and_the_character(value: str, why: str) -> None:
    with pytest.raises(Unsafe) as raised:
        text.join(["cd", Arg("the folder of the session", value), "&&", "pi"])
    assert str(raised.value) == f"the folder of the session holds {why}"
    with pytest.raises(Unsafe, match=r"^argument 2 holds "):
        text.join(["cd", value])


def test_literal_lines() -> None:
    assert text.join(["cd", "/home/u/it's here"]) == "cd '/home/u/it'\"'\"'s here'"
    assert text.join(["a  b"]) == "'a '' b'"
    assert text.join(["x   y"]) == "'x '' '' y'"
    assert text.chain(["cd", "/w"], ["pi", "--session", "/s.jsonl"]) == "cd /w && pi --session /s.jsonl"
    assert text.remote_words(["tmux", "attach", "-t", "my work:1"]) == ["tmux", "attach", "-t", "'my work:1'"]
    with pytest.raises(ValueError):
        text.join([])


# ---- a real shell agrees ----


@pytest.fixture(scope="module")
def bash() -> str:
    path = shutil.which("bash")
    if path is None:
        pytest.fail("bash is needed to check what a pasted line runs")
    return path


def _run_pasted(bash: str, line: str, folder: Path) -> list[str]:
    """What the words of ``line`` reach a program as, when bash runs it in ``folder`` (its
    arguments, one per NUL-terminated record)."""
    done = subprocess.run(
        [bash, "--norc", "--noprofile", "-c", line],
        capture_output=True,
        timeout=30,
        cwd=folder,
        env={"PATH": os.environ["PATH"], "LC_ALL": "C.UTF-8", "HOME": str(folder)},
    )
    assert done.returncode == 0, done.stderr
    return [w.decode("utf-8") for w in done.stdout.split(b"\0")[:-1]]


@settings(max_examples=60)
@given(st.lists(printable, min_size=1, max_size=4))
@example(["$(touch PWNED)", "`touch PWNED`", "'; touch PWNED; '", "a  b", "!!", "~", "*"])
def test_bash_runs_what_the_line_says(bash: str, words: list[str]) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        line = text.join(["printf", "%s\\0", *words])
        assert _run_pasted(bash, line, folder) == words
        assert not (folder / "PWNED").exists()


@settings(max_examples=40)
@given(st.lists(printable, min_size=1, max_size=4))
@example(["$(touch PWNED)", "a  b", "'\"'", "x;touch PWNED"])
def test_bash_behind_a_stand_in_ssh_runs_what_the_line_says(bash: str, words: list[str]) -> None:
    """The words after ``ssh HOST`` reach the remote shell joined with spaces, as OpenSSH hands them on."""
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        (folder / "ssh").write_text('#!/bin/sh\nshift 2\nexec /bin/sh -c "$*"\n')
        (folder / "ssh").chmod(0o755)
        line = text.join(["./ssh", "-t", "devbox", *text.remote_words(["printf", "%s\\0", *words])])
        assert _run_pasted(bash, line, folder) == words
        assert not (folder / "PWNED").exists()
