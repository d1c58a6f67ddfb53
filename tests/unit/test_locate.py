"""Matching sessions to pi processes, and where the location shows (no real processes needed;
against the real process table: tests/processes/test_locate.py)."""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Any

import pytest

from notifier.core.model import Option, Question, QuestionItem, SessionRef, SessionView
from notifier.core.owners import Proc, Wanted
from notifier.system.locate import Location, Unmatched, locate_one, match
from notifier.system.processes import PiProcess
from notifier.system.tmux import TmuxPane
from notifier.system.window_manager import Window
from notifier.window.view import Shown, Where, details_text


def proc(pid: int, cwd: str, started: float) -> PiProcess:
    return PiProcess(pid, cwd, started, "/dev/pts/1", {})


def test_each_process_goes_to_the_newest_session_it_could_have_written() -> None:
    wanted = [
        Wanted("old.jsonl", "/p", 100.0, None),  # written before the live pi started
        Wanted("live.jsonl", "/p/", 500.0, True),
        Wanted("dead.jsonl", "/p", 600.0, False),  # liveness says no pi asked it
        Wanted("other.jsonl", "/q", 500.0, True),
    ]
    found = match(wanted, [proc(7, "/p", 400.0), proc(8, "/q", 450.0)])[0]
    assert {k: p.pid for k, p in found.items()} == {"live.jsonl": 7, "other.jsonl": 8}
    # two sessions, one process: only the newest gets it (a pi writes one session at a time)
    two = match([Wanted("a", "/p", 500.0, True), Wanted("b", "/p", 450.0, True)], [proc(7, "/p", 400.0)])[0]
    assert list(two) == ["a"]
    # two processes that both could have either session: the folder alone never decides
    both = [Wanted("a", "/p", 500.0, True), Wanted("b", "/p", 450.0, True)]
    assert match(both, [proc(7, "/p", 100.0), proc(9, "/p", 300.0)])[0] == {}
    # ... their arguments do
    named = [
        PiProcess(7, "/p", 100.0, None, {}, ("--session", "/s/b.jsonl")),
        PiProcess(9, "/p", 300.0, None, {}, ()),
    ]
    both = [Wanted("/s/a.jsonl", "/p", 500.0, True), Wanted("/s/b.jsonl", "/p", 450.0, True)]
    assert {k: p.pid for k, p in match(both, named)[0].items()} == {"/s/a.jsonl": 9, "/s/b.jsonl": 7}


def test_location_json_and_the_details_pane() -> None:
    pane = TmuxPane("/tmp/tmux-1/default", "work", "2", "@3", "%5")
    loc = Location(42, "/dev/pts/3", pane, 0x1A00007)
    assert loc.obj() == {
        "pid": 42,
        "tty": "/dev/pts/3",
        "tmux": {"socket": "/tmp/tmux-1/default", "session": "work", "window": "2", "pane": "%5"},
        "window_id": 0x1A00007,
        "window": None,
    }
    assert Location(42, None).obj() == {"pid": 42, "tty": None, "tmux": None, "window_id": None, "window": None}
    on_sway = Location(42, None, window=Window("sway", 7))  # (additive: "window_id" stays X11's)
    assert on_sway.obj()["window"] == {"via": "sway", "id": 7} and on_sway.obj()["window_id"] is None
    assert on_sway.describe() == "pid 42 · sway window 7"
    where = Where.from_obj(loc.obj())  # (as the window reads it)
    q = Shown(SessionRef("/s.jsonl", None, "/p", None), Question("c", "question", (), 0.0), location=where)
    assert "Where:   pid 42 · tmux work:2 %5" in details_text(q, 10.0)
    assert "Where:" not in details_text(dataclasses.replace(q, location=None), 10.0)


def test_the_proc_prefilter_reads_comm_and_the_first_arguments(tmp_path: Path) -> None:
    def fake(pid: int, comm: bytes, cmdline: bytes) -> None:
        (tmp_path / str(pid)).mkdir()
        (tmp_path / str(pid) / "comm").write_bytes(comm + b"\n")
        (tmp_path / str(pid) / "cmdline").write_bytes(cmdline)

    from notifier.system.processes import maybe_pi

    fake(1, b"pi", b"")  # its own name (psutil: the comm)
    fake(2, b"node", b"node\0/usr/lib/node_modules/@x/pi-coding-agent/dist/cli.js\0--flag\0")
    fake(3, b"MainThread", b"/usr/local/bin/omp\0")  # a renamed thread: the first argument
    fake(4, b"node", b"node\0server.js\0" + b"y" * 100_000 + b"\0oh-my-pi\0")  # 4th argument: not pi
    fake(6, b"node", b"/" + b"z" * 100_000 + b"\0x\0/opt/pi-coding-agent/cli.js\0")  # past 64 KB
    fake(5, b"bash", b"bash\0-c\0pi-coding-agent is mentioned here\0")  # (psutil says so too)
    (tmp_path / "self").mkdir()
    assert sorted(maybe_pi(str(tmp_path)) or []) == [1, 2, 3, 5, 6]
    assert maybe_pi(str(tmp_path / "nowhere")) is None


def test_pi_arguments_are_read_only_where_pi_left_them() -> None:
    from notifier.system.processes import pi_args

    assert pi_args(["node", "/usr/lib/node_modules/@x/pi-coding-agent/dist/cli.js", "-c"]) == ("-c",)
    assert pi_args(["/usr/local/bin/pi", "--session", "a.jsonl"]) == ("--session", "a.jsonl")
    assert pi_args(["/tmp/bin/pi"]) == ()
    assert pi_args(["pi", "", "", ""]) is None  # pi 1.6.0 / 0.73.1 set their process title
    assert pi_args(["MainThread"]) is None and pi_args([]) is None




def test_a_pane_whose_dialog_reads_as_another_live_sessions_question_is_never_typed_into(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """``answer`` and ``goto`` act on a pi the evidence gives the session to, checked against its
    pane; a pane cannot tell two dialogs that read the same apart. So where the pi was told only
    by the weighing (not announced) and its dialog reads as another live session's question too,
    nothing is located: one line says why (here pid 9 announced the twin; pid 8 shows the dialog)."""
    text = "Which database should we drop?"
    rule = "─" * 40
    screen = "\n".join([rule, f" {text}", "> 1. Keep everything", "  2. Drop it", rule, "/p"])

    def view(key: str, q_text: str, at: float) -> SessionView:
        q = Question(f"c-{key}", "question", (QuestionItem(q_text, options=(Option("Keep everything"), Option("Drop it"))),), at)
        return SessionView(SessionRef(key, None, "/p", None), "needs_input", (q,), (), True, at)

    def evidence(pid: int, cwd: str, started: float, *rest: Any) -> list[Proc]:
        session = rest[3] if len(rest) > 3 else None
        return [Proc(cwd, started, pid, None, screen if pid == 8 else None, session)]

    monkeypatch.setattr("notifier.system.locate.pi_processes", lambda: [proc(8, "/p", 100.0), proc(9, "/p", 150.0)])
    monkeypatch.setattr("notifier.system.locate.evidence", evidence)
    monkeypatch.setattr("notifier.system.locate.locate", lambda p, windows: Location(p.pid, None))
    for twin, want in ((text, Unmatched), ("Which region?", Location)):
        a, c = view("/s/a.jsonl", text, 200.0), view("/s/c.jsonl", twin, 210.0)
        found = locate_one(a, neighbours=[a, c], announced={9: "/s/c.jsonl"})
        assert isinstance(found, want), found
        if isinstance(found, Unmatched):
            assert found.ambiguous and found.pids == (8,) and "reads the same" in found.reason
        else:
            assert found.pid == 8
    # the pi the app's board saw with the session (it showed it had it, in every reading): exact
    a, c = view("/s/a.jsonl", text, 200.0), view("/s/c.jsonl", text, 210.0)
    found = locate_one(dataclasses.replace(a, owner=(8, 100.0)), neighbours=[a, c], announced={9: "/s/c.jsonl"})
    assert isinstance(found, Location) and found.pid == 8


def test_a_pi_that_may_have_the_session_is_never_told_to_be_resumed_beside(monkeypatch: pytest.MonkeyPatch) -> None:
    """One pi runs in the folder and shows the question; two sessions there (their pis killed)
    asked the very same: a look cannot tell which session the pi has. Nothing is located, and the
    line says so, naming the pi: not "no running pi" (whose advice, resuming the session, would
    start a second pi on a live one)."""
    text = "Which database should we drop?"
    rule = "─" * 40
    screen = "\n".join([rule, f" {text}", "> 1. Keep everything", "  2. Drop it", rule, "/p"])

    def view(key: str, at: float) -> SessionView:
        q = Question(f"c-{key}", "question", (QuestionItem(text, options=(Option("Keep everything"), Option("Drop it"))),), at)
        return SessionView(SessionRef(key, None, "/p", None), "needs_input", (q,), (), True, at)

    def evidence(pid: int, cwd: str, started: float, *rest: Any) -> list[Proc]:
        return [Proc(cwd, started, pid, None, screen, None)]

    monkeypatch.setattr("notifier.system.locate.pi_processes", lambda: [proc(8, "/p", 100.0)])
    monkeypatch.setattr("notifier.system.locate.evidence", evidence)
    monkeypatch.setattr("notifier.system.locate.locate", lambda p, windows: Location(p.pid, None))
    a, b, c = view("/s/a.jsonl", 200.0), view("/s/b.jsonl", 205.0), view("/s/c.jsonl", 210.0)
    for one in (a, b, c):
        found = locate_one(one, neighbours=[a, b, c])
        assert isinstance(found, Unmatched) and found.ambiguous and found.pids == (8,), found
        assert "pid 8" in found.reason and "no running pi" not in found.reason


def test_a_remote_session_is_never_located_here_even_at_a_local_sessions_path(monkeypatch: pytest.MonkeyPatch) -> None:
    """A remote's pi runs on that machine: its session's ``location`` is null (contract §3), also
    when its file has the path of a local session whose pi runs here (a shared file system)."""
    from notifier.system import locate

    here = locate.Location(42, "/dev/pts/3")
    monkeypatch.setattr(locate, "_locations", lambda sessions: {"/s/a.jsonl": here})
    status = {"sessions": [{"file": "/s/a.jsonl", "host": None}, {"file": "/s/a.jsonl", "host": "box"}]}
    local, remote = locate.add_locations(status)["sessions"]
    assert local["location"] == here.obj() and remote["location"] is None
