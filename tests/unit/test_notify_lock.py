"""Who notifies a set of folders (:class:`notifier.instance.Notifying`): the app of those folders,
else one headless run of them. Real files and real flock (two descriptors in one process are
two holders). (Held by other processes, killed ones too: tests/processes/test_notify_lock.py.)"""

from __future__ import annotations

import os
import threading
from pathlib import Path

from notifier.instance import Notifying


def test_the_app_of_the_folders_or_one_headless_run_notifies(tmp_path: Path) -> None:
    folder = str(tmp_path / "run")
    one, two, app = Notifying(folder, ["/s"]), Notifying(folder, ["/s"]), Notifying(folder, ["/s"])
    assert one.take() is None and one.take() is None  # a headless run: it notifies (taken once, kept)
    assert two.take() == 0  # another one does not (0: the holder is this very process)
    assert not one.app_runs() and not one.after_app
    assert not app.claim(wait_s=0.1)  # one did not hand over: the app goes on without it
    assert one.app_runs() and two.app_runs()
    both = Notifying(folder, ["/b", "/a"])
    assert both.claim(wait_s=0.1) and not Notifying(folder, ["/t"]).app_runs()  # (an app of other folders)
    assert Notifying(folder, ["/a", "/b"]).app_runs() and not Notifying(folder, ["/a"]).app_runs()
    both.release()
    assert Path(app.app_path).read_text() == f"{os.getpid()} app"
    one.let_go()
    app.release()
    assert app.claim(wait_s=1.0)  # nobody notifies: at once
    assert Path(app.path).read_text() == f"{os.getpid()} app" and not app.after_app
    elsewhere = Notifying(folder, ["/t"])
    assert elsewhere.take() is None and not elsewhere.app_runs()  # (nobody else notifies those)

    late = Notifying(folder, ["/s"])
    waiting = threading.Thread(target=late.wait, daemon=True)
    waiting.start()
    waiting.join(0.2)
    assert waiting.is_alive() and late.fd is None  # (the app notifies)
    app.release()
    waiting.join(10)
    assert not waiting.is_alive() and late.fd is not None and late.after_app  # its turn, after the app
    for each in (late, elsewhere, two):
        each.release()


def test_the_app_lets_its_own_lock_go_before_the_notifiers(tmp_path: Path) -> None:
    """As the app ends, the notifier's lock is let go only once the app no longer runs: a
    headless run waiting for it never finds it free while the app still runs (it took it then,
    wrote over the app's word in it, and the next taker read that no app notified last; seen as
    this file's first test failing 2 times in 40 on a busy machine)."""
    folder = str(tmp_path / "run")
    app_ran_then: list[bool] = []

    class App(Notifying):
        def let_go(self) -> None:
            app_ran_then.append(Notifying(folder, ["/s"]).app_runs())
            super().let_go()

    app = App(folder, ["/s"])
    assert app.claim(wait_s=1.0)
    app.release()
    assert app_ran_then == [False]


def test_a_run_that_finds_the_app_still_running_leaves_the_apps_word(tmp_path: Path) -> None:
    """A killed app's locks go in any order: the notifier's may be free while the app's is still
    held. A headless run that takes it then lets it go without writing over the app's word, so
    the run whose turn it is next reads that the app notified last (its bubbles to take over)."""
    folder = str(tmp_path / "run")
    app = Notifying(folder, ["/s"])
    assert app.claim(wait_s=1.0)
    app.let_go()  # (the notifier's lock free, the app's still held)
    late = Notifying(folder, ["/s"])
    assert late.take() is None and late.app_runs()
    late.let_go()
    assert Path(app.path).read_text() == f"{os.getpid()} app"
    app.release()
    late.wait()
    assert late.after_app
    late.release()


def test_folders_named_through_a_link_or_twice_are_one_set(tmp_path: Path) -> None:
    real = tmp_path / "sessions"
    real.mkdir()
    (tmp_path / "link").symlink_to(real)
    folder = str(tmp_path / "run")
    app = Notifying(folder, [str(real)])
    assert app.claim(wait_s=1.0)
    assert Notifying(folder, [str(tmp_path / "link")]).app_runs()
    assert Notifying(folder, [str(real), str(tmp_path / "link")]).app_runs()
    app.release()
