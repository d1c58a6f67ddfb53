"""`pi-notifier demo`: replays a small recorded pi session (notifier/resources/demo/session.jsonl) into a
temporary sessions folder, so a newcomer sees the notification, the icon change and the window
without having pi. Lines starting with '#' in the recording mark the pauses."""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import tempfile
import threading
import time
from typing import TYPE_CHECKING

from notifier import resources
from notifier.cli.parser import out
from notifier.config import Config
from notifier.core.codec import iso

if TYPE_CHECKING:
    from notifier.app import App

ASK_AFTER_S = 2.0
ANSWER_AFTER_S = 45.0


def _chunks() -> list[list[str]]:
    """The recording's lines, in the parts its '#' lines part."""
    parts = re.split(r"^#.*$", resources.read_text("demo/session.jsonl"), flags=re.MULTILINE)
    return [[line for line in part.splitlines() if line.strip()] for part in parts]


def _write(path: str, lines: list[str], cwd: str, now: float) -> None:
    """Append ``lines``, their folder ``cwd`` and their times ``now``."""
    with open(path, "a", encoding="utf-8") as fh:
        for line in lines:
            fh.write(re.sub(r"\{T\d\}", iso(now), line.replace("{CWD}", json.dumps(cwd)[1:-1])) + "\n")


def cmd_demo(args: argparse.Namespace, config: Config) -> int:
    from notifier.app import App, install_signals
    from notifier.outputs.tray import make_tray

    tray = not args.no_tray
    work = tempfile.mkdtemp(prefix="pi-notifier-demo-")
    project = os.path.join(work, "demo-project")
    os.makedirs(project)
    sessions = os.path.join(work, "sessions")
    folder = os.path.join(sessions, "--" + project.lstrip("/").replace("/", "-") + "--")
    os.makedirs(folder)
    session_file = os.path.join(folder, "demo.jsonl")
    parts = _chunks()
    _write(session_file, parts[0], project, time.time())

    config.values.update(sessions_dirs=[sessions], liveness="off", settle_ms=0)
    # Its own state folder: the demo's question must not enter the real history or notified list.
    app = App(config, json_out=False, notify=True, socket=os.path.join(work, "control.sock"),
              state_dir=os.path.join(work, "state"), follow_config=False)
    icon = make_tray(config, app.execute) if tray else None
    install_signals(app.stop_event)

    def say(text: str) -> None:
        out(text, "\n", flush=True)

    def script() -> None:
        if app.stop_event.wait(ASK_AFTER_S):
            return
        _write(session_file, parts[1], project, time.time())
        shown = app.alerts is not None and app.alerts.online
        docked = _docked(app)
        icon = "the tray icon turned red" if docked else "no tray icon here (see 'pi-notifier doctor')"
        icon = icon if tray else "no tray icon (--no-tray)"
        if shown:
            say(f"→ The demo agent asked a question: a notification appeared and {icon}.")
        else:
            say(f"→ The demo agent asked a question: {icon}; no notification server shows it here"
                " (see 'pi-notifier doctor').")
        say("  " + _where_to_read(app, session_file, parts[1]))
        then = "; then the notification is withdrawn" if shown else ""
        say(f"  The answer arrives in {ANSWER_AFTER_S:.0f} s{then} (Ctrl+C to end sooner).")
        if app.stop_event.wait(ANSWER_AFTER_S):
            return
        _write(session_file, parts[2], project, time.time())
        gone = [*(["the notification is gone"] if shown else []), *(["the icon is back to normal"] if docked else [])]
        say(f"→ Answered{': ' + ' and '.join(gone) if gone else ''}. The demo ends in 5 s.")
        if not app.stop_event.wait(5):
            app.stop_event.set()

    say(f"pi-notifier demo: watching a recorded pi session in {sessions}")
    try:
        app.start(tray=icon)
        app.serve()
        threading.Thread(target=script, name="pi-notifier-demo", daemon=True).start()
        return app.run_loop()
    finally:
        app.shutdown()
        shutil.rmtree(work, ignore_errors=True)


def _docked(app: App) -> bool:
    """Whether the demo's tray icon is shown: it has one, and a tray host runs to show it."""
    from notifier.outputs.tray_hosts import look

    return app.tray is not None and any(look()[0])


def _where_to_read(app: App, session_file: str, asked: list[str]) -> str:
    """Where the demo's question can be read here (its folder is the demo's own: no other
    command sees it): the icon's window; else the window, opened now; else the terminal."""
    if _docked(app):
        return "Open the window from the icon (a click, or its menu → Open window) to read and answer it."
    call = next(c for c in json.loads(asked[0])["message"]["content"] if c.get("type") == "toolCall")
    from notifier.app import has_display

    if has_display():
        from notifier.core.commands import Focus, Show

        app.execute(Show(Focus(session_file, call["id"])))
        return "Its window opened at the question (the window lists every question that waits)."
    labels = " / ".join(o["label"] for o in call["arguments"]["options"])
    return f"No display here for the window either. The question: {call['arguments']['question']} [{labels}]"
