"""``pi-notifier status``: the sessions with a question or active in the last day (``--all``:
every session; ``--json`` always lists every session) and their pending questions, then exit
(``--json``: docs/contract.md §3). One path for the text and ``--json``: the running app's status object when
one answers, else a scan of our own → its snapshot → the same object
(:func:`notifier.core.codec.status_obj`); the text is rendered from that object. Each part is
imported when it is needed: the app's answer needs no session reader, a scan no socket client
(start-up time is most of a warm ``status``)."""

from __future__ import annotations

import os
import time
from typing import TYPE_CHECKING, Any

from notifier.cli.parser import app_status, out, say
from notifier.core.codec import parse_iso
from notifier.core.planner import quiet_hours_line, quiet_hours_obj
from notifier.core.text import clean, duration, offline_note, project_name

if TYPE_CHECKING:
    import argparse

    from notifier.config import Config
    from notifier.core.planner import Silences


def _str(value: object) -> str | None:
    return value if isinstance(value, str) else None


HEADS = ("STATE", "PROJECT", "ID", "WAITING", "QUESTION")
DAY_S = 86400


def render_status(status: dict[str, Any], now: float, show_all: bool, silences: Silences | None = None) -> str:
    """The table ``status`` prints from the status object (:func:`notifier.core.codec.status_obj`,
    the app's or our own): one row per question (or per session that asks nothing), with the
    session's short id (what SESSION takes), then a summary line and, when anything is snoozed or
    muted, one line saying so."""
    sessions = [s for s in status.get("sessions") or () if isinstance(s, dict)]
    rows: list[tuple[str, ...]] = []
    hidden = 0
    asks = ("pending", "offline", "abandoned")
    for s in sorted(sessions, key=lambda s: [not _questions(s, key) for key in asks]):
        shown = _session_rows(s, now, show_all)  # (sorted stably: newest first in each group)
        rows += shown
        hidden += not shown
    widths = [max(len(r[i]) for r in (HEADS, *rows)) for i in range(5)]
    widths[1] = min(widths[1], 28)
    lines = [
        f"{r[0]:<{widths[0]}}  {clean(r[1], 28):<{widths[1]}}  {r[2]:<{widths[2]}}"
        f"  {r[3]:>{widths[3]}}  {r[4]}".rstrip()
        for r in ((HEADS, *rows) if rows else ())
    ]
    given, total = status.get("pending"), len(sessions)
    n = given if isinstance(given, int) else 0
    lines.append(f"{total} session{'s' if total != 1 else ''}, {n} pending question{'s' if n != 1 else ''}")
    if hidden:
        lines[-1] += f" ({hidden} session{'s' if hidden != 1 else ''} idle for over a day not shown; --all lists them)"
    said = _silenced_line(silences, sessions, now) if silences is not None else ""
    return "\n".join([*lines, said] if said else lines)


def _questions(session: dict[str, Any], key: str) -> list[dict[str, Any]]:
    return [q for q in session.get(key) or () if isinstance(q, dict)]


def _session_rows(s: dict[str, Any], now: float, show_all: bool) -> list[tuple[str, ...]]:
    """The rows of one session: one per pending question, else one per question of a remote
    whose link is down, else one per abandoned question, else one saying its state (none for a
    session idle for over a day, unless ``show_all``). A remote session is named with its host,
    and its ID is what SESSION takes for it (``devbox:1d2e3a4b``)."""
    from notifier.core.commands import short_id

    host = _str(s.get("host"))
    sid = short_id(_str(s.get("id")))
    shown_id = (f"{host}:{sid}" if host and sid else sid) or "-"
    head = (project_name(_str(s.get("name")), _str(s.get("cwd")), host), shown_id)
    pending, offline, abandoned = _questions(s, "pending"), _questions(s, "offline"), _questions(s, "abandoned")
    if pending:
        return [("needs_input", *head, _waited(q, now), _asked(q)) for q in pending]
    if offline:
        said = offline_note(host, parse_iso(s.get("offline_since")))  # (" — devbox offline since 10:02")
        return [("offline", *head, _waited(q, now), _asked(q) + said) for q in offline]
    if abandoned:
        return [
            ("abandoned", *head, _waited(q, now), clean(q.get("text"), 60) + "  (the pi that asked has stopped)")
            for q in abandoned
        ]
    if show_all or now - (parse_iso(s.get("updated_at")) or 0.0) < DAY_S:
        return [(clean(s.get("state"), 20), *head, "-", clean(s.get("current_tool") or "", 40))]
    return []


def _asked(q: dict[str, Any]) -> str:
    """A pending question as its row says it: its text, how many more it asks, its options."""
    opts = " / ".join([o for o in q.get("options") or () if isinstance(o, str)][:6])
    given = q.get("count")
    count = given if isinstance(given, int) else 1
    more = f" (+{count - 1} more)" if count > 1 else ""
    return clean(q.get("text"), 70) + more + (f"  [{clean(opts, 60)}]" if opts else "")


def _waited(q: dict[str, Any], now: float) -> str:
    asked = parse_iso(q.get("asked_at"))
    return duration(now - asked) if asked is not None else "-"


def _silenced_line(silences: Silences, sessions: list[dict[str, Any]], now: float) -> str:
    """:func:`notifier.core.planner.silenced_line`, the snoozed sessions named as the status
    object names them."""
    from notifier.core.model import SessionRef, SessionView, Snapshot, remote_key
    from notifier.core.planner import silenced_line

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
    from notifier.core.planner import silenced_obj
    from notifier.store import saved_silences
    from notifier.system import paths

    now = time.time()
    silences = saved_silences(paths.state_dir(), now)
    if not args.json:
        for d in config["sessions_dirs"]:
            if not os.path.isdir(d):
                say(f"sessions folder {clean(d)} does not exist (yet)")

    def show(status: dict[str, Any], quiet: object) -> None:
        """``--json`` with where each live pi runs, the silences and the quiet hours in effect
        (:func:`notifier.core.planner.quiet_hours_obj`), else the table and the same in words."""
        now = time.time()
        if args.json:
            from notifier.core.codec import dumps
            from notifier.system.locate import add_locations

            located = add_locations(status, look=config["liveness"] == "auto")
            out(dumps({**located, **silenced_obj(silences, now), "quiet_hours": quiet}), "\n", flush=True)
        else:  # (the newline not appended to the JSON: a copy of megabytes)
            if config["liveness"] == "auto":  # (the app's: what it left unjudged, as --json says it)
                from notifier.system.locate import judge_unjudged

                judge_unjudged([s for s in status.get("sessions") or () if isinstance(s, dict)])
            out(render_status(status, now, args.all, silences), "\n", quiet_hours_line(quiet), flush=True)
        # (flushed before the scan cache is written: what was asked for comes first)

    # quiet hours in effect: the app's (it follows its config file), else our own config's
    quiet = quiet_hours_obj(config["quiet_hours"], now)["quiet_hours"]
    status = app_status(config)
    if status is not None:
        show(status, status.pop("quiet_hours", quiet))
        return 0
    from notifier.core.codec import status_obj
    from notifier.sessions import engine_options, scanned
    from notifier.system.paths import list_sockets

    options = engine_options(config)
    with scanned(options) as board:  # (the scan cache is written on leaving: after the output)
        snapshot = board.snapshot(time.time())
        if list_sockets():  # + the dialogs pi shows now (the companion loads only where one runs)
            from notifier.companion import with_open_dialogs

            snapshot = with_open_dialogs(snapshot, options)
        show(status_obj(snapshot), quiet)
    return 0


def _status_bar(config: Config, bar: bool) -> int:
    """``status --tmux`` ("π 2", or nothing) / ``status --bar`` (one JSON line for waybar,
    polybar, i3blocks): the running app's summary (one small request: fit for a 1-second
    refresh), else a scan of our own."""
    from notifier.core.codec import bar_obj, bar_summary, dumps, tmux_segment

    summary = app_status(config, brief=True)
    now = time.time()
    if summary is None:
        from notifier.core.planner import quiet_hours_note
        from notifier.sessions import engine_options, scan_once
        from notifier.store import saved_silences
        from notifier.system import paths

        until = saved_silences(paths.state_dir(), now).snooze_all_until
        quiet = quiet_hours_note(config["quiet_hours"], now)
        summary = bar_summary(scan_once(engine_options(config)), now, until or None, quiet)
    if bar:
        obj = bar_obj(summary, now)
        out(dumps({**obj, "full_text": obj["text"]}), "\n", flush=True)  # (full_text: i3blocks' name for it)
    else:
        segment = tmux_segment(summary)
        out(segment + "\n" if segment else "", flush=True)
    return 0
