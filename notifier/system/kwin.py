"""KWin (KDE Plasma on Wayland) through its scripting interface on the session bus: the windows
by process, the focused one, focusing one.

KWin offers no call that lists or focuses windows, but it runs scripts it is handed:
``org.kde.KWin /Scripting org.kde.kwin.Scripting.loadScript(path, name)`` loads a JavaScript file
and answers its id, ``run`` on the script's object starts it (``/<id>`` in 5.27, seen here;
``/Scripting/Script<id>`` in KWin 6, not tried here: both are asked, in that order),
``unloadScript(name)`` drops it. The script reads KWin's window list (``workspace.clientList()`` in
5.27, ``windowList()`` in 6), sets ``workspace.activeClient`` (``activeWindow`` in 6) to focus one,
and reports back with ``callDBus`` to a method of our own connection: one JSON string, the windows'
pids and which one is active. Tried against a real KWin 5.27 (``kwin_wayland --virtual``,
tests/desktop/test_kwin_focus.py).

KWin names a window by a UUID; here a window is named by its process's pid (:func:`windows_by_pid` keeps
one window per process, as the other focus methods do). Only ints come back from the script:
nothing KWin reports reaches a log line or the terminal but numbers."""

from __future__ import annotations

import itertools
import json
import os
import tempfile
import time
from typing import Any

from notifier.system.paths import session_address

# Lazy imports here: jeepney is a Linux-only dependency and this module loads on every OS.

SERVICE = "org.kde.KWin"
SCRIPTING_PATH = "/Scripting"
SCRIPTING = "org.kde.kwin.Scripting"
SCRIPT = "org.kde.kwin.Script"
REPLY_PATH = "/pi_notifier/KWinReport"
REPLY_INTERFACE = "org.pi_notifier.KWinReport"
REPLY_METHOD = "Report"
TIMEOUT_S = 3.0

_names = itertools.count(1)

# {dest}, {path}, {iface}, {method}: where to report; {token}: which run this is; {pid}: the
# window to focus (0: none). Every value put in is an int or a D-Bus name checked below.
SCRIPT_TEXT = """\
(function () {{
    var list = workspace.windowList ? workspace.windowList() : workspace.clientList();
    var active = workspace.activeWindow !== undefined ? workspace.activeWindow : workspace.activeClient;
    var want = {pid};
    var asked = false;
    var shown = [];
    for (var i = 0; i < list.length; i++) {{
        var w = list[i];
        if (!w || !(w.normalWindow || w.dialog) || !(w.pid > 0)) continue;
        if (want > 0 && !asked && w.pid === want) {{
            if (workspace.activeWindow !== undefined) workspace.activeWindow = w;
            else workspace.activeClient = w;
            asked = true;
        }}
        shown.push({{pid: w.pid, active: w === active}});
    }}
    callDBus("{dest}", "{path}", "{iface}", "{method}",
             JSON.stringify({{token: {token}, asked: asked, windows: shown}}));
}})();
"""


class KWinError(OSError):
    """KWin is not on the bus, refused the script, or did not report in time."""


def script_text(dest: str, token: int, pid: int = 0) -> str:
    """The script that reports the windows to ``dest`` (a unique bus name) and, with ``pid``,
    first focuses that process's window."""
    if not (dest.startswith(":") and all(c.isalnum() or c in ":._-" for c in dest)):
        raise ValueError(f"not a unique bus name: {dest!r}")
    return SCRIPT_TEXT.format(
        dest=dest, path=REPLY_PATH, iface=REPLY_INTERFACE, method=REPLY_METHOD, token=int(token), pid=int(pid)
    )


def parse_report(text: str, token: int) -> dict[str, Any] | None:
    """The script's report: ``{"asked": bool, "windows": [(pid, active), …]}``; ``None`` when it
    is not the report of run ``token`` (another run's, or not one)."""
    try:
        data = json.loads(text)
    except ValueError:
        return None
    if not isinstance(data, dict) or data.get("token") != token or not isinstance(data.get("windows"), list):
        return None
    windows = []
    for w in data["windows"]:
        pid = w.get("pid") if isinstance(w, dict) else None
        if isinstance(pid, int) and not isinstance(pid, bool) and pid > 0:
            windows.append((pid, w.get("active") is True))
    return {"asked": data.get("asked") is True, "windows": windows}


def windows_by_pid(report: dict[str, Any]) -> dict[int, int]:
    """pid → the window's id here (its pid)."""
    return {pid: pid for pid, _ in report["windows"]}


def active_window(report: dict[str, Any]) -> tuple[int, int] | None:
    return next(((pid, pid) for pid, active in report["windows"] if active), None)


def run_script(pid: int = 0, timeout: float = TIMEOUT_S, address: str | None = None) -> dict[str, Any]:
    """Load, run and unload the script on KWin of the session bus (``address``: another bus);
    its report (:func:`parse_report`). Raises :class:`KWinError`."""
    from jeepney import DBusAddress, HeaderFields, MatchRule, MessageType, new_method_call, new_method_return
    from jeepney.io.blocking import open_dbus_connection

    address = address or session_address()
    if address is None:
        raise KWinError("no session bus (DBUS_SESSION_BUS_ADDRESS is not set)")
    deadline = time.monotonic() + timeout
    try:
        conn = open_dbus_connection(bus=address, auth_timeout=timeout)
    except Exception as exc:
        raise KWinError(f"no session bus ({exc})") from exc
    scripting = DBusAddress(SCRIPTING_PATH, bus_name=SERVICE, interface=SCRIPTING)
    token = int.from_bytes(os.urandom(4), "big")
    name = f"pi-notifier-{os.getpid()}-{next(_names)}"

    def call(msg: Any) -> Any:
        reply = conn.send_and_get_reply(msg, timeout=max(0.05, deadline - time.monotonic()))
        if reply.header.message_type is MessageType.error:
            error = reply.header.fields.get(HeaderFields.error_name, "an error")
            raise KWinError(f"KWin answered {error}")
        return reply.body

    fd, path = tempfile.mkstemp(prefix="pi-notifier-kwin-", suffix=".js")
    try:
        with os.fdopen(fd, "w") as fh:
            fh.write(script_text(str(conn.unique_name), token, pid))
        rule = MatchRule(type="method_call", path=REPLY_PATH, interface=REPLY_INTERFACE, member=REPLY_METHOD)
        with conn.filter(rule, bufsize=8) as calls:
            (sid,) = call(new_method_call(scripting, "loadScript", "ss", (path, name)))
            if not isinstance(sid, int) or sid < 0:
                raise KWinError("KWin refused to load the script")
            try:
                _start(call, sid)
                while True:
                    left = deadline - time.monotonic()
                    if left <= 0:
                        raise KWinError(f"KWin's script did not report within {timeout:g} s")
                    try:
                        msg = conn.recv_until_filtered(calls, timeout=left)
                    except TimeoutError:
                        continue
                    if msg.header.fields.get(HeaderFields.signature) == "s":
                        conn.send(new_method_return(msg))
                        report = parse_report(msg.body[0], token)
                        if report is not None:
                            return report
            finally:
                try:
                    call(new_method_call(scripting, "unloadScript", "s", (name,)))
                except Exception:
                    pass
    except KWinError:
        raise
    except (OSError, TimeoutError) as exc:
        raise KWinError(f"KWin did not answer ({exc})") from exc
    finally:
        os.unlink(path)
        conn.close()


def _start(call: Any, sid: int) -> None:
    """``run`` on the script's object: ``/<id>`` (5.27), else ``/Scripting/Script<id>`` (KWin 6)."""
    from jeepney import DBusAddress, new_method_call

    first: KWinError | None = None
    for path in (f"/{sid}", f"{SCRIPTING_PATH}/Script{sid}"):
        try:
            call(new_method_call(DBusAddress(path, bus_name=SERVICE, interface=SCRIPT), "run"))
            return
        except KWinError as exc:
            first = first or exc
    assert first is not None
    raise first
