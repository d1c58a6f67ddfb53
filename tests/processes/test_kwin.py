"""KWin's scripting interface (notifier.system.window_manager): the script pi-notifier hands KWin, run in
Node with a stand-in ``workspace`` of KWin 5.27's and 6's shapes; the D-Bus exchange
(loadScript, run, the script's callDBus back to us, unloadScript) against a stand-in KWin on a
real private dbus-daemon that runs the script the same way. (The real KWin:
tests/desktop/test_kwin_focus.py.)"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import tempfile
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from notifier.system import window_manager as wm

from ..conftest import wait_for
from ..desktop.services import start_bus, stop

NODE = shutil.which("node")
needs_node = pytest.mark.skipif(NODE is None, reason="node is not installed")

# A stand-in of KWin's script engine: `workspace` with KWin 5.27's names (clientList,
# activeClient) or 6's (windowList, activeWindow); callDBus prints its arguments, and the active
# window's pid after the script, as one JSON line.
PRELUDE = """\
const state = JSON.parse(process.env.KWIN_STATE);
const wins = state.windows.map(w => Object.assign({}, w));
let active = state.active === null ? null : wins[state.active];
const calls = [];
const workspace = {};
if (state.api === 6) {
    workspace.windowList = () => wins;
    Object.defineProperty(workspace, "activeWindow", {get: () => active, set: w => { active = w; }});
} else {
    workspace.clientList = () => wins;
    Object.defineProperty(workspace, "activeClient", {get: () => active, set: w => { active = w; }});
}
function callDBus(...args) { calls.push(args); }
"""
EPILOGUE = """
console.log(JSON.stringify({calls: calls, active: active ? wins.indexOf(active) : null}));
"""


def run_in_node(script: str, windows: list[dict[str, Any]], active: int | None, api: int = 5) -> dict[str, Any]:
    assert NODE is not None
    state = json.dumps({"windows": windows, "active": active, "api": api})
    out = subprocess.run(
        [NODE, "-e", PRELUDE + script + EPILOGUE], env={"KWIN_STATE": state, "PATH": os.environ.get("PATH", "")},
        capture_output=True, text=True, timeout=30,
    )  # fmt: skip
    assert out.returncode == 0, out.stderr
    result: dict[str, Any] = json.loads(out.stdout)
    return result


XTERM = {"pid": 1201, "normalWindow": True, "dialog": False}
FOOT = {"pid": 1305, "normalWindow": True, "dialog": False}
FOOT2 = {"pid": 1305, "normalWindow": True, "dialog": False}
PANEL = {"pid": 900, "normalWindow": False, "dialog": False}  # (plasmashell's panel: not a window to focus)
DIALOG = {"pid": 1410, "normalWindow": False, "dialog": True}
NO_PID = {"pid": 0, "normalWindow": True, "dialog": False}


@needs_node
@pytest.mark.parametrize("api", [5, 6])
def test_the_script_reports_the_windows_and_which_is_active(api: int) -> None:
    text = wm.script_text(":1.42", 7)
    ran = run_in_node(text, [PANEL, XTERM, FOOT, FOOT2, DIALOG, NO_PID], active=2, api=api)
    (call,) = ran["calls"]
    assert call[:4] == [":1.42", wm.REPLY_PATH, wm.REPLY_INTERFACE, wm.REPLY_METHOD]
    report = wm.parse_report(call[4], 7)
    assert report == {"asked": False, "windows": [(1201, False), (1305, True), (1305, False), (1410, False)]}
    assert wm.windows_by_pid(report) == {1201: 1201, 1305: 1305, 1410: 1410}
    assert wm.kwin_active_window(report) == (1305, 1305)
    assert ran["active"] == 2  # (nothing asked: the focus stays)


@needs_node
@pytest.mark.parametrize("api", [5, 6])
def test_the_script_focuses_the_first_window_of_the_pid(api: int) -> None:
    ran = run_in_node(wm.script_text(":1.42", 9, pid=1305), [XTERM, FOOT, FOOT2], active=0, api=api)
    assert ran["active"] == 1
    report = wm.parse_report(ran["calls"][0][4], 9)
    assert report is not None and report["asked"] is True
    # a pid with no window, or only a panel's: nothing is focused, and the report says so
    for pid in (4242, 900):
        ran = run_in_node(wm.script_text(":1.42", 9, pid=pid), [PANEL, XTERM], active=1, api=api)
        assert ran["active"] == 1
        assert wm.parse_report(ran["calls"][0][4], 9) == {"asked": False, "windows": [(1201, True)]}


@needs_node
def test_no_active_window() -> None:
    ran = run_in_node(wm.script_text(":1.42", 1), [XTERM], active=None)
    report = wm.parse_report(ran["calls"][0][4], 1)
    assert report is not None and wm.kwin_active_window(report) is None


# ---- the exchange, against a stand-in KWin on a real bus ----


class StandInKWin:
    """Owns org.kde.KWin on the bus and serves org.kde.kwin.Scripting as KWin 5.27 does: a
    loaded script's object is ``/<id>`` (``api=6``: ``/Scripting/Script<id>``, KWin 6's), any
    other path answers UnknownObject; ``run`` runs the script in Node (the stand-in workspace) and makes
    the call its ``callDBus`` asked for. ``report``: False makes scripts report nothing (as a
    script KWin failed to run)."""

    def __init__(self, address: str, windows: list[dict[str, Any]], active: int | None, api: int = 5) -> None:
        from jeepney import DBusAddress, new_method_call
        from jeepney.io.blocking import open_dbus_connection

        self.windows, self.active, self.api = windows, active, api
        self.loaded: dict[int, tuple[str, str]] = {}
        self.log: list[tuple[str, ...]] = []
        self.report = True
        self.refuse = False
        self.conn = open_dbus_connection(bus=address)
        bus = DBusAddress("/org/freedesktop/DBus", bus_name="org.freedesktop.DBus", interface="org.freedesktop.DBus")
        reply = self.conn.send_and_get_reply(new_method_call(bus, "RequestName", "su", ("org.kde.KWin", 4)))
        assert reply.body == (1,)
        self.caller = open_dbus_connection(bus=address)  # (the script's calls: KWin's own connection)
        self.thread = threading.Thread(target=self._serve, daemon=True)
        self.thread.start()

    def _serve(self) -> None:
        from jeepney import HeaderFields, MessageType, new_error, new_method_return

        while True:
            try:
                msg = self.conn.receive()
            except Exception:
                return
            if msg.header.message_type is not MessageType.method_call:
                continue
            path = msg.header.fields.get(HeaderFields.path)
            member = msg.header.fields.get(HeaderFields.member)
            self.log.append((path, member, *map(str, msg.body)))
            if path == "/Scripting" and member == "loadScript":
                if self.refuse:
                    self.conn.send(new_method_return(msg, "i", (-1,)))
                    continue
                sid = len(self.loaded)
                self.loaded[sid] = (msg.body[0], Path(msg.body[0]).read_text())
                self.conn.send(new_method_return(msg, "i", (sid,)))
            elif path == "/Scripting" and member == "unloadScript":
                self.conn.send(new_method_return(msg, "b", (True,)))
            elif member == "run" and path in self.objects():
                self.conn.send(new_method_return(msg))
                if self.report:
                    self._run(self.objects()[path])
            else:
                error = "org.freedesktop.DBus.Error.UnknownObject"
                self.conn.send(new_error(msg, error, "s", (f"No such object path '{path}'",)))

    def objects(self) -> dict[str, str]:
        """The loaded scripts' object paths → their text."""
        prefix = "/Scripting/Script" if self.api == 6 else "/"
        return {f"{prefix}{sid}": text for sid, (_, text) in self.loaded.items()}

    def _run(self, script: str) -> None:
        from jeepney import DBusAddress, new_method_call

        ran = run_in_node(script, self.windows, self.active, self.api)
        self.active = ran["active"]
        for dest, path, iface, method, *args in ran["calls"]:
            to = DBusAddress(path, bus_name=dest, interface=iface)
            self.caller.send_and_get_reply(new_method_call(to, method, "s" * len(args), tuple(args)), timeout=5)

    def close(self) -> None:
        import socket

        self.conn.sock.shutdown(socket.SHUT_RDWR)  # (wakes the serving thread's receive)
        self.conn.close()
        self.caller.close()
        self.thread.join(5)


@pytest.fixture
def bus(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[str]:
    if shutil.which("dbus-daemon") is None:
        pytest.skip("dbus-daemon is not installed")
    proc, address = start_bus(tmp_path)
    monkeypatch.setenv("DBUS_SESSION_BUS_ADDRESS", address)
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))  # (the script files: counted below)
    try:
        yield address
    finally:
        stop(proc)


def _scripts_left(tmp_path: Path) -> list[Path]:
    return list(tmp_path.glob("pi-notifier-kwin-*.js"))


@needs_node
def test_run_script_through_a_stand_in_kwin(bus: str, tmp_path: Path) -> None:
    server = StandInKWin(bus, [PANEL, XTERM, FOOT], active=1)
    try:
        method = wm.Method(wm.KWIN)
        assert method.windows() == {1201: 1201, 1305: 1305}
        assert method.focused() == (1201, 1201)
        assert method.activate(1305) is True
        assert server.active == 2 and method.focused() == (1305, 1305)
        assert method.activate(4242, timeout=1.0) is False  # (no window of that process)
        assert server.active == 2
        loads = [e for e in server.log if e[1] == "loadScript"]
        unloads = [e for e in server.log if e[1] == "unloadScript"]
        assert len(loads) == len(unloads) >= 6
        assert [e[3] for e in loads] == [e[2] for e in unloads]  # (each one unloaded by its name)
        assert len({e[3] for e in loads}) == len(loads)  # (a name of its own each time)
        assert [e[0] for e in server.log if e[1] == "run"] == [f"/{i}" for i in range(len(loads))]
        assert _scripts_left(tmp_path) == []
        ok, said = wm.describe(method)
        assert ok is True and said == (
            "KWin scripting (org.kde.KWin on the session bus): 2 window(s) by process, focused: pid 1305"
        )
    finally:
        server.close()


@needs_node
def test_kwin_6_names_on_the_stand_in(bus: str) -> None:
    server = StandInKWin(bus, [XTERM, FOOT], active=None, api=6)
    try:
        assert wm.run_script(1201)["asked"] is True
        assert server.active == 0
        # 5.27's object path asked first, then KWin 6's
        assert [e[0] for e in server.log if e[1] == "run"] == ["/0", "/Scripting/Script0"]
    finally:
        server.close()


def test_failures_are_kwin_errors_within_the_timeout(bus: str, tmp_path: Path) -> None:
    import time

    with pytest.raises(wm.KWinError, match="ServiceUnknown"):  # (no KWin on this bus)
        wm.run_script(timeout=2)
    server = StandInKWin(bus, [XTERM], active=0)
    try:
        server.report = False
        started = time.monotonic()
        with pytest.raises(wm.KWinError, match="did not report within 0.5 s"):
            wm.run_script(timeout=0.5)
        assert time.monotonic() - started < 2
        wait_for(lambda: [e[1] for e in server.log][-1] == "unloadScript", 5, "the script unloaded")
        server.refuse = True
        with pytest.raises(wm.KWinError, match="refused to load"):
            wm.run_script()
        ok, said = wm.describe(wm.Method(wm.KWIN))
        assert ok is False and said.startswith("KWin scripting did not answer (KWin refused to load the script")
    finally:
        server.close()
    assert _scripts_left(tmp_path) == []
