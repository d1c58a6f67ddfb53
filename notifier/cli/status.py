"""``pi-notifier status``: every session and its pending questions, then exit (``--json``:
docs/contract.md §3; the running app's own view when one answers, else a scan of its own).
Each part is imported when it is needed: the app's answer needs no session reader, a scan no
socket client (start-up time is most of a warm ``status``)."""

from __future__ import annotations

import logging
import os
import sys
import time
from typing import TYPE_CHECKING, Any

from notifier import APP_NAME
from notifier.cli.parser import OutputError
from notifier.core.text import clean, duration, project_name

if TYPE_CHECKING:
    import argparse

    from notifier.core.formats import StatusRow
    from notifier.core.model import Snapshot
    from notifier.core.silenced import Silences
    from notifier.system.config import Config

log = logging.getLogger(__name__)


def render_status(snapshot: Snapshot, now: float, show_all: bool, silences: Silences | None = None) -> str:
    """The table ``status`` prints: one row per question (or per session that asks nothing),
    with the session's short id (what SESSION takes), then a summary line and, when anything is
    snoozed or muted, one line saying so."""
    from notifier.core.session_spec import short_id
    from notifier.core.silenced import silenced_line

    rows: list[tuple[str, str, str, str, str]] = []
    hidden = 0
    ordered = sorted(
        snapshot.sessions,
        key=lambda v: (not v.pending, not v.abandoned, -v.updated_at),
    )
    for view in ordered:
        project = project_name(view.ref.name, view.ref.cwd)
        sid = short_id(view.ref.id) or "-"
        if view.pending:
            for q in view.pending:
                opts = " / ".join(q.options[:6])
                more = f" (+{q.count - 1} more)" if q.count > 1 else ""
                text = clean(q.text, 70) + more + (f"  [{clean(opts, 60)}]" if opts else "")
                rows.append(("needs_input", project, sid, duration(now - q.asked_at), text))
        elif view.abandoned:
            for q in view.abandoned:
                rows.append(
                    (
                        "abandoned",
                        project,
                        sid,
                        duration(now - q.asked_at),
                        clean(q.text, 60) + "  (the pi that asked has stopped)",
                    )
                )
        elif show_all or now - view.updated_at < 86400:
            rows.append((view.state, project, sid, "-", clean(view.current_tool or "", 40)))
        else:
            hidden += 1
    heads = ("STATE", "PROJECT", "ID", "WAITING", "QUESTION")
    widths = [max([len(h)] + [len(r[i]) for r in rows]) for i, h in enumerate(heads)]
    widths[1] = min(widths[1], 28)
    lines = []
    if rows:
        for row in (heads, *rows):
            lines.append(
                f"{row[0]:<{widths[0]}}  {clean(row[1], 28):<{widths[1]}}  {row[2]:<{widths[2]}}"
                f"  {row[3]:>{widths[3]}}  {row[4]}".rstrip()
            )
    n = snapshot.pending_count
    total = len(snapshot.sessions)
    summary = f"{total} session{'s' if total != 1 else ''}, {n} pending question{'s' if n != 1 else ''}"
    if hidden:
        summary += f" ({hidden} sessions idle for over a day not shown; --all lists them)"
    lines.append(summary)
    if silences is not None:
        said = silenced_line(silences, snapshot, now)
        if said:
            lines.append(said)
    return "\n".join(lines)


def cmd_status(args: argparse.Namespace, config: Config) -> int:
    if args.tmux or args.bar:
        return _status_bar(config, args.bar)
    from notifier.core.silenced import silenced_obj
    from notifier.system import paths
    from notifier.system.saved_choices import saved_silences

    prefs = saved_silences(paths.state_dir(), time.time())
    if args.json:
        from notifier.system import ipc

        live = ipc.request(
            {
                "cmd": "status",
                "roots": config["sessions_dirs"],
                "liveness": config["liveness"],
                "question_tools": config["question_tools"],
            }
        )
        if live and live.get("ok") and isinstance(live.get("status"), dict):
            _print_json(live["status"], silenced_obj(prefs, time.time()), config["liveness"] == "auto")
            return 0
    import gc

    # A one-shot scan builds a few objects per session file (thousands), keeps them all to the
    # end and makes no reference cycles: the cycle collector would only walk them again and again
    # as they pile up (a fifth of a warm run over 5,000 files), and once more at exit.
    gc.disable()
    from notifier.app.dialogs import with_open_dialogs
    from notifier.companion.sockets import list_sockets
    from notifier.core.formats import row_of_view
    from notifier.engine.options import engine_options
    from notifier.engine.scan import scanned

    options = engine_options(config)
    with scanned(options) as board:  # (the scan cache is written on leaving: after the output)
        # No pi with the companion extension loaded (no dialog to add): the board's own rows.
        rows = board.status_rows() if args.json and not list_sockets() else None
        if rows is not None:
            _print_rows_json(*rows, silenced_obj(prefs, time.time()))
        else:
            snapshot = with_open_dialogs(board.snapshot(time.time()), options)  # + the dialogs pi shows now
            if args.json:
                rows_of = [row_of_view(v) for v in snapshot.sessions]
                _print_rows_json(rows_of, snapshot.pending_count, silenced_obj(prefs, time.time()))
            else:
                missing = [d for d in config["sessions_dirs"] if not os.path.isdir(d)]
                for d in missing:
                    sys.stderr.write(f"{APP_NAME}: sessions folder {clean(d)} does not exist (yet)\n")
                _out(render_status(snapshot, time.time(), args.all, prefs) + "\n")
        _out(None)  # (flushed before the scan cache is written: what was asked for comes first)
    gc.freeze()  # (the process ends now: what it built is left out of the collection at exit)
    gc.enable()
    return 0


def _status_bar(config: Config, as_json: bool) -> int:
    """``status --tmux`` ("π 2", or nothing) / ``status --bar`` (one JSON line for waybar,
    polybar, i3blocks): the running app's summary (one small request: fit for a 1-second
    refresh), else a scan of our own."""
    from notifier.core.bar import bar_obj, summary, tmux_segment
    from notifier.system import ipc

    live = ipc.request(
        {
            "cmd": "status",
            "roots": config["sessions_dirs"],
            "liveness": config["liveness"],
            "question_tools": config["question_tools"],
            "brief": True,
        },
        timeout=0.8,
    )
    now = time.time()
    if live and live.get("ok") and isinstance(live.get("summary"), dict):
        brief = live["summary"]
    else:
        import dataclasses

        from notifier.engine.options import engine_options
        from notifier.engine.scan import scan_once
        from notifier.system import paths
        from notifier.system.saved_choices import saved_silences

        snapshot = scan_once(engine_options(config))
        until = saved_silences(paths.state_dir(), now).all_until
        brief = summary(dataclasses.replace(snapshot, snoozed_until=until or None), now)
    if as_json:
        from notifier.sinks.jsonout import dumps

        obj = bar_obj(brief, now)
        _out(dumps({**obj, "full_text": obj["text"]}) + "\n")  # (full_text: i3blocks' name for it)
    else:
        segment = tmux_segment(brief)
        _out(segment + "\n" if segment else "")
    _out(None)
    return 0


def _print_json(status: dict[str, Any], extra: dict[str, Any], liveness: bool) -> None:
    """The app's ``status`` as one JSON object, with where each live pi runs and ``extra``. The app
    judges liveness only where a question waits: ``alive`` is filled in here for the others
    from the same process list (as a scan of our own says it: a pi runs in the session's folder)."""
    from notifier.sinks.jsonout import dumps
    from notifier.system.locate import add_locations, in_folders, pi_folders

    sessions = [s for s in status.get("sessions") or () if isinstance(s, dict)]
    unknown = [s for s in sessions if s.get("alive") is None and s.get("host") is None] if liveness else []
    listed = None
    try:
        listed = pi_folders(bool(unknown) or any(s.get("alive") is not False and s.get("cwd") for s in sessions))
    except Exception as exc:  # as in add_locations: status still works
        log.debug("cannot list pi processes: %s", clean(exc, 200))
    if listed is not None and listed[0] is not None:
        for s in unknown:
            s["alive"] = in_folders(s.get("cwd"), listed[1])
    _out(dumps({**add_locations(status, listed), **extra}) + "\n")
    _out(None)


def _print_rows_json(rows: list[StatusRow], pending: int, extra: dict[str, Any]) -> None:
    """:func:`_print_json` of the status object of ``rows`` (``pending`` questions), the same text
    written at once (thousands of sessions): only the sessions in a folder where a pi runs are
    built as objects, to be located. (A one-shot scan's sessions are this machine's, one per
    file, so each is located by its own file, as add_locations locates by file.)"""
    from notifier.core.formats import newest_rows_first, session_status_obj, status_text, view_of_row
    from notifier.system.locate import add_locations, in_folders, pi_folders

    rows = newest_rows_first(rows)
    whole: dict[int, dict[str, Any]] = {}
    try:
        listed = pi_folders(any(row[7] is not False and row[4] for row in rows))  # (alive, cwd)
    except Exception as exc:  # locating is a bonus (as in add_locations): status still works
        log.debug("cannot locate sessions: %s", clean(exc, 200))
    else:
        whole = {
            i: session_status_obj(view_of_row(row)) for i, row in enumerate(rows) if in_folders(row[4], listed[1])
        }
        if whole:
            add_locations({"sessions": list(whole.values())}, listed)
    _out(status_text(rows, pending, whole, extra))
    _out("\n")  # (not appended: a copy of megabytes)


def _out(text: str | None) -> None:
    """``text`` to standard output (None: flush it). An output that cannot be written is
    :class:`OutputError`, one line; a reader that went away stays a BrokenPipeError (see main)."""
    try:
        if text is None:
            sys.stdout.flush()
        else:
            sys.stdout.write(text)
    except BrokenPipeError:
        raise
    except AttributeError:  # (started with its output closed)
        raise OutputError("there is no standard output") from None
    except OSError as exc:
        raise OutputError(exc.strerror or str(exc)) from None
