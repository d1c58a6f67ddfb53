"""The threads of the idle tray app: every thread of `pi-notifier run` (the tray app, notifying)
with one session, under a real desktop stand-in — Xvfb, a private session bus, dunst (the
notification server) and trayer (an XEmbed tray host) — in folders of its own (never the user's).

Python's thread names are not the kernel's (``/proc/PID/task/*/comm`` says ``python``), so the app
runs through its own entry point under a small preamble (as bench/trace.py does; nothing is added to
the app): it notes, for each thread started, the innermost frame of ours that started it (its
owner; past the one Observer and the Supervisor, for whom), and on a word through a FIFO writes every thread — its Python name, native id, class,
owner and where it waits now — then its own thread ends. The OS threads are counted from
``/proc/PID/task`` once that thread is gone (a thread without a Python face, e.g. one a C library
starts, is listed by its kernel name).

Ready is a condition: the icon docked in trayer (the tray's pixels changed) and the
app's set of OS threads unchanged over three looks 0.3 s apart (start-up's one-shot threads ended).

Prints one line per thread and the totals; saves them as bench/out/threads.json.
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

from tests.conftest import wait_for  # noqa: E402
from tests.desktop.services import Dunst, start_bus, start_trayer, start_xvfb  # noqa: E402
from tests.desktop.services import stop as end  # noqa: E402
from tests.writer import header, user  # noqa: E402

# Runs as the app's process: the preamble first, then the app's own entry point.
DUMPING_APP = textwrap.dedent(
    r"""
    import json, os, sys, threading, traceback
    fifo, out = sys.argv[1], sys.argv[2]
    sys.argv = ["pi-notifier", *sys.argv[3:]]
    ours = os.sep + "notifier" + os.sep
    owners = {}  # id(thread) → the innermost frame of ours that started it
    users = {}  # id(thread) → the same past the one Observer and the Supervisor
    start = threading.Thread.start

    def where(frames, past=()):
        mine = [f for f in frames if ours in f.filename and not f.filename.endswith(past)]
        f = (mine or frames)[-1]
        path = f.filename.split(ours, 1)[-1] if ours in f.filename else os.path.basename(f.filename)
        return f"{'notifier/' if ours in f.filename else ''}{path}:{f.lineno} {f.name}"

    def noted_start(self, *args, **kwargs):
        stack = traceback.extract_stack()[:-1]
        owners[id(self)] = where(stack)
        users[id(self)] = where(stack, ("watch.py", "supervisor.py"))  # (for whom a shared part started it)
        return start(self, *args, **kwargs)

    threading.Thread.start = noted_start

    def dump():
        with open(fifo) as fh:
            fh.read()
        frames = sys._current_frames()
        me = threading.current_thread()
        rows = []
        for t in threading.enumerate():
            if t is me:
                continue
            stack = traceback.extract_stack(frames[t.ident]) if t.ident in frames else []
            rows.append({
                "name": t.name,
                "tid": t.native_id,
                "class": f"{type(t).__module__}.{type(t).__qualname__}",
                "owner": "the interpreter (main)" if t is threading.main_thread() else owners.get(id(t), "?"),
                "waits": where(stack) if stack else "?",
                "for": users.get(id(t), "?"),
                "watches": getattr(getattr(t, "watch", None), "path", None),
                "waits_in": f"{os.path.basename(stack[-1].filename)}:{stack[-1].name}" if stack else "?",
            })
        with open(out + ".tmp", "w") as fh:
            json.dump({"threads": rows, "dumper": me.native_id}, fh)
        os.rename(out + ".tmp", out)

    threading.Thread(target=dump, name="bench-threads-dump", daemon=True).start()
    from notifier.cli.parser import main
    sys.exit(main())
    """
)


def tasks(pid: int) -> dict[int, str]:
    """The process's OS threads: tid → kernel name (comm)."""
    found = {}
    for tid in os.listdir(f"/proc/{pid}/task"):
        try:
            found[int(tid)] = Path(f"/proc/{pid}/task/{tid}/comm").read_text().strip()
        except OSError:
            continue  # (ended meanwhile)
    return found


def settled(pid: int, looks: int = 3, apart: float = 0.3) -> bool:
    """The set of OS threads is the same over ``looks`` looks ``apart`` seconds apart."""
    first = set(tasks(pid))
    for _ in range(looks - 1):
        time.sleep(apart)
        if set(tasks(pid)) != first:
            return False
    return True


def tray() -> bytes:
    from tests.desktop.test_tray import tray_area

    return tray_area().tobytes()


def run(extra: list[str]) -> dict[str, Any]:
    tmp = Path(tempfile.mkdtemp(prefix="pi-notifier-bench-threads-"))
    xvfb, display = start_xvfb()
    bus, address = start_bus(tmp)
    env = dict(fresh_env(), DISPLAY=display, DBUS_SESSION_BUS_ADDRESS=address, NO_AT_BRIDGE="1")
    os.environ.update(DISPLAY=display)  # (the tray's pixels are read here)
    dunst = Dunst(env, tmp)
    trayer = start_trayer(env)
    session = tmp / "sessions" / "--home-dev-idle--" / "s.jsonl"
    session.parent.mkdir(parents=True)
    session.write_bytes(header("/home/dev/idle") + user())
    fifo, out = tmp / "dump.fifo", tmp / "threads.json"
    os.mkfifo(fifo)
    args = ["run", "--sessions-dir", str(session.parent.parent), *extra]
    empty = tray()
    app = subprocess.Popen(
        [sys.executable, "-c", DUMPING_APP, str(fifo), str(out), *args],
        cwd=ROOT, env=env, stdout=subprocess.DEVNULL, stderr=(tmp / "app.log").open("w"), text=True,
    )  # fmt: skip
    try:
        wait_for(lambda: app.poll() is None and tray() != empty, 30, "the icon docked in trayer")
        wait_for(lambda: app.poll() is None and settled(app.pid), 30, "the app's threads settled")
        with open(fifo, "w") as fh:
            fh.write("dump\n")
        wait_for(out.exists, 20, "the thread dump")
        dumped: dict[str, Any] = json.loads(out.read_text())
        wait_for(lambda: dumped["dumper"] not in tasks(app.pid), 20, "the dump's own thread to end")
        os_threads = tasks(app.pid)
        if app.poll() is not None:
            raise SystemExit("pi-notifier ended while measured: " + (tmp / "app.log").read_text()[-2000:])
    finally:
        stop(app)
        end(trayer)
        dunst.stop()
        end(bus)
        end(xvfb)
    rows = [r for r in dumped["threads"] if r["tid"] in os_threads]
    known = {r["tid"] for r in rows}
    rows += [
        {"name": f"(no Python thread; kernel name {name!r})", "tid": tid, "class": "-", "owner": "?", "waits": "?"}
        for tid, name in sorted(os_threads.items())
        if tid not in known
    ]
    return {"os_threads": len(os_threads), "python_threads": len(known), "threads": rows}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("extra", nargs="*", help="more arguments for `pi-notifier run` (after --)")
    figures = run(ap.parse_args().extra)
    for r in figures["threads"]:
        watches = f" (watches {r['watches']})" if r.get("watches") else ""
        whom = f" for {r['for']}" if r.get("for") not in (None, "?", r["owner"]) else ""
        print(f"{r['name']:<26} {r['class']:<44} {r['owner']}{whom} — in {r.get('waits_in', '?')}{watches}")
    print(f"{figures['os_threads']} OS threads ({figures['python_threads']} with a Python name)")
    save("threads", figures)


if __name__ == "__main__":
    main()
