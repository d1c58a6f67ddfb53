"""What a reader must follow: the calls and modules of ours between one appended question line and
the `Notify` call on a real notification server.

The app (`pi-notifier run --json --no-tray --liveness off`, with its notifications on, through
dunst on a private bus under Xvfb; no pi runs here, so liveness is off and the question waits the
settle window) runs under a profiler that every thread of its inherits (`threading.setprofile`).
It starts counting when watchdog hands our watcher the file's event (`on_any_event` in
`notifier.watch`) and stops when `show` in `notifier.sinks.notify.dbus` (the `Notify`
call) returns. Every call into a `notifier` module in between is counted, in every thread: the
settle window's timer and anything else that ran meanwhile included, so the figures are an upper
bound of the path itself. The tray is not drawn (no tray host here); issue 30's count includes
its redraw.

Prints the modules in the order they were first entered, the calls in each, the threads that
took part, and the totals; saves them as bench/out/trace.json.
"""

from __future__ import annotations

import argparse
import json
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

from tests.conftest import wait_for  # noqa: E402
from tests.desktop.services import Dunst, start_bus, start_xvfb  # noqa: E402
from tests.desktop.services import stop as end  # noqa: E402
from tests.writer import ask, header, user  # noqa: E402

# Runs as the app's process: the profiler first, then the app's own entry point.
TRACED_APP = textwrap.dedent(
    r"""
    import json, sys, threading
    out = sys.argv[1]
    sys.argv = ["pi-notifier", *sys.argv[2:]]
    armed, done = [False], [False]
    modules, threads, calls = {}, [], [0]

    def profile(frame, event, arg):
        if done[0] or event not in ("call", "return"):
            return
        name = frame.f_globals.get("__name__") or ""
        if event == "return":
            if armed[0] and frame.f_code.co_name == "show" and name == "notifier.sinks.notify.dbus":
                done[0] = True
                with open(out, "w") as fh:
                    json.dump({"modules": modules, "threads": threads, "calls": calls[0]}, fh)
            return
        if not armed[0]:
            if name != "notifier.watch" or frame.f_code.co_name != "on_any_event":
                return
            armed[0] = True
        if name.startswith("notifier"):
            modules[name] = modules.get(name, 0) + 1
            calls[0] += 1
            thread = threading.current_thread().name
            if thread not in threads:
                threads.append(thread)

    sys.setprofile(profile)
    threading.setprofile(profile)
    from notifier.cli.parser import main
    sys.exit(main())
    """
)


def run() -> dict[str, Any]:
    tmp = Path(tempfile.mkdtemp(prefix="pi-notifier-bench-trace-"))
    xvfb, display = start_xvfb()
    bus, address = start_bus(tmp)
    env = dict(fresh_env(), DISPLAY=display, DBUS_SESSION_BUS_ADDRESS=address, NO_AT_BRIDGE="1")
    dunst = Dunst(env, tmp)
    session = tmp / "sessions" / "--home-dev-trace--" / "s.jsonl"
    session.parent.mkdir(parents=True)
    session.write_bytes(header("/home/dev/trace") + user())  # written before: only the question is traced
    out = tmp / "trace.json"
    args = ["run", "--json", "--no-tray", "--liveness", "off", "--sessions-dir", str(session.parent.parent)]
    app = subprocess.Popen(
        [sys.executable, "-c", TRACED_APP, str(out), *args],
        cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True,
    )  # fmt: skip
    try:
        assert app.stdout is not None
        for line in app.stdout:
            if json.loads(line).get("event") == "ready":
                break
        with session.open("ab") as fh:
            fh.write(ask("q1", "Traced?"))
        wait_for(lambda: out.exists() and out.stat().st_size > 0, 20, "the Notify call")
        time.sleep(0.05)  # (the file is written whole by then; its writer is the app)
        traced: dict[str, Any] = json.loads(out.read_text())
    finally:
        stop(app)
        dunst.stop()
        end(bus)
        end(xvfb)
    modules: dict[str, int] = traced["modules"]
    return {
        "modules_count": len(modules),
        "calls": traced["calls"],
        "threads": traced["threads"],
        "modules": modules,
    }


def main() -> None:
    argparse.ArgumentParser(description=__doc__.splitlines()[0]).parse_args()
    figures = run()
    for name, count in figures["modules"].items():
        print(f"{count:5d}  {name}")
    print(f"{figures['modules_count']} modules, {figures['calls']} calls, threads: {', '.join(figures['threads'])}")
    save("trace", figures)


if __name__ == "__main__":
    main()
