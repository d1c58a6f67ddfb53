"""``pi-notifier run``: the app (tray, notifications, control channel), or a headless watcher
(``--no-tray``, ``--json``). A second app hands over to the first one and exits 0; ``run
--json`` beside the app streams the events (reading the sessions itself) and leaves the
notifications to the app, as ``run --no-tray`` beside it does. One of them notifies each
question (:class:`notifier.instance.Notifying`): the app of those folders, else one headless
run of them, which hands notifying over to an app that starts, and takes it back when its turn
comes again (:mod:`notifier.cli.notify_turns`). An app that does not notify (``--no-notify``,
``notifications.backend = "none"``) claims nothing: a headless run beside it notifies."""

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
    from notifier.instance import Notifying

HAND_OVER_SAID = "the app is running and watches the same folders: it notifies, this run does not"
LATER_SAID = " (until the app ends)"
PEER_SAID = "another headless run notifies the same folders (pid {pid}): this one does not"


def cmd_run(args: argparse.Namespace, config: Config) -> int:
    from notifier.app import App
    from notifier.cli.notify_turns import NotifyTurns
    from notifier.instance import APP_LOCK, InstanceLock, Notifying, hand_over

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
    notifying = Notifying(folder, config["sessions_dirs"])
    try:
        notify = wants and _claims(notifying, tray, later=args.no_tray)
        app = App(config, json_out=args.json, notify=notify, lock=lock if tray else None)
    except OSError as exc:  # no runtime folder of our own at all (said why): one line, no traceback
        return fail(1, f"cannot start: {clean(exc, 600)}")
    # A headless run that notifies hands notifying to the app and takes it back; `run --json`
    # beside the app is its stream only: it leaves notifying to the app, also once that ends.
    turns = NotifyTurns(app, notifying) if not tray and wants and (notify or args.no_tray) else None
    try:
        return _serve(app, config, tray, turns, args.stop_on_eof)
    finally:
        notifying.release()


def _claims(notifying: Notifying, tray: bool, later: bool) -> bool:
    """Whether this run notifies as it starts: the app claims notifying (an app that does not
    notify claims nothing: a headless run does); a headless run does unless the app of its
    folders or another headless run of them does (``later``: it takes over when they end)."""
    if tray:
        if not notifying.claim():
            say("a headless run still notifies too; it did not hand over")
        return True
    holder = notifying.take()
    if holder is None and not notifying.app_runs():
        return True  # (it hands over to an app that starts: NotifyTurns)
    notifying.let_go()
    if notifying.app_runs():
        say(f"{HAND_OVER_SAID}{LATER_SAID if later else ''}")
    else:
        said = PEER_SAID.format(pid=holder or "?")
        say(f"{said}{' (until it ends)' if later else ''}")
    return False


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
