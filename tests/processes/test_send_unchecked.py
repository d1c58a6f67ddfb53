"""Where tmux is older than 3.2 (it cannot check the pane in a format), ``answer`` sends each key
right after its look, as plain arguments: tested against the real tmux with the version read as
3.1, a key name, text with tmux's command separators and a paste reach the pane as typed."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from notifier.actions import answer
from notifier.actions.answer import Seen, send
from notifier.pi.keys import Step
from notifier.system.tmux import TmuxPane

from ..conftest import wait_for


def test_an_older_tmux_gets_keys_and_pastes_as_plain_arguments(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    sock = str(tmp_path / "t.sock")
    env = {k: v for k, v in os.environ.items() if k not in ("TMUX", "TMUX_PANE")}

    def tmux(*args: str) -> str:
        return subprocess.run(["tmux", "-S", sock, *args], capture_output=True, text=True, env=env, timeout=20).stdout

    tmux("-f", "/dev/null", "new-session", "-d", "-s", "t", "-x", "80", "-y", "10", "cat")
    try:
        pane_id = tmux("display-message", "-p", "-t", "t", "#{pane_id}").strip()
        pane = TmuxPane(sock, "t", "0", "@0", pane_id)
        monkeypatch.setattr(answer, "version", lambda: (3, 1))

        assert send(pane, Step(keys=("a", "b", "\\;", "c")), Seen(None)) is True
        assert send(pane, Step(paste="x ; kill-server ; y"), Seen(None)) is True
        assert send(pane, Step(keys=("Enter",)), Seen(None)) is True

        def shown() -> str:
            return tmux("capture-pane", "-p", "-t", pane_id)

        wait_for(lambda: "ab;cx ; kill-server ; y" in shown(), 10, "the keys and the paste in the pane")
        assert tmux("list-buffers").strip() == ""  # (the paste's buffer went with it)
    finally:
        tmux("kill-server")
