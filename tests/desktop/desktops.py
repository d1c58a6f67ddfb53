"""Real desktops for tests: GNOME Shell 43 (headless Wayland) with the AppIndicator extension,
XFCE 4.18's notifyd and panel under Xvfb, KDE Plasma 5.27's plasmashell (its notification server
and system tray) with kded5's StatusNotifierWatcher under Xvfb.

Each desktop has its own private session bus (nothing activatable: every service it would
activate is started here), its own HOME and XDG folders, and starts each process under
``setpriv --pdeathsig TERM`` (it dies with the test process), waits for real readiness with a
deadline and stops exactly its own PIDs. What each server shows is read from the server itself:
GNOME's message tray through the shell's ``Eval`` (allowed by a two-line test extension that
turns on its unsafe mode), xfce4-notifyd's log, and for Plasma its popup windows on the X
display. See docs/testing.md (the desktop layer) for the set-up and times."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path
from typing import Any

from notifier.system.window_manager import ACTIVATE_TIMEOUT_S, X11, Method

from ..conftest import wait_for
from .services import BUS_CONFIG, _read_line, _wrap, start_xvfb, stop

NOTIFICATIONS = "org.freedesktop.Notifications"
WATCHER = "org.kde.StatusNotifierWatcher"
XFCE_LIBEXEC = "/usr/lib/x86_64-linux-gnu/xfce4"
KDE_LIBEXEC = "/usr/lib/x86_64-linux-gnu/libexec"
GNOME_NOTIFICATIONS = "/usr/share/gnome-shell/org.gnome.Shell.Notifications"

# The programs each desktop needs (what .ci/run installs for it).
TOOLS = {
    "gnome": ("gnome-shell", "gjs", GNOME_NOTIFICATIONS, "/usr/share/gnome-shell/extensions/ubuntu-appindicators@ubuntu.com"),
    "xfce": ("Xvfb", "xfwm4", "xfce4-panel", f"{XFCE_LIBEXEC}/notifyd/xfce4-notifyd", f"{XFCE_LIBEXEC}/xfconf/xfconfd", "xdotool"),
    "kde": ("Xvfb", "plasmashell", "kded5", f"{KDE_LIBEXEC}/kactivitymanagerd", "xdotool"),
}  # fmt: skip


def missing(desktop: str) -> list[str]:
    return [t for t in TOOLS[desktop] if not (os.path.exists(t) if t.startswith("/") else shutil.which(t))]


class Desktop:
    """A private session bus and folders; subclasses start the desktop's own processes."""

    name = ""

    def __init__(self, tmp: Path) -> None:
        self.tmp = tmp
        self.procs: list[subprocess.Popen[Any]] = []
        self._logs: list[Any] = []
        home = tmp / "home"
        runtime = tmp / "runtime"
        for d in (home, runtime, tmp / "config", tmp / "cache", tmp / "data", tmp / "bus"):
            d.mkdir(parents=True, exist_ok=True)
        runtime.chmod(0o700)
        self.env = {
            "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
            "HOME": str(home),
            "XDG_RUNTIME_DIR": str(runtime),
            "XDG_CONFIG_HOME": str(tmp / "config"),
            "XDG_CACHE_HOME": str(tmp / "cache"),
            "XDG_DATA_HOME": str(tmp / "data"),
            "NO_AT_BRIDGE": "1",
            "LANG": "C.UTF-8",
        }
        try:
            self.env["DBUS_SESSION_BUS_ADDRESS"] = self._bus(tmp / "bus", "session")
            self.start()
        except BaseException:
            self.stop()
            raise

    def start(self) -> None:
        raise NotImplementedError

    def _bus(self, folder: Path, kind: str) -> str:
        config = folder / "bus.conf"
        config.write_text(
            BUS_CONFIG.format(tmp=folder).replace("<type>session</type>", f"<type>{kind}</type>")
        )
        proc = self.popen(
            "dbus-daemon", f"--config-file={config}", "--nofork", "--nopidfile", "--print-address=1",
            log=None, stdout=subprocess.PIPE,
        )  # fmt: skip
        assert proc.stdout is not None
        return _read_line(proc.stdout.fileno(), 20, "dbus-daemon")

    def popen(
        self, *cmd: str, log: str | None = "", env: dict[str, str] | None = None, **kw: Any
    ) -> subprocess.Popen[Any]:
        """``cmd`` in the desktop's environment, its output in ``<tmp>/<log or cmd name>.log``."""
        if log is not None:
            fh = (self.tmp / f"{log or Path(cmd[0]).name}.log").open("ab")
            self._logs.append(fh)
            kw.setdefault("stdout", fh)
            kw.setdefault("stderr", fh)
        else:
            kw.setdefault("stderr", subprocess.DEVNULL)
        proc = subprocess.Popen(_wrap(list(cmd)), env=env or self.env, **kw)
        self.procs.append(proc)
        return proc

    def log(self, name: str) -> str:
        path = self.tmp / f"{name}.log"
        return path.read_text(errors="replace")[-3000:] if path.exists() else ""

    def wait_owned(self, name: str, proc: subprocess.Popen[Any], log: str, timeout: float = 60) -> None:
        """Until ``name`` has an owner on the bus (``proc``, whose log is ``log``, must not exit)."""

        def owned() -> bool:
            if proc.poll() is not None:
                raise RuntimeError(f"{log} exited before it owned {name}: " + self.log(log))
            return self.has_owner(name)

        wait_for(owned, timeout, f"{name} on {self.name}'s bus")

    # ---- D-Bus, on the desktop's bus ----

    def call(
        self,
        dest: str,
        path: str,
        interface: str,
        method: str,
        signature: str = "",
        body: tuple[Any, ...] = (),
        timeout: float = 10,
    ) -> tuple[Any, ...]:
        from jeepney import DBusAddress, new_method_call
        from jeepney.io.blocking import open_dbus_connection
        from jeepney.wrappers import unwrap_msg

        address = DBusAddress(path, bus_name=dest, interface=interface)
        with open_dbus_connection(bus=self.env["DBUS_SESSION_BUS_ADDRESS"]) as conn:
            reply = conn.send_and_get_reply(
                new_method_call(address, method, signature, body), timeout=timeout
            )
        return tuple(unwrap_msg(reply))

    def has_owner(self, name: str) -> bool:
        try:
            return bool(self.call(BUS, BUS_PATH, BUS, "NameHasOwner", "s", (name,))[0])
        except Exception:
            return False

    def server_information(self) -> tuple[str, ...]:
        info = self.call(NOTIFICATIONS, NOTIFY_PATH, NOTIFICATIONS, "GetServerInformation")
        return tuple(str(x) for x in info)

    def stop(self) -> None:
        for proc in reversed(self.procs):
            stop(proc)
        for fh in self._logs:
            fh.close()


BUS = "org.freedesktop.DBus"
BUS_PATH = "/org/freedesktop/DBus"
NOTIFY_PATH = "/org/freedesktop/Notifications"

# ---- GNOME ----

GNOME_SETTINGS = """[org/gnome/shell]
enabled-extensions=['ubuntu-appindicators@ubuntu.com', 'unsafe@pi-notifier.test']
[org/gnome/desktop/interface]
enable-hot-corners=false
[org/gnome/desktop/notifications]
show-banners=true
"""
UNSAFE_UUID = "unsafe@pi-notifier.test"
UNSAFE_METADATA = {
    "uuid": UNSAFE_UUID,
    "name": "pi-notifier tests: unsafe mode",
    "description": "Lets the tests read the message tray through org.gnome.Shell.Eval",
    "shell-version": ["43"],
}
UNSAFE_EXTENSION = """function init() {}
function enable() { global.context.unsafe_mode = true; }
function disable() { global.context.unsafe_mode = false; }
"""
# Every notification in the message tray; for the one on the banner, the buttons it draws.
GNOME_SHOWN = """(() => {
  // the shell's own notices here (a root session, no GDM) would hold the banner: dismissed
  Main.messageTray.getSources().filter(s => s.title != 'pi-notifier')
    .flatMap(s => s.notifications).forEach(n => n.destroy());
  const banner = Main.messageTray._banner;
  return JSON.stringify(Main.messageTray.getSources().flatMap(s => s.notifications).map(n => ({
    title: n.title, body: n.bannerBodyText, actions: n.actions.map(a => a.label),
    buttons: banner && banner.notification === n && banner._buttonBox
      ? banner._buttonBox.get_children().map(b => b.label) : null,
  })));
})()"""


class Gnome(Desktop):
    """gnome-shell --headless --wayland with the AppIndicator extension, and its notification
    service (``org.gnome.Shell.Notifications``, the owner of org.freedesktop.Notifications)."""

    name = "GNOME"

    def start(self) -> None:
        settings = Path(self.env["XDG_CONFIG_HOME"]) / "glib-2.0" / "settings"
        settings.mkdir(parents=True)
        (settings / "keyfile").write_text(GNOME_SETTINGS)
        ext = Path(self.env["XDG_DATA_HOME"]) / "gnome-shell" / "extensions" / UNSAFE_UUID
        ext.mkdir(parents=True)
        (ext / "metadata.json").write_text(json.dumps(UNSAFE_METADATA))
        (ext / "extension.js").write_text(UNSAFE_EXTENSION)
        (self.tmp / "system-bus").mkdir()
        # without a system bus gnome-shell stops at its LoginManager ("main.js threw")
        self.env["DBUS_SYSTEM_BUS_ADDRESS"] = self._bus(self.tmp / "system-bus", "system")
        self.env["GSETTINGS_BACKEND"] = "keyfile"
        # --no-x11: no test here is an X client, and mutter's Xwayland start fails on a machine with
        # no /tmp/.X11-unix yet (it makes the folder under our umask, then finds it not writable)
        shell = self.popen(
            "gnome-shell", "--headless", "--wayland", "--no-x11", "--virtual-monitor", "1280x800", log="gnome-shell"
        )
        self.shell = shell
        wait_for(
            lambda: self._alive(shell) and self.has_owner("org.gnome.Shell"), 60, "gnome-shell on the bus"
        )
        wait_for(
            lambda: self._alive(shell) and self.eval("1") == "1", 60, "the shell's Eval (test extension on)"
        )
        wait_for(lambda: self.has_owner(WATCHER), 30, "the AppIndicator extension's watcher")
        service = self.popen("gjs", GNOME_NOTIFICATIONS, log="gnome-notifications")
        self.wait_owned(NOTIFICATIONS, service, "gnome-notifications")
        self.eval("Main.overview.hide(); 1")  # (leave the start-up overview)
        runtime = Path(self.env["XDG_RUNTIME_DIR"])
        sockets = [p.name for p in runtime.glob("wayland-*") if not p.name.endswith(".lock")]
        # (for the app's GTK tray: the full path, so an app with a runtime folder of its own finds it)
        self.env["WAYLAND_DISPLAY"] = str(runtime / sockets[0])

    def _alive(self, proc: subprocess.Popen[Any]) -> bool:
        if proc.poll() is not None:
            raise RuntimeError("gnome-shell exited: " + self.log("gnome-shell"))
        return True

    def eval(self, js: str) -> str:
        """The shell evaluates ``js`` (its Eval: allowed in unsafe mode); the result as text."""
        try:
            ok, out = self.call("org.gnome.Shell", "/org/gnome/Shell", "org.gnome.Shell", "Eval", "s", (js,))
        except Exception:
            return ""
        if not ok:
            raise RuntimeError(f"the shell could not evaluate {js[:60]!r}: {out}")
        value = json.loads(out) if out else ""
        return value if isinstance(value, str) else json.dumps(value)

    def shown(self) -> list[dict[str, Any]]:
        """pi-notifier's notifications in the shell's message tray: title, body, actions (every
        one it holds) and, for the one on the banner, the buttons drawn. (The shell's own
        notices are dismissed first.)"""
        out = self.eval(GNOME_SHOWN)
        return list(json.loads(out)) if out else []

    def click(self, title: str) -> None:
        """A click on the notification's banner (or its entry in the message list)."""
        self.eval(
            "Main.messageTray.getSources().flatMap(s => s.notifications)"
            f".find(n => n.title == {json.dumps(title)}).activate(); 1"
        )

    def press(self, title: str, label: str) -> None:
        """A click on one of the banner's buttons (the button's own handler runs)."""
        js = f"""(() => {{
          const b = Main.messageTray._banner;
          if (!b || b.notification.title != {json.dumps(title)}) return 'no banner';
          const button = b._buttonBox.get_children().find(c => c.label == {json.dumps(label)});
          if (!button) return 'no button';
          button.emit('clicked', 1);
          return 'pressed';
        }})()"""
        said = self.eval(js)
        assert said == "pressed", said

    def tray_items(self) -> list[str]:
        """The AppIndicator extension's indicators in the top bar."""
        out = self.eval(
            "JSON.stringify(Object.keys(Main.panel.statusArea).filter(k => k.startsWith('appindicator')))"
        )
        return list(json.loads(out)) if out else []


# ---- XFCE ----

XFCE_PANEL = """<?xml version="1.0" encoding="UTF-8"?>
<channel name="xfce4-panel" version="1.0">
  <property name="configver" type="int" value="2"/>
  <property name="panels" type="array">
    <value type="int" value="1"/>
    <property name="panel-1" type="empty">
      <property name="position" type="string" value="p=6;x=0;y=0"/>
      <property name="length" type="uint" value="100"/>
      <property name="position-locked" type="bool" value="true"/>
      <property name="size" type="uint" value="30"/>
      <property name="plugin-ids" type="array"><value type="int" value="1"/></property>
    </property>
  </property>
  <property name="plugins" type="empty">
    <property name="plugin-1" type="string" value="systray"/>
  </property>
</channel>
"""
# every notification in the log (the server's own record, with its actions)
XFCE_NOTIFYD = """<?xml version="1.0" encoding="UTF-8"?>
<channel name="xfce4-notifyd" version="1.0">
  <property name="notification-log" type="bool" value="true"/>
  <property name="log-level" type="uint" value="1"/>
  <property name="log-level-apps" type="uint" value="0"/>
</channel>
"""


class Xfce(Desktop):
    """Xvfb, xfconfd, xfwm4, xfce4-panel (its systray plugin: an SNI host and watcher) and
    xfce4-notifyd."""

    name = "XFCE"

    def start(self) -> None:
        channels = Path(self.env["XDG_CONFIG_HOME"]) / "xfce4" / "xfconf" / "xfce-perchannel-xml"
        channels.mkdir(parents=True)
        (channels / "xfce4-panel.xml").write_text(XFCE_PANEL)
        (channels / "xfce4-notifyd.xml").write_text(XFCE_NOTIFYD)
        xvfb, display = start_xvfb("1280x800x24")
        self.procs.append(xvfb)
        self.env["DISPLAY"] = display
        xfconfd = self.popen(f"{XFCE_LIBEXEC}/xfconf/xfconfd", log="xfconfd")
        self.wait_owned("org.xfce.Xfconf", xfconfd, "xfconfd")
        self.popen("xfwm4", "--compositor=off", log="xfwm4")
        panel = self.popen("xfce4-panel", log="xfce4-panel")
        self.wait_owned(WATCHER, panel, "xfce4-panel")
        notifyd = self.popen(f"{XFCE_LIBEXEC}/notifyd/xfce4-notifyd", log="xfce4-notifyd")
        self.wait_owned(NOTIFICATIONS, notifyd, "xfce4-notifyd")

    def logged(self) -> list[dict[str, Any]]:
        """xfce4-notifyd's log: each notification it was given (app, summary, body, actions as
        (id, label))."""
        path = Path(self.env["XDG_CACHE_HOME"]) / "xfce4" / "notifyd" / "log"
        if not path.exists():
            return []
        entries: list[dict[str, Any]] = []
        for block in path.read_text(errors="replace").split("\n["):
            fields = dict(line.split("=", 1) for line in block.splitlines() if "=" in line)
            if not fields:
                continue
            n = 0
            actions = []
            while f"action-id-{n}" in fields:
                actions.append((fields[f"action-id-{n}"], fields.get(f"action-label-{n}", "")))
                n += 1
            entries.append({"app": fields.get("app_name"), "summary": fields.get("summary"),
                            "body": fields.get("body"), "actions": actions})  # fmt: skip
        return entries

    def bubbles(self) -> list[tuple[int, int, int, int]]:
        """The bubbles on screen: (x, y, width, height) of each xfce4-notifyd window shown."""
        return [g for g in x_windows(self.env, "xfce4-notifyd") if g[2] > 50 and g[3] > 30]

    def press(self, index: int, of: int) -> None:
        """A real click (xdotool) on button ``index`` of the ``of`` buttons spread along the
        bubble's bottom (xfce4-notifyd 0.7 draws them in one row of equal widths)."""
        ((x, y, w, h),) = self.bubbles()
        margin = 14
        cx = x + margin + int((index + 0.5) * (w - 2 * margin) / of)
        click(self.env, cx, y + h - 31)


# ---- KDE Plasma ----


class Kde(Desktop):
    """Xvfb, kded5 (with its StatusNotifierWatcher module), kactivitymanagerd and plasmashell
    (the notification server and the system tray), no kwin."""

    name = "KDE"

    def start(self) -> None:
        # kded5 runs kconf_update first, whose krunnerhistory script waits 30 s for a krunner
        # (and would leave it behind): that update is marked done
        (Path(self.env["XDG_CONFIG_HOME"]) / "kconf_updaterc").write_text(
            "[krunnerhistory.upd]\ndone=5.21KRunnerHistory\n"
        )
        xvfb, display = start_xvfb("1280x800x24")
        self.procs.append(xvfb)
        self.env.update(DISPLAY=display, LIBGL_ALWAYS_SOFTWARE="1", QT_QPA_PLATFORM="xcb")
        kded = self.popen("kded5", log="kded5")
        self.wait_owned("org.kde.kded5", kded, "kded5")
        # (ksmserver would load it at login; nothing else does on a private bus)
        self.call(
            "org.kde.kded5",
            "/kded",
            "org.kde.kded5",
            "loadModule",
            "s",
            ("statusnotifierwatcher",),
            timeout=30,
        )
        wait_for(lambda: self.has_owner(WATCHER), 30, "kded5's StatusNotifierWatcher")
        self.popen(f"{KDE_LIBEXEC}/kactivitymanagerd", log="kactivitymanagerd")
        shell = self.popen("plasmashell", "--no-respawn", log="plasmashell")
        self.wait_owned(NOTIFICATIONS, shell, "plasmashell", 90)

    def popups(self) -> list[tuple[int, int, int, int]]:
        """plasmashell's notification popups on screen (x, y, width, height)."""
        return [g for g in x_windows(self.env, "plasmashell") if 200 < g[2] < 600 and 40 < g[3] < 400]

    def settled_popup(self) -> tuple[int, int, int, int]:
        """The one popup, once it has stopped sliding in (in the same place 0.2 s apart)."""
        import time

        last: list[Any] = [None, 0.0]

        def still() -> tuple[int, int, int, int] | None:
            now, at = self.popups(), time.monotonic()
            if len(now) != 1 or now != last[0]:
                last[:] = [now, at]
                return None
            return now[0] if at - last[1] >= 0.2 else None

        settled = wait_for(still, 20, "Plasma's popup in place")
        assert settled is not None
        return settled


# ---- X11 helpers (xdotool) ----


def x_windows(env: dict[str, str], cls: str) -> list[tuple[int, int, int, int]]:
    return list(shown_windows(env, "--class", cls).values())


def shown_windows(env: dict[str, str], *search: str) -> dict[str, tuple[int, int, int, int]]:
    """The windows shown on the X screen that xdotool's ``search`` finds (all: ``"--name", ""``),
    by id: (x, y, width, height)."""
    out = subprocess.run(
        ["xdotool", "search", "--onlyvisible", *search],
        capture_output=True,
        text=True,
        env=env,
        timeout=10,
    )
    shown = {}
    for wid in out.stdout.split():
        geo = subprocess.run(
            ["xdotool", "getwindowgeometry", "--shell", wid],
            capture_output=True,
            text=True,
            env=env,
            timeout=10,
        )
        v = dict(line.split("=", 1) for line in geo.stdout.splitlines() if "=" in line)
        try:
            shown[wid] = (int(v["X"]), int(v["Y"]), int(v["WIDTH"]), int(v["HEIGHT"]))
        except (KeyError, ValueError):
            continue
    return shown


def click(env: dict[str, str], x: int, y: int) -> None:
    subprocess.run(["xdotool", "mousemove", str(x), str(y), "click", "1"], env=env, check=True, timeout=10)


def screen_part(env: dict[str, str], box: tuple[int, int, int, int]) -> bytes:
    """The pixels of part of the X screen (x, y, width, height), as a screenshot shows them."""
    x, y, w, h = box
    out = subprocess.run(
        ["import", "-window", "root", "-crop", f"{w}x{h}+{x}+{y}", "rgb:-"],
        capture_output=True, env=env, timeout=20,
    )  # fmt: skip
    return out.stdout


def still_part(env: dict[str, str], box: tuple[int, int, int, int], timeout: float = 20) -> bytes:
    """Part of the screen once it has stopped changing (the same 0.3 s apart)."""
    import time

    last: list[Any] = [b"", 0.0]

    def still() -> bytes | None:
        now, at = screen_part(env, box), time.monotonic()
        if now != last[0]:
            last[:] = [now, at]
            return None
        return now if at - last[1] >= 0.3 else None

    shown = wait_for(still, timeout, "that part of the screen to stop changing")
    assert shown is not None
    return shown


def type_text(env: dict[str, str], text: str) -> None:
    subprocess.run(["xdotool", "type", "--delay", "20", text], env=env, check=True, timeout=20)
    subprocess.run(["xdotool", "key", "Return"], env=env, check=True, timeout=10)


# ---- the tray, over StatusNotifierItem and dbusmenu (no pointer needed) ----


def sni_items(desktop: Desktop) -> list[str]:
    """The items registered with the desktop's StatusNotifierWatcher ("SERVICE/PATH")."""
    try:
        (value,) = desktop.call(
            WATCHER, "/StatusNotifierWatcher", "org.freedesktop.DBus.Properties", "Get", "ss",
            (WATCHER, "RegisteredStatusNotifierItems"),
        )  # fmt: skip
    except Exception:
        return []
    return [str(x) for x in value[1]]


def _split(item: str) -> tuple[str, str]:
    """The watchers name an item "SERVICE/PATH" (KDE, XFCE) or "SERVICE@/PATH" (GNOME's
    AppIndicator extension)."""
    service, at, path = item.partition("@")
    if not at:
        service, _, path = item.partition("/")
        path = "/" + path if path else ""
    return service, path or "/StatusNotifierItem"


def sni_property(desktop: Desktop, item: str, name: str) -> Any:
    service, path = _split(item)
    (value,) = desktop.call(
        service, path, "org.freedesktop.DBus.Properties", "Get", "ss", ("org.kde.StatusNotifierItem", name)
    )
    return value[1]


def menu_layout(desktop: Desktop, item: str) -> list[tuple[int, str, list[Any]]]:
    """The item's dbusmenu: (id, label, children) for each top entry."""
    service, _ = _split(item)
    menu = sni_property(desktop, item, "Menu")
    _, (root, _props, children) = desktop.call(
        service, str(menu), "com.canonical.dbusmenu", "GetLayout", "iias", (0, -1, [])
    )
    entries = []
    for child in children:
        cid, props, sub = child[1]
        label = props.get("label", ("s", ""))[1]
        entries.append((int(cid), str(label).replace("_", ""), list(sub)))
    return entries


def menu_click(desktop: Desktop, item: str, entry: int) -> None:
    """The user clicks a menu entry (dbusmenu's Event "clicked", as the host sends it)."""
    service, _ = _split(item)
    menu = sni_property(desktop, item, "Menu")
    desktop.call(
        service, str(menu), "com.canonical.dbusmenu", "Event", "isvu", (entry, "clicked", ("i", 0), 0)
    )


def activate_window(wid: int, timeout: float = ACTIVATE_TIMEOUT_S) -> bool:
    """Raise and focus X11 window ``wid`` (EWMH), as goto's X11 method does; True once it is the
    active window."""
    return Method(X11, os.environ.get("DISPLAY", "")).activate(wid, timeout)
