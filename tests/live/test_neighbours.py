"""Two real pis (1.6.0) in one folder, in tmux: each session is tied to its own pi, never by the
folder alone. Answering one pi's question types into that pi (or refuses, typing nothing), never
into a neighbour showing a look-alike dialog; a killed asker's question is abandoned while its
neighbour runs, and the neighbour's session stays alive.

"apart": the second pi starts once the first one's UI is up (~2 s later: start times tell their
sessions apart). "together": both start at once (only their panes can tell them apart)."""

from __future__ import annotations

import json
import os
import signal
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest

from notifier.sessions import EngineOptions, scan_once
from notifier.system.locate import Location, Unmatched, locate_one

from ..app_process import AppProcess
from ..conftest import cli, wait_for
from .pi_harness import EXTENSION, PiSession, Tmux, need, start_pi


def no_x() -> dict[str, str]:
    """This test's environment (its own HOME and XDG folders) without a display."""
    return {k: v for k, v in os.environ.items() if k not in ("DISPLAY", "WAYLAND_DISPLAY")}
LIVENESS_INTERVAL_S = 3.0  # (the default: notifier.sessions)

# The same first 40 characters and the same first option: a 40-character prefix and the first
# label (what the screen check before typing looks at) cannot tell these dialogs apart.
STAGING = {
    "question": "Before we migrate the cluster tonight, which database should we drop? (staging cleanup)",
    "options": [{"label": "Keep everything"}, {"label": "Drop the staging database"}],
}
PRODUCTION = {
    "question": "Before we migrate the cluster tonight, which database should we drop? (production cleanup)",
    "options": [{"label": "Keep everything"}, {"label": "Drop the production database"}],
}


@pytest.fixture
def server() -> Iterator[Tmux]:
    tmux = Tmux()
    tmux("new-session", "-d", "-s", "keep", "sleep", "3600", check=True)  # (the server runs before both pis start)
    yield tmux
    tmux.kill()


def two_pis(
    tmp: Path, server: Tmux, port: int, together: bool, *more: Path
) -> tuple[PiSession, PiSession]:
    """pi A and pi B in one project folder (one agent folder), in panes of one tmux server, with
    pi's question tool (and the extensions ``more``)."""
    v = need("1.6.0")
    ext = (v.example("question.ts"), *more)
    if together:
        with ThreadPoolExecutor(2) as pool:
            fa = pool.submit(start_pi, tmp, v, port, *ext, server=server, session="a")
            fb = pool.submit(start_pi, tmp, v, port, *ext, server=server, session="b")
            return fa.result(), fb.result()
    a = start_pi(tmp, v, port, *ext, server=server, session="a")
    return a, start_pi(tmp, v, port, *ext, server=server, session="b")


def ask(pi: PiSession, tmp: Path, args: dict[str, Any], name: str) -> None:
    """Make pi ask the question ``args`` (the scripted model reads them from a file)."""
    f = tmp / f"{name}.json"
    f.write_text(json.dumps(args))
    pi.prompt(f"ask: {f}")
    wait_for(lambda: "Enter to select" in pi.screen(), 40, f"pi {name}'s question dialog")


def session_of(pi: PiSession, others: list[Path]) -> Path:
    """The session file pi wrote (the one that is not among ``others``)."""
    return wait_for(
        lambda: next((p for p in pi.sessions.rglob("*.jsonl") if p not in others), None), 20, "its session file"
    )


def pid_of(pi: PiSession) -> int:
    return int(pi.tmux("list-panes", "-t", pi.pane(), "-F", "#{pane_pid}").split()[0])


def locate(pi: PiSession, file: Path, announced: dict[int, str] | None = None) -> Location | Unmatched:
    """The locate API as ``answer`` calls it: the session's view and its neighbours, from a scan."""
    snap = scan_once(EngineOptions([str(pi.sessions)]))
    view = next(v for v in snap.sessions if v.ref.key == str(file))
    assert view.pending, "the question is pending"
    return locate_one(view, neighbours=snap.sessions, announced=announced)


def results(file: Path) -> list[str]:
    out = []
    for line in file.read_text().splitlines():
        msg = json.loads(line).get("message") or {}
        if msg.get("role") == "toolResult":
            out.append("".join(c.get("text", "") for c in msg.get("content", [])))
    return out


def untouched(pi: PiSession, label: str) -> bool:
    """pi's dialog is still open, its cursor on the first option."""
    return f"> 1. {label}" in pi.screen() and "Enter to select" in pi.screen()


@pytest.mark.parametrize("together", [False, True], ids=["apart", "together"])
def test_answer_types_into_the_pi_that_asked_not_its_look_alike_neighbour(
    tmp_path: Path, server: Tmux, model: int, together: bool
) -> None:
    a, b = two_pis(tmp_path, server, model, together)
    ask(a, tmp_path, STAGING, "a")
    fa = session_of(a, [])
    ask(b, tmp_path, PRODUCTION, "b")
    fb = session_of(b, [fa])

    # the locate API: A's session is A's pane, B's is B's
    for pi, f in ((a, fa), (b, fb)):
        found = locate(pi, f)
        assert isinstance(found, Location), found
        assert found.tmux is not None and found.tmux.pane == pi.pane() and found.pid == pid_of(pi)

    # answering A's session types into A; B's look-alike dialog stays untouched
    r = cli("answer", json.loads(fa.read_text().splitlines()[0])["id"], "2", "--sessions-dir", str(a.sessions), env=no_x())
    assert r.returncode == 0, r.stderr
    assert r.stdout.strip().splitlines()[-1] == "answered: User selected: 2. Drop the staging database"
    assert results(fa) == ["User selected: 2. Drop the staging database"]
    assert results(fb) == [] and untouched(b, "Keep everything")


def test_neighbours_that_cannot_be_told_apart_get_nothing_typed(tmp_path: Path, server: Tmux, model: int) -> None:
    """Both started at once, both showing the very same dialog: nothing tells which pi has which
    session, so nothing is typed and the user is told why (one line)."""
    a, b = two_pis(tmp_path, server, model, together=True)
    ask(a, tmp_path, STAGING, "a")
    fa = session_of(a, [])
    ask(b, tmp_path, STAGING, "b")
    fb = session_of(b, [fa])
    found = locate(a, fa)
    assert isinstance(found, Unmatched) and found.ambiguous, found
    assert set(found.pids) == {pid_of(a), pid_of(b)}
    assert "nothing was typed" in found.reason and "\n" not in found.reason
    assert a.pane() in found.reason and b.pane() in found.reason
    r = cli("answer", json.loads(fa.read_text().splitlines()[0])["id"], "2", "--sessions-dir", str(a.sessions), env=no_x())
    assert r.returncode == 1 and r.stderr.count("\n") == 1 and "Traceback" not in r.stderr
    assert results(fa) == results(fb) == []
    assert untouched(a, "Keep everything") and untouched(b, "Keep everything")
    # goto says why as well
    g = cli("goto", json.loads(fa.read_text().splitlines()[0])["id"], "--sessions-dir", str(a.sessions), env=no_x())
    assert g.returncode == 1 and "could be this session's" in g.stderr and g.stderr.count("\n") == 1


def test_what_the_companion_announces_tells_identical_neighbours_apart(
    tmp_path: Path, server: Tmux, model: int
) -> None:
    """The same two indistinguishable pis, with the companion extension: each announces its pid and
    session file, which is exact."""
    from notifier.companion import announced_sessions

    a, b = two_pis(tmp_path, server, model, True, EXTENSION)
    ask(a, tmp_path, STAGING, "a")
    fa = session_of(a, [])
    ask(b, tmp_path, STAGING, "b")
    fb = session_of(b, [fa])
    assert isinstance(locate(a, fa), Unmatched)  # the screens and start times alone cannot tell
    announced = wait_for(lambda: len(got := announced_sessions()) == 2 and got, 20, "both pis announced")
    assert announced == {pid_of(a): str(fa), pid_of(b): str(fb)}
    for pi, f in ((a, fa), (b, fb)):
        found = locate(pi, f, announced)
        assert isinstance(found, Location) and found.pid == pid_of(pi) and found.tmux is not None
        assert found.tmux.pane == pi.pane()


def status(sessions: Path) -> dict[str, dict[str, Any]]:
    out = json.loads(cli("status", "--json", "--sessions-dir", str(sessions), env=no_x()).stdout)
    return {s["file"]: s for s in out["sessions"]}


@pytest.mark.parametrize("neighbour", ["asking", "idle"])
def test_a_killed_asker_is_abandoned_while_its_neighbour_runs(
    tmp_path: Path, server: Tmux, model: int, neighbour: str
) -> None:
    """Both pis start at once (start times cannot tell their sessions apart). A asks; B asks a
    look-alike question, or asked one and was answered (idle on its own session). A is killed:
    its question is abandoned within the liveness interval, B's session stays alive."""
    a, b = two_pis(tmp_path, server, model, together=True)
    with AppProcess("run", "--no-tray", "--json", "--no-notify", "--sessions-dir", str(a.sessions)) as app:
        app.wait("ready")
        ask(b, tmp_path, PRODUCTION, "b")
        fb = session_of(b, [])
        if neighbour == "idle":
            b.keys("Enter")  # answered: "Keep everything"; the model says thanks, B is idle
            wait_for(lambda: results(fb) and "Thanks" in fb.read_text(), 30, "B's answer and reply")
        ask(a, tmp_path, STAGING, "a")
        fa = session_of(a, [fb])
        app.wait("needs_input", 2)
        wait_for(lambda: status(a.sessions)[str(fa)]["alive"] is True, 20, "A's session alive")
        before = status(a.sessions)
        assert before[str(fb)]["alive"] is True
        assert app.of("abandoned") == []

        os.kill(pid_of(a), signal.SIGKILL)
        killed = time.monotonic()
        (gone,) = app.wait("abandoned", timeout=LIVENESS_INTERVAL_S + 10)
        took = time.monotonic() - killed
        assert gone["session"]["file"] == str(fa) and gone["question"]["text"] == STAGING["question"]
        assert took < LIVENESS_INTERVAL_S + 3, took  # one liveness look (plus a loaded machine's delay)

        after = status(a.sessions)
        assert after[str(fa)]["alive"] is False and after[str(fa)]["pending"] == []
        assert [q["text"] for q in after[str(fa)]["abandoned"]] == [STAGING["question"]]
        assert after[str(fb)]["alive"] is True and after[str(fb)]["abandoned"] == []
        if neighbour == "asking":
            assert [q["text"] for q in after[str(fb)]["pending"]] == [PRODUCTION["question"]]
            assert untouched(b, "Keep everything")
        assert len(app.of("abandoned")) == 1  # B's question was never called abandoned
        # answering A's question now types nothing anywhere
        r = cli("answer", json.loads(fa.read_text().splitlines()[0])["id"], "2", "--sessions-dir", str(a.sessions), env=no_x())
        assert r.returncode == 1 and r.stderr.count("\n") == 1, r.stderr
        if neighbour == "asking":
            assert results(fb) == [] and untouched(b, "Keep everything")


def test_a_killed_asker_among_two_working_neighbours_is_abandoned_within_seconds(
    tmp_path: Path, server: Tmux, model: int
) -> None:
    """Three pis in one folder: A asks; B (started with A) and C (started after A's question) run
    a long tool. A is killed: its question is abandoned within seconds (B's and C's panes show no
    dialog, C started after the question), and ``status`` never places it at B's or C's pid."""
    a, b = two_pis(tmp_path, server, model, together=True)
    with AppProcess("run", "--no-tray", "--json", "--no-notify", "--sessions-dir", str(a.sessions)) as app:
        app.wait("ready")
        b.prompt("bash: sleep 300")
        fb = session_of(b, [])
        ask(a, tmp_path, STAGING, "a")
        fa = session_of(a, [fb])
        app.wait("needs_input")
        c = start_pi(tmp_path, need("1.6.0"), model, need("1.6.0").example("question.ts"), server=server, session="c")
        c.prompt("bash: sleep 300")
        fc = session_of(c, [fa, fb])
        neighbours = {pid_of(b), pid_of(c)}

        def everyone_placed() -> bool:  # each session alive, A's question at A's pid
            now = status(a.sessions)
            where = now[str(fa)].get("location") or {}
            assert where.get("pid") not in neighbours, where
            return all(now[str(f)]["alive"] for f in (fa, fb, fc)) and where.get("pid") == pid_of(a)

        wait_for(everyone_placed, 20, "every session alive, A's question located at A")

        def located_at_a_neighbour() -> bool:
            where = status(a.sessions)[str(fa)].get("location") or {}
            return where.get("pid") in neighbours

        assert not located_at_a_neighbour()
        assert app.of("abandoned") == []

        os.kill(pid_of(a), signal.SIGKILL)
        killed = time.monotonic()
        seen: list[bool] = []

        def abandoned() -> bool:
            seen.append(located_at_a_neighbour())
            return bool(app.of("abandoned"))

        wait_for(abandoned, LIVENESS_INTERVAL_S + 10, "A's question abandoned")
        took = time.monotonic() - killed
        print(f"[neighbours] abandoned {took:.2f} s after the kill")
        (gone,) = app.of("abandoned")
        assert gone["session"]["file"] == str(fa) and gone["question"]["text"] == STAGING["question"]
        assert took < LIVENESS_INTERVAL_S + 3, took
        assert not any(seen), "status placed A's question at a neighbour's pid"
        after = status(a.sessions)
        assert after[str(fa)]["alive"] is False and after[str(fa)]["pending"] == []
        assert after[str(fa)].get("location") is None
        assert after[str(fb)]["alive"] is True and after[str(fc)]["alive"] is True
        assert after[str(fb)]["abandoned"] == after[str(fc)]["abandoned"] == []


def test_three_pis_asking_the_very_same_question_the_last_killed_is_abandoned(
    tmp_path: Path, server: Tmux, model: int
) -> None:
    """Three pis in one folder ask the very same question (their panes cannot tell them apart);
    C started after A and B asked. C is killed: its question is abandoned (the app had seen each
    session's pi; a pi in a dialog cannot have moved to another session), A's and B's stay theirs."""
    a, b = two_pis(tmp_path, server, model, together=False)
    with AppProcess("run", "--no-tray", "--json", "--no-notify", "--sessions-dir", str(a.sessions)) as app:
        app.wait("ready")
        ask(a, tmp_path, STAGING, "a")
        fa = session_of(a, [])
        ask(b, tmp_path, STAGING, "b")
        fb = session_of(b, [fa])
        c = start_pi(tmp_path, need("1.6.0"), model, need("1.6.0").example("question.ts"), server=server, session="c")
        ask(c, tmp_path, STAGING, "c")
        fc = session_of(c, [fa, fb])
        app.wait("needs_input", 3)
        # (the app's answer: alive once a process list read after each question paired it)
        wait_for(lambda: all(s["alive"] for s in status(a.sessions).values()), 20, "every session alive")
        assert app.of("abandoned") == []

        os.kill(pid_of(c), signal.SIGKILL)
        (gone,) = app.wait("abandoned", timeout=LIVENESS_INTERVAL_S + 10)
        assert gone["session"]["file"] == str(fc)
        after = status(a.sessions)
        assert after[str(fa)]["alive"] is True and after[str(fb)]["alive"] is True
        assert [q["text"] for q in after[str(fa)]["pending"]] == [STAGING["question"]]
        assert [q["text"] for q in after[str(fb)]["pending"]] == [STAGING["question"]]
        assert len(app.of("abandoned")) == 1
