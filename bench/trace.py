"""What a reader must follow: the calls and modules of ours between one appended question line and
the `Notify` call on a real notification server.

The real app (`pi-notifier run`: its tray icon docked in trayer, its notifications through dunst,
on a private bus under Xvfb) runs under a profiler that every thread of its inherits
(`threading.setprofile`). By default no pi runs, so liveness is off and the question waits the
settle window (what a pi not known to wait for a human gets). ``--tui``: the question comes from a
stand-in pi whose terminal is in raw mode, as pi's TUI sets it (`bench/notify.py`'s), with
liveness on; its first question is asked and answered before, so its pi is known, and the traced
one, its second, goes out at once (what the question of an interactive pi gets). The question is
written once the app is idle (started, and no call of ours for a while: what start-up or the
question before still did is not counted). Counting starts when watchdog hands our watcher the file's
event (`on_any_event` in `notifier.watch`) and stops when `show` in `notifier.outputs.dbus` (the
`Notify` call) returns. Every call into a `notifier` module in between is counted, in every
thread: the settle window's timer, the tray's redraw and anything else that ran meanwhile
included, so the figures are an upper bound of the path itself. ``--headless`` measures
`run --json --no-tray` instead (no tray; the run --json line printed on the way).

Saves the figures as bench/out/trace.json (or trace-headless.json), then prints the modules in the
order they were first entered, the calls in each, the threads that took part, and the totals
(``--calls``: each function first, with its thread).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import textwrap
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parent))
from common import ROOT, fresh_env, save, stop  # noqa: E402
from notify import StandIn  # noqa: E402

from tests.conftest import wait_for  # noqa: E402
from tests.desktop.services import Dunst, Monitor, start_bus, start_trayer, start_xvfb  # noqa: E402
from tests.desktop.services import stop as end  # noqa: E402
from tests.writer import ask, header, user  # noqa: E402

QUIET_S = 0.5  # the app is idle once no call of ours ran this long after its engine's loop began

# Runs as the app's process: the profiler first, then the app's own entry point. A thread started
# before the profiler (so not profiled) writes ``<out>.idle`` once the app is idle.
TRACED_APP = textwrap.dedent(
    r"""
    import json, sys, threading, time
    out, quiet_s = sys.argv[1], float(sys.argv[2])
    sys.argv = ["pi-notifier", *sys.argv[3:]]
    armed, done, looping, quiet, last = [False], [False], [False], [False], [time.monotonic()]
    modules, threads, calls, functions = {}, [], [0], {}

    def idle():
        import os
        while not looping[0]:
            time.sleep(0.05)
        open(out + ".ready", "w").close()  # (its watcher is up)
        while not os.path.exists(out + ".go"):  # (the bench says when the traced line comes next)
            time.sleep(0.05)
        last[0] = time.monotonic()
        while not (looping[0] and time.monotonic() - last[0] >= quiet_s):
            time.sleep(0.05)
        quiet[0] = True  # (from now on, a watcher's event arms the count)
        with open(out + ".idle", "w") as fh:
            fh.write("idle")

    threading.Thread(target=idle, daemon=True).start()

    def profile(frame, event, arg):
        if done[0] or event not in ("call", "return"):
            return
        name = frame.f_globals.get("__name__") or ""
        if event == "return":
            if armed[0] and frame.f_code.co_name == "show" and name == "notifier.outputs.dbus":
                done[0] = True
                with open(out, "w") as fh:
                    json.dump({"modules": modules, "threads": threads, "calls": calls[0], "functions": functions}, fh)
            return
        if not armed[0]:
            if name.startswith("notifier"):
                last[0] = time.monotonic()
                looping[0] = looping[0] or (name == "notifier.engine" and frame.f_code.co_name == "_loop")
            if not quiet[0] or name != "notifier.watch" or frame.f_code.co_name != "on_any_event":
                return
            armed[0] = True
        if name.startswith("notifier"):
            modules[name] = modules.get(name, 0) + 1
            calls[0] += 1
            thread = threading.current_thread().name
            if thread not in threads:
                threads.append(thread)
            where = f"{name}:{frame.f_code.co_qualname if hasattr(frame.f_code, 'co_qualname') else frame.f_code.co_name} [{thread}]"
            functions[where] = functions.get(where, 0) + 1

    sys.setprofile(profile)
    threading.setprofile(profile)
    from notifier.cli.parser import main
    sys.exit(main())
    """
)


def run(headless: bool = False, focus_check: bool = True, tui: bool = False) -> dict[str, Any]:
    tmp = Path(tempfile.mkdtemp(prefix="pi-notifier-bench-trace-"))
    xvfb, display = start_xvfb()
    bus, address = start_bus(tmp)
    env = dict(fresh_env(), DISPLAY=display, DBUS_SESSION_BUS_ADDRESS=address, NO_AT_BRIDGE="1")
    os.environ.update(DBUS_SESSION_BUS_ADDRESS=address)  # (the monitor's)
    if not focus_check:  # (notifications.skip_when_focused off: no look at what the user sees)
        config = Path(env["XDG_CONFIG_HOME"]) / "pi-notifier" / "config.toml"
        config.parent.mkdir(parents=True, exist_ok=True)
        config.write_text("[notifications]\nskip_when_focused = false\n")
    dunst = Dunst(env, tmp)
    trayer = None if headless else start_trayer(env)
    monitor = Monitor()
    sessions = tmp / "sessions"
    session = sessions / "--home-dev-trace--" / "s.jsonl"
    session.parent.mkdir(parents=True)
    session.write_bytes(header("/home/dev/trace") + user())  # written before: only the question is traced
    out = tmp / "trace.json"
    args = ["run", "--sessions-dir", str(sessions)] + ([] if tui else ["--liveness", "off"])
    if headless:
        args += ["--json", "--no-tray"]
    app = subprocess.Popen(
        [sys.executable, "-c", TRACED_APP, str(out), str(QUIET_S), *args],
        cwd=ROOT, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, text=True,
    )  # fmt: skip
    pi = None
    try:
        wait_for(lambda: Path(f"{out}.ready").exists() or app.poll() is not None, 30, "the app to start")
        if tui:  # (its first question asked, notified and answered: its pi is known)
            pi = StandIn(tmp, sessions, 2, raw=True)
            pi.step()
            wait_for(lambda: monitor.notifies(), 20, "the first question's notification")
            pi.answer()
        Path(f"{out}.go").touch()
        idle = Path(f"{out}.idle")
        wait_for(lambda: idle.exists() or app.poll() is not None, 30, "the app to be idle")
        assert app.poll() is None, "the app ended"
        if pi is not None:
            pi.step()
        else:
            with session.open("ab") as fh:
                fh.write(ask("q1", "Traced?"))
        wait_for(lambda: out.exists() and out.stat().st_size > 0, 20, "the Notify call")
        time.sleep(0.05)  # (the file is written whole by then; its writer is the app)
        traced: dict[str, Any] = json.loads(out.read_text())
    finally:
        if pi is not None:
            pi.close()
        monitor.close()
        stop(app)
        end(trayer)
        dunst.stop()
        end(bus)
        end(xvfb)
    modules: dict[str, int] = traced["modules"]
    return {
        "app": ("run --json --no-tray" if headless else "run (tray)") + (", a TUI pi's question" if tui else ""),
        "modules_count": len(modules),
        "calls": traced["calls"],
        "threads": traced["threads"],
        "modules": modules,
        "functions": traced["functions"],
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--headless", action="store_true", help="trace run --json --no-tray instead")
    parser.add_argument("--calls", action="store_true", help="print each function called, with its thread")
    parser.add_argument("--no-focus-check", action="store_true", help="with notifications.skip_when_focused = false")
    parser.add_argument("--tui", action="store_true", help="the question of a pi known to wait for a human")
    args = parser.parse_args()
    figures = run(args.headless, focus_check=not args.no_focus_check, tui=args.tui)
    name = "trace-headless" if args.headless else "trace" if not args.no_focus_check else "trace-no-focus-check"
    save(name + ("-tui" if args.tui else ""), figures)
    if args.calls:
        for where, count in figures["functions"].items():
            print(f"{count:5d}  {where}")
        print()
    for name, count in figures["modules"].items():
        print(f"{count:5d}  {name}")
    print(
        f"{figures['app']}: {figures['modules_count']} modules, {figures['calls']} calls,"
        f" threads: {', '.join(figures['threads'])}"
    )


if __name__ == "__main__":
    main()
