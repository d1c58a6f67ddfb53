"""``pi-notifier doctor``: what works on this machine, one line per check; exit code 1 when a check
failed (a ``[FAIL]`` line), else 0. The checks of pi's extensions: :mod:`.doctor_extensions`."""

from __future__ import annotations

import argparse
import os
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import apprise

from notifier.actions import over_ssh
from notifier.app.window_process import window_display
from notifier.cli import doctor_extensions
from notifier.compat.watchdog import events_lost
from notifier.config.load import Config
from notifier.control import request
from notifier.core.quiet import quiet_hours_note
from notifier.core.text import clean
from notifier.sessions.scanner import walk
from notifier.sinks.push import desktop_away
from notifier.system.desktop import describe, focus_method, has_display
from notifier.system.processes import running_pi


def _line(ok: bool | None, label: str, detail: str) -> str:
    mark = {True: "ok  ", False: "FAIL", None: "note"}[ok]
    return f"[{mark}] {label}: {detail}"


def cmd_doctor(args: argparse.Namespace, config: Config) -> int:
    out: list[str] = []
    for root in config["sessions_dirs"]:
        if os.path.isdir(root):
            files, dirs = walk(root)
            out.append(
                _line(True, "sessions folder", f"{clean(root)} ({len(files)} session files in {len(dirs)} folders)")
            )
            out.append(_watch_limit(len(dirs)))
        else:
            out.append(
                _line(None, "sessions folder", f"{clean(root)} does not exist yet; it will be watched once it does")
            )
    out += [_liveness(config), *_quiet_hours(config), _window(), _focus(), *_extras(config)]
    for label, (ok, detail) in (
        ("companion extension", doctor_extensions.companion()),
        ("extension dialogs", doctor_extensions.unseen_dialogs(config)),
    ):
        out.append(_line(ok, label, detail))
    out += [*_remotes(config), *_health()]
    sys.stdout.write("\n".join(out) + "\n")
    return 1 if any(line.startswith("[FAIL]") for line in out) else 0  # documented in the README


def _watch_limit(dirs: int) -> str:
    try:
        with open("/proc/sys/fs/inotify/max_user_watches") as fh:
            limit = int(fh.read().strip())
    except (OSError, ValueError):
        return _line(None, "file watcher", "native file events (no inotify limit to check here)")
    ok = dirs < limit // 2
    detail = f"{dirs} folders to watch, limit {limit} watches per user"
    if events_lost() is None:  # (watchdog before 7.1.1: a queue overflow goes unseen)
        return _line(None, "inotify", detail + "; this watchdog cannot report lost events (7.1.1 on Python 3.11+ can)")
    return _line(ok, "inotify", detail)


def _quiet_hours(config: Config) -> list[str]:
    """Quiet hours, when set: whether they are in effect now."""
    hours = config["quiet_hours"]
    if not hours:
        return []
    now = quiet_hours_note(hours, time.time())
    return [_line(True, "quiet hours", f"{clean(hours, 20)}: " + (f"in effect now ({now})" if now else "not now"))]


def _window() -> str:
    try:
        import tkinter  # (here: Tk is optional, its absence is a line)
    except ImportError:
        return _line(
            False,
            "window",
            "Tk is not available (Debian/Ubuntu: install python3-tk); the tray and notifications still work",
        )

    extra, said = window_display()
    if extra is None:
        # a machine without any display is not a fault; a Wayland desktop without XWayland is
        return _line(False if os.environ.get("WAYLAND_DISPLAY") else None, "window", said)
    if not sys.platform.startswith("linux"):
        return _line(True, "window", "Tk is available")
    try:  # opened for real, on the display the window would use, and closed
        root = tkinter.Tk(screenName=extra.get("DISPLAY") or os.environ.get("DISPLAY"), className="pi-notifier")
        root.destroy()
    except tkinter.TclError as exc:
        return _line(False, "window", f"Tk cannot open {said}: {clean(exc, 160)}")
    return _line(True, "window", f"Tk opened a window on {said}")


def _focus() -> str:
    """The focus method goto and skip_when_focused use here, OK only when it answered."""
    ok, detail = describe(focus_method())
    return _line(ok, "focus", detail)


def _liveness(config: Config) -> str:
    if config["liveness"] != "auto":
        return _line(None, "liveness", "off: questions of pi processes that died stay pending")

    procs = running_pi()
    if procs is None:
        return _line(False, "liveness", "cannot read the process list")
    cwds = sorted({p.cwd for p in procs})
    return _line(True, "liveness", f"{len(cwds)} running pi process folder(s) visible")


def _extras(config: Config) -> list[str]:
    """The notifications line and the tray line. With no tray icon either, the notifications
    line says what is left instead of "the tray icon alone will show questions"."""
    lines: list[str] = []
    try:
        from notifier.app import tray_choice  # (here: as the next, a missing UI library is a line)

        tray_line: str | None = tray_choice.doctor_line(config)
    except ImportError:
        tray_line = None
    # no icon on screen now: no tray at all, or none of the hosts its backend shows in
    no_tray = tray_line is not None and ("] tray: none" in tray_line or "; tray host: none" in tray_line)
    try:
        from notifier.sinks.notify.choose import TRAY_ALONE, doctor_line

        line = doctor_line(config)
        if no_tray:
            window = ", the window" if has_display() else ""
            instead = f"{NO_TRAY_EITHER}{window} and a status bar (status --tmux / --bar) show questions"
            line = line.replace(TRAY_ALONE, instead).replace("the tray icon shows questions", instead)
        lines.append(line)
    except ImportError:
        pass
    if tray_line is not None:
        lines.append(tray_line)
    return lines


NO_TRAY_EITHER = "with no tray icon either, pi-notifier status, run --json"


def _remotes(config: Config) -> list[str]:
    """Each remote (reached through its own ssh, with a timeout, in parallel) and push URL."""
    lines = []
    configured = over_ssh.configured(config)
    with ThreadPoolExecutor(max_workers=max(1, min(8, len(configured)))) as pool:
        results = list(pool.map(over_ssh.check_remote, configured))
    for remote, (ok, detail) in zip(configured, results, strict=True):
        lines.append(_line(ok, f"remote {clean(remote.name, 64)}", detail if not ok else f"reachable, {detail}"))
    for n, url in enumerate(config["push.urls"], 1):
        scheme = clean(url.split("://", 1)[0], 20)  # the rest may hold a token: not shown
        ok = _push_url_usable(url)
        lines.append(_line(ok, f"push URL {n} ({scheme}://…)", "ok" if ok else "apprise cannot use this URL"))
    if config["push.urls"] and config["push.when"] == "away":
        away = desktop_away()
        lines.append(
            _line(None, "push when away", "cannot tell whether the desktop is idle or locked: pushes treat you as"
                  " present (logind and the screensaver did not answer)")
            if away is None
            else _line(True, "push when away",
                       "the desktop is idle or locked now" if away else "you are at the desktop now")
        )
    return lines


def _push_url_usable(url: str) -> bool:
    return bool(apprise.Apprise().add(url))


def _health() -> list[str]:
    """The running app's own account of what failed and was recovered from (control channel)."""
    reply = request({"cmd": "health"})
    if reply is None:
        return [_line(None, "running app", "none is running (start it with 'pi-notifier run')")]
    if not reply.get("ok"):
        return [_line(None, "running app", "it answers but cannot report its health (an older version?)")]
    pid = reply.get("pid")
    said = reply.get("problems")
    problems: dict[str, Any] = said if isinstance(said, dict) else {}
    extra = []
    if not reply.get("ready"):
        extra.append("still starting")
    if reply.get("display") is False:
        extra.append("no display (no window can open)")
    if reply.get("store") == "in memory":
        extra.append("state store in memory only")
    lines = []
    for part, p in sorted(problems.items()):
        if not isinstance(p, dict):
            continue
        count = p.get("count", 1)
        state = "recovered" if p.get("recovered") else "recovering"
        lines.append(
            _line(
                False,
                f"running app: {clean(part, 40)}",
                f"failed {count}× (last: {clean(p.get('error'), 160)}); {state}, {clean(p.get('doing'), 80)}",
            )
        )
    restarts = reply.get("engine_restarts") or 0
    summary = f"pid {pid}, " + (f"engine restarted {restarts}×" if restarts else "no failures" if not lines else "")
    summary = summary.rstrip(", ")
    if extra:
        summary += "; " + ", ".join(extra)
    return [_line(not lines, "running app", summary), *lines]
