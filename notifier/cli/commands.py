"""The commands: wiring of engine, sinks, tray and window (the edges of the app)."""

from __future__ import annotations

import argparse
import logging
import math
import os
import sys
import time
from typing import Any

from notifier import APP_NAME
from notifier.core.model import Snapshot
from notifier.core.text import clean, duration, project_name
from notifier.engine.loop import scan_once
from notifier.sinks.jsonout import dumps, status_obj
from notifier.system.config import Config, ConfigError, render

log = logging.getLogger(__name__)


def cmd_run(args: argparse.Namespace, config: Config) -> int:
    from notifier.app.runtime import App, InstanceLock, install_signals
    from notifier.system import paths

    tray = not args.no_tray
    if tray:
        lock = InstanceLock(os.path.join(paths.runtime_dir(), "app.lock"))
        if not lock.acquire():
            return _hand_over()
    app = App(config, json_out=args.json, tray=tray, notify=not args.no_notify)
    if tray:
        app.lock = lock
        app.tray = _make_tray(config, app)
    install_signals(app.stop_event)
    try:
        app.start()
        if tray:
            app.serve()
        return app.run_loop()
    finally:
        app.shutdown()


def _make_tray(config: Config, app: Any) -> Any:
    from notifier.ui.tray import Tray, choose_backend

    backend, why = choose_backend(config["tray.backend"])
    if backend is None:
        log.info("no tray icon: %s", why)
        return None
    try:
        tray = Tray(backend, app.act, app.snapshot)
    except Exception as exc:  # pystray or its toolkit cannot start here
        log.warning("no tray icon (%s backend failed: %s); notifications only", backend, clean(exc, 200))
        return None
    log.debug("tray: %s — %s", backend, why)
    return tray


def _hand_over() -> int:
    """Another pi-notifier is the app: ask it to open its window, say what really happened, leave."""
    from notifier.system import ipc

    deadline = time.monotonic() + 5
    while time.monotonic() < deadline:
        reply = ipc.request({"cmd": "show", "focus": None, "wait": 2.0})
        if reply is not None and reply.get("ok"):  # None: not up yet; an error: try again
            sys.stderr.write(f"{APP_NAME} is already running; {_window_said(reply)}\n")
            return 0
        time.sleep(0.1)  # the other one is still starting: its channel opens in a moment
    sys.stderr.write(f"{APP_NAME} is already running (pid file lock held) but does not answer\n")
    return 0


def _window_said(reply: dict[str, Any]) -> str:
    window = reply.get("window")
    if window == "opened":
        return "its window was opened"
    if window == "raised":
        return "its window (already open) was raised"
    if window == "starting":
        return "its window is starting (not confirmed yet)"
    if window == "no-display":
        return "it runs without a display, so no window was opened"
    if window == "failed":
        return "its window could not be opened (see its log)"
    if not reply.get("ok"):
        return f"it refused to open its window ({clean(reply.get('error'), 100)})"
    return "it was asked to open its window"


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
                rows.append(("needs_input", project, duration(now - q.asked_at), text))
        elif view.abandoned:
            for q in view.abandoned:
                rows.append(
                    (
                        "abandoned",
                        project,
                        duration(now - q.asked_at),
                        clean(q.text, 60) + "  (the pi that asked has stopped)",
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
    total = len(snapshot.sessions)
    summary = f"{total} session{'s' if total != 1 else ''}, {n} pending question{'s' if n != 1 else ''}"
    if hidden:
        summary += f" ({hidden} sessions idle for over a day not shown; --all lists them)"
    lines.append(summary)
    return "\n".join(lines)


def cmd_status(args: argparse.Namespace, config: Config) -> int:
    from notifier.engine.options import engine_options
    from notifier.system import ipc
    from notifier.system.locate import add_locations

    if args.json:
        live = ipc.request(
            {
                "cmd": "status",
                "roots": config["sessions_dirs"],
                "liveness": config["liveness"],
                "question_tools": config["question_tools"],
            }
        )
        if live and live.get("ok") and isinstance(live.get("status"), dict):
            sys.stdout.write(dumps(add_locations(live["status"])) + "\n")  # the running app's own view
            return 0
    snapshot = scan_once(engine_options(config))
    if args.json:
        sys.stdout.write(dumps(add_locations(status_obj(snapshot))) + "\n")
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
    from notifier.cli import doctor

    return doctor.run(config)


def cmd_show(args: argparse.Namespace, config: Config) -> int:
    from notifier.app.runtime import LocalSource
    from notifier.system import ipc
    from notifier.ui.window import RemoteSource, Window

    focus = list(args.focus) if args.focus else None
    if not args.attach:
        reply = ipc.request({"cmd": "show", "focus": focus})
        if reply is not None and reply.get("ok"):
            if reply.get("window") in ("no-display", "failed"):
                sys.stderr.write(f"{APP_NAME}: the running app says {_window_said(reply)}\n")
                return 1
            return 0  # the running app opened (or raised) its window
    if (
        not os.environ.get("DISPLAY")
        and not os.environ.get("WAYLAND_DISPLAY")
        and sys.platform.startswith("linux")
    ):
        sys.stderr.write(f"{APP_NAME}: no display to show the window on (DISPLAY is not set)\n")
        return 1
    try:
        window = Window(RemoteSource() if args.attach else LocalSource(config), focus)
    except Exception as exc:  # Tk cannot open the display
        sys.stderr.write(f"{APP_NAME}: cannot open the window: {clean(exc, 200)}\n")
        return 1
    window.run()
    return 0


def _text(value: Any) -> str | None:
    return value if isinstance(value, str) else None


def _number(value: Any) -> float | None:
    """A stored number that JSON can say (rows of older versions may hold NaN, inf or junk)."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    try:
        number = float(value)
    except OverflowError:
        return None
    return number if math.isfinite(number) else None


def history_obj(rows: list[dict[str, Any]]) -> dict[str, Any]:
    """`history --json` (DESIGN §3). Any stored row renders: times out of range are clamped,
    numbers that are not finite are null, names that are not UTF-8 come back as they were."""
    from notifier.sinks.jsonout import iso

    questions = []
    for r in rows:
        options = [o for o in (_text(r.get("options")) or "").split("\x1f") if o]
        waited = _number(r.get("waited_s"))
        waited = waited if waited is not None and 0 <= waited < 1e10 else None
        count = r.get("count")
        questions.append(
            {
                "session": {
                    "id": _text(r.get("session_id")),
                    "file": _text(r.get("file")),
                    "cwd": _text(r.get("cwd")),
                    "name": _text(r.get("name")),
                },
                "question": {
                    "tool_call_id": _text(r.get("call_id")),
                    "tool": _text(r.get("tool")),
                    "text": _text(r.get("text")),
                    "header": _text(r.get("header")),
                    "options": options,
                    "count": count if isinstance(count, int) and not isinstance(count, bool) else None,
                },
                "asked_at": iso(r.get("asked_at")),
                "resolved_at": iso(r["resolved_at"]) if r.get("resolved_at") is not None else None,
                "outcome": _text(r.get("outcome")),
                "waited_s": round(waited, 3) if waited is not None else None,
            }
        )
    waits = sorted(q["waited_s"] for q in questions if q["waited_s"] is not None)
    median = None
    if waits:
        mid = len(waits) // 2
        median = waits[mid] if len(waits) % 2 else round((waits[mid - 1] + waits[mid]) / 2, 3)
    return {
        "questions": questions,
        "summary": {
            "count": len(questions),
            "median_wait_s": median,
            "longest_wait_s": waits[-1] if waits else None,
        },
    }


def _local_minute(stamp: str) -> str:
    """An ``iso`` time (always 2000–2200) as local "YYYY-MM-DD HH:MM"."""
    from datetime import datetime

    try:
        return datetime.fromisoformat(stamp.replace("Z", "+00:00")).astimezone().strftime("%Y-%m-%d %H:%M")
    except (ValueError, OverflowError, OSError):
        return stamp[:16].replace("T", " ")


MAX_SINCE_DAYS = 36500


def cmd_history(args: argparse.Namespace, config: Config) -> int:
    from notifier.app.runtime import open_store

    days = args.since
    if days is not None and not (math.isfinite(days) and 0 <= days <= MAX_SINCE_DAYS):
        raise ConfigError(f"command line: '--since' takes a number of days from 0 to {MAX_SINCE_DAYS}")
    store = open_store()
    try:
        since = time.time() - days * 86400 if days is not None else None
        data = history_obj(store.history(since))
    finally:
        store.close()
    if args.json:
        sys.stdout.write(dumps(data) + "\n")
        return 0
    rows = data["questions"]
    if not rows:
        sys.stdout.write("No questions recorded yet" + (f" in the last {days:g} days" if days else "") + ".\n")
        return 0
    lines = []
    for q in rows:
        project = project_name(q["session"]["name"], q["session"]["cwd"])
        waited = duration(q["waited_s"]) if q["waited_s"] is not None else "-"
        outcome = clean(q["outcome"], 11) or "pending"
        lines.append(
            f"{_local_minute(q['asked_at'])}  {clean(project, 24):<24}  {waited:>7}  {outcome:<11}  "
            f"{clean(q['question']['text'], 60)}"
        )
    summary = data["summary"]
    tail = f"{summary['count']} question{'s' if summary['count'] != 1 else ''}"
    if summary["median_wait_s"] is not None:
        tail += f" · median wait {duration(summary['median_wait_s'])} · longest {duration(summary['longest_wait_s'])}"
    sys.stdout.write(
        "\n".join(
            ["ASKED             PROJECT                    WAITED  OUTCOME      QUESTION", *lines, tail]
        )
        + "\n"
    )
    return 0


def cmd_autostart(args: argparse.Namespace, config: Config) -> int:
    from notifier.system import autostart

    action = {"install": autostart.install, "remove": autostart.remove, "status": autostart.status}[
        args.action
    ]
    try:
        sys.stdout.write(action() + "\n")
    except OSError as exc:
        sys.stderr.write(f"{APP_NAME}: autostart {args.action} failed: {clean(exc, 200)}\n")
        return 1
    return 0


def cmd_demo(args: argparse.Namespace, config: Config) -> int:
    from notifier.cli import demo

    return demo.run(config, tray=not args.no_tray)


def _fail(code: int, message: object) -> int:
    sys.stderr.write(f"{APP_NAME}: {clean(message)}\n")
    return code


def cmd_goto(args: argparse.Namespace, config: Config) -> int:
    """goto [SESSION] [--print]: 0 focused (or printed), 1 not possible (what to do instead), 2 bad usage."""
    from notifier.app import goto
    from notifier.engine.options import engine_options

    snapshot = scan_once(engine_options(config))
    try:
        target = goto.target(snapshot, args.session)
    except goto.BadSession as exc:
        return _fail(2, exc)
    except goto.Refused as exc:
        return _fail(1, exc)
    if args.print:
        sys.stdout.write(dumps(target.location.obj() if target.location else None) + "\n")
        if target.location is None:
            return _fail(1, f"no running pi has this session; resume it with: {goto.resume_hint(target.view)}")
        return 0
    try:
        done = goto.focus(target.view, target.location)
    except goto.Refused as exc:
        return _fail(1, exc)
    sys.stdout.write(clean(done) + "\n")
    return 0


def _split_answer_words(words: list[str], snapshot: Snapshot, text: bool) -> tuple[str | None, list[str]]:
    """[SESSION] CHOICE...: the first word is the session when it names one and more follow (or
    with --text, when it is the only word)."""
    from notifier.app import goto

    if not words:
        return None, []
    if text or len(words) >= 2:
        try:
            goto.pick(snapshot, words[0])
            return words[0], words[1:]
        except goto.BadSession:
            if text:
                raise
    return None, words


def cmd_answer(args: argparse.Namespace, config: Config) -> int:
    """answer [SESSION] [--call ID] CHOICE... | --text TEXT: 0 answered, 1 not delivered, 2 bad usage."""
    from notifier.app import goto
    from notifier.app.answer import answer
    from notifier.engine.options import engine_options
    from notifier.pi.keymaps import Unsupported, UsageError

    if args.timeout <= 0:
        return _fail(2, "--timeout takes a number of seconds > 0")
    options = engine_options(config)
    snapshot = scan_once(options)
    try:
        session, choices = _split_answer_words(list(args.words), snapshot, args.text is not None)
        if args.text is not None and choices:
            raise UsageError("give either CHOICE... or --text, not both")
        done = answer(options, snapshot, session, args.call, choices, args.text, args.timeout)
    except (goto.BadSession, UsageError) as exc:
        return _fail(2, exc)
    except (goto.Refused, Unsupported) as exc:
        return _fail(1, exc)
    if done.outcome not in (None, "answered"):
        return _fail(1, f"pi recorded the question as {done.outcome}: {clean(done.answer or '', 200)}")
    sys.stdout.write(f"answered: {clean(done.answer or '(recorded)', 300)}\n")
    return 0
