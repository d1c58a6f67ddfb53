"""sway/i3 IPC: the message framing, the tree walk (windows by process, the focused one) and focus
events, on literal data shaped as sway 1.7 sends it (trimmed `swaymsg -t get_tree` output); the
lock files that name an XWayland display; the focus method chosen from the environment."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest

from notifier.system import window_manager as wm


def view(con: int, pid: int, focused: bool = False, **kw: Any) -> dict[str, Any]:
    return {"id": con, "type": "con", "pid": pid, "focused": focused, "nodes": [], "floating_nodes": [], **kw}


def tree(*workspace_nodes: dict[str, Any], floating: tuple[dict[str, Any], ...] = (), ws_focused: bool = False) -> dict[str, Any]:
    workspace = {
        "id": 4, "type": "workspace", "name": "1", "focused": ws_focused,
        "nodes": list(workspace_nodes), "floating_nodes": list(floating),
    }  # fmt: skip
    output = {"id": 3, "type": "output", "name": "HEADLESS-1", "focused": False, "nodes": [workspace], "floating_nodes": []}
    scratch = {"id": 2147483646, "type": "workspace", "name": "__i3_scratch", "nodes": [], "floating_nodes": []}
    return {"id": 1, "type": "root", "focused": False, "nodes": [{"id": 2, "type": "output", "name": "__i3", "nodes": [scratch]}, output]}


FOOT = view(5, 1201, app_id="foot", shell="xdg_shell", window=None)
XTERM = view(6, 1305, app_id=None, shell="xwayland", window=0x400022, window_properties={"class": "XTerm"})
SPLIT = {"id": 7, "type": "con", "layout": "splitv", "focused": False, "nodes": [view(8, 1410, app_id="kitty", shell="xdg_shell")]}
FLOAT = view(9, 1500, app_id="pavucontrol", shell="xdg_shell", type="floating_con")


def test_windows_by_process_tiled_split_and_floating() -> None:
    t = tree(FOOT, XTERM, SPLIT, floating=(FLOAT,))
    assert wm.views_by_pid(t) == {1201: 5, 1305: 6, 1410: 8, 1500: 9}
    # a workspace, an output, a split container: no process, not a window
    assert [n["id"] for n in wm.nodes(t) if wm.is_view(n)] == [5, 6, 8, 9]


def test_one_process_with_two_windows_keeps_the_first() -> None:
    """foot --server: every footclient window has the server's pid."""
    assert wm.views_by_pid(tree(view(5, 77, app_id="foot"), view(6, 77, app_id="foot"))) == {77: 5}


def test_the_focused_window_or_none() -> None:
    assert wm.focused_view(tree(FOOT, view(6, 1305, focused=True, shell="xwayland", window=1))) == (6, 1305)
    assert wm.focused_view(tree(FOOT, ws_focused=True)) is None  # an empty-handed workspace
    assert wm.focused_view(tree(FOOT)) is None  # nothing (a layer surface such as a bar)


def test_focus_events() -> None:
    event = {"change": "focus", "container": view(5, 1201, focused=True, app_id="foot")}
    assert wm.view_of_event(event) == (5, 1201)
    assert wm.view_of_event({"change": "title", "container": FOOT}) is None
    assert wm.view_of_event({"change": "focus", "container": {"id": 4, "type": "workspace"}}) is None
    assert wm.view_of_event(["not", "an", "event"]) is None


def test_framing_round_trip_and_refusal() -> None:
    msg = wm.encode(wm.RUN_COMMAND, "[con_id=5] focus")
    assert msg[:6] == b"i3-ipc" and len(msg) == 14 + len("[con_id=5] focus")
    assert wm.decode_header(msg[:14]) == (16, wm.RUN_COMMAND)
    with pytest.raises(wm.IpcError):
        wm.decode_header(b"X11-ip" + msg[6:14])
    with pytest.raises(wm.IpcError):
        wm.decode_header(wm.HEADER.pack(b"i3-ipc", wm.MAX_PAYLOAD + 1, 4))


def test_xwayland_lock_files(tmp_path: Path) -> None:
    """wlroots holds the display itself (its pid, then a NUL); KWin's Xwayland writes its own pid
    (its parent is the compositor); a display of someone else is not ours."""
    (tmp_path / ".X11-unix").mkdir()
    assert wm.lock_pid("      1921\x00") == 1921 and wm.lock_pid("     30561\n") == 30561
    assert wm.lock_pid("garbage") is None and wm.lock_pid("  ¹²\x00") is None
    (tmp_path / ".X0-lock").write_text(f"{1:10d}\n")  # init's: not the compositor's
    (tmp_path / ".X11-unix" / "X0").touch()
    me = os.getpid()
    assert wm.xwayland_display(me, str(tmp_path)) is None
    (tmp_path / ".X3-lock").write_text(f"{me:10d}\x00")
    assert wm.xwayland_display(me, str(tmp_path)) is None  # a lock without its socket
    (tmp_path / ".X11-unix" / "X3").touch()
    assert wm.xwayland_display(me, str(tmp_path)) == ":3"
    assert wm.xwayland_display(os.getppid(), str(tmp_path)) == ":3"  # held by a child of it
    assert wm.xwayland_display(None, str(tmp_path)) is None


def test_the_focus_method_from_the_environment(tmp_path: Path) -> None:
    sock = tmp_path / "sway-ipc.sock"
    sock.touch()
    assert getattr(wm.focus_method({"SWAYSOCK": str(sock)}), "backend", None) is wm.SWAY
    x = wm.focus_method({"DISPLAY": ":0"})
    assert isinstance(x, wm.Method) and x.backend is wm.X11 and x.limits is None
    gnome_x = wm.focus_method({"DISPLAY": ":0", "WAYLAND_DISPLAY": "wayland-0", "XDG_CURRENT_DESKTOP": "GNOME"})
    assert isinstance(gnome_x, wm.Method) and gnome_x.backend is wm.X11 and "only X11 windows" in str(gnome_x.limits)
    gnome = wm.focus_method({"WAYLAND_DISPLAY": "wayland-0", "XDG_CURRENT_DESKTOP": "GNOME"})
    assert isinstance(gnome, wm.Missing) and gnome.reason == (
        "GNOME Shell on Wayland offers no public interface to focus a window"
    )
    nothing = wm.focus_method({})
    assert isinstance(nothing, wm.Missing) and "DISPLAY and WAYLAND_DISPLAY are unset" in nothing.reason
    assert wm.has_display({"DISPLAY": ":0"}) and wm.has_display({"WAYLAND_DISPLAY": "wayland-0"})
    assert not wm.has_display({}) and not wm.has_display({"DISPLAY": "", "WAYLAND_DISPLAY": ""})
    # sway's own socket found without $SWAYSOCK: the one of a sway that still runs
    runtime = tmp_path / "run"
    runtime.mkdir()
    (runtime / f"sway-ipc.{os.getuid()}.{os.getpid()}.sock").touch()
    (runtime / f"sway-ipc.{os.getuid()}.999999999.sock").touch()  # a sway long gone
    (runtime / f"sway-ipc.{os.getuid()}.¹.sock").touch()  # (isdigit, yet int() refuses it)
    (runtime / f"sway-ipc.{os.getuid()}.1.2.sock").touch()  # not a pid
    found = wm.sway_socket_path({"XDG_RUNTIME_DIR": str(runtime)})
    assert found == str(runtime / f"sway-ipc.{os.getuid()}.{os.getpid()}.sock")


# ---- Hyprland (its IPC; no Hyprland in Debian 12: literal data and a stand-in socket) ----

HYPR_CLIENTS = json.dumps([
    {"address": "0x55d5a8e2c0b0", "mapped": True, "class": "foot", "title": "pi", "pid": 2201, "focusHistoryID": 1},
    {"address": "0x55d5a8f01a40", "mapped": True, "class": "kitty", "title": "~", "pid": 2310, "focusHistoryID": 0},
    {"address": "0x55d5a8f01b00", "class": "foot", "pid": 2201},
    {"address": "nonsense", "pid": 9},
    {"address": "0x1", "pid": -1},
])


def test_hyprland_clients_and_the_active_window() -> None:
    assert wm.clients_by_pid(HYPR_CLIENTS) == {2201: 0x55D5A8E2C0B0, 2310: 0x55D5A8F01A40}
    assert wm.clients_by_pid("Hyprland IPC didn't respond") == {}
    active = json.dumps({"address": "0x55d5a8f01a40", "class": "kitty", "pid": 2310})
    assert wm.hypr_active_window(active) == (0x55D5A8F01A40, 2310)
    assert wm.hypr_active_window("{}") is None  # nothing focused
    assert wm.focus_command(0x55D5A8E2C0B0) == "dispatch focuswindow address:0x55d5a8e2c0b0"


