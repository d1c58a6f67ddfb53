"""A real sway (headless wlroots) with mako, its notification server, for tests.

sway refuses to run as root, so the whole desktop lives in one unprivileged user namespace (uid
1000 inside, mapped to the test's uid outside): its own session bus, sway, mako, and every
command a test runs there (the app, makoctl) enter it with ``nsenter``. D-Bus's EXTERNAL
authentication needs that: a client and the bus must see the same uid. Each process starts under
``setpriv --pdeathsig TERM`` (it dies with the test process), waits for real readiness with a
deadline and is stopped by its own PID. See docs/testing.md and the sway section of the
desktops research."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path
from typing import Any

from ..conftest import wait_for
from .services import BUS_CONFIG, _read_line, stop

SWAY_CONFIG = """output HEADLESS-1 resolution 1280x800
xwayland {xwayland}
"""


class Sway:
    """sway + a private session bus in a user namespace of their own; :meth:`start_mako` starts
    the notification server (a test may stop it and start another). ``xwayland``: sway starts
    XWayland when an X11 client first connects (``display`` is its X display); sway's
    ``focus_on_window_activation`` is left at its default ("urgent")."""

    def __init__(self, tmp: Path, xwayland: bool = False) -> None:
        self.tmp = tmp
        self.xwayland = xwayland
        self.runtime = tmp / "runtime"
        self.runtime.mkdir(mode=0o700)
        self.procs: list[subprocess.Popen[Any]] = []
        self._logs: list[Any] = []
        self.mako: subprocess.Popen[Any] | None = None
        # the namespace: a process that only holds it open (uid 1000 inside = ours outside)
        self.holder = subprocess.Popen(
            [
                "unshare",
                "--user",
                "--map-user=1000",
                "--map-group=1000",
                "--",
                *_deathsig("sleep", "infinity"),
            ],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        wait_for(self._in_namespace, 10, "the user namespace")
        self.env = {
            "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
            "HOME": str(tmp),
            "XDG_RUNTIME_DIR": str(self.runtime),
            "NO_AT_BRIDGE": "1",
            "LANG": "C.UTF-8",
        }
        try:
            self._start_bus()
            self._start_sway()
        except BaseException:
            self.stop()
            raise

    def _in_namespace(self) -> bool:
        if self.holder.poll() is not None:
            raise RuntimeError("unshare --user failed (are user namespaces allowed here?)")
        try:
            return os.readlink(f"/proc/{self.holder.pid}/ns/user") != os.readlink("/proc/self/ns/user")
        except OSError:
            return False

    def argv(self, *cmd: str) -> list[str]:
        """``cmd`` run inside the namespace (and killed with the test process)."""
        return [
            "nsenter",
            "--user",
            "--preserve-credentials",
            "-t",
            str(self.holder.pid),
            "--",
            *_deathsig(*cmd),
        ]

    def popen(self, *cmd: str, env: dict[str, str] | None = None, **kw: Any) -> subprocess.Popen[Any]:
        proc = subprocess.Popen(self.argv(*cmd), env=env or self.env, **kw)
        self.procs.append(proc)
        return proc

    def run(self, *cmd: str, timeout: float = 10) -> subprocess.CompletedProcess[str]:
        return subprocess.run(self.argv(*cmd), env=self.env, capture_output=True, text=True, timeout=timeout)

    def _start_bus(self) -> None:
        bus_dir = self.tmp / "bus"
        bus_dir.mkdir()
        config = bus_dir / "bus.conf"
        config.write_text(BUS_CONFIG.format(tmp=bus_dir))
        proc = self.popen(
            "dbus-daemon", f"--config-file={config}", "--nofork", "--nopidfile", "--print-address=1",
            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
        )  # fmt: skip
        assert proc.stdout is not None
        self.env["DBUS_SESSION_BUS_ADDRESS"] = _read_line(proc.stdout.fileno(), 20, "dbus-daemon")

    def _start_sway(self) -> None:
        config = self.tmp / "sway.conf"
        config.write_text(SWAY_CONFIG.format(xwayland="enable" if self.xwayland else "disable"))
        env = dict(self.env, WLR_BACKENDS="headless", WLR_LIBINPUT_NO_DEVICES="1", WLR_RENDERER="pixman")
        log = self._log("sway.log")
        proc = self.popen("sway", "-c", str(config), env=env, stdout=log, stderr=log)

        def socket() -> str | None:
            if proc.poll() is not None:
                raise RuntimeError("sway exited: " + (self.tmp / "sway.log").read_text()[-2000:])
            return next(
                (p.name for p in self.runtime.glob("wayland-*") if not p.name.endswith(".lock")), None
            )

        self.env["WAYLAND_DISPLAY"] = wait_for(socket, 20, "sway's Wayland socket")
        self.sway = proc
        ipc = wait_for(lambda: next(iter(self.runtime.glob("sway-ipc.*.sock")), None), 20, "sway's IPC socket")
        self.env["SWAYSOCK"] = str(ipc)

    @property
    def display(self) -> str:
        """The X display sway serves through XWayland (what it gives its children as DISPLAY):
        the display whose lock file holds sway's pid (sway opens it before any X client comes)."""
        assert self.xwayland, "this sway runs without XWayland"

        def held() -> str | None:
            for lock in Path("/tmp").glob(".X*-lock"):
                try:
                    pid = lock.read_text().strip(" \n\x00")
                except OSError:
                    continue
                if pid == str(self.sway.pid):
                    return ":" + lock.name[2:-5]
            return None

        return wait_for(held, 20, "sway's XWayland display")

    def tree(self) -> dict[str, Any]:
        out = self.run("swaymsg", "-r", "-t", "get_tree")
        assert out.returncode == 0, out.stderr
        tree: dict[str, Any] = json.loads(out.stdout)
        return tree

    def views(self) -> list[dict[str, Any]]:
        """Every window sway manages (tiled or floating)."""
        found, stack = [], [self.tree()]
        while stack:
            node = stack.pop()
            if node.get("type") in ("con", "floating_con") and node.get("pid"):
                found.append(node)
            stack += node.get("nodes", []) + node.get("floating_nodes", [])
        return found

    def view_of(self, pid: int) -> dict[str, Any]:
        """The window of process ``pid`` (waited for)."""
        return wait_for(lambda: next((v for v in self.views() if v["pid"] == pid), None), 30, f"a window of pid {pid}")

    def focused(self) -> int | None:
        """The con id of the focused window."""
        return next((v["id"] for v in self.views() if v.get("focused")), None)

    def focus(self, con: int) -> None:
        out = self.run("swaymsg", f"[con_id={con}] focus")
        assert out.returncode == 0, out.stdout + out.stderr
        wait_for(lambda: self.focused() == con, 10, f"window {con} focused")

    def start_mako(self) -> subprocess.Popen[Any]:
        """mako on sway's display; returns once it owns org.freedesktop.Notifications."""
        log = self._log("mako.log")
        proc = self.popen("mako", "--default-timeout", "0", stdout=log, stderr=log)

        def owned() -> bool:
            if proc.poll() is not None:
                raise RuntimeError("mako exited: " + (self.tmp / "mako.log").read_text()[-2000:])
            return self.name_has_owner("org.freedesktop.Notifications")

        wait_for(owned, 20, "mako on the bus")
        self.mako = proc
        return proc

    def stop_mako(self) -> None:
        stop(self.mako)
        self.mako = None
        wait_for(lambda: not self.name_has_owner("org.freedesktop.Notifications"), 10, "mako gone")

    def name_has_owner(self, name: str) -> bool:
        out = self.run(
            "dbus-send", "--session", "--print-reply", "--dest=org.freedesktop.DBus", "/org/freedesktop/DBus",
            "org.freedesktop.DBus.NameHasOwner", f"string:{name}",
        )  # fmt: skip
        return "boolean true" in out.stdout

    def notifications(self) -> list[dict[str, Any]]:
        """What mako shows now (``makoctl list``): id, app, summary, body, actions."""
        out = self.run("makoctl", "list")
        if out.returncode != 0:
            return []
        shown = []
        for n in json.loads(out.stdout)["data"][0]:
            shown.append(
                {
                    "id": n["id"]["data"],
                    "app": n["app-name"]["data"],
                    "summary": n["summary"]["data"],
                    "body": n["body"]["data"],
                    "actions": n["actions"]["data"],
                }
            )
        return shown

    def invoke(self, nid: int, action: str) -> None:
        """The user picks an action of mako's notification ``nid`` (as a click or its menu does)."""
        out = self.run("makoctl", "invoke", "-n", str(nid), action)
        assert out.returncode == 0, out.stderr

    def _log(self, name: str) -> Any:
        fh = (self.tmp / name).open("ab")
        self._logs.append(fh)
        return fh

    def stop(self) -> None:
        for proc in reversed(self.procs):
            stop(proc)
        stop(self.holder)
        for fh in self._logs:
            fh.close()


def _deathsig(*cmd: str) -> list[str]:
    return ["setpriv", "--pdeathsig", "TERM", "--", *cmd]
