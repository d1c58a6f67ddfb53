"""The app killed (SIGKILL) a moment after a question and started again, against a real dunst:
a question the user has seen is not popped up again; the bubble still on screen is re-used
(``replaces_id``) or closed, never doubled."""

from __future__ import annotations

import os
import random
import signal
import sqlite3
import time
from contextlib import closing
from functools import partial
from pathlib import Path

import pytest

from ..app_process import AppProcess
from ..conftest import wait_for
from ..writer import answer, append, ask
from .services import Dunst, Monitor
from .test_notifications import new_session, run_app


def _popups(monitor: Monitor, text: str) -> int:
    """The Notify calls that raised a new bubble (``replaces_id`` 0) showing ``text``."""
    return sum(1 for n in monitor.notifies() if n["replaces"] == 0 and text in n["body"])


def _intent_left(call: str) -> bool:
    """Did the killed run leave only its intent for ``call`` (a Notify asked for, its id never
    learned: the kill fell inside the D-Bus call), as the state store's file records it?"""
    path = Path(os.environ["XDG_STATE_HOME"]) / "pi-notifier" / "state.sqlite3"
    if not path.exists():
        return False
    with closing(sqlite3.connect(path, timeout=5)) as db:
        try:
            ids = {i for (i,) in db.execute("SELECT id FROM bubbles WHERE call_id = ?", (call,))}
        except sqlite3.OperationalError:  # (not made yet)
            return False
    return ids == {-1}


def _asked(app: AppProcess, call: str) -> bool:
    return any(e["question"]["tool_call_id"] == call for e in app.of("needs_input"))


@pytest.mark.parametrize("seed", [30, 31, 32])
def test_a_killed_app_restarted_re_uses_the_bubbles_on_screen(
    tmp_path: Path, dunst: Dunst, monitor: Monitor, seed: int
) -> None:
    """Three questions, the app killed 0.2–1.0 s after each and started again: each question
    popped up once (Notify with replaces_id 0), however its bubble is put back, except where the
    kill fell inside the Notify call (under load the call can come that late): then once more at
    most (the gap the next test measures)."""
    rng = random.Random(seed)
    inside = [False] * 3  # a kill that fell inside the Notify call, as the store's file tells
    files = [new_session(tmp_path, f"crashy{n}") for n in range(3)]
    texts = [f"Question number {n}?" for n in range(3)]
    for n, text in enumerate(texts):
        with run_app(tmp_path) as app:
            app.wait("ready")
            asked = time.monotonic()
            append(files[n], ask(f"q{n}", text))
            wait_for(partial(_asked, app, f"q{n}"), 10, "the question seen")
            # the crash, at a random moment (the trial's parameter, not a wait for something)
            time.sleep(max(0.0, asked + rng.uniform(0.2, 1.0) - time.monotonic()))
            app.proc.send_signal(signal.SIGKILL)
            app.proc.wait(5)
        inside[n] = _intent_left(f"q{n}")
    marker = new_session(tmp_path, "marker")
    with run_app(tmp_path) as app:
        app.wait("ready")
        append(marker, ask("m", "Marker?"))  # raised after what the start-up put back (one worker, in order)
        wait_for(lambda: _popups(monitor, "Marker?"), 10, "the marker")
        shown = dunst.displayed() - 1
        app.proc.send_signal(signal.SIGKILL)  # (a stop would close them: count them as they are)
        app.proc.wait(5)
    popups = [_popups(monitor, t) for t in texts]
    calls = [(x["replaces"], x["summary"]) for x in monitor.notifies()]
    # each question popped up once over three crashes (twice at most where the kill fell inside its Notify)
    assert all(p == 1 or (p == 2 and i) for p, i in zip(popups, inside, strict=True)), (popups, inside, calls)
    assert 1 <= shown <= len(texts), calls  # and nothing is doubled on screen


KILLED_RUN_CALL_S = 0.05  # a Notify stamped this soon after the kill was sent by the killed run


def test_killed_at_many_points_around_the_notify_never_doubles_or_orphans(
    tmp_path: Path, dunst: Dunst, monitor: Monitor
) -> None:
    """The app SIGKILLed at points spread over the time from a question's line to a while past
    its Notify (before the call, during it, around the reply and its record), then started
    again: the question has one bubble on screen (the one left re-used, or a first one) and one
    pop-up, except where the kill fell between the Notify call and the record of its id (the
    server shows a bubble whose id no run learned; the protocol cannot find it): then one extra,
    never more; once answered, every bubble whose id was recorded is closed. Prints how many
    kills fell in that window."""
    cfg = tmp_path / "config.toml"
    cfg.write_text("settle_ms = 0\n")
    delays = [n * 0.005 for n in range(24)]  # 0–115 ms after the write: the Notify lands in there (~40–70 ms)
    random.Random(30).shuffle(delays)
    landed = {"before": 0, "after": 0, "inside": 0}  # where the kills landed (the Notify seen or not; inside it)
    doubled = 0
    for n, delay in enumerate(delays):
        f = new_session(tmp_path, f"kill{n}")
        text = f"Kill point {n}?"
        with run_app(tmp_path, "--config", str(cfg)) as app:
            app.wait("ready")
            written = time.monotonic()
            append(f, ask(f"k{n}", text))
            # the kill point is the trial's parameter (not a wait for something)
            time.sleep(max(0.0, written + delay - time.monotonic()))
            app.proc.send_signal(signal.SIGKILL)
            killed = time.monotonic()
            app.proc.wait(5)
        seen = [t for t, x in zip(monitor.stamps("Notify"), monitor.of("Notify"), strict=True)
                if x[0] == "pi-notifier" and text in x[4] and t >= written]
        # Killed inside the Notify call itself (sent, its id not yet returned): the server may show
        # a bubble whose id no run ever learned, and the notification protocol has no way to find
        # it. The one documented gap (a D-Bus round trip): counted, and held to its own bound.
        # The monitor stamps a call as it reads it, a little after the killed run sent it (0.3 ms
        # after the kill was seen under load); the next run cannot call within 50 ms of the kill
        # (it starts after it and takes ~0.4 s to be ready), so a call stamped by then is the killed run's.
        sent = bool(seen) and seen[0] <= killed + KILLED_RUN_CALL_S
        inside = sent and _intent_left(f"k{n}")
        landed["inside" if inside else "after" if sent else "before"] += 1
        marker = new_session(tmp_path, f"mark{n}")
        with run_app(tmp_path, "--config", str(cfg)) as app:
            app.wait("ready")
            append(marker, ask(f"m{n}", f"Marker {n}?"))  # raised after what the start-up put back
            wait_for(lambda: _popups(monitor, f"Marker {n}?"), 10, "the marker")  # noqa: B023
            calls = [(x["replaces"], x["summary"], x["body"][:40]) for x in monitor.notifies()]
            popups = _popups(monitor, text)
            # never more than one extra pop-up; none at all unless the kill fell in the window
            # from the Notify call to the id's record (the killed run's bubble, id unknown)
            assert popups == 1 or (popups == 2 and sent), (n, delay, calls)
            assert dunst.displayed() <= 1 + popups, (n, delay, calls)
            doubled += popups - 1
            append(f, answer(f"k{n}"))
            append(marker, answer(f"m{n}"))
            # every bubble whose id a run recorded is closed once answered
            wait_for(lambda: dunst.displayed() <= popups - 1, 10, "every known bubble closed once answered")  # noqa: B023
        dunst.ctl("close-all")
        wait_for(lambda: dunst.displayed() == 0, 10, "the screen cleared for the next trial")
    print(f"[crashes] {doubled} of {len(delays)} kills left a second pop-up; landed {landed}")
    assert landed["before"] and landed["after"], landed  # (the kills fell on both sides of the Notify)

