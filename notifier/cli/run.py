"""``pi-notifier run``: the app (tray, notifications, control channel), or a headless watcher
(``--no-tray``, ``--json``). A second app hands over to the first one and exits 0; ``run
--json`` beside the app streams the events (reading the sessions itself) and leaves the
notifications to the app, as ``run --no-tray`` beside it does. One of them notifies each
question, also when the app starts after a headless run that notifies: that run hands
notifying over to it, and takes it back when the app ends (:mod:`notifier.cli.notify_turns`).
An app that does not notify (``--no-notify``, ``notifications.backend = "none"``) claims
nothing: a headless run beside it notifies (:class:`notifier.app.instance.NotifyLock`)."""

from __future__ import annotations

import argparse
import os
import sys
import threading
from typing import TYPE_CHECKING

from notifier import APP_NAME
from notifier.config.load import Config
from notifier.core.text import clean

if TYPE_CHECKING:
    from notifier.app.instance import NotifyLock, PeerLock

HAND_OVER_SAID = "the app is running and watches the same folders: it notifies, this run does not"
LATER_SAID = " (until the app ends)"


def cmd_run(args: argparse.Namespace, config: Config) -> int:
    from notifier.app.instance import APP_LOCK, InstanceLock, NotifyLock, PeerLock, hand_over
    from notifier.app.runtime import App, install_signals
    from notifier.app.tray_choice import make_tray
    from notifier.cli.notify_turns import NotifyTurns
    from notifier.system import paths

    tray = not args.no_tray
    try:
        folder = paths.runtime_dir(announce=True)
        lock = InstanceLock(os.path.join(folder, APP_LOCK))
        held = tray and not lock.acquire()
    except OSError as exc:  # no folder of our own for it (said why): one line, no traceback
        sys.stderr.write(f"{APP_NAME}: cannot start the app: {clean(exc, 600)}\n")
        return 1
    if held:
        if not args.json:
            return hand_over()
        tray = False  # run --json beside the app: the stream is what was asked for; the app notifies
    wants = not args.no_notify and config["notifications.backend"] != "none"
    notify = wants
    notifying = NotifyLock(os.path.join(folder, "notify.lock"))
    peer = PeerLock(folder, config["sessions_dirs"])  # (one headless run notifies these folders)
    try:
        if tray and notify:  # (an app that does not notify claims nothing: a headless run does)
            if not notifying.claim(config["sessions_dirs"]):
                sys.stderr.write(f"{APP_NAME}: a headless run still notifies too; it did not hand over\n")
        elif notify:
            notify = _headless_notifies(notifying, config, later=args.no_tray, peer=peer)
    except OSError as exc:
        sys.stderr.write(f"{APP_NAME}: cannot start: {clean(exc, 600)}\n")
        return 1
    try:
        app = App(config, json_out=args.json, notify=notify, lock=lock if tray else None)
    except OSError as exc:  # no runtime folder of our own at all (said why): one line, no traceback
        sys.stderr.write(f"{APP_NAME}: cannot start: {clean(exc, 600)}\n")
        return 1
    # A headless run that notifies hands notifying to the app and takes it back; `run --json`
    # beside the app is its stream only: it leaves notifying to the app, also once that ends.
    turns = NotifyTurns(app, notifying, peer) if not tray and wants and (notify or args.no_tray) else None
    icon = make_tray(config, app.execute, app.ui_state) if tray else None
    install_signals(app.stop_event)
    if args.stop_on_eof:
        stop_on_eof(app.stop_event)
    try:
        app.start(tray=icon, turns=turns)
        if turns is not None:
            turns.start()
        if tray:
            app.serve()
        return app.run_loop()
    finally:
        if turns is not None:
            turns.stop()
        app.shutdown()
        if turns is not None:
            turns.close()
        notifying.release()
        peer.release()


def _headless_notifies(
    notifying: NotifyLock, config: Config, later: bool = False, peer: PeerLock | None = None
) -> bool:
    """Whether a headless run notifies as it starts: not while an app that watches the same
    folders claims notifying (then it notifies each question, and this run must not a second
    time; ``later``: this run takes over when that app ends), nor while another headless run
    notifies them (``peer``: their lock; this run takes over when that run ends)."""
    turn = notifying.turn(config["sessions_dirs"])
    if turn.app is not None:
        notifying.release()
        if not turn.notify:
            sys.stderr.write(f"{APP_NAME}: {HAND_OVER_SAID}{LATER_SAID if later else ''}\n")
            return False
    holder = peer.take() if peer is not None else None
    if holder is not None:
        from notifier.cli.notify_turns import PEER_SAID

        notifying.release()
        said = PEER_SAID.format(pid=holder or "?")
        sys.stderr.write(f"{APP_NAME}: {said}{' (until it ends)' if later else ''}\n")
        return False
    return True  # no app, or one of other folders: this run notifies (and hands over: NotifyTurns)


def stop_on_eof(stop: threading.Event) -> None:
    """Set ``stop`` when standard input is closed. A remote link starts ``run --json`` with a
    pipe it never writes to: when the link ends (or the machine that started it goes away), ssh
    closes it, and this run ends too instead of living on until it next writes."""

    def wait() -> None:
        try:
            while os.read(0, 1 << 16):
                pass  # (nothing is expected: whatever comes is dropped)
        except OSError:
            pass
        stop.set()

    threading.Thread(target=wait, name="pi-notifier stdin", daemon=True).start()
