"""Matching sessions to pi processes, and where the location shows (no real processes needed)."""

from __future__ import annotations

from notifier.system.locate import Location, PiProcess, Wanted, match
from notifier.system.tmux import TmuxPane
from notifier.ui.view import details_text


def proc(pid: int, cwd: str, started: float) -> PiProcess:
    return PiProcess(pid, cwd, started, "/dev/pts/1", {})


def test_each_process_goes_to_the_newest_session_it_could_have_written() -> None:
    wanted = [
        Wanted("old.jsonl", "/p", 100.0, None),  # written before the live pi started
        Wanted("live.jsonl", "/p/", 500.0, True),
        Wanted("dead.jsonl", "/p", 600.0, False),  # liveness says no pi asked it
        Wanted("other.jsonl", "/q", 500.0, True),
    ]
    found = match(wanted, [proc(7, "/p", 400.0), proc(8, "/q", 450.0)])
    assert {k: p.pid for k, p in found.items()} == {"live.jsonl": 7, "other.jsonl": 8}
    # two sessions, one process: only the newest gets it; two processes: the later one first
    two = match([Wanted("a", "/p", 500.0, True), Wanted("b", "/p", 450.0, True)], [proc(7, "/p", 400.0)])
    assert list(two) == ["a"]
    both = match(
        [Wanted("a", "/p", 500.0, True), Wanted("b", "/p", 450.0, True)],
        [proc(7, "/p", 100.0), proc(9, "/p", 300.0)],
    )
    assert {k: p.pid for k, p in both.items()} == {"a": 9, "b": 7}


def test_location_json_and_the_details_pane() -> None:
    pane = TmuxPane("/tmp/tmux-1/default", "work", "2", "@3", "%5", 1)
    loc = Location(42, "/dev/pts/3", pane, 0x1A00007)
    assert loc.obj() == {
        "pid": 42,
        "tty": "/dev/pts/3",
        "tmux": {"socket": "/tmp/tmux-1/default", "session": "work", "window": "2", "pane": "%5"},
        "window_id": 0x1A00007,
    }
    assert Location(42, None).obj() == {"pid": 42, "tty": None, "tmux": None, "window_id": None}
    q = {
        "folder": "proj", "tool": "question", "abandoned": False, "asked_at": 0.0, "items": [],
        "cwd": "/p", "file": "/s.jsonl", "resume": "pi", "location": loc.obj(),
    }  # fmt: skip
    assert "Where:   pid 42 · tmux work:2 %5" in details_text(q, 10.0)
    q["location"] = None
    assert "Where:" not in details_text(q, 10.0)
