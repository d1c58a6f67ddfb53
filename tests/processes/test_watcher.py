"""The real watcher on a real temporary sessions folder, with another writer appending."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any, NoReturn

import pytest

from notifier.watch import FileChanged, Watcher, observer

from ..app_process import AppProcess
from ..conftest import wait_for
from ..harness import Harness
from ..writer import answer, append, ask, header, line, user


def test_new_nested_folder_and_file(tmp_path: Path) -> None:
    with Harness([tmp_path]) as h:
        f = tmp_path / "--home-dev-a--" / "deeper" / "s.jsonl"
        append(f, header(), user(), ask("q1", "Nested?"))
        (t,) = h.wait("needs_input")
        assert t.question.text == "Nested?" and t.session.key == str(f)


def test_line_split_across_writes_is_one_event(tmp_path: Path) -> None:
    f = tmp_path / "s.jsonl"
    append(f, header(), user())
    with Harness([tmp_path]) as h:
        data = ask("q1", "Split?" + "x" * 9000)
        append(f, data[:4096])
        wait_for(
            lambda: h.engine.reader.tailers[str(f)].offset >= 4096 + len(header()) + len(user()), 5, "partial read"
        )
        assert h.collected.of("needs_input") == []
        append(f, data[4096:])
        (t,) = h.wait("needs_input")
        assert t.question.text.startswith("Split?")


def test_truncation_and_rewrite(tmp_path: Path) -> None:
    f = tmp_path / "s.jsonl"
    append(f, header(), user(), ask("q1", "Before?"))
    with Harness([tmp_path]) as h:
        h.wait("needs_input")
        f.write_bytes(header() + user() + ask("q2", "After rewrite?"))  # shrinks: re-read from 0
        (gone,) = h.wait("resolved")
        assert gone.question.tool_call_id == "q1" and gone.outcome == "superseded"
        asked = h.wait("needs_input", 2)
        assert asked[1].question.text == "After rewrite?"


def test_rewrite_keeping_the_same_question_reports_nothing(tmp_path: Path) -> None:
    f = tmp_path / "s.jsonl"
    body = header() + user() + ask("q1", "Same?")
    append(f, body)
    with Harness([tmp_path]) as h:
        h.wait("needs_input")
        tmp = tmp_path / "x.tmp"
        tmp.write_bytes(body)
        os.replace(tmp, f)  # new inode, same content (pi's migration rewrite)
        append(f, answer("q1"))
        (r,) = h.wait("resolved")
        assert r.outcome == "answered" and len(h.collected.of("needs_input")) == 1


def test_another_name_of_a_replaced_file_is_the_same_session(tmp_path: Path) -> None:
    """A file replaced by a new inode (same content), then given a second name (a symlink beside
    it): one session, whose question ends once, never a copy under the link's name that waits on."""
    f = tmp_path / "s.jsonl"
    body = header() + user() + ask("q1", "Same?")
    append(f, body)
    with Harness([tmp_path]) as h:
        h.wait("needs_input")
        tmp = tmp_path / "x.tmp"
        tmp.write_bytes(body)
        os.replace(tmp, f)
        wait_for(lambda: h.engine.reader.tailers[str(f)].ident == (os.stat(f).st_dev, os.stat(f).st_ino), 10, "the new inode read")
        os.symlink(f, tmp_path / "link.jsonl")
        append(f, answer("q1"))
        (r,) = h.wait("resolved")
        assert r.outcome == "answered" and r.session.key == str(f)
        assert len(h.collected.of("needs_input")) == 1 and not h.engine.snapshot.pending
        for _ in range(20):  # replaced again and again: what names which inode stays as large as the files
            tmp.write_bytes(f.read_bytes())
            os.replace(tmp, f)
            wait_for(lambda: h.engine.reader.tailers[str(f)].ident == (os.stat(f).st_dev, os.stat(f).st_ino), 10, "read")
        assert len(h.engine.reader._idents) <= 2  # (the file's inode, and the link's name of it)


def test_deletion_and_recreation(tmp_path: Path) -> None:
    f = tmp_path / "s.jsonl"
    append(f, header(), user(), ask("q1", "Deleted?"))
    with Harness([tmp_path]) as h:
        h.wait("needs_input")
        f.unlink()
        (r,) = h.wait("resolved")
        assert r.outcome == "superseded"
        wait_for(lambda: len(h.engine.snapshot.sessions) == 0, 5, "session forgotten")
        append(f, header(), user(), ask("q2", "Recreated?"))
        asked = h.wait("needs_input", 2)
        assert asked[1].question.text == "Recreated?"


def test_thousand_files(tmp_path: Path) -> None:
    for i in range(1000):
        append(tmp_path / f"--p{i % 50}--" / f"{i}.jsonl", header(f"/p/{i}"), user())
    with Harness([tmp_path]) as h:
        assert h.collected.info is not None and h.collected.info.sessions == 1000
        for i in (0, 499, 999):
            append(tmp_path / f"--p{i % 50}--" / f"{i}.jsonl", ask(f"q{i}", f"Q{i}?"))
        asked = h.wait("needs_input", 3)
        assert {t.question.text for t in asked} == {"Q0?", "Q499?", "Q999?"}


def test_a_flood_of_writes_loses_no_question(tmp_path: Path) -> None:
    """Hundreds of writes as fast as they can go, to few files: watchdog and the engine's queue
    see many events per file (coalesced into fewer reads); every question is still reported once."""
    files = [tmp_path / f"--p{i}--" / "s.jsonl" for i in range(5)]
    for f in files:
        append(f, header(), user())
    with Harness([tmp_path]) as h:
        for n in range(400):
            append(files[n % 5], ask(f"q{n}", f"Flood {n}?"))
        asked = h.wait("needs_input", 400, timeout=30)
        assert sorted(t.question.text for t in asked) == sorted(f"Flood {n}?" for n in range(400))
        for f in files:  # each file's own questions come in the order written
            texts = [t.question.text for t in asked if t.session.key == str(f)]
            assert texts == [f"Flood {n}?" for n in range(400) if files[n % 5] == f]


def test_bad_input_never_stops_the_next_good_line(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    f = tmp_path / "s.jsonl"
    append(f, header(), user())
    with Harness([tmp_path], max_line=1 << 20) as h:
        append(
            f,
            b"garbage{{{\n",
            b"\xff\xfe not utf8 \xc3\x28\n",
            b"[1,2,3]\n",
            b'"just a string"\n',
            line({"type": "message", "message": "not an object"}),
            line({"type": "message", "message": {"role": "assistant", "content": 7}}),
            line({"no": "type"}),
            b"\n\n",
            b'{"type":"message","message":{"role":"toolResult","content":' + b"x" * (2 << 20) + b"}\n",
            line(
                {
                    "type": "message",
                    "message": {
                        "role": "assistant",
                        "content": [{"type": "toolCall", "id": 5, "name": None}],
                    },
                }
            ),
        )
        for _ in range(3):
            append(f, b"more garbage\n")
        append(f, ask("q1", "Still seen?"))
        (t,) = h.wait("needs_input")
        assert t.question.text == "Still seen?"
    messages = [r.getMessage() for r in caplog.records if r.levelname == "WARNING"]
    assert sum("not JSON" in m for m in messages) == 1, messages  # once per file, not per line
    assert any("not UTF-8" in m for m in messages)
    assert any("not an object" in m for m in messages)
    assert any("longer than" in m for m in messages)
    assert any("unexpected shape" in m for m in messages)


def test_missing_folder_is_waited_for_and_removed_folder_comes_back(tmp_path: Path) -> None:
    root = tmp_path / "later" / "sessions"
    with Harness([root]) as h:
        assert h.collected.info is not None and h.collected.info.sessions == 0
        append(root / "--p--" / "s.jsonl", header(), user(), ask("q1", "Appeared?"))
        h.wait("needs_input")
        import shutil

        shutil.rmtree(root)
        h.wait("resolved")
        append(root / "--p--" / "t.jsonl", header(), user(), ask("q2", "Back?"))
        asked = h.wait("needs_input", 2)
        assert asked[1].question.text == "Back?"


def test_two_missing_roots_waiting_on_one_folder_both_come(tmp_path: Path) -> None:
    """Both roots wait on tmp_path (one watch for both); the first to come must not take
    the other's wait with it."""
    first, second = tmp_path / "x" / "sessions", tmp_path / "y" / "sessions"
    with Harness([first, second]) as h:
        append(first / "--p--" / "s.jsonl", header(), user(), ask("q1", "First?"))
        h.wait("needs_input")
        append(second / "--p--" / "t.jsonl", header(), user(), ask("q2", "Second?"))
        asked = h.wait("needs_input", 2)
        assert asked[1].question.text == "Second?"


def test_symlink_loop_does_not_hang(tmp_path: Path) -> None:
    (tmp_path / "a").mkdir()
    os.symlink(tmp_path, tmp_path / "a" / "loop")
    os.symlink(tmp_path / "a", tmp_path / "self")
    append(tmp_path / "a" / "s.jsonl", header(), user(), ask("q1", "Loop?"))
    with Harness([tmp_path]) as h:
        (t,) = h.wait("needs_input")
        assert t.question.text == "Loop?"


def test_two_roots_both_watched(tmp_path: Path) -> None:
    a, b = tmp_path / "a", tmp_path / "b"
    a.mkdir()
    b.mkdir()
    with Harness([a, b]) as h:
        append(a / "1.jsonl", header(), user(), ask("q1", "A?"))
        append(b / "2.jsonl", header(), user(), ask("q2", "B?"))
        asked = h.wait("needs_input", 2)
        assert {t.question.text for t in asked} == {"A?", "B?"}


def test_custom_question_tool(tmp_path: Path) -> None:
    with Harness([tmp_path], extra_tools=["my_prompt"]) as h:
        append(
            tmp_path / "s.jsonl", header(), user(), ask("q1", tool="my_prompt", args={"prompt": "Custom?"})
        )
        (t,) = h.wait("needs_input")
        assert t.question.text == "Custom?" and t.question.tool == "my_prompt"


def test_run_json_subprocess_end_to_end(tmp_path: Path) -> None:
    """The CLI as other tools use it: `run --json` lines, flushed at once; SIGTERM exits 0."""
    f = tmp_path / "--p--" / "s.jsonl"
    append(f, header("/x/already"), user(), ask("q0", "Already pending?"))
    with AppProcess(
        "run", "--json", "--no-tray", "--no-notify", "--liveness", "off", "--sessions-dir", str(tmp_path)
    ) as app:
        app.wait("ready")
        first, ready = app.events[:2]  # questions already pending come before ready
        assert first["event"] == "needs_input" and first["initial"] is True
        assert ready["event"] == "ready" and ready["sessions"] == 1 and ready["pending"] == 1
        assert isinstance(ready["scan_s"], float) and ready["at"].endswith("Z")
        append(f, answer("q0", "User selected: 2. B"))
        (resolved,) = app.wait("resolved")
        assert resolved["outcome"] == "answered"
        assert resolved["answer"] == "User selected: 2. B" and isinstance(resolved["waited_s"], float)
        assert set(resolved["session"]) == {"id", "file", "cwd", "name", "host"}  # host: null here (local)
        assert resolved["session"]["host"] is None
        # the contract's fields, plus the additive "kind", "token" and "asked_at" (docs/contract.md §2, §3)
        fields = {"tool_call_id", "tool", "text", "header", "options", "count", "kind", "token", "asked_at"}
        assert set(resolved["question"]) == fields
        assert resolved["question"]["kind"] == "question"
        assert app.stop() == 0
    assert not [line for line in app.stderr if "Traceback" in line]


def test_session_name_set_long_ago_is_found_once_it_asks(tmp_path: Path) -> None:
    f = tmp_path / "--p--" / "s.jsonl"
    name = line({"type": "session_info", "id": "n", "parentId": None, "name": "Billing rewrite"})
    big = (
        b'{"type":"message","id":"b","parentId":null,"message":{"role":"toolResult","toolCallId":"x","toolName":"bash","content":[{"type":"text","text":"'
        + b"x" * 200_000
        + b'"}]}}\n'
    )
    append(f, header("/home/dev/billing"), user(), name, big, user())
    with Harness([tmp_path]) as h:
        append(f, ask("q1", "Which gateway?"))
        (t,) = h.wait("needs_input")
        assert t.session.name == "Billing rewrite"
    g = tmp_path / "--q--" / "t.jsonl"
    append(g, header("/home/dev/other"), user(), name, big, user(), ask("q2", "Pending at start?"))
    with Harness([tmp_path]) as h:
        asked = h.wait("needs_input", 1)
        assert [x.session.name for x in asked if x.question.tool_call_id == "q2"] == ["Billing rewrite"]


def test_a_failing_command_does_not_stop_the_engine(tmp_path: Path) -> None:
    def fails() -> NoReturn:  # e.g. a tray or window action that raises
        raise ZeroDivisionError("division by zero")

    with Harness([tmp_path]) as h:
        h.engine.call(fails)
        append(tmp_path / "s.jsonl", header(), user(), ask("q1", "Still alive?"))
        (t,) = h.wait("needs_input")
        assert t.question.text == "Still alive?" and h.engine.failed is None


class _Outbox:
    """Records what the watcher hands over; the first hand-over fails."""

    def __init__(self) -> None:
        self.items: list[Any] = []
        self.failures = 1

    def put(self, item: Any) -> None:
        if self.failures:
            self.failures -= 1
            raise RuntimeError("boom")
        self.items.append(item)


def test_a_failing_hand_over_costs_one_event_not_the_watching(tmp_path: Path) -> None:
    f = tmp_path / "s.jsonl"
    append(f, header())
    out = _Outbox()
    watcher = Watcher(out)
    watcher.start()
    try:
        assert watcher.watch(str(tmp_path))
        append(f, user())  # its event is the one that fails (on watchdog's own thread)
        wait_for(lambda: not out.failures, 5, "the first event")
        append(f, ask("q1", "Still watched?"))
        wait_for(lambda: FileChanged(str(f)) in out.items, 5, "an event after the failure")
        assert observer().is_alive()
    finally:
        watcher.stop()
