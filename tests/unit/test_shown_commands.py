"""Every command shown, printed or copied for the user to paste (issue 19 part 5): the resume
command (window, details pane, goto, answer), goto's tmux attach hint, built from checked names.
Either it parses back to the argv meant, or no command is offered and the user is told which
name and why. (A real bash running them: tests/processes/test_shown_commands.py; the remote
side: tests/processes/test_remote_here.py.)"""

from __future__ import annotations

import json
import shlex

import pytest

from notifier.actions import goto
from notifier.core.model import Question, QuestionItem, SessionRef, SessionView, remote_key
from notifier.core.text import clean
from notifier.system.tmux import TmuxPane
from notifier.window.view import Shown, details_text, question_obj, resume_command

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
    assert Shown.from_obj(q).resume() == (None, advice)
    text = details_text(Shown.from_obj(q), 200.0)
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
    assert Shown.from_obj(q).resume() == (line, None)
    assert f"Resume:  {line}" in details_text(Shown.from_obj(q), 200.0)
    plain = goto.resume_advice(view(None, "/s/x y.jsonl"))
    assert shlex.split(plain) == ["resume", "it", "with:", "pi", "--session", "/s/x y.jsonl"]


def test_a_remote_session_is_resumed_through_ssh_with_both_shells_in_mind() -> None:
    q = question_obj(view(TRICKY, "/s/a.jsonl", "devbox"), Q, False)
    ssh, flag, host, remote = shlex.split(str(Shown.from_obj(q).resume()[0]))
    assert (ssh, flag, host) == ("ssh", "-t", "devbox")
    assert shlex.split(remote) == ["cd", TRICKY, "&&", "pi", "--session", "/s/a.jsonl"]
    refused = question_obj(view("/w\x1b]52;c;cHduZWQ=\x07", "/s/a.jsonl", "devbox"), Q, False)
    resume, why = Shown.from_obj(refused).resume()
    assert resume is None and "folder of the session holds an escape" in str(why)


def test_the_tmux_attach_hint() -> None:
    pane = TmuxPane("/tmp/my socket/s", "my  work", "2", "@3", "%5")
    hint = goto.attach_hint(pane)
    assert hint.startswith("run: ") and clean(hint) == hint
    assert shlex.split(hint[len("run: "):]) == ["tmux", "-S", "/tmp/my socket/s", "attach", "-t", "my  work:2"]
    evil = goto.attach_hint(TmuxPane("/tmp/s", "w\x1b]0;x\x07;touch PWNED", "2", "@3", "%5"))
    assert evil == (
        "attach to it yourself (no command is offered: the tmux session or window name holds an escape character (U+001B))"
    )


# ---- what `goto --print --json` writes ----


def test_json_written_to_a_terminal_has_what_it_acts_on_as_escapes() -> None:
    """Every JSON the commands print (``goto --print``, ``status --json``, ``run --json``,
    ``history --json``) is written by one function."""
    from notifier.core.codec import dumps as terminal_json

    where = {"pid": 5, "tmux": {"session": "w\x9b2J\u202egnp\u2028x\x7f\x1b]0;t\x07", "window": "1", "pane": "%3"}}
    text = terminal_json(where)
    assert json.loads(text) == where
    assert text.isascii() and text.isprintable(), text
    assert terminal_json({"cwd": "/home/u/日本語 ✓"}) == '{"cwd":"/home/u/日本語 ✓"}'  # the rest as it is
    assert terminal_json({"cwd": "/x\x7fy"}) == '{"cwd":"/x\\u007fy"}'  # (DEL alone: the all-ASCII case)
