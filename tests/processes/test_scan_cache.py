"""The start-up scan cache must never change an answer: unchanged files come from it, anything
else is read again."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from ..app_process import AppProcess
from ..conftest import cli
from ..writer import answer, append, ask, header, user


def status(sessions: Path, *extra: str) -> tuple[dict[str, Any], str]:
    out = cli("status", "--json", "--liveness", "off", "-v", "--sessions-dir", str(sessions), *extra)
    assert out.returncode == 0, out.stderr
    return json.loads(out.stdout), out.stderr


def test_same_answer_from_the_cache_and_changes_are_read(tmp_path: Path) -> None:
    a = tmp_path / "--a--" / "a.jsonl"
    b = tmp_path / "--b--" / "b.jsonl"
    append(a, header("/p/a"), user(), ask("q1", "First?"))
    append(b, header("/p/b"), user(), ask("q2", "Second?"))
    first, log1 = status(tmp_path)
    assert "2 session files, 0 unchanged" in log1
    second, log2 = status(tmp_path)
    assert "2 session files, 2 unchanged" in log2
    assert second == first and first["pending"] == 2
    append(a, answer("q1"))
    third, log3 = status(tmp_path)
    assert "2 session files, 1 unchanged" in log3
    assert third["pending"] == 1 and [s["pending"] for s in third["sessions"] if s["cwd"] == "/p/a"] == [[]]
    b.unlink()
    fourth, _ = status(tmp_path)
    assert fourth["pending"] == 0 and len(fourth["sessions"]) == 1


def test_a_new_question_tool_is_never_answered_from_the_cache(tmp_path: Path) -> None:
    f = tmp_path / "--p--" / "s.jsonl"
    append(f, header("/p"), user(), ask("q1", tool="my_prompt", args={"prompt": "Mine?"}))
    before, _ = status(tmp_path)
    assert before["pending"] == 0
    after, log = status(tmp_path, "--question-tool", "my_prompt")
    assert after["pending"] == 1 and "0 unchanged" in log


def test_the_app_resumes_tailing_from_a_cached_file(tmp_path: Path) -> None:
    f = tmp_path / "--p--" / "s.jsonl"
    reply = answer("q1", "User selected: 2. B")
    append(f, header("/p"), user(), ask("q1", "First?"), reply[:40])  # ends in an unfinished line
    status(tmp_path)  # fills the cache
    with AppProcess(
        "run",
        "--json",
        "--no-tray",
        "--no-notify",
        "--liveness",
        "off",
        "-v",
        "--sessions-dir",
        str(tmp_path),
    ) as app:
        (initial,) = app.wait("needs_input")
        assert initial["initial"] and initial["question"]["text"] == "First?"
        app.log_has("1 session files, 1 unchanged")
        append(f, reply[40:])  # the rest of the line the cache held back
        (resolved,) = app.wait("resolved")
        assert resolved["outcome"] == "answered" and resolved["answer"] == "User selected: 2. B"
        append(f, ask("q2", "Second?"))
        asked = app.wait("needs_input", 2)
        assert asked[1]["question"]["text"] == "Second?" and not asked[1]["initial"]
