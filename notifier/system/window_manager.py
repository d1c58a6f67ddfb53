"""The desktop's window managers: which window each process has, which one is focused, focusing
one, and the focus events; and where a window of ours can open (the X display, XWayland's).

A window manager is spoken to through a :class:`Backend`: data (its name, where it is spoken to,
three calls, its focus events) in :data:`BACKENDS`. :func:`focus_method` picks the one that works
here (a :class:`Method`) or says what is missing (:class:`Missing`); :meth:`Method.activate` is
the one way to focus a window: ask, then wait until the backend says it is in front.

- **sway** through its IPC (sway-ipc(7): the magic ``i3-ipc``, a payload length and a type as
  native uint32, a JSON payload; events have the type's high bit set). A view names its
  client's ``pid``; ``[con_id=N] focus`` focuses it. i3's tree names no processes: i3 is X11.
- **Hyprland** through its request socket (what ``hyprctl`` uses: one request per connection;
  ``j/clients``, ``j/activewindow``, ``dispatch focuswindow address:0x…``). Not tried against a
  running Hyprland (not in Debian 12): parsed on data shaped as its documentation shows.
- **KWin** (Plasma on Wayland) through a script loaded over its scripting interface on the
  session bus; the script focuses a window by its process's pid and reports the windows' pids
  and the active one back to our connection as one JSON string (tests/desktop/test_kwin_focus.py).
- **X11** EWMH: ``_NET_CLIENT_LIST`` / ``_NET_WM_PID``, ``_NET_ACTIVE_WINDOW`` and its
  ``PropertyNotify``. Under Wayland without ``DISPLAY``, :func:`xwayland_display` finds XWayland.

GNOME Shell on Wayland offers no public interface for any of it."""

from __future__ import annotations

import contextlib
import glob
import itertools
import json
import logging
import os
import socket
import struct
import tempfile
import time
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any, Literal, Protocol

from notifier.core.text import clean, number
from notifier.system.paths import connect_unix, session_address
from notifier.system.processes import ancestors

# Lazy imports here: Xlib and jeepney are Linux-only dependencies and this module loads on every OS.

log = logging.getLogger(__name__)

Front = tuple[int, int]  # (window id, pid) of the focused window
ASK: Literal["ask"] = "ask"  # an event that says the focus may have moved, not where: ask the backend
Seen = Front | None | Literal["ask"]
TIMEOUT_S = 2.0  # a compositor's IPC socket
ACTIVATE_TIMEOUT_S = 3.0  # how long a window may take to come to the front
REASK_S = 0.5  # asked again this long after, while another window is in front
EVENT_READ_S = 1.0  # the rest of a focus event whose first bytes came


@dataclass(frozen=True, slots=True)
class Window:
    """A window as a focus method (``via``) knows it: a con id, an address, a pid, an X11 id."""

    via: str
    id: int

    def obj(self) -> dict[str, Any]:
        return {"via": self.via, "id": self.id}

    def describe(self) -> str:
        return next(b.shown for b, _ in BACKENDS if b.via == self.via).format(self.id)


class Events(Protocol):
    """A backend's focus events, read by :class:`notifier.system.focus.FocusFollower` when its
    ``fileno`` is readable: each read says the window now in front, or :data:`ASK`."""

    def fileno(self) -> int: ...
    def read(self) -> list[Seen]: ...
    def close(self) -> None: ...


@dataclass(frozen=True, slots=True)
class Backend:
    """One interface to a window manager, as data; each call is given ``Method.path`` (a socket,
    a display, "" for the session bus). ``windows``: pid → its first window; ``focused``: (window,
    pid) in front; ``ask``: request the focus of a window (True: taken); ``events``: its focus
    events (None: asked at each check); ``place``, ``shown``: where it is, one of its windows."""

    via: str
    name: str
    place: str
    shown: str
    windows: Callable[[str], dict[int, int]]
    focused: Callable[[str], Front | None]
    ask: Callable[[str, int, float], bool]
    events: Callable[[str], Events] | None = None


@dataclass(frozen=True, slots=True)
class Method:
    """A backend where it works here; ``limits``: what it cannot see (X11 under XWayland)."""

    backend: Backend
    path: str = ""
    limits: str | None = None

    @property
    def via(self) -> str:
        return self.backend.via

    @property
    def name(self) -> str:
        return self.backend.name

    def windows(self) -> dict[int, int]:
        return self.backend.windows(self.path)

    def focused(self) -> Front | None:
        return self.backend.focused(self.path)

    def activate(self, wid: int, timeout: float = ACTIVATE_TIMEOUT_S) -> bool:
        """Focus window ``wid``: ask, then wait (at most ``timeout``) until it is in front."""
        deadline = time.monotonic() + timeout
        try:
            if not self.backend.ask(self.path, wid, timeout):
                return False
            asked, delay = time.monotonic(), 0.005
            while True:
                now = self.focused()
                if now is not None and now[0] == wid:
                    return True
                left = deadline - time.monotonic()
                if left <= 0:
                    return False
                if time.monotonic() - asked >= REASK_S:  # (a window manager may drop a request, or a
                    self.backend.ask(self.path, wid, left)  # window just mapped take the focus back)
                    asked = time.monotonic()
                time.sleep(min(delay, left))
                delay = min(delay * 2, 0.1)
        except Exception as exc:
            log.debug("%s did not focus window %s: %s", self.name, wid, exc)
            return False


@dataclass(frozen=True, slots=True)
class Missing:
    """No focus method: ``reason`` says what is missing, in a clause."""

    reason: str


def _wayland_desktop(env: Mapping[str, str]) -> str:
    desktops = (env.get("XDG_CURRENT_DESKTOP") or "").lower()
    if env.get("HYPRLAND_INSTANCE_SIGNATURE") or "hyprland" in desktops:
        return "Hyprland's IPC socket was not found"
    if "gnome" in desktops:
        return "GNOME Shell on Wayland offers no public interface to focus a window"
    name = clean(env.get("XDG_CURRENT_DESKTOP") or "this Wayland compositor", 40)
    return f"{name} offers no interface pi-notifier knows to focus a window (it knows sway's IPC)"


def _is_kde(env: Mapping[str, str]) -> bool:
    desktops = (env.get("XDG_CURRENT_DESKTOP") or "").lower().split(":")
    return "kde" in desktops or bool(env.get("KDE_FULL_SESSION"))


def has_display(env: Mapping[str, str] = os.environ) -> bool:
    """Whether ``env`` (default: ours) names a display (X11 or Wayland)."""
    return bool(env.get("DISPLAY") or env.get("WAYLAND_DISPLAY"))


def focus_method(env: Mapping[str, str] = os.environ) -> Method | Missing:
    """The first focus method of :data:`BACKENDS` found here (an environment look-up, a glob)."""
    wayland = bool(env.get("WAYLAND_DISPLAY"))
    for backend, found in BACKENDS:
        path = found(env)
        if path is not None:
            only_x = f"{_wayland_desktop(env)}: only X11 windows (XWayland) can be"
            return Method(backend, path, only_x if backend is X11 and wayland else None)
    if wayland:
        return Missing(_wayland_desktop(env))
    return Missing("no display here to raise a terminal on (DISPLAY and WAYLAND_DISPLAY are unset)")


def describe(method: Method | Missing) -> tuple[bool | None, str]:
    """For ``doctor``: (ok, detail) of the focus method, OK only when it answered."""
    if isinstance(method, Missing):
        return None, f"none: {method.reason}; goto selects the tmux pane and says so"
    try:
        front = method.focused()
        windows = method.windows()
    except Exception as exc:
        return False, f"{method.name} did not answer ({clean(exc, 120)})"
    where = method.backend.place.format(clean(method.path, 120))
    said = f"{method.name} ({where}): {len(windows)} window(s) by process, "
    said += f"focused: pid {front[1]}" if front else "focused: none"
    if method.limits:
        said += f"; {method.limits}"
    return True, said


# ---- X11 ----
def open_display() -> Any:
    """A python-xlib ``Display`` (the caller closes it), or ``None``."""
    if not os.environ.get("DISPLAY"):
        return None
    try:
        from Xlib import display

        return display.Display()
    except Exception as exc:
        log.debug("cannot open the X display: %s", exc)
        return None


def on_display(fn: Callable[[Any], Any]) -> Any:
    """``fn``'s answer, given the X display (OSError when there is none)."""
    disp = open_display()
    if disp is None:
        raise OSError("cannot open the X display")
    try:
        return fn(disp)
    finally:
        disp.close()


def _values(disp: Any, wid: int | None, atom: str) -> list[int]:
    """The values of property ``atom`` of window ``wid`` (None: the root); none where it has none."""
    from Xlib import X

    window = disp.screen().root if wid is None else disp.create_resource_object("window", wid)
    try:
        prop = window.get_full_property(disp.intern_atom(atom), X.AnyPropertyType)
    except Exception:
        return []
    return [int(v) for v in prop.value] if prop is not None else []


def x_windows_by_pid(disp: Any) -> dict[int, int]:
    """pid → top-level window (the window manager's client list; without one, the root's children)."""
    windows = _values(disp, None, "_NET_CLIENT_LIST") or [c.id for c in disp.screen().root.query_tree().children]
    return {pid: int(wid) for wid in reversed(windows) for pid in _values(disp, wid, "_NET_WM_PID")[:1]}


def window_for(pids: Iterable[int], windows: dict[int, int]) -> int | None:
    """The window of the first of ``pids`` (or of an ancestor of it) that has one."""
    return next((windows[p] for pid in pids for p in ancestors(pid) if p in windows), None)


def _x11_focused(disp: Any) -> Front | None:
    wid = next(iter(_values(disp, None, "_NET_ACTIVE_WINDOW")), 0)
    pid = next(iter(_values(disp, wid, "_NET_WM_PID")), 0) if wid else 0
    return (wid, pid) if wid and pid else None


def _ewmh_activate(d: Any, wid: int) -> bool:
    from Xlib import X
    from Xlib.protocol import event

    root = d.screen().root

    def send(win: Any, atom: str, data: list[int]) -> None:
        msg = event.ClientMessage(window=win, client_type=d.intern_atom(atom), data=(32, data + [0] * (5 - len(data))))
        root.send_event(msg, event_mask=X.SubstructureRedirectMask | X.SubstructureNotifyMask)

    for desktop in _values(d, wid, "_NET_WM_DESKTOP")[:1]:
        if desktop != 0xFFFFFFFF:  # (on every desktop)
            send(root, "_NET_CURRENT_DESKTOP", [desktop, X.CurrentTime])
    front = next(iter(_values(d, None, "_NET_ACTIVE_WINDOW")), 0)
    send(d.create_resource_object("window", wid), "_NET_ACTIVE_WINDOW", [2, X.CurrentTime, front])  # 2: a pager asks
    d.flush()
    return True


class _X11Events:
    def __init__(self, _: str) -> None:
        from Xlib import X

        self._disp = open_display()
        if self._disp is None:
            raise OSError("cannot open the X display")
        self._disp.screen().root.change_attributes(event_mask=X.PropertyChangeMask)
        self._disp.sync()
        self._active = self._disp.intern_atom("_NET_ACTIVE_WINDOW")

    def fileno(self) -> int:
        return int(self._disp.fileno())

    def read(self) -> list[Seen]:
        from Xlib import X

        changed = False
        while self._disp.pending_events():
            e = self._disp.next_event()
            changed = changed or (e.type == X.PropertyNotify and e.atom == self._active)
        return [ASK] if changed else []

    def close(self) -> None:
        self._disp.close()


# ---- the X display for the window (Tk) ----


def lock_pid(text: str) -> int | None:
    """The pid in an X server's lock file (``/tmp/.X<N>-lock``; wlroots writes a NUL after it)."""
    return number(text.strip(" \n\x00"))


def xwayland_display(compositor: int | None, tmp: str = "/tmp") -> str | None:
    """The X display (":N") the Wayland compositor (a pid) serves through XWayland: one whose lock
    file it holds (wlroots, mutter) or an Xwayland it started holds (KWin)."""
    if compositor is None:
        return None
    for path in sorted(glob.glob(os.path.join(tmp, ".X*-lock"))):
        display = os.path.basename(path)[2:-5]
        try:
            with open(path) as fh:
                pid = lock_pid(fh.read(64))
        except OSError:
            continue
        held = pid is not None and compositor in ancestors(pid)[:2]  # (it, or an Xwayland it started)
        if held and number(display) is not None and os.path.exists(os.path.join(tmp, ".X11-unix", f"X{display}")):
            return f":{display}"
    return None


def window_display(env: Mapping[str, str] = os.environ) -> tuple[dict[str, str] | None, str]:
    """Where the Tk window can open: (the variables to give it, in words), or (None, why not)."""
    if env.get("DISPLAY"):
        return {}, f"X display {clean(env['DISPLAY'], 40)}"
    if not env.get("WAYLAND_DISPLAY"):
        return None, "no display to show the window on (DISPLAY and WAYLAND_DISPLAY are unset)"
    found = xwayland_display(wayland_server_pid(env))
    if found is None:
        how = " (sway: 'xwayland enable')" if env.get("SWAYSOCK") else ""
        return None, (
            f"the window needs X (Tk) and this Wayland desktop offers no XWayland{how}; notifications and the"
            " tray still work"
        )
    extra = {"DISPLAY": found}
    runtime = glob.escape(env.get("XDG_RUNTIME_DIR") or "/nonexistent")
    auth = sorted(glob.glob(os.path.join(runtime, ".mutter-Xwaylandauth.*")))
    if auth and not env.get("XAUTHORITY"):
        extra["XAUTHORITY"] = auth[-1]  # GNOME's XWayland asks for its cookie
    return extra, f"XWayland display {found} of the Wayland compositor (DISPLAY was unset)"


# ---- sway ----
MAGIC = b"i3-ipc"
HEADER = struct.Struct("=6sII")
RUN_COMMAND, SUBSCRIBE, GET_TREE = 0, 2, 4
EVENT_BIT = 0x80000000
EVENT_WORKSPACE, EVENT_WINDOW = EVENT_BIT | 0, EVENT_BIT | 3
MAX_PAYLOAD = 64 << 20  # a tree of thousands of windows is a few MB


class IpcError(OSError):
    """The socket failed or answered something that is not the protocol."""


def sway_socket_path(env: Mapping[str, str] = os.environ) -> str | None:
    """``$SWAYSOCK``; else (started by systemd, say) the ``sway-ipc.UID.PID.sock`` of a running
    sway in ``$XDG_RUNTIME_DIR``, the one serving ``$WAYLAND_DISPLAY`` first."""
    path = env.get("SWAYSOCK")
    if path and os.path.exists(path):
        return path
    runtime = env.get("XDG_RUNTIME_DIR")
    if not runtime:
        return None
    name = f"sway-ipc.{os.getuid()}."
    socks = sorted(glob.glob(os.path.join(glob.escape(runtime), f"{name}*.sock")))
    pids = [(number(os.path.basename(p)[len(name) : -len(".sock")]), p) for p in socks]
    alive = [(pid, p) for pid, p in pids if pid is not None and os.path.exists(f"/proc/{pid}")]
    compositor = wayland_server_pid(env) if alive else None
    return next((p for pid, p in alive if pid == compositor), alive[0][1] if alive else None)


def wayland_server_pid(env: Mapping[str, str] = os.environ) -> int | None:
    """The pid of the compositor serving ``$WAYLAND_DISPLAY`` (the socket peer's credentials)."""
    name = env.get("WAYLAND_DISPLAY")
    if not name:
        return None
    path = name if os.path.isabs(name) else os.path.join(env.get("XDG_RUNTIME_DIR") or "/nonexistent", name)
    try:
        with connect_unix(path, TIMEOUT_S) as s:
            creds = s.getsockopt(socket.SOL_SOCKET, socket.SO_PEERCRED, struct.calcsize("3i"))
    except OSError:
        return None
    return struct.unpack("3i", creds)[0] or None


def encode(kind: int, payload: str = "") -> bytes:
    data = payload.encode()
    return HEADER.pack(MAGIC, len(data), kind) + data


def decode_header(head: bytes) -> tuple[int, int]:
    """(payload length, message type) of a 14-byte header; :class:`IpcError` if it is not one."""
    magic, length, kind = HEADER.unpack(head)
    if magic != MAGIC or length > MAX_PAYLOAD:
        raise IpcError("not an i3-ipc message")
    return length, kind


class Connection:
    """One connection to the compositor (the caller closes it: a context manager)."""

    def __init__(self, path: str, timeout: float = TIMEOUT_S) -> None:
        self.sock = connect_unix(path, timeout)

    def __enter__(self) -> Connection:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        self.sock.close()

    def _read(self, n: int) -> bytes:
        data = b""
        while len(data) < n:
            chunk = self.sock.recv(n - len(data))
            if not chunk:
                raise IpcError("the compositor closed its IPC socket")
            data += chunk
        return data

    def receive(self) -> tuple[int, Any]:
        length, kind = decode_header(self._read(HEADER.size))
        try:
            return kind, json.loads(self._read(length))
        except ValueError as exc:
            raise IpcError(f"not JSON: {exc}") from None

    def ask(self, kind: int, payload: str = "") -> Any:
        """Send one message and return its reply (events that come first are passed over)."""
        self.sock.sendall(encode(kind, payload))
        while True:
            got, body = self.receive()
            if got == kind:
                return body
            if not got & EVENT_BIT:
                raise IpcError(f"reply of type {got} to a message of type {kind}")


# ---- the tree (pure: literal data in the unit tests) ----


def nodes(tree: dict[str, Any]) -> Iterator[dict[str, Any]]:
    """Every node of the tree, tiled and floating, depth first."""
    stack = [tree]
    while stack:
        node = stack.pop()
        yield node
        for key in ("floating_nodes", "nodes"):
            children = node.get(key)
            if isinstance(children, list):
                stack.extend(reversed([c for c in children if isinstance(c, dict)]))


def is_view(node: dict[str, Any]) -> bool:
    """A window of a client (not a workspace, an output or a split)."""
    return (
        node.get("type") in ("con", "floating_con")
        and isinstance(node.get("id"), int)
        and isinstance(node.get("pid"), int)
        and node["pid"] > 0
        and (node.get("app_id") is not None or node.get("window") is not None or "shell" in node)
    )


def views_by_pid(tree: dict[str, Any]) -> dict[int, int]:
    """pid → the con id of that process's first window."""
    return {int(n["pid"]): int(n["id"]) for n in reversed(list(nodes(tree))) if is_view(n)}


def focused_view(tree: dict[str, Any]) -> tuple[int, int] | None:
    """(con id, pid) of the focused window; None for none (an empty workspace, a bar)."""
    for node in nodes(tree):
        if node.get("focused") is True:
            return (int(node["id"]), int(node["pid"])) if is_view(node) else None
    return None


def view_of_event(event: Any) -> tuple[int, int] | None:
    """A ``window`` event's focused window ("change": "focus"), as (con id, pid)."""
    if not isinstance(event, dict) or event.get("change") != "focus":
        return None
    con = event.get("container")
    return (int(con["id"]), int(con["pid"])) if isinstance(con, dict) and is_view(con) else None


def _sway_tree(path: str) -> dict[str, Any]:
    with Connection(path) as conn:
        tree = conn.ask(GET_TREE)
    if not isinstance(tree, dict):
        raise IpcError("the tree is not an object")
    return tree


def _sway_ask(path: str, wid: int, timeout: float) -> bool:
    """``[con_id=N] focus`` (a command: unlike an X11 client's request, never only "urgent");
    True when every part of it succeeded."""
    with Connection(path, timeout) as conn:
        replies = conn.ask(RUN_COMMAND, f"[con_id={int(wid)}] focus")
    return isinstance(replies, list) and bool(replies) and all(
        isinstance(r, dict) and r.get("success") is True for r in replies
    )


class _SwayEvents:
    def __init__(self, path: str) -> None:
        self._conn = Connection(path)
        reply = self._conn.ask(SUBSCRIBE, json.dumps(["window", "workspace"]))
        if not (isinstance(reply, dict) and reply.get("success") is True):
            raise IpcError("the compositor refused to send window and workspace events")
        self._conn.sock.settimeout(EVENT_READ_S)  # (read when ready, on the notifier's thread: never held up long)

    def fileno(self) -> int:
        return self._conn.sock.fileno()

    def read(self) -> list[Seen]:
        kind, event = self._conn.receive()
        if kind == EVENT_WINDOW and isinstance(event, dict) and event.get("change") == "focus":
            return [view_of_event(event)]
        return [ASK] if kind in (EVENT_WINDOW, EVENT_WORKSPACE) else []  # (a close, a move, a workspace)

    def close(self) -> None:
        self._conn.close()


# ---- Hyprland ----
MAX_ANSWER = 16 << 20


def hypr_socket_path(env: Mapping[str, str]) -> str | None:
    sig = env.get("HYPRLAND_INSTANCE_SIGNATURE")
    if not sig or "/" in sig:
        return None
    bases = [os.path.join(env["XDG_RUNTIME_DIR"], "hypr")] if env.get("XDG_RUNTIME_DIR") else []
    paths = [os.path.join(base, sig, ".socket.sock") for base in [*bases, "/tmp/hypr"]]
    return next((path for path in paths if os.path.exists(path)), None)


def request(path: str, command: str, timeout: float = TIMEOUT_S) -> str:
    """Hyprland's answer to one command (``OSError`` when the socket fails)."""
    with connect_unix(path, timeout) as s, s.makefile("rb") as answer:
        s.sendall(command.encode())
        return answer.read(MAX_ANSWER).decode(errors="replace")  # (until Hyprland closes it)


def _json(text: str) -> Any:
    """``text`` as JSON; None when it is not JSON."""
    try:
        return json.loads(text)
    except ValueError:
        return None


def _client(client: Any) -> tuple[int, int] | None:
    """(address, pid) of one of Hyprland's clients (``{"address": "0x…", "pid": N}``)."""
    addr, pid = (client.get("address"), client.get("pid")) if isinstance(client, dict) else (None, None)
    if isinstance(addr, str) and addr.startswith("0x") and isinstance(pid, int) and pid > 0:
        with contextlib.suppress(ValueError):
            return int(addr, 16), pid
    return None


def clients_by_pid(answer: str) -> dict[int, int]:
    """``j/clients`` → pid → the window address (as an int) of that process's first window."""
    clients = _json(answer)
    found = filter(None, map(_client, clients if isinstance(clients, list) else ()))
    return {pid: addr for addr, pid in reversed(list(found))}  # (reversed: the first one stays)


def hypr_active_window(answer: str) -> tuple[int, int] | None:
    """``j/activewindow`` → (address, pid); ``None`` for ``{}`` (nothing focused)."""
    return _client(_json(answer))


def focus_command(address: int) -> str:
    return f"dispatch focuswindow address:0x{address:x}"


# ---- KWin ----
SERVICE = "org.kde.KWin"
SCRIPTING_PATH = "/Scripting"
SCRIPTING = "org.kde.kwin.Scripting"
SCRIPT = "org.kde.kwin.Script"
REPLY_PATH = "/pi_notifier/KWinReport"
REPLY_INTERFACE = "org.pi_notifier.KWinReport"
REPLY_METHOD = "Report"
KWIN_TIMEOUT_S = 3.0

_names = itertools.count(1)

# Where to report ({dest} … {method}), which run ({token}), which pid's window to focus (0: none).
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
    """The script that reports the windows to ``dest`` (a unique bus name), first focusing ``pid``'s."""
    if not (dest.startswith(":") and all(c.isalnum() or c in ":._-" for c in dest)):
        raise ValueError(f"not a unique bus name: {dest!r}")
    return SCRIPT_TEXT.format(
        dest=dest, path=REPLY_PATH, iface=REPLY_INTERFACE, method=REPLY_METHOD, token=int(token), pid=int(pid)
    )


def parse_report(text: str, token: int) -> dict[str, Any] | None:
    """The report of run ``token``: ``{"asked": bool, "windows": [(pid, active), …]}``, else None."""
    data = _json(text)
    if not isinstance(data, dict) or data.get("token") != token or not isinstance(data.get("windows"), list):
        return None
    windows = []
    for w in data["windows"]:
        pid = w.get("pid") if isinstance(w, dict) else None
        if isinstance(pid, int) and not isinstance(pid, bool) and pid > 0:
            windows.append((pid, w.get("active") is True))
    return {"asked": data.get("asked") is True, "windows": windows}


def windows_by_pid(report: dict[str, Any]) -> dict[int, int]:
    return {pid: pid for pid, _ in report["windows"]}


def kwin_active_window(report: dict[str, Any]) -> tuple[int, int] | None:
    return next(((pid, pid) for pid, active in report["windows"] if active), None)


def run_script(pid: int = 0, timeout: float = KWIN_TIMEOUT_S, address: str | None = None) -> dict[str, Any]:
    """Load, run and unload the script on KWin of the session bus (or ``address``); its report."""
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
                objects = (f"/{sid}", f"{SCRIPTING_PATH}/Script{sid}")  # (KWin 5.27, KWin 6)
                try:
                    call(new_method_call(DBusAddress(objects[0], bus_name=SERVICE, interface=SCRIPT), "run"))
                except KWinError:
                    call(new_method_call(DBusAddress(objects[1], bus_name=SERVICE, interface=SCRIPT), "run"))
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
                with contextlib.suppress(Exception):
                    call(new_method_call(scripting, "unloadScript", "s", (name,)))
    except KWinError:
        raise
    except (OSError, TimeoutError) as exc:
        raise KWinError(f"KWin did not answer ({exc})") from exc
    finally:
        os.unlink(path)
        conn.close()


# ---- the table ----

SWAY = Backend(
    "sway", "sway IPC", "socket {}", "sway window {}",
    windows=lambda path: views_by_pid(_sway_tree(path)),
    focused=lambda path: focused_view(_sway_tree(path)),
    ask=_sway_ask,
    events=_SwayEvents,
)  # fmt: skip
HYPRLAND = Backend(
    "hyprland", "Hyprland IPC", "socket {}", "hyprland window {}",
    windows=lambda path: clients_by_pid(request(path, "j/clients")),
    focused=lambda path: hypr_active_window(request(path, "j/activewindow")),
    ask=lambda path, wid, timeout: request(path, focus_command(wid), timeout).strip() == "ok",
)  # fmt: skip
KWIN = Backend(
    "kwin", "KWin scripting", "org.kde.KWin on the session bus", "KWin window of pid {}",
    windows=lambda _: windows_by_pid(run_script()),
    focused=lambda _: kwin_active_window(run_script()),
    ask=lambda _, wid, timeout: bool(run_script(int(wid), timeout)["asked"]),  # (False: no window of that pid)
)  # fmt: skip
X11 = Backend(
    "x11", "X11 EWMH", "display {}", "window 0x{:x}",
    windows=lambda _: dict(on_display(x_windows_by_pid)),
    focused=lambda _: on_display(_x11_focused),
    ask=lambda _, wid, timeout: bool(on_display(lambda disp: _ewmh_activate(disp, wid))),
    events=_X11Events,
)  # fmt: skip

# Each backend, and where it is found in an environment (None: not here), in the order tried.
BACKENDS: tuple[tuple[Backend, Callable[[Mapping[str, str]], str | None]], ...] = (
    (SWAY, sway_socket_path),
    (HYPRLAND, hypr_socket_path),
    (KWIN, lambda env: "" if env.get("WAYLAND_DISPLAY") and _is_kde(env) else None),
    (X11, lambda env: env.get("DISPLAY") or None),
)
