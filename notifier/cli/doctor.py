"""``pi-notifier doctor``: what works on this machine, one line per check; exit code 1 when a check
failed (a ``[FAIL]`` line), else 0."""

from __future__ import annotations

import argparse
import os
import sys
from typing import Any

from notifier import APP_NAME
from notifier.core.text import clean
from notifier.system.config import Config
from notifier.watch.scanner import walk


def _line(ok: bool | None, label: str, detail: str) -> str:
    mark = {True: "ok  ", False: "FAIL", None: "note"}[ok]
    return f"[{mark}] {label}: {detail}"


def cmd_doctor(args: argparse.Namespace, config: Config) -> int:
    return run(config)


def run(config: Config) -> int:
    out: list[str] = []
    for root in config["sessions_dirs"]:
        if os.path.isdir(root):
            files, dirs = walk(root)
            out.append(
                _line(
                    True,
                    "sessions folder",
                    f"{clean(root)} ({len(files)} session files in {len(dirs)} folders)",
                )
            )
            out.append(_watch_limit(len(dirs)))
        else:
            out.append(
                _line(
                    None,
                    "sessions folder",
                    f"{clean(root)} does not exist yet; it will be watched once it does",
                )
            )
    out.append(_liveness(config))
    out.append(_window())
    for extra in _extras(config):
        out.append(extra)
    out.append(_companion())
    out += _remotes(config)
    out += _health()
    sys.stdout.write("\n".join(out) + "\n")
    return 1 if any(line.startswith("[FAIL]") for line in out) else 0  # documented in the README


def _watch_limit(dirs: int) -> str:
    try:
        with open("/proc/sys/fs/inotify/max_user_watches") as fh:
            limit = int(fh.read().strip())
    except (OSError, ValueError):
        return _line(None, "file watcher", "native file events (no inotify limit to check here)")
    ok = dirs < limit // 2
    return _line(ok, "inotify", f"{dirs} folders to watch, limit {limit} watches per user")


def _window() -> str:
    try:
        import tkinter  # noqa: F401
    except ImportError:
        return _line(
            False,
            "window",
            "Tk is not available (Debian/Ubuntu: install python3-tk); the tray and notifications still work",
        )
    return _line(True, "window", "Tk is available")


def _liveness(config: Config) -> str:
    if config["liveness"] != "auto":
        return _line(None, "liveness", "off: questions of pi processes that died stay pending")
    from notifier.system.processes import running_pi

    procs = running_pi()
    if procs is None:
        return _line(False, "liveness", "cannot read the process list")
    cwds = sorted({p.cwd for p in procs})
    return _line(True, "liveness", f"{len(cwds)} running pi process folder(s) visible")


def _extras(config: Config) -> list[str]:
    """The notifications line and the tray line. With no tray icon either, the notifications
    line says what is left instead of "the tray icon alone will show questions"."""
    lines: list[str] = []
    tray_backend: str | None = "unknown"
    try:
        from notifier.ui import tray

        tray_backend = tray.choose_backend(config["tray.backend"])[0]
        tray_line = tray.doctor_line(config)
    except ImportError:
        tray_line = None
    try:
        from notifier.sinks import notify as alerts
        from notifier.sinks.notify.choose import TRAY_ALONE

        line = alerts.doctor_line(config)
        if tray_backend is None:
            shown = os.environ.get("DISPLAY") or os.environ.get("WAYLAND_DISPLAY")
            instead = f"{NO_TRAY_EITHER}{', the window' if shown else ''} and a status bar (status --tmux / --bar) show questions"
            line = line.replace(TRAY_ALONE, instead).replace("the tray icon shows questions", instead)
        lines.append(line)
    except ImportError:
        pass
    if tray_line is not None:
        lines.append(tray_line)
    return lines


NO_TRAY_EITHER = "with no tray icon either, pi-notifier status, run --json"


def _companion() -> str:
    """The optional companion pi extension, as ``pi-extension status`` sees it: installed (and
    this version's copy), and how many running pi processes have it loaded. Never a FAIL: pi and
    pi-notifier work without it (dialogs such as permission gates are then not shown)."""
    from notifier.cli import pi_extension

    st = pi_extension.status()
    if not st.installed:
        state = f"not installed (optional; install: {APP_NAME} pi-extension install)"
    elif st.current:
        state = f"installed and current ({clean(st.path)})"
    else:
        state = f"installed but not this version's copy (update: {APP_NAME} pi-extension install)"
    loaded = f"loaded by {len(st.loaded)} running pi process(es)"
    if st.unreachable:
        loaded += f", {len(st.unreachable)} socket(s) not answering"
    ok = True if st.installed and st.current else None
    return _line(ok, "companion extension", f"{state}; {loaded}")


def _remotes(config: Config) -> list[str]:
    """Each remote (reached through its own ssh, with a timeout, in parallel) and push URL."""
    from concurrent.futures import ThreadPoolExecutor

    from notifier.app import remotes

    lines = []
    configured = remotes.configured(config)
    with ThreadPoolExecutor(max_workers=max(1, min(8, len(configured)))) as pool:
        results = list(pool.map(remotes.check_remote, configured))
    for remote, (ok, detail) in zip(configured, results, strict=True):
        lines.append(_line(ok, f"remote {clean(remote.name, 64)}", detail if not ok else f"reachable, {detail}"))
    for n, url in enumerate(config["push.urls"], 1):
        scheme = clean(url.split("://", 1)[0], 20)  # the rest may hold a token: not shown
        ok = remotes.check_push_url(url)
        lines.append(_line(ok, f"push URL {n} ({scheme}://…)", "ok" if ok else "apprise cannot use this URL"))
    if config["push.urls"] and config["push.when"] == "away":
        from notifier.sinks.push import desktop_away

        away = desktop_away()
        lines.append(
            _line(None, "push when away", "cannot tell whether the desktop is idle or locked: pushes treat you as"
                  " present (logind and the screensaver did not answer)")
            if away is None
            else _line(True, "push when away", "the desktop is idle or locked now" if away else "you are at the desktop now")
        )
    return lines


def _health() -> list[str]:
    """The running app's own account of what failed and was recovered from (control channel)."""
    from notifier.system import ipc

    reply = ipc.request({"cmd": "health"})
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
