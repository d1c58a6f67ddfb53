"""A remote session's answer from the desktop (``answer_line``) reaches the remote's own
``pi-notifier answer`` with every word as given: the token of the question shown (a question
that changed there is refused there), a text or a choice that starts with "-". The remote is
this machine: ``ssh`` is a stand-in that runs the remote's command line in a shell, as sshd
would, and ``pi-notifier`` there is the real command (its real parser and answer)."""

from __future__ import annotations

import os
import stat
import sys
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from notifier.actions.answer import answer_line
from notifier.config import Config
from notifier.core.codec import question_token
from notifier.core.model import Option, Question, QuestionItem
from notifier.sessions import engine_options, scan_once
from notifier.system import paths

from ..writer import append, ask, header

NAME = "2026-01-01T00-00-01-000Z_00000000-0000-7000-8000-0000000000cc.jsonl"
AT = 1_796_000_000.25  # when the remote's question was asked (a part of its token)


def script(path: Path, text: str) -> None:
    path.write_text(text)
    path.chmod(path.stat().st_mode | stat.S_IXUSR)


@pytest.fixture
def remote(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[Config, Path, Any]:
    """(the desktop's config naming the remote ``devbox``, its session folder, an empty board)."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    # ssh joins the remote words into one command line for the remote's shell: its last argument
    script(bin_dir / "ssh", '#!/bin/sh\nfor a; do last="$a"; done\nexec /bin/sh -c "$last"\n')
    script(bin_dir / "pi-notifier", f'#!/bin/sh\nexec "{sys.executable}" -m notifier "$@"\n')
    monkeypatch.setenv("PATH", f"{bin_dir}{os.pathsep}{os.environ['PATH']}")
    sessions = tmp_path / "remote-sessions"
    sessions.mkdir()
    os.makedirs(paths.config_dir(), exist_ok=True)
    Path(paths.config_file()).write_text(f'sessions_dirs = ["{sessions}"]\nliveness = "off"\n')
    config = Config()
    config.values["remotes"] = [{"name": "devbox", "ssh": "dev@devbox"}]
    config.values["sessions_dirs"] = [str(tmp_path / "none")]
    return config, sessions, scan_once(engine_options(config))


def shown(text: str, *labels: str) -> Question:
    """The question as the desktop was shown it (what its token is made of)."""
    return Question("call_R", "question", (QuestionItem(text, options=tuple(Option(o) for o in labels)),), AT)


@pytest.mark.parametrize("choice", ["-x", "--", "#1"])
def test_a_choice_that_starts_with_a_dash_is_a_choice_there(remote: Any, choice: str) -> None:
    config, sessions, board = remote
    f = sessions / "proj" / NAME
    append(
        f,
        header("/home/dev/proj"),
        ask("call_R", "Which flag?", options=["-x", "--"] if choice == "#1" else [choice, "B"], at=AT),
    )
    labels = ("-x", "--") if choice == "#1" else (choice, "B")
    token = question_token(shown("Which flag?", *labels))
    code, said = answer_line(config, board, f"@devbox:{f}", "call_R", [choice], None, timeout=2, token=token)
    # the remote read the words as meant: the question waits, its option exists, and no pi is
    # there to type into (what it says for a file without its pi)
    assert code == 1 and "no running pi" in said, said


def test_a_text_that_starts_with_a_dash_is_the_text_there(remote: Any) -> None:
    config, sessions, board = remote
    f = sessions / "proj" / NAME
    append(f, header("/home/dev/proj"), ask("call_R", "Which flags?", args={"question": "Which flags?"}, at=AT))
    token = question_token(shown("Which flags?"))
    for text in ("-y", "--timeout=1 -- x", "-"):
        code, said = answer_line(config, board, f"@devbox:{f}", "call_R", [], text, timeout=2, token=token)
        assert code == 1 and "no running pi" in said, (text, said)


def test_the_remote_refuses_a_question_that_changed_since_it_was_shown(remote: Any) -> None:
    config, sessions, board = remote
    f = sessions / "proj" / NAME
    append(f, header("/home/dev/proj"), ask("call_R", "Deploy to prod?", options=["Yes", "No"], at=AT))
    again = replace(shown("Deploy to prod?", "Yes", "No"), asked_at=AT - 60)  # (the same, asked before)
    for was in (shown("Deploy to staging?", "Yes", "No"), shown("Deploy to prod?", "No", "Yes"), again):
        code, said = answer_line(
            config, board, f"@devbox:{f}", "call_R", ["1"], None, timeout=2, token=question_token(was)
        )
        assert code == 1 and "no longer the one shown" in said and "nothing was typed" in said, said
    # the question as shown: the remote goes on (to find no pi there)
    same = question_token(shown("Deploy to prod?", "Yes", "No"))
    code, said = answer_line(config, board, f"@devbox:{f}", "call_R", ["1"], None, timeout=2, token=same)
    assert code == 1 and "no running pi" in said, said
