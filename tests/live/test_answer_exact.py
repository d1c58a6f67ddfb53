"""`answer` gives the real pi 1.6.0 exactly the answer the user chose, or nothing: the rows are the
rows pi's `question` tool draws (a blank one included), a number that is also another row's label
is refused, and a typed text reaches pi byte for byte whatever it holds (option-like words, a
trailing `;`, 20 KB), as the toolResult in the session file shows."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from notifier.companion import hello_of
from notifier.system.paths import list_sockets

from ..conftest import wait_for
from .pi_harness import EXTENSION, PiSession, Tmux, need, scripted_model, start_pi
from .test_goto_answer import pending, run, status

BLANK = {
    "question": "What should happen to the data?",
    "options": [{"label": "Cancel"}, {"label": "\u200b"}, {"label": "Delete everything"}, {"label": "Keep everything"}],
}
NUMBERS = {"question": "How many replicas?", "options": [{"label": "3"}, {"label": "0"}, {"label": "1"}]}


def results(pi: PiSession) -> list[dict[str, Any]]:
    entries = [json.loads(x) for x in pi.session_text().splitlines() if x.strip()]
    return [e["message"] for e in entries if (e.get("message") or {}).get("role") == "toolResult"]


def test_a_blank_row_keeps_every_later_rows_number(tmp_path: Path, tmux_server: Tmux) -> None:
    v = need("1.6.0")
    with scripted_model("question", BLANK) as port:
        pi = start_pi(tmp_path, v, port, v.example("question.ts"), server=tmux_server)
        d = ["--sessions-dir", str(pi.sessions)]
        pi.ask("Enter to select")
        wait_for(lambda: pending(pi), 20, "the pending question")
        (q,) = pending(pi)
        assert q["options"] == ["Cancel", "", "Delete everything", "Keep everything"]
        done = run("answer", "Keep everything", *d)
        assert done.returncode == 0, done.stderr
        assert results(pi)[-1]["content"][0]["text"] == "User selected: 4. Keep everything"


def test_a_number_that_is_also_a_label_is_refused(tmp_path: Path, tmux_server: Tmux) -> None:
    v = need("1.6.0")
    with scripted_model("question", NUMBERS) as port:
        pi = start_pi(tmp_path, v, port, v.example("question.ts"), server=tmux_server)
        d = ["--sessions-dir", str(pi.sessions)]
        pi.ask("Enter to select")
        wait_for(lambda: pending(pi), 20, "the pending question")
        before = pi.screen()
        r = run("answer", "1", *d)
        assert r.returncode == 2 and "ambiguous" in r.stderr and r.stderr.count("\n") == 1
        assert pi.screen() == before and results(pi) == []
        done = run("answer", "#1", *d)
        assert done.returncode == 0, done.stderr
        assert results(pi)[-1]["content"][0]["text"] == "User selected: 1. 3"


def test_typed_text_reaches_pi_byte_for_byte(tmp_path: Path, tmux_server: Tmux, model: int) -> None:
    v = need("1.6.0")
    pi = start_pi(tmp_path, v, model, v.example("question.ts"), server=tmux_server)
    d = ["--sessions-dir", str(pi.sessions)]
    texts = ["--text=-1", "--force", "- yes", "-t%0", "retry; then stop;", "a\\;", "Enter", "x" * 20000]
    for n, text in enumerate(texts, 1):
        pi.ask("Enter to select")
        wait_for(lambda: pending(pi), 20, "the pending question")
        done = run("answer", f"--text={text}", *d)
        assert done.returncode == 0, (text[:40], done.stderr)

        def answered(n: int = n) -> bool:
            return len(results(pi)) == n

        wait_for(answered, 20, "the tool result")
        result = results(pi)[-1]
        assert result["content"][0]["text"] == f"User wrote: {text}", text[:40]
        assert result["details"]["answer"] == text
        wait_for(lambda: not pending(pi) and "Thanks" in pi.session_text(), 20, "pi's reply")
    assert status(pi)["pending"] == 0


def test_through_the_companion_the_same_rows_and_checks(tmp_path: Path, tmux_server: Tmux) -> None:
    v = need("1.6.0")
    with scripted_model("question", BLANK) as port:
        pi = start_pi(tmp_path, v, port, v.example("question.ts"), EXTENSION, server=tmux_server)
        d = ["--sessions-dir", str(pi.sessions)]
        wait_for(lambda: list_sockets(), 20, "the companion's socket")
        pi.ask("Enter to select")
        wait_for(lambda: pending(pi), 20, "the pending question")
        # the extension announces the dialog, so `answer` goes through it, not through tmux
        (sock,) = list_sockets()
        dialogs = hello_of(sock, 2.0).dialogs
        assert [(x.kind, x.remote, x.tool) for x in dialogs] == [("custom", "keys", "question")]
        bad = run("answer", "--text=a\x07b", *d)
        assert bad.returncode == 2 and results(pi) == []
        done = run("answer", "4", *d)
        assert done.returncode == 0, done.stderr
        assert results(pi)[-1]["content"][0]["text"] == "User selected: 4. Keep everything"


def test_pis_tui_is_seen_waiting_for_a_human(tmp_path: Path, tmux_server: Tmux, model: int) -> None:
    """pi's TUI puts its terminal in raw mode: that is how a pi that can wait for a human is told
    from `pi -p` (issue: notify such a pi's question at once)."""
    from notifier.system.processes import raw_terminal, running_pi

    v = need("1.6.0")
    pi = start_pi(tmp_path, v, model, v.example("question.ts"), server=tmux_server)
    pi.ask("Enter to select")
    project = str(tmp_path / "project")
    procs = wait_for(lambda: [p for p in running_pi() or [] if p.cwd == project], 10, "pi in the process list")
    assert all(p.interactive is True for p in procs) and raw_terminal(procs[0].pid) is True
