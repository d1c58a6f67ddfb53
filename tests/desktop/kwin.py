"""A real KWin 5.27 (``kwin_wayland --virtual``: its headless backend, with XWayland) for tests,
in a user namespace of its own with a private session bus, as :mod:`tests.desktop.sway` does.

``/usr/bin/kwin_wayland`` carries the file capability ``cap_sys_resource``; where that capability
is not in the bounding set (as in this container) exec refuses it ("Operation not permitted"), so
a copy without it is run. The copy keeps the name ``kwin_wayland``: KWin's own Qt platform plugin
loads only in a binary of that name. foot dies of SIGFPE on KWin's virtual output (5.27, foot
1.13), so the terminals here are xterms under KWin's XWayland."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path
from typing import Any

from ..conftest import wait_for
from .sway import Sway


class KWin(Sway):
    """KWin + a private session bus in a user namespace; ``display`` is KWin's XWayland."""

    def __init__(self, tmp: Path) -> None:
        super().__init__(tmp, xwayland=True)

    def _start_sway(self) -> None:  # (the compositor of the base class's start)
        bin_dir = self.tmp / "bin"
        bin_dir.mkdir()
        binary = shutil.which("kwin_wayland")
        assert binary is not None
        shutil.copy(binary, bin_dir / "kwin_wayland")  # (not copy2: no file capability)
        # (kwin_scripting.debug: a script's print reaches the log, for kwin_script below)
        env = dict(self.env, XDG_CURRENT_DESKTOP="KDE", QT_LOGGING_RULES="kwin_scripting.debug=true")
        log = self._log("kwin.log")
        proc = self.popen(
            str(bin_dir / "kwin_wayland"), "--virtual", "--xwayland", "--socket", "kwin-test",
            "--width", "1024", "--height", "768", "--no-lockscreen", "--no-global-shortcuts", "--no-kactivities",
            env=env, stdout=log, stderr=log,
        )  # fmt: skip
        self.sway = self.kwin = proc

        def ready() -> bool:
            if proc.poll() is not None:
                raise RuntimeError("kwin_wayland exited: " + (self.tmp / "kwin.log").read_text()[-2000:])
            return (self.runtime / "kwin-test").exists() and self.name_has_owner("org.kde.KWin")

        wait_for(ready, 60, "KWin's Wayland socket and org.kde.KWin on the bus")
        self.env["WAYLAND_DISPLAY"] = "kwin-test"
        self.env["XDG_CURRENT_DESKTOP"] = "KDE"

    def kwin_script(self, body: str) -> str:
        """What a KWin script's ``print`` calls wrote, for checks independent of pi-notifier's
        own script: ``body`` is run by ``dbus-send`` calls (loadScript, run) and its prints read
        from KWin's log, between two markers."""
        self._checks = getattr(self, "_checks", 0) + 1
        marker = f"pn-check-{self._checks}"  # (each run's own: the log keeps the earlier ones)
        path = self.tmp / f"{marker}.js"
        path.write_text(f'print("{marker}-begin");\n{body}\nprint("{marker}-end");\n')
        out = self.run(
            "dbus-send", "--session", "--print-reply", "--dest=org.kde.KWin", "/Scripting",
            "org.kde.kwin.Scripting.loadScript", f"string:{path}", f"string:{marker}",
        )  # fmt: skip
        assert out.returncode == 0, out.stderr
        sid = out.stdout.split()[-1]
        started = self.run("dbus-send", "--session", "--print-reply", "--dest=org.kde.KWin", f"/{sid}", "org.kde.kwin.Script.run")
        if started.returncode != 0:
            started = self.run(
                "dbus-send", "--session", "--print-reply", "--dest=org.kde.KWin", f"/Scripting/Script{sid}",
                "org.kde.kwin.Script.run",
            )  # fmt: skip
        assert started.returncode == 0, started.stderr
        log = self.tmp / "kwin.log"

        def printed() -> str:  # ("" until the end marker: the text between is never empty)
            text = log.read_text(errors="replace")
            if f"{marker}-end" not in text:
                return ""
            return text.split(f"{marker}-begin", 1)[1].split(f"{marker}-end", 1)[0]

        try:
            return wait_for(printed, 20, "the check script's prints in KWin's log")
        finally:
            self.run(
                "dbus-send", "--session", "--print-reply", "--dest=org.kde.KWin", "/Scripting",
                "org.kde.kwin.Scripting.unloadScript", f"string:{marker}",
            )  # fmt: skip

    def active_pid(self) -> int | None:
        """The pid of KWin's active window, read by a script of the test's own (its ``print``)."""
        text = self.kwin_script(
            "var a = workspace.activeClient;\n"
            'print("active-pid=" + (a ? a.pid : 0));'
        )
        pid = int(text.split("active-pid=", 1)[1].split()[0])
        return pid or None

    def xterm(self, *command: str, env: dict[str, str] | None = None, **kw: Any) -> subprocess.Popen[Any]:
        """An xterm on KWin's XWayland running ``command`` (through sh: xterm's own command line
        must not name pi among its first words)."""
        env = dict(env or self.env, DISPLAY=self.display)
        return self.popen(
            "xterm", "-e", "sh", "-c", 'exec "$0" "$@"', *command, env=env,
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, **kw,
        )  # fmt: skip
