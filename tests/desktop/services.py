"""Real desktop services for tests: Xvfb, a private session bus, dunst, trayer.

Each starts under `setpriv --pdeathsig TERM` (so it dies with the test process even if teardown
never runs), waits for real readiness with a deadline (no sleeps), and stops exactly its own PID.
See docs/testing.md §4.
"""

from __future__ import annotations

import os
import select
import shutil
import subprocess
import threading
import time
from pathlib import Path
from typing import Any

from ..conftest import wait_for

BUS_CONFIG = """<!DOCTYPE busconfig PUBLIC "-//freedesktop//DTD D-Bus Bus Configuration 1.0//EN"
 "http://www.freedesktop.org/standards/dbus/1.0/busconfig.dtd">
<busconfig>
  <type>session</type>
  <listen>unix:tmpdir={tmp}</listen>
  <auth>EXTERNAL</auth>
  <policy context="default">
    <allow send_destination="*" eavesdrop="true"/>
    <allow eavesdrop="true"/>
    <allow own="*"/>
  </policy>
</busconfig>
"""

DUNSTRC = """[global]
    monitor = 0
    follow = none
    notification_limit = 0
    idle_threshold = 0
    markup = full
    mouse_left_click = do_action, close_current
    dmenu = {dmenu}
    show_indicators = no
    # (dunst stacks identical notifications into one by default: a doubled bubble must show as two)
    stack_duplicates = false
[urgency_low]
    timeout = {timeout}
[urgency_normal]
    timeout = {timeout}
[urgency_critical]
    timeout = {timeout}
"""


def _wrap(cmd: list[str]) -> list[str]:
    setpriv = shutil.which("setpriv")
    return [setpriv, "--pdeathsig", "TERM", "--", *cmd] if setpriv else cmd


def _read_line(fd: int, timeout: float, what: str) -> str:
    deadline = time.monotonic() + timeout
    data = b""
    while b"\n" not in data:
        left = deadline - time.monotonic()
        if left <= 0:
            raise RuntimeError(f"{what} did not start within {timeout}s")
        ready, _, _ = select.select([fd], [], [], left)
        if ready:
            chunk = os.read(fd, 4096)
            if not chunk:
                raise RuntimeError(f"{what} exited before it was ready")
            data += chunk
    return data.split(b"\n", 1)[0].decode().strip()


def stop(proc: subprocess.Popen[Any] | None) -> None:
    if proc is None or proc.poll() is not None:
        return
    proc.terminate()
    try:
        proc.wait(5)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait(5)


def start_xvfb(screen: str = "640x480x24") -> tuple[subprocess.Popen[bytes], str]:
    r, w = os.pipe()
    proc = subprocess.Popen(
        _wrap(["Xvfb", "-displayfd", str(w), "-screen", "0", screen, "-nolisten", "tcp", "-noreset"]),
        pass_fds=[w],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    os.close(w)
    try:
        number = _read_line(r, 20, "Xvfb")
    finally:
        os.close(r)
    return proc, f":{number}"


def start_bus(tmp: Path) -> tuple[subprocess.Popen[bytes], str]:
    config = tmp / "bus.conf"
    config.write_text(BUS_CONFIG.format(tmp=tmp))
    proc = subprocess.Popen(
        _wrap(["dbus-daemon", f"--config-file={config}", "--nofork", "--nopidfile", "--print-address=1"]),
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
    )
    assert proc.stdout is not None
    address = _read_line(proc.stdout.fileno(), 20, "dbus-daemon")
    return proc, address


def name_has_owner(env: dict[str, str], name: str) -> bool:
    out = subprocess.run(
        [
            "dbus-send",
            "--session",
            "--print-reply",
            "--dest=org.freedesktop.DBus",
            "/org/freedesktop/DBus",
            "org.freedesktop.DBus.NameHasOwner",
            f"string:{name}",
        ],
        capture_output=True,
        text=True,
        env=env,
        timeout=10,
    )
    return "boolean true" in out.stdout


class Dunst:
    """``timeout``: dunst's own default life of a bubble, in seconds (0: until closed); it applies
    to notifications sent with expire_timeout -1."""

    def __init__(self, env: dict[str, str], tmp: Path, timeout: int = 0) -> None:
        self.env = env
        dmenu = tmp / "pick-snooze.sh"
        dmenu.write_text("#!/bin/sh\ngrep -m1 -i snooze\n")
        dmenu.chmod(0o755)
        conf = tmp / "dunstrc"
        conf.write_text(DUNSTRC.format(dmenu=dmenu, timeout=timeout))
        self.proc = subprocess.Popen(
            _wrap(["dunst", "-conf", str(conf)]), env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE
        )

        def ready() -> bool:
            if self.proc.poll() is not None:
                raise RuntimeError(
                    "dunst exited: " + (self.proc.stderr.read().decode() if self.proc.stderr else "")
                )
            return name_has_owner(env, "org.freedesktop.Notifications")

        wait_for(ready, 20, "dunst on the bus")

    def ctl(self, *args: str) -> str:
        return subprocess.run(
            ["dunstctl", *args], capture_output=True, text=True, env=self.env, timeout=10
        ).stdout

    def displayed(self) -> int:
        try:
            return int(self.ctl("count", "displayed").strip() or 0)
        except ValueError:
            return 0

    def notify(self, summary: str, expire_ms: int = -1) -> int:
        """Another application's plain notification; returns its id."""
        from jeepney import DBusAddress, new_method_call
        from jeepney.io.blocking import open_dbus_connection
        from jeepney.wrappers import unwrap_msg

        addr = DBusAddress(
            "/org/freedesktop/Notifications",
            bus_name="org.freedesktop.Notifications",
            interface="org.freedesktop.Notifications",
        )
        with open_dbus_connection(bus="SESSION") as conn:
            msg = new_method_call(
                addr, "Notify", "susssasa{sv}i", ("other-app", 0, "", summary, "", [], {}, expire_ms)
            )
            (nid,) = unwrap_msg(conn.send_and_get_reply(msg, timeout=10))
        return int(nid)

    def stop(self) -> None:
        stop(self.proc)
        wait_for(lambda: not name_has_owner(self.env, "org.freedesktop.Notifications"), 10, "dunst gone")


class Monitor:
    """Records every Notify / CloseNotification call and Notifications signal on the bus
    (a D-Bus monitor connection, like dbus-monitor); ``rules``: other match rules to record."""

    def __init__(self, address: str = "SESSION", rules: tuple[str, ...] = ("interface='org.freedesktop.Notifications'",)) -> None:
        from jeepney import DBusAddress, new_method_call
        from jeepney.io.blocking import open_dbus_connection

        self.calls: list[tuple[str, tuple[Any, ...]]] = []
        self.times: list[float] = []  # when each call arrived (CLOCK_MONOTONIC)
        self.lock = threading.Lock()
        self.conn = open_dbus_connection(bus=address)
        monitoring = DBusAddress(
            "/org/freedesktop/DBus",
            bus_name="org.freedesktop.DBus",
            interface="org.freedesktop.DBus.Monitoring",
        )
        self.conn.send_and_get_reply(new_method_call(monitoring, "BecomeMonitor", "asu", (list(rules), 0)))
        self._stop = False
        self.thread = threading.Thread(target=self._run, daemon=True)
        self.thread.start()

    def _run(self) -> None:
        from jeepney.low_level import HeaderFields

        while not self._stop:
            try:
                msg = self.conn.receive(timeout=0.2)
            except TimeoutError:
                continue
            except Exception:
                return
            member = msg.header.fields.get(HeaderFields.member)
            if member:
                with self.lock:
                    self.calls.append((member, tuple(msg.body)))
                    self.times.append(time.monotonic())

    def of(self, member: str) -> list[tuple[Any, ...]]:
        with self.lock:
            return [body for m, body in self.calls if m == member]

    def stamps(self, member: str) -> list[float]:
        """When each call of ``member`` arrived (CLOCK_MONOTONIC)."""
        with self.lock:
            return [t for (m, _), t in zip(self.calls, self.times, strict=True) if m == member]

    def notifies(self) -> list[dict[str, Any]]:
        """Notify calls from pi-notifier: app, replaces, icon, summary, body, actions, hints."""
        keys = ("app", "replaces", "icon", "summary", "body", "actions", "hints", "timeout")
        return [dict(zip(keys, b, strict=False)) for b in self.of("Notify") if b and b[0] == "pi-notifier"]

    def close(self) -> None:
        self._stop = True
        self.thread.join(2)
        try:
            self.conn.close()
        except Exception:
            pass


def start_trayer(env: dict[str, str]) -> subprocess.Popen[bytes]:
    proc = subprocess.Popen(
        _wrap(
            [
                "trayer",
                "--edge",
                "top",
                "--align",
                "right",
                "--widthtype",
                "pixel",
                "--width",
                "120",
                "--height",
                "32",
                "--transparent",
                "false",
                "--tint",
                "0x202020",
                "--SetDockType",
                "true",
            ]
        ),
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )

    def owned() -> bool:
        if proc.poll() is not None:
            raise RuntimeError("trayer exited")
        from Xlib import display

        d = display.Display(env["DISPLAY"])
        try:
            atom = d.intern_atom("_NET_SYSTEM_TRAY_S0")
            owner: object = d.get_selection_owner(atom)  # (python-xlib has no types)
            return owner != 0
        finally:
            d.close()

    wait_for(owned, 20, "trayer to own the system tray")
    return proc
