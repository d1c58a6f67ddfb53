"""The app killed (SIGKILL) a moment after a question and started again, against a real dunst:
a question the user has seen is not popped up again; the bubble still on screen is re-used
(``replaces_id``) or closed, never doubled."""

from __future__ import annotations

import random
import signal
import time
from functools import partial
from pathlib import Path

import pytest

from ..app_process import AppProcess
from ..conftest import wait_for
from ..writer import append, ask
from .services import Dunst, Monitor
from .test_notifications import new_session, run_app


def _popups(monitor: Monitor, text: str) -> int:
    """The Notify calls that raised a new bubble (``replaces_id`` 0) showing ``text``."""
    return sum(1 for n in monitor.notifies() if n["replaces"] == 0 and text in n["body"])


def _asked(app: AppProcess, call: str) -> bool:
    return any(e["question"]["tool_call_id"] == call for e in app.of("needs_input"))


@pytest.mark.parametrize("seed", [30, 31, 32])
def test_a_killed_app_restarted_re_uses_the_bubbles_on_screen(
    tmp_path: Path, dunst: Dunst, monitor: Monitor, seed: int
) -> None:
    """Three questions, the app killed 0.2–1.0 s after each and started again: each question
    popped up once (Notify with replaces_id 0), however its bubble is put back."""
    rng = random.Random(seed)
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
    assert popups == [1, 1, 1], calls  # each question popped up once, over three crashes
    assert 1 <= shown <= len(texts), calls  # and nothing is doubled on screen
