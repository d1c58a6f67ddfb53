"""``pi-notifier doctor``: what works on this machine, one line per check; exit code 1 when a check
failed (a ``[FAIL]`` line), else 0. Among them, the checks of pi's extensions: the companion
extension (installed, current, loaded), and the running pis that load extensions whose dialogs
leave nothing in the session file (only the companion shows those); each such check is ``(ok,
detail)``, ok None a note."""

from __future__ import annotations

import argparse
import os
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import apprise
import psutil

from notifier import APP_NAME
from notifier.actions import goto
from notifier.app import window_display
from notifier.cli import install
from notifier.cli.parser import out
from notifier.compat import events_lost
from notifier.config import Config
from notifier.control import request
from notifier.core.planner import quiet_hours_note
from notifier.core.text import clean
from notifier.outputs import backends, tray
from notifier.outputs.push import desktop_away
from notifier.pi.parse import QuestionCatalog, dialog_kinds, extension_args, listed_extensions
from notifier.system import paths
from notifier.system.processes import pi_processes, running_pi
from notifier.system.tmux import tmux, tmux_pane_of
from notifier.system.window_manager import describe, focus_method, has_display
from notifier.tail import walk_tree


def _line(ok: bool | None, label: str, detail: str) -> str:
    mark = {True: "ok  ", False: "FAIL", None: "note"}[ok]
    return f"[{mark}] {label}: {detail}"


def cmd_doctor(args: argparse.Namespace, config: Config) -> int:
    lines: list[str] = []
    for root in config["sessions_dirs"]:
        if not os.path.isdir(root):
            said = f"{clean(root)} does not exist yet; it will be watched once it does"
            lines.append(_line(None, "sessions folder", said))
            continue
        tree = walk_tree(root)
        said = f"{clean(root)} ({len(tree.files)} session files in {len(tree.dirs)} folders)"
        lines += [_line(True, "sessions folder", said), _watch_limit(len(tree.dirs))]
        unread = [*tree.unlisted, *tree.unread]
        if unread:  # (their sessions are not seen: say which, and why)
            (path, exc), more = unread[0], f" and {len(unread) - 1} more" if len(unread) > 1 else ""
            why = clean(exc.strerror or exc, 80)
            said = f"cannot read {clean(path)} ({why}){more}: its sessions are not seen"
            lines.append(_line(False, "sessions folder", said))
    lines.append(_liveness(config))
    hours = config["quiet_hours"]
    if hours:
        now = quiet_hours_note(hours, time.time())
        said = f"in effect now ({now})" if now else "not now"
        lines.append(_line(True, "quiet hours", f"{clean(hours, 20)}: {said}"))
    focus_ok, focus = describe(focus_method())  # (the focus method goto and skip_when_focused use)
    lines += [_window(), _line(focus_ok, "focus", focus)]
    extension = install.status()  # (asks each running pi's companion socket: once)
    lines += [*_extras(config), companion(extension), unseen_dialogs(config, extension)]
    lines += [*where_pis_write(config, extension), *_remotes(config)]
    lines += _health(config)
    out("\n".join(lines), "\n")
    return 1 if any(line.startswith("[FAIL]") for line in lines) else 0  # documented in the README


def _watch_limit(dirs: int) -> str:
    try:
        with open("/proc/sys/fs/inotify/max_user_watches") as fh:
            limit = int(fh.read().strip())
    except (OSError, ValueError):
        return _line(None, "file watcher", "native file events (no inotify limit to check here)")
    detail = f"{dirs} folders to watch, limit {limit} watches per user"
    if events_lost() is None:  # (watchdog before 7.1.1: a queue overflow goes unseen)
        return _line(None, "inotify", detail + "; this watchdog cannot report lost events (7.1.1 on Python 3.11+ can)")
    return _line(dirs < limit // 2, "inotify", detail)


def _window() -> str:
    try:
        import tkinter  # (here: Tk is optional, its absence is a line)
    except ImportError:
        why = "Tk is not available (Debian/Ubuntu: install python3-tk); the tray and notifications still work"
        return _line(False, "window", why)
    extra, said = window_display()
    if extra is None:
        # a machine without any display is not a fault; a Wayland desktop without XWayland is
        return _line(False if os.environ.get("WAYLAND_DISPLAY") else None, "window", said)
    if not sys.platform.startswith("linux"):
        return _line(True, "window", "Tk is available")
    try:  # opened for real, on the display the window would use, and closed
        tkinter.Tk(screenName=extra.get("DISPLAY") or os.environ.get("DISPLAY"), className="pi-notifier").destroy()
    except tkinter.TclError as exc:
        return _line(False, "window", f"Tk cannot open {said}: {clean(exc, 160)}")
    return _line(True, "window", f"Tk opened a window on {said}")


def _liveness(config: Config) -> str:
    if config["liveness"] != "auto":
        return _line(None, "liveness", "off: questions of pi processes that died stay pending")
    procs = running_pi()
    if procs is None:
        return _line(False, "liveness", "cannot read the process list")
    return _line(True, "liveness", f"{len({p.cwd for p in procs})} running pi process folder(s) visible")


NO_TRAY_EITHER = "with no tray icon either, pi-notifier status, run --json"


def _extras(config: Config) -> list[str]:
    """The notifications line and the tray line. With no tray icon either, the notifications
    line says what is left instead of "the tray icon alone will show questions"."""
    tray_line = tray.doctor_line(config)
    line = backends.doctor_line(config)
    # no icon on screen now: no tray at all, or none of the hosts its backend shows in
    if "] tray: none" in tray_line or "; tray host: none" in tray_line:
        window = ", the window" if has_display() else ""
        instead = f"{NO_TRAY_EITHER}{window} and a status bar (status --tmux / --bar) show questions"
        line = line.replace(backends.TRAY_ALONE, instead).replace("the tray icon shows questions", instead)
    return [line, tray_line]


def _remotes(config: Config) -> list[str]:
    """Each remote (reached through its own ssh, with a timeout, in parallel) and push URL."""
    configured = goto.configured(config)
    with ThreadPoolExecutor(max_workers=max(1, min(8, len(configured)))) as pool:
        results = list(pool.map(goto.check_remote, configured))
    lines = [
        _line(ok, f"remote {clean(remote.name, 64)}", f"reachable, {detail}" if ok else detail)
        for remote, (ok, detail) in zip(configured, results, strict=True)
    ]
    for n, url in enumerate(config["push.urls"], 1):
        scheme = clean(url.split("://", 1)[0], 20)  # the rest may hold a token: not shown
        ok = bool(apprise.Apprise().add(url))
        lines.append(_line(ok, f"push URL {n} ({scheme}://…)", "ok" if ok else "apprise cannot use this URL"))
    if config["push.urls"] and config["push.when"] == "away":
        away = desktop_away()
        lines.append(_line(None if away is None else True, "push when away", {
            None: "cannot tell whether the desktop is idle or locked: pushes treat you as present (logind and the"
                  " screensaver did not answer)",
            True: "the desktop is idle or locked now",
            False: "you are at the desktop now",
        }[away]))
    return lines


def _health(config: Config) -> list[str]:
    """The running app's own account of what failed and was recovered from (control channel),
    and whether it watches the sessions folders ``config`` names now."""
    reply = request({"cmd": "health"})
    if reply is None:
        return [_line(None, "running app", "none is running (start it with 'pi-notifier run')")]
    if not reply.get("ok"):
        return [_line(None, "running app", "it answers but cannot report its health (an older version?)")]
    said = reply.get("problems")
    problems: dict[str, Any] = said if isinstance(said, dict) else {}
    lines = [
        _line(False, f"running app: {clean(part, 40)}", f"failed {p.get('count', 1)}×"
              f" (last: {clean(p.get('error'), 160)}); {'recovered' if p.get('recovered') else 'recovering'},"
              f" {clean(p.get('doing'), 80)}")
        for part, p in sorted(problems.items())
        if isinstance(p, dict)
    ]
    restarts = reply.get("engine_restarts") or 0
    failures = f", engine restarted {restarts}×" if restarts else "" if lines else ", no failures"
    extra = [said for said, shown in (
        ("still starting", not reply.get("ready")),
        ("no display (no window can open)", reply.get("display") is False),
        ("state store in memory only", reply.get("store") == "in memory"),
    ) if shown]
    summary = f"pid {reply.get('pid')}{failures}" + ("; " + ", ".join(extra) if extra else "")
    first = _line(not lines, "running app", summary)
    roots = reply.get("roots")
    if isinstance(roots, list) and sorted(map(str, roots)) != sorted(config["sessions_dirs"]):
        watched, now = ", ".join(clean(r) for r in roots), ", ".join(clean(r) for r in config["sessions_dirs"])
        said = (f"it watches {watched}; the sessions folder is {now} as this command sees it"
                f" ({clean(config.sources['sessions_dirs'], 60)}): if pi writes there now, restart the app")
        lines.append(_line(None, "running app", said))
    return [first, *lines]


# pi's own question tools (examples/extensions): their dialog is the question, read from the file
_QUESTION_ONLY = frozenset({"question.ts", "questionnaire.ts"})


def companion(st: install.Status) -> str:
    """The optional companion pi extension, as ``pi-extension status`` sees it. Never a FAIL: pi
    and pi-notifier work without it (dialogs such as permission gates are then not shown)."""
    loaded = f"loaded by {len(st.loaded)} running pi process(es)"
    if st.unreachable:
        loaded += f", {len(st.unreachable)} socket(s) not answering"
    ok = True if st.installed and st.current else None
    return _line(ok, "companion extension", f"{st.said()} (optional); {loaded}")


def unseen_dialogs(config: Config, st: install.Status) -> str:
    """Each running pi that loads an extension with dialogs (``ctx.ui.select`` questions,
    permission gates) but not the companion: those dialogs leave nothing in the session file."""
    with_companion = {item.pid for item in st.loaded}
    catalog = QuestionCatalog(config["question_tools"])
    blind: list[str] = []
    for proc in pi_processes():
        if proc.pid in with_companion:
            continue
        try:
            argv = psutil.Process(proc.pid).cmdline()
        except (psutil.Error, OSError):
            continue
        names = None if any(install.is_ours(a) for a in argv) else _dialog_extensions(proc, argv, catalog)
        if names:  # (None: it loads the companion, its socket not up yet or not answering)
            blind.append(f"pi {proc.pid} in {clean(proc.cwd, 80)} ({clean(', '.join(names), 160)})")
    if not blind:
        return _line(True, "extension dialogs", (
            "no running pi is known to load an extension with dialogs without the companion extension "
            "(such dialogs leave nothing in the session file; only the companion shows them)"
        ))
    return _line(None, "extension dialogs", (
        f"not shown for {'; '.join(blind)}: dialogs of extensions (ctx.ui.select, confirm, input, custom; "
        f"a name with ? may open some) leave nothing in the session file; install the companion "
        f"({APP_NAME} pi-extension install) and /reload"
    ))


def where_pis_write(config: Config, st: install.Status) -> list[str]:
    """A line for each folder not watched that running pis write their sessions to: their
    questions are never seen. Where a pi writes: as its companion says (its session file), else
    as pi decides it from its command line, environment and settings
    (:func:`~notifier.system.paths.sessions_dir_of`)."""
    files = {item.pid: item.session_file for item in st.loaded if item.session_file}
    roots = [os.path.realpath(r).rstrip(os.sep) for r in config["sessions_dirs"]]
    outside: dict[str, list[str]] = {}  # folder → the pis writing there
    for proc in pi_processes():
        file = files.get(proc.pid)
        where = os.path.dirname(file) if file else paths.sessions_dir_of(proc.cwd, proc.argv or (), proc.env)
        real = os.path.realpath(where) if where is not None else None
        if real is not None and not any(real == r or real.startswith(r + os.sep) for r in roots):
            outside.setdefault(real, []).append(f"pi {proc.pid} in {clean(proc.cwd, 80)}")
    lines = []
    for folder, pis in sorted(outside.items()):
        more = f" and {len(pis) - 3} more" if len(pis) > 3 else ""
        they = "writes its sessions there: its" if len(pis) == 1 else "write their sessions there: their"
        said = (f"{clean(folder, 120)} is not watched, and {', '.join(pis[:3])}{more} {they} questions are not"
                " seen; watch it too (--sessions-dir, repeated, or sessions_dirs in the config)")
        lines.append(_line(None, "sessions folder", said))
    return lines


def _dialog_extensions(proc: Any, argv: list[str], catalog: Any) -> list[str] | None:
    """The extensions of one running pi that open dialogs (a name with ``?``: listed in its
    banner, its source not found, so it may); None when it loads the companion."""
    names: list[str] = []
    read: set[str] = set()  # the names of the extensions whose source was read
    # the extensions the pi's terminal listed at start-up, when it runs in tmux (whose history keeps pi's banner)
    pane = tmux_pane_of(proc.env, proc.pid)
    banner = tmux(pane.socket, "capture-pane", "-p", "-J", "-S", "-", "-t", pane.pane) if pane else None
    listed = listed_extensions(banner or "")
    for path in _extension_files(proc.cwd, argv, proc.env):
        index = os.path.basename(path) in ("index.ts", "index.js")
        name = os.path.basename(os.path.dirname(path) if index else path)
        try:
            with open(path, encoding="utf-8", errors="replace") as fh:
                source = fh.read(1 << 20)
        except OSError:
            continue
        read.add(name)
        if not install.is_ours(path) and dialog_kinds(source, catalog):
            names.append(name)
    if any(install.is_ours(n) for n in [*listed, *read]):
        return None
    # pi rewrites its command line (-e paths are gone): the rest of its banner's list is by name
    # only; their sources cannot be read, so whether they open dialogs is not known
    return names + [f"{n}?" for n in listed if n not in read and n not in _QUESTION_ONLY]


def _extension_files(cwd: str, argv: list[str], env: dict[str, str]) -> list[str]:
    """The extension files a running pi loads, as far as its command line and extension folders
    tell (packages named in its settings are not looked into)."""
    named, no_discovery = extension_args(argv)
    found = [os.path.join(cwd, n) for n in named]
    if not no_discovery:
        agent = paths.agent_dir({**os.environ, **env}, cwd)
        for folder in (os.path.join(agent, "extensions"), os.path.join(cwd, ".pi", "extensions")):
            try:
                entries = [os.path.join(folder, name) for name in sorted(os.listdir(folder))]
            except OSError:
                continue
            found += [e for e in entries if e.endswith((".ts", ".js")) or os.path.isdir(e)]
    # a folder is its index.ts or index.js
    indexes = [(os.path.join(p, "index.ts"), os.path.join(p, "index.js")) for p in found]
    files = [next((i for i in index if os.path.isfile(i)), p) for p, index in zip(found, indexes, strict=True)]
    return list(dict.fromkeys(f for f in files if os.path.isfile(f)))
