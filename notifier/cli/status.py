"""``pi-notifier status``: every session and its pending questions, then exit (``--json``:
docs/contract.md §3). One path for the text and ``--json``: the running app's status object when
one answers, else a scan of our own → its snapshot → the same object
(:func:`notifier.core.formats.status_obj`); the text is rendered from that object. Each part is
imported when it is needed: the app's answer needs no session reader, a scan no socket client
(start-up time is most of a warm ``status``)."""

from __future__ import annotations

import logging
import os
import sys
import time
from datetime import datetime
from typing import TYPE_CHECKING, Any

from notifier import APP_NAME
from notifier.cli.parser import OutputError
from notifier.core.quiet import quiet_hours_line, quiet_hours_obj
from notifier.core.text import clean, duration, project_name

if TYPE_CHECKING:
    import argparse

    from notifier.config.load import Config
    from notifier.core.silenced import Silences

log = logging.getLogger(__name__)


def _seconds(stamp: object) -> float | None:
    """An ISO-8601 time of the status object as seconds since the epoch (None: none or odd)."""
    if not isinstance(stamp, str):
        return None
    try:
        return datetime.fromisoformat(stamp.replace("Z", "+00:00")).timestamp()
    except ValueError:
        return None


def _questions(session: dict[str, Any], key: str) -> list[dict[str, Any]]:
    return [q for q in session.get(key) or () if isinstance(q, dict)]


def _str(value: object) -> str | None:
    return value if isinstance(value, str) else None


def render_status(status: dict[str, Any], now: float, show_all: bool, silences: Silences | None = None) -> str:
    """The table ``status`` prints from the status object (:func:`notifier.core.formats.status_obj`,
    the app's or our own): one row per question (or per session that asks nothing), with the
    session's short id (what SESSION takes), then a summary line and, when anything is snoozed or
    muted, one line saying so."""
    from notifier.core.session_spec import short_id

    sessions = [s for s in status.get("sessions") or () if isinstance(s, dict)]
    rows: list[tuple[str, str, str, str, str]] = []
    hidden = 0

    def waited(q: dict[str, Any]) -> str:
        asked = _seconds(q.get("asked_at"))
        return duration(now - asked) if asked is not None else "-"

    ordered = sorted(  # (stable: newest first within each group, as the object lists them)
        sessions, key=lambda s: (not _questions(s, "pending"), not _questions(s, "abandoned"))
    )
    for s in ordered:
        project = project_name(_str(s.get("name")), _str(s.get("cwd")))
        sid = short_id(_str(s.get("id"))) or "-"
        pending, abandoned = _questions(s, "pending"), _questions(s, "abandoned")
        if pending:
            for q in pending:
                labels = [o for o in q.get("options") or () if isinstance(o, str)]
                opts = " / ".join(labels[:6])
                given = q.get("count")
                count = given if isinstance(given, int) else 1
                more = f" (+{count - 1} more)" if count > 1 else ""
                text = clean(q.get("text"), 70) + more + (f"  [{clean(opts, 60)}]" if opts else "")
                rows.append(("needs_input", project, sid, waited(q), text))
        elif abandoned:
            for q in abandoned:
                text = clean(q.get("text"), 60) + "  (the pi that asked has stopped)"
                rows.append(("abandoned", project, sid, waited(q), text))
        elif show_all or now - (_seconds(s.get("updated_at")) or 0.0) < 86400:
            rows.append((clean(s.get("state"), 20), project, sid, "-", clean(s.get("current_tool") or "", 40)))
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
    pending_n = status.get("pending")
    n = pending_n if isinstance(pending_n, int) else 0
    total = len(sessions)
    summary = f"{total} session{'s' if total != 1 else ''}, {n} pending question{'s' if n != 1 else ''}"
    if hidden:
        summary += f" ({hidden} sessions idle for over a day not shown; --all lists them)"
    lines.append(summary)
    if silences is not None:
        said = _silenced_line(silences, sessions, now)
        if said:
            lines.append(said)
    return "\n".join(lines)


def _silenced_line(silences: Silences, sessions: list[dict[str, Any]], now: float) -> str:
    """:func:`notifier.core.silenced.silenced_line`, the snoozed sessions named as the status
    object names them."""
    from notifier.core.model import SessionRef, SessionView, Snapshot, remote_key
    from notifier.core.silenced import silenced_line

    snoozed = silences.running(now).sessions
    named = []
    for s in sessions:
        file, host = _str(s.get("file")), _str(s.get("host"))
        key = remote_key(host, file) if host and file else file
        if key is not None and key in snoozed:
            ref = SessionRef(key, _str(s.get("id")), _str(s.get("cwd")), _str(s.get("name")), host)
            named.append(SessionView(ref, "idle", (), (), None, 0.0))
    return silenced_line(silences, Snapshot(tuple(named), now), now)


def cmd_status(args: argparse.Namespace, config: Config) -> int:
    if args.tmux or args.bar:
        return _status_bar(config, args.bar)
    from notifier import control as control_client
    from notifier.state.saved_choices import saved_silences
    from notifier.system import paths

    prefs = saved_silences(paths.state_dir(), time.time())
    liveness = config["liveness"] == "auto"
    live = control_client.request(
        {
            "cmd": "status",
            "roots": config["sessions_dirs"],
            "liveness": config["liveness"],
            "question_tools": config["question_tools"],
        }
    )
    if not args.json:
        for d in config["sessions_dirs"]:
            if not os.path.isdir(d):
                sys.stderr.write(f"{APP_NAME}: sessions folder {clean(d)} does not exist (yet)\n")
    # quiet hours in effect: the app's (it follows its config file), else our own config's
    quiet = quiet_hours_obj(config["quiet_hours"], time.time())["quiet_hours"]
    if live and live.get("ok") and isinstance(live.get("status"), dict):
        status = live["status"]
        _print(status, args, prefs, liveness, status.pop("quiet_hours", quiet))
        return 0
    from notifier.companion import with_open_dialogs
    from notifier.core.formats import status_obj
    from notifier.engine.options import engine_options
    from notifier.engine.scan import scanned

    options = engine_options(config)
    with scanned(options) as board:  # (the scan cache is written on leaving: after the output)
        snapshot = with_open_dialogs(board.snapshot(time.time()), options)  # + the dialogs pi shows now
        _print(status_obj(snapshot), args, prefs, liveness, quiet)
    return 0


def _print(status: dict[str, Any], args: argparse.Namespace, prefs: Silences, liveness: bool, quiet: object) -> None:
    """The status object as ``status`` prints it: ``--json`` with where each live pi runs, the
    silences and ``quiet`` (the quiet hours in effect: :func:`notifier.core.quiet.quiet_hours_obj`),
    else the table and the same three said in words."""
    from notifier.core.silenced import silenced_obj

    now = time.time()
    if args.json:
        from notifier.core.formats import dumps

        _out(dumps({**_located(status, liveness), **silenced_obj(prefs, now), "quiet_hours": quiet}))
        _out("\n")  # (not appended: a copy of megabytes)
    else:
        _out(render_status(status, now, args.all, prefs) + "\n" + quiet_hours_line(quiet))
    _out(None)  # (flushed before the scan cache is written: what was asked for comes first)


def _status_bar(config: Config, as_json: bool) -> int:
    """``status --tmux`` ("π 2", or nothing) / ``status --bar`` (one JSON line for waybar,
    polybar, i3blocks): the running app's summary (one small request: fit for a 1-second
    refresh), else a scan of our own."""
    from notifier import control as control_client
    from notifier.core.bar import bar_obj, summary, tmux_segment

    live = control_client.request(
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
        from notifier.engine.options import engine_options
        from notifier.engine.scan import scan_once
        from notifier.state.saved_choices import saved_silences
        from notifier.system import paths

        snapshot = scan_once(engine_options(config))
        until = saved_silences(paths.state_dir(), now).all_until
        from notifier.core.quiet import quiet_hours_note

        brief = summary(snapshot, now, until or None, quiet_hours_note(config["quiet_hours"], now))
    if as_json:
        from notifier.core.formats import dumps

        obj = bar_obj(brief, now)
        _out(dumps({**obj, "full_text": obj["text"]}) + "\n")  # (full_text: i3blocks' name for it)
    else:
        segment = tmux_segment(brief)
        _out(segment + "\n" if segment else "")
    _out(None)
    return 0


def _located(status: dict[str, Any], liveness: bool) -> dict[str, Any]:
    """``status`` with where each live pi runs (``location``). With liveness off no process is
    looked at (every location null: "do not look at processes"); else processes are listed only
    when some session could have a live pi. The app judges liveness only where a question waits:
    ``alive`` is filled in here for the others from the same process list (as a scan of our own
    says it: a pi runs in the session's folder)."""
    sessions = [s for s in status.get("sessions") or () if isinstance(s, dict)]
    if not liveness:
        for s in sessions:
            s["location"] = None
        return status
    from notifier.system.status_locations import add_locations, in_folders, may_match, pi_folders

    unknown = [s for s in sessions if s.get("alive") is None and s.get("host") is None]
    listed = None
    try:
        listed = pi_folders(bool(unknown) or any(may_match(s) for s in sessions))
    except Exception as exc:  # as in add_locations: status still works
        log.debug("cannot list pi processes: %s", clean(exc, 200))
    if listed is not None and listed[0] is not None:
        for s in unknown:
            s["alive"] = in_folders(s.get("cwd"), listed[1])
    return add_locations(status, listed)


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
