"""goto and is_focused on a real X desktop: Xvfb + openbox + two xterms, one of them a client of
the tmux session where a pi (a process named `pi` with a real captured session file) waits.
`goto` makes that xterm the active window (_NET_ACTIVE_WINDOW) and its client show pi's pane;
`is_focused` is true exactly then."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TypeVar

import pytest

from notifier.core.codec import status_obj
from notifier.core.model import Item
from notifier.system.focus import UNKNOWN, FocusFollower, is_focused, items_focused
from notifier.system.locate import Location, locate_sessions
from notifier.system.supervisor import Worker

from ..conftest import FIXTURES, cli, wait_for
from ..live.pi_harness import Tmux
from .conftest import require
from .desktops import activate_window
from .services import _wrap, stop

T = TypeVar("T")


def on_thread(worker: Worker, fn: Callable[[], T]) -> T:
    """``fn`` run on the worker's thread (as the notifier runs its focus check), its result."""
    out: list[T] = []
    worker.put(lambda: out.append(fn()))
    assert worker.sync(10)
    return out[0]


def _root_prop(name: str) -> list[int]:
    from Xlib import X, display

    d = display.Display()
    try:
        prop = d.screen().root.get_full_property(d.intern_atom(name), X.AnyPropertyType)
        return [int(v) for v in prop.value] if prop is not None else []
    finally:
        d.close()


def _clear_root_props(*names: str) -> None:
    from Xlib import display

    d = display.Display()
    try:
        for name in names:
            d.screen().root.delete_property(d.intern_atom(name))
        d.sync()
    finally:
        d.close()


def active() -> int | None:
    value = _root_prop("_NET_ACTIVE_WINDOW")
    return value[0] if value and value[0] else None


def window_of(pid: int) -> int | None:
    from notifier.system.window_manager import open_display, x_windows_by_pid

    d = open_display()
    try:
        return x_windows_by_pid(d).get(pid)
    finally:
        d.close()


@pytest.fixture
def openbox(desktop: dict[str, str], tmp_path: Path) -> Iterator[None]:
    require("openbox", "xterm", "tmux")
    # An earlier openbox on this display may have left its properties on the root window: clear
    # them, so what we wait for below is this one's.
    _clear_root_props("_NET_SUPPORTING_WM_CHECK", "_NET_WORKAREA")
    proc = subprocess.Popen(
        _wrap(["openbox", "--sm-disable"]), env=desktop, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
    )
    try:
        # the work area is set once openbox manages the screen (its check window comes earlier)
        wait_for(
            lambda: _root_prop("_NET_SUPPORTING_WM_CHECK") and _root_prop("_NET_WORKAREA"),
            20,
            "openbox to manage the screen",
        )
        yield
    finally:
        stop(proc)


def xterm(env: dict[str, str], *command: str) -> subprocess.Popen[bytes]:
    proc = subprocess.Popen(
        _wrap(["xterm", "-geometry", "80x24", "-e", *command]),
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    return proc


def fake_pi_in_tmux(tmp_path: Path, server: Tmux) -> tuple[Path, str]:
    """A stand-in pi (fake_pi.py) waiting on a real capture's question in a tmux session "work":
    ``(its sessions folder, its pane)``."""
    assert FIXTURES is not None
    sessions, project, bin_dir = tmp_path / "sessions", tmp_path / "project", tmp_path / "bin"
    for d in (sessions, project, bin_dir):
        d.mkdir(exist_ok=True)
    fake = bin_dir / "pi"
    fake.write_text(f"#!{sys.executable}\n" + (Path(__file__).with_name("fake_pi.py")).read_text())
    fake.chmod(0o755)
    server(
        "new-session", "-d", "-s", "work", "-x", "80", "-y", "24", "-c", str(project),
        "-e", f"FAKE_PI_SESSIONS={sessions}",
        str(fake), str(FIXTURES / "question-answer" / "A-pending.jsonl"), check=True,
    )  # fmt: skip
    pane = server("list-panes", "-t", "work", "-F", "#{pane_id}").split()[0]
    wait_for(lambda: "waiting for an answer" in server.capture(pane), 20, "the fake pi")
    return sessions, pane


def attached_xterm(
    desktop: dict[str, str], server: Tmux, terms: list[subprocess.Popen[bytes]]
) -> tuple[int, int]:
    """An xterm attached to the tmux session "work" and another xterm (both added to ``terms``,
    for the caller to close): ``(the attached one's window, the other's)``."""
    env = {k: v for k, v in desktop.items() if k not in ("TMUX", "TMUX_PANE")}
    client = xterm(env, "tmux", "-L", server.name, "attach", "-t", "work")
    other = xterm(env, "sleep", "3600")
    terms += [client, other]
    client_win = wait_for(lambda: window_of(client.pid), 20, "the xterm of the tmux client")
    other_win = wait_for(lambda: window_of(other.pid), 20, "the other xterm")
    wait_for(lambda: server("list-clients").strip(), 20, "the tmux client")
    return client_win, other_win


def test_goto_focuses_the_xterm_of_the_tmux_client(
    tmp_path: Path, desktop: dict[str, str], openbox: None
) -> None:
    server = Tmux()
    terms: list[subprocess.Popen[bytes]] = []
    try:
        sessions, pane = fake_pi_in_tmux(tmp_path, server)
        client_win, other_win = attached_xterm(desktop, server, terms)

        d = ["--sessions-dir", str(sessions)]
        status = json.loads(cli("status", "--json", *d).stdout)
        (session,) = status["sessions"]
        assert session["pending"] and session["location"]["window_id"] == client_win
        assert session["location"]["window"] == {"via": "x11", "id": client_win}  # (the focus method's)
        assert session["location"]["tmux"]["pane"] == pane

        assert activate_window(other_win) and active() == other_win
        location = _location(sessions)
        assert location is not None and not is_focused(location)

        r = cli("goto", *d)
        assert r.returncode == 0, r.stderr
        assert active() == client_win
        assert is_focused(_location(sessions))

        # the same terminal, but its client now shows another tmux window: not focused; goto again
        server("new-window", "-t", "work:1", "sleep", "3600", check=True)
        wait_for(lambda: not is_focused(_location(sessions)), 10, "another pane shown")
        assert active() == client_win
        assert cli("goto", *d).returncode == 0
        assert is_focused(_location(sessions))
        # the notification hook (notifications.skip_when_focused) sees the same, with what is
        # focused followed by the notifier's thread (the X display's PropertyNotify read there)
        ending = threading.Event()
        worker = Worker("focus-test", ending)
        follower = FocusFollower(worker)
        worker.start()

        def on_worker(items: list[Item]) -> bool:
            return on_thread(worker, lambda: items_focused(items, follower.front))

        assert on_worker(_items(sessions))

        def front_window() -> int | None:
            front = on_thread(worker, follower.front)
            return None if front is None or front == UNKNOWN else front[0]

        assert front_window() == client_win  # (watched: read from its events, not asked)
        # a remote session with the same folder path is never "in front of you" on this machine
        assert not on_worker([_remote_twin(i) for i in _items(sessions)])
        assert activate_window(other_win)
        # at once, though the watcher's PropertyNotify comes a moment later: a skip is never taken
        # on what the watcher last heard alone
        assert not on_worker(_items(sessions))
        # and the watcher follows the change by itself, on the worker's thread
        wait_for(lambda: front_window() == other_win, 10, "the focus change followed")
        on_thread(worker, follower.stop)
        ending.set()
        assert worker.sync(5)  # (its thread ends)
    finally:
        for t in terms:
            stop(t)
        server.kill()


def test_either_of_two_terminals_on_one_tmux_session_can_be_the_one_looked_at(
    tmp_path: Path, desktop: dict[str, str], openbox: None
) -> None:
    """Two xterms attached to the tmux session of pi's pane: whichever is focused, the user looks
    at the session (the one attached first, less recently active, too); another window: not."""
    server = Tmux()
    terms: list[subprocess.Popen[bytes]] = []
    try:
        sessions, _ = fake_pi_in_tmux(tmp_path, server)
        env = {k: v for k, v in desktop.items() if k not in ("TMUX", "TMUX_PANE")}
        wins = []
        for n in (1, 2):  # one after the other: the second is the more recently active client
            term = xterm(env, "tmux", "-L", server.name, "attach", "-t", "work")
            terms.append(term)
            wins.append(wait_for(lambda t=term: window_of(t.pid), 20, "the xterm of a tmux client"))  # type: ignore[misc]
            wait_for(lambda n=n: len(server("list-clients").split("\n")) >= n, 20, "the tmux client")  # type: ignore[misc]
        other = xterm(env, "sleep", "3600")
        terms.append(other)
        other_win = wait_for(lambda: window_of(other.pid), 20, "the other xterm")
        for win in wins:
            assert activate_window(win) and active() == win
            assert is_focused(_location(sessions)), win
        assert activate_window(other_win) and not is_focused(_location(sessions))
    finally:
        for t in terms:
            stop(t)
        server.kill()


def _location(sessions: Path) -> Location | None:
    from notifier.config import Config
    from notifier.sessions import engine_options, scan_once

    config = Config()
    config.values["sessions_dirs"] = [str(sessions)]
    snapshot = scan_once(engine_options(config))
    views = snapshot.sessions
    assert status_obj(snapshot)["pending"] == 1
    return locate_sessions(views).get(views[0].ref.key)


def _remote_twin(item: Item) -> Item:
    from dataclasses import replace

    from notifier.core.model import remote_key

    ref = replace(item.ref, key=remote_key("devbox", item.ref.key), host="devbox")
    return Item((ref.key, item.question.tool_call_id), ref, item.question)


def _items(sessions: Path) -> list[Item]:
    from notifier.config import Config
    from notifier.sessions import engine_options, scan_once

    config = Config()
    config.values["sessions_dirs"] = [str(sessions)]
    snapshot = scan_once(engine_options(config))
    return [Item((v.ref.key, q.tool_call_id), v.ref, q) for v, q in snapshot.pending]


def test_is_focused_is_false_for_nothing() -> None:
    assert not is_focused(None)
    assert not is_focused(Location(pid=os.getpid(), tty=None))
