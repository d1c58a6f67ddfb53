"""The watcher catches up with what it could not see: events the kernel dropped (an inotify queue
overflow) and a sessions folder that is a symlink, including one re-pointed while the app runs."""

from __future__ import annotations

import os
import queue
import shutil
import signal
import sys
from pathlib import Path
from typing import Any

import pytest

from notifier.compat import events_lost

from ..app_process import AppProcess
from ..conftest import wait_for
from ..harness import Harness
from ..writer import answer, append, ask, header, user


def _max_queued_events() -> int:
    with open("/proc/sys/fs/inotify/max_queued_events", encoding="ascii") as fh:
        return int(fh.read())


@pytest.mark.skipif(events_lost() is None, reason="this watchdog cannot report lost events (7.1.1 and newer can)")
@pytest.mark.skipif(not os.path.exists("/proc/sys/fs/inotify/max_queued_events"), reason="not Linux inotify")
def test_a_question_written_while_events_were_lost_is_reported_once(tmp_path: Path) -> None:
    """The app is stopped while more changes are made than the kernel queues for it, the question
    last; a waiting pi writes nothing more, so only reading the folder again can find it."""
    noise = tmp_path / "--noise--"
    noise.mkdir()
    append(tmp_path / "--p--" / "old.jsonl", header(), user(), ask("q0", "Asked before?"))
    args = ["--no-tray", "--json", "--no-notify", "--liveness", "off", "--sessions-dir", str(tmp_path)]
    with AppProcess(argv=[sys.executable, "-m", "notifier", "run", *args]) as app:
        app.wait("ready")
        app.wait("needs_input")  # q0, initial
        os.kill(app.proc.pid, signal.SIGSTOP)
        try:
            for i in range(_max_queued_events() + 1000):  # each creation is an event the kernel queues
                (noise / f"{i}.log").touch()
            append(tmp_path / "--p--" / "new.jsonl", header(), user(), ask("q1", "Asked meanwhile?"))
        finally:
            os.kill(app.proc.pid, signal.SIGCONT)
        line = app.log_has("inotify queue overflowed")
        assert str(tmp_path) in line
        asked = app.wait("needs_input", 2)
        assert [e["question"]["text"] for e in asked] == ["Asked before?", "Asked meanwhile?"]
        # Nothing doubled: the next change to the old file is one event, not a replay.
        append(tmp_path / "--p--" / "old.jsonl", answer("q0", "Yes"))
        app.wait("resolved")
        append(tmp_path / "--p--" / "new.jsonl", answer("q1", "Yes"))
        resolved = app.wait("resolved", 2)
        assert [e["question"]["tool_call_id"] for e in resolved] == ["q0", "q1"]
        assert len(app.of("needs_input")) == 2
    assert sum("inotify queue overflowed" in x for x in app.stderr) == 1


def test_a_symlinked_sessions_folder_is_followed_after_start_up(tmp_path: Path) -> None:
    real = tmp_path / "real"
    real.mkdir()
    link = tmp_path / "sessions"
    link.symlink_to(real)
    append(real / "before.jsonl", header(), user(), ask("q0", "Before?"))
    with Harness([link]) as h:
        (first,) = h.wait("needs_input")
        assert first.session.key == str(link / "before.jsonl")
        append(real / "flat.jsonl", header(), user(), ask("q1", "Flat?"))  # pi --session-dir: flat files
        append(link / "--home-dev-p--" / "nested.jsonl", header(), user(), ask("q2", "Nested?"))
        asked = h.wait("needs_input", 3)
        # Paths as the folder was named (as the start-up scan and `status` read them), each once.
        assert {(t.question.text, t.session.key) for t in asked[1:]} == {
            ("Flat?", str(link / "flat.jsonl")),
            ("Nested?", str(link / "--home-dev-p--" / "nested.jsonl")),
        }
        append(real / "flat.jsonl", answer("q1", "Done"))
        (done,) = h.wait("resolved")
        assert done.session.key == str(link / "flat.jsonl")
        assert len(h.collected.of("needs_input")) == 3


def test_a_re_pointed_sessions_link_is_followed(tmp_path: Path) -> None:
    old, new = tmp_path / "old", tmp_path / "new"
    old.mkdir()
    new.mkdir()
    link = tmp_path / "sessions"
    link.symlink_to(old)
    append(old / "a.jsonl", header(), user(), ask("q0", "In the old folder?"))
    append(new / "b.jsonl", header(), user(), ask("q1", "In the new folder?"))
    with Harness([link]) as h:
        h.wait("needs_input")
        temp = tmp_path / "sessions.tmp"
        temp.symlink_to(new)
        os.replace(temp, link)  # how `ln -sfn` re-points a link: atomically
        asked = h.wait("needs_input", 2)
        assert asked[1].question.text == "In the new folder?"
        (gone,) = h.wait("resolved")
        assert gone.question.tool_call_id == "q0"  # its folder is no longer the sessions folder
        append(new / "c.jsonl", header(), user(), ask("q2", "Written after?"))
        asked = h.wait("needs_input", 3)
        assert asked[2].session.key == str(link / "c.jsonl")
        # Removed, then made again: waited for, and followed where it points.
        link.unlink()
        (tmp_path / "sessions").symlink_to(old)
        append(old / "d.jsonl", header(), user(), ask("q3", "Back in the old one?"))
        texts = [t.question.text for t in h.wait("needs_input", 5)]
        assert "Back in the old one?" in texts and "In the old folder?" in texts


def test_a_polled_sessions_link_re_pointed_is_followed(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A symlinked sessions folder inotify refuses (polled: past the watch limit) re-pointed: the
    new target is followed (the link's folder is watched however the folder itself is)."""
    import errno

    from notifier import watch

    schedule = watch.schedule

    def refusing(react: Any, path: str, recursive: bool = False, polled: bool = False) -> watch.Watch:
        if recursive and not polled and os.path.basename(path).startswith("real"):
            raise OSError(errno.ENOSPC, "no more watches (as at the limit)")
        return schedule(react, path, recursive=recursive, polled=polled)

    monkeypatch.setattr(watch, "schedule", refusing)
    a, b, link = tmp_path / "realA", tmp_path / "realB", tmp_path / "sessions"
    append(a / "--p--" / "a.jsonl", header(), user(), ask("q0", "In A?"))
    append(b / "--p--" / "b.jsonl", header(), user(), ask("q1", "In B?"))
    link.symlink_to(a)
    with Harness([link]) as h:
        h.wait("needs_input")
        temp = tmp_path / "sessions.tmp"
        temp.symlink_to(b)
        os.replace(temp, link)
        wait_for(lambda: [t for t in h.collected.of("needs_input") if t.question.tool_call_id == "q1"], 10, "q1")


def test_a_removal_reported_after_the_link_was_re_pointed_is_not_taken_for_the_new_target(tmp_path: Path) -> None:
    """The folder a sessions link points to removed and the link re-pointed at once: the link's
    folder may report the link before the old target's own watch reports its removal. That late
    removal is not the new target's: it stays watched."""
    from notifier.watch import RootGone, Watcher, WatchEvent

    old, new, link = tmp_path / "old", tmp_path / "new", tmp_path / "sessions"
    old.mkdir()
    new.mkdir()
    link.symlink_to(old)
    said: queue.SimpleQueue[WatchEvent] = queue.SimpleQueue()
    watcher = Watcher(said)

    def removal() -> RootGone:  # (the target's own watch saw it removed)
        while not isinstance(message := said.get(timeout=10), RootGone):
            pass
        return message

    watcher.start()
    try:
        assert watcher.watch(str(link))
        shutil.rmtree(old)
        late = removal()
        temp = tmp_path / "sessions.tmp"
        temp.symlink_to(new)
        os.replace(temp, link)
        assert watcher.retarget(str(link)) and watcher.watch(str(link))  # (the link's folder saw it first)
        assert not watcher.root_gone(late.path, late.of)  # (the old target's removal, reported late)
        assert not watcher.retarget(str(link))  # (the new target still watched)
        shutil.rmtree(new)
        now = removal()
        assert watcher.root_gone(now.path, now.of)  # (the new target's removal is one)
    finally:
        watcher.stop()


def test_a_symlinked_parent_folder_keeps_working(tmp_path: Path) -> None:
    (tmp_path / "real-home" / ".pi" / "agent" / "sessions").mkdir(parents=True)
    (tmp_path / "home").symlink_to(tmp_path / "real-home")
    root = tmp_path / "home" / ".pi" / "agent" / "sessions"
    with Harness([root]) as h:
        append(root / "--p--" / "s.jsonl", header(), user(), ask("q1", "Through a linked parent?"))
        (t,) = h.wait("needs_input")
        assert t.session.key == str(root / "--p--" / "s.jsonl")


def test_a_folder_unreadable_at_start_is_followed_once_it_can_be_read(tmp_path: Path) -> None:
    """A project folder the app cannot read when it starts (left out of the watch: watchdog skips
    it, and a chmod says nothing) is read once it can be, and followed from then on: its answer,
    and a new session there (0 of 4 before: read once, never followed). As root, the app runs
    without the capabilities that ignore permissions."""
    if os.geteuid() == 0 and shutil.which("setpriv") is None:
        pytest.skip("running as root without setpriv (util-linux) to drop the capabilities that ignore permissions")
    locked = tmp_path / "--locked--"
    append(locked / "a.jsonl", header(), user(), ask("q0", "Locked at start?"))
    locked.chmod(0)
    drop = ["setpriv", "--bounding-set", "-dac_override,-dac_read_search", "--"] if os.geteuid() == 0 else []
    args = ["--no-tray", "--json", "--no-notify", "--liveness", "off", "--sessions-dir", str(tmp_path)]
    try:
        with AppProcess(argv=[*drop, sys.executable, "-m", "notifier", "run", *args]) as app:
            app.wait("ready")
            app.log_has("cannot read")
            locked.chmod(0o755)
            (asked,) = app.wait("needs_input", timeout=60)  # (on the retry's back-off)
            assert asked["question"]["tool_call_id"] == "q0"
            append(locked / "a.jsonl", answer("q0", "Yes"))
            (done,) = app.wait("resolved")
            assert done["question"]["tool_call_id"] == "q0"
            append(locked / "b.jsonl", header(), user(), ask("q1", "Written after?"))
            assert app.wait("needs_input", 2)[1]["question"]["tool_call_id"] == "q1"
    finally:
        locked.chmod(0o755)
