"""``pi-notifier run``: the app (tray, notifications, control channel), or a headless watcher
(``--no-tray``, ``--json``). A second app hands over to the first one and exits 0; ``run
--json`` beside the app streams the events (reading the sessions itself) and leaves the
notifications to the app, as ``run --no-tray`` beside it does. One of them notifies each
question, also when the app starts after a headless run that notifies: that run hands
notifying over to it, and takes it back when the app ends (:mod:`notifier.cli.notify_turns`).
An app that does not notify (``--no-notify``, ``notifications.backend = "none"``) claims
nothing: a headless run beside it notifies (:class:`notifier.instance.NotifyLock`)."""

from __future__ import annotations

import argparse
import os
import threading
from typing import TYPE_CHECKING

from notifier.cli.parser import fail, say
from notifier.config import Config
from notifier.core.text import clean
from notifier.system import paths

if TYPE_CHECKING:
    from notifier.app import App
    from notifier.cli.notify_turns import NotifyTurns
    from notifier.instance import NotifyLock, PeerLock

HAND_OVER_SAID = "the app is running and watches the same folders: it notifies, this run does not"
LATER_SAID = " (until the app ends)"


def cmd_run(args: argparse.Namespace, config: Config) -> int:
    from notifier.app import App
    from notifier.cli.notify_turns import NotifyTurns
    from notifier.instance import APP_LOCK, InstanceLock, NotifyLock, PeerLock, hand_over

    tray = not args.no_tray
    try:
        folder = paths.runtime_dir(announce=True)
        lock = InstanceLock(os.path.join(folder, APP_LOCK))
        held = tray and not lock.acquire()
    except OSError as exc:  # no folder of our own for it (said why): one line, no traceback
        return fail(1, f"cannot start the app: {clean(exc, 600)}")
    if held:
        if not args.json:
            return hand_over()
        tray = False  # run --json beside the app: the stream is what was asked for; the app notifies
    wants = not args.no_notify and config["notifications.backend"] != "none"
    notifying = NotifyLock(os.path.join(folder, "notify.lock"))
    peer = PeerLock(folder, config["sessions_dirs"])  # (one headless run notifies these folders)
    try:
        notify = wants and _claims(notifying, peer, config, tray, later=args.no_tray)
        app = App(config, json_out=args.json, notify=notify, lock=lock if tray else None)
    except OSError as exc:  # no runtime folder of our own at all (said why): one line, no traceback
        return fail(1, f"cannot start: {clean(exc, 600)}")
    # A headless run that notifies hands notifying to the app and takes it back; `run --json`
    # beside the app is its stream only: it leaves notifying to the app, also once that ends.
    turns = NotifyTurns(app, notifying, peer) if not tray and wants and (notify or args.no_tray) else None
    try:
        return _serve(app, config, tray, turns, args.stop_on_eof)
    finally:
        notifying.release()
        peer.release()


def _claims(notifying: NotifyLock, peer: PeerLock, config: Config, tray: bool, later: bool) -> bool:
    """Whether this run notifies as it starts: the app claims notifying (an app that does not
    notify claims nothing: a headless run does); a headless run notifies unless another does
    (:func:`_headless_notifies`)."""
    if not tray:
        return _headless_notifies(notifying, config, later=later, peer=peer)
    if not notifying.claim(config["sessions_dirs"]):
        say("a headless run still notifies too; it did not hand over")
    return True


def _serve(app: App, config: Config, tray: bool, turns: NotifyTurns | None, eof_stops: bool) -> int:
    """Start ``app`` (its tray icon if ``tray``; ``turns``: a headless run's notifier of the
    moment; ``eof_stops``: :func:`stop_on_eof`), serve it until it stops, and shut it down."""
    from notifier.app import install_signals
    from notifier.outputs.tray import make_tray

    icon = make_tray(config, app.execute) if tray else None
    install_signals(app.stop_event)
    if eof_stops:
        stop_on_eof(app.stop_event)
    try:
        app.start(tray=icon, windows=tray)  # (only the tray app serves windows)
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
            say(f"{HAND_OVER_SAID}{LATER_SAID if later else ''}")
            return False
    holder = peer.take() if peer is not None else None
    if holder is not None:
        from notifier.cli.notify_turns import PEER_SAID

        notifying.release()
        said = PEER_SAID.format(pid=holder or "?")
        say(f"{said}{' (until it ends)' if later else ''}")
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
