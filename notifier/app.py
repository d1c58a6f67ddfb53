"""The commands: wiring of engine, sinks, tray and window (the edges of the app)."""

from __future__ import annotations

import argparse
import logging
import os
import signal
import sys
import threading
import time
from collections.abc import Sequence
from typing import Any

from notifier import APP_NAME
from notifier.config import Config, ConfigError, render
from notifier.core.model import Snapshot, Transition
from notifier.core.text import clean, project_name
from notifier.engine import Engine, EngineOptions, Sink, scan_once
from notifier.output import JsonSink, dumps, status_obj
from notifier.pi.questions import QuestionCatalog
from notifier.store import Store

log = logging.getLogger(__name__)


def engine_options(config: Config) -> EngineOptions:
    return EngineOptions(
        roots=list(config["sessions_dirs"]),
        catalog=QuestionCatalog(config["question_tools"], config["ignore_tools"]),
        liveness=config["liveness"] == "auto",
    )


def _install_signals(stop: threading.Event) -> None:
    def handler(signum: int, frame: Any) -> None:
        stop.set()

    for sig in (signal.SIGINT, signal.SIGTERM, getattr(signal, "SIGHUP", None)):
        if sig is not None:
            try:
                signal.signal(sig, handler)
            except (ValueError, OSError):
                pass


class HistorySink:
    """Records every question (asked, resolved, how long it waited) in the store."""

    def __init__(self, store: Store) -> None:
        self.store = store

    def ready(self, info: Any, snapshot: Snapshot) -> None:
        pass

    def transitions(self, items: Sequence[Transition], snapshot: Snapshot) -> None:
        self.store.record(items)


def open_store() -> Store:
    from notifier import paths

    return Store(os.path.join(paths.state_dir(), "state.sqlite3"))


def cmd_run(args: argparse.Namespace, config: Config) -> int:
    stop = threading.Event()
    store = open_store()
    store.prune(time.time() - config["history.retention_days"] * 86400)
    sinks: list[Sink] = []
    if args.json:
        sinks.append(JsonSink(on_broken=stop.set))
    sinks.append(HistorySink(store))
    alerts = None
    if not args.no_notify and config["notifications.backend"] != "none":
        from notifier.ui.alerts import AlertSink

        alerts = AlertSink(config, store)
        alerts.start()
        sinks.append(alerts)
    engine = Engine(engine_options(config), sinks)
    _install_signals(stop)
    engine.start()
    try:
        while not stop.wait(0.5 if engine.failed is None else 0):
            if engine.failed is not None:
                sys.stderr.write(f"{APP_NAME}: the watcher stopped: {clean(engine.failed)}\n")
                return 1
    finally:
        engine.stop()
        if alerts is not None:
            alerts.stop()
        store.close()
    return 0


def _age(seconds: float) -> str:
    seconds = max(0.0, seconds)
    if seconds < 60:
        return f"{int(seconds)} s"
    if seconds < 3600:
        return f"{int(seconds // 60)} min"
    if seconds < 86400:
        return f"{seconds / 3600:.1f} h"
    return f"{int(seconds // 86400)} d"


def render_status(snapshot: Snapshot, now: float, show_all: bool) -> str:
    rows: list[tuple[str, str, str, str]] = []
    hidden = 0
    ordered = sorted(
        snapshot.sessions,
        key=lambda v: (not v.pending, not v.abandoned, -v.updated_at),
    )
    for view in ordered:
        project = project_name(view.ref.name, view.ref.cwd)
        if view.pending:
            for q in view.pending:
                opts = " / ".join(q.options[:6])
                more = f" (+{q.count - 1} more)" if q.count > 1 else ""
                text = clean(q.text, 70) + more + (f"  [{clean(opts, 60)}]" if opts else "")
                rows.append(("needs_input", project, _age(now - q.asked_at), text))
        elif view.abandoned:
            for q in view.abandoned:
                rows.append(
                    (
                        "abandoned",
                        project,
                        _age(now - q.asked_at),
                        clean(q.text, 60) + "  (pi is not running)",
                    )
                )
        elif show_all or now - view.updated_at < 86400:
            rows.append((view.state, project, "-", clean(view.current_tool or "", 40)))
        else:
            hidden += 1
    widths = [
        max([len(h)] + [len(r[i]) for r in rows])
        for i, h in enumerate(("STATE", "PROJECT", "WAITING", "QUESTION"))
    ]
    widths[1] = min(widths[1], 28)
    lines = []
    if rows:
        header = ("STATE", "PROJECT", "WAITING", "QUESTION")
        for row in (header, *rows):
            lines.append(
                f"{row[0]:<{widths[0]}}  {clean(row[1], 28):<{widths[1]}}  {row[2]:>{widths[2]}}  {row[3]}".rstrip()
            )
    n = snapshot.pending_count
    summary = f"{len(snapshot.sessions)} sessions, {n} pending question{'s' if n != 1 else ''}"
    if hidden:
        summary += f" ({hidden} sessions idle for over a day not shown; --all lists them)"
    lines.append(summary)
    return "\n".join(lines)


def cmd_status(args: argparse.Namespace, config: Config) -> int:
    snapshot = scan_once(engine_options(config))
    if args.json:
        sys.stdout.write(dumps(status_obj(snapshot)) + "\n")
    else:
        missing = [d for d in config["sessions_dirs"] if not os.path.isdir(d)]
        for d in missing:
            sys.stderr.write(f"{APP_NAME}: sessions folder {clean(d)} does not exist (yet)\n")
        sys.stdout.write(render_status(snapshot, time.time(), args.all) + "\n")
    return 0


def cmd_config(args: argparse.Namespace, config: Config) -> int:
    sys.stdout.write(render(config) + "\n")
    return 0


def cmd_doctor(args: argparse.Namespace, config: Config) -> int:
    from notifier import doctor

    return doctor.run(config)


def _not_yet(name: str) -> int:
    raise ConfigError(f"'{name}' is not available in this build yet")


def cmd_show(args: argparse.Namespace, config: Config) -> int:
    return _not_yet("show")


def cmd_history(args: argparse.Namespace, config: Config) -> int:
    return _not_yet("history")


def cmd_autostart(args: argparse.Namespace, config: Config) -> int:
    return _not_yet("autostart")


def cmd_demo(args: argparse.Namespace, config: Config) -> int:
    return _not_yet("demo")
