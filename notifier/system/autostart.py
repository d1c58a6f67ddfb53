"""`pi-notifier autostart install|remove|status`: start with the desktop session.

A systemd user unit where `systemd --user` runs, else an XDG autostart entry; a LaunchAgent on
macOS; a Startup entry on Windows. The templates ship in notifier/resources/autostart/; each entry runs the
installed executable by absolute path."""

from __future__ import annotations

import os
import shutil
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import platformdirs

from notifier import resources
from notifier.core.text import Unsafe, clean, join
from notifier.system import paths, processes

UNIT = "pi-notifier.service"
SYSTEMD_ASK_TIMEOUT_S = 10.0  # is a systemd user instance running (asked before each install)
SYSTEMCTL_TIMEOUT_S = 30.0  # enable, disable, daemon-reload


def executable() -> list[str]:
    """The command that starts pi-notifier, by absolute path."""
    argv0 = Path(sys.argv[0])
    if argv0.name == "pi-notifier" and argv0.exists():
        return [str(argv0.resolve())]
    found = shutil.which("pi-notifier")
    if found:
        return [str(Path(found).resolve())]
    beside = Path(sys.executable).with_name("pi-notifier")
    if beside.exists():
        return [str(beside)]
    return [str(Path(sys.executable).resolve()), "-m", "notifier"]


ICON_NAME = "pi-notifier"


def icon_file() -> Path:
    """Where the desktop entry's icon is installed: the user's icon theme folder, so that
    ``Icon=pi-notifier`` is a theme name, not a path into site-packages (gone, or another
    version's, after an upgrade or a move of the virtualenv)."""
    return platformdirs.user_data_path() / "icons" / "hicolor" / "256x256" / "apps" / f"{ICON_NAME}.png"


def _install_icon() -> str:
    """Copy the app icon into the icon theme folder; its name for ``Icon=`` (the path, where
    the copy fails; a stock icon, where the package has none)."""
    from notifier.resources import app_icon

    source = app_icon()
    if not source or not os.path.isfile(source):
        return "utilities-terminal"
    try:
        paths.write_whole(str(icon_file()), Path(source).read_bytes())
    except OSError:
        return source
    return ICON_NAME


@dataclass(frozen=True)
class Target:
    method: str  # systemd, xdg, launchagent, startup
    path: Path


def systemd_user_running() -> bool:
    if not shutil.which("systemctl"):
        return False
    out = processes.run(["systemctl", "--user", "is-system-running"], SYSTEMD_ASK_TIMEOUT_S)
    return out is not None and out.stdout.strip() in ("running", "degraded", "starting", "initializing")


def target(method: str | None = None) -> Target:
    if sys.platform == "darwin":
        return Target("launchagent", Path.home() / "Library" / "LaunchAgents" / "dev.pi-notifier.plist")
    if sys.platform.startswith("win"):
        appdata = Path(os.environ.get("APPDATA") or Path.home() / "AppData" / "Roaming")
        return Target(
            "startup",
            appdata / "Microsoft" / "Windows" / "Start Menu" / "Programs" / "Startup" / "pi-notifier.cmd",
        )
    method = method or ("systemd" if systemd_user_running() else "xdg")
    if method == "systemd":
        return Target("systemd", platformdirs.user_config_path() / "systemd" / "user" / UNIT)
    return Target("xdg", platformdirs.user_config_path() / "autostart" / "pi-notifier.desktop")


def unit_text(t: Target, exe: list[str], icon: str = ICON_NAME) -> str:
    """The entry's text (``icon``: the desktop entry's ``Icon=``, see :func:`_install_icon`)."""
    if t.method == "launchagent":
        from xml.sax.saxutils import escape

        args = "\n".join(f"    <string>{escape(w)}</string>" for w in [*exe, "run"])
        return resources.read_text("autostart/dev.pi-notifier.plist").replace("{args}", args)
    template, word = _ENTRIES[t.method]
    return resources.read_text(template).replace("{icon}", icon).replace("{exec}", " ".join(map(word, exe)))


def _systemd_word(word: str) -> str:
    """One word of ExecStart= (systemd.syntax): double-quoted with C escapes where it holds a
    space, quote or backslash; ``%`` and ``$`` doubled (specifiers, variables)."""
    word = word.replace("%", "%%").replace("$", "$$")
    if any(c in word for c in " \t\n\"'\\"):
        return '"' + word.replace("\\", "\\\\").replace('"', '\\"') + '"'
    return word


_RESERVED = set(" \t\n\"'\\><~|&;$*?#()`")  # Desktop Entry spec: such a word is quoted


def _desktop_word(word: str) -> str:
    """One word of a desktop entry's Exec: quoted where it holds a reserved character, with
    ``"`` `` ` `` ``$`` ``\\`` escaped inside the quotes, ``%`` doubled; then the key file's own
    escape of each backslash (the spec's two levels)."""
    word = word.replace("%", "%%")
    if any(c in _RESERVED for c in word):
        word = '"' + "".join("\\" + c if c in '"`$\\' else c for c in word) + '"'
    return word.replace("\\", "\\\\")


_ENTRIES: dict[str, tuple[str, Callable[[str], str]]] = {  # method → its template, how it writes one word
    "systemd": ("autostart/pi-notifier.service", _systemd_word),
    "xdg": ("autostart/pi-notifier.desktop", _desktop_word),
    "startup": ("autostart/pi-notifier.cmd", lambda word: f'"{word}"'),
}


def _systemctl(*args: str) -> tuple[bool, str]:
    try:
        out = processes.run_or_raise(["systemctl", "--user", *args], SYSTEMCTL_TIMEOUT_S)
    except processes.CannotRun as exc:
        return False, str(exc)
    return out.returncode == 0, (out.stderr or out.stdout).strip()


def install(method: str | None = None) -> str:
    t = target(method)
    exe = executable()
    paths.write_whole(str(t.path), unit_text(t, exe, _install_icon() if t.method == "xdg" else ICON_NAME).encode())
    if t.method == "systemd":
        _systemctl("daemon-reload")
        ok, err = _systemctl("enable", UNIT)
        if not ok:
            raise OSError(f"wrote {clean(str(t.path))} but 'systemctl --user enable' failed: {clean(err, 200)}")
    try:
        command = join([*exe, "run"])
        now = start_command(t, exe)
    except Unsafe as exc:  # (a path no one can paste: said, not shown)
        command = f"pi-notifier run (no command is shown: {exc})"
        now = "log in again"
    return f"installed ({t.method}): {clean(str(t.path))}\nstarts: {command}\nstart it now: {now}"


def start_command(t: Target, exe: list[str]) -> str:
    """How to start the app now, as the entry ``t`` will at the next login: through the service
    manager where there is one, else detached from the terminal (closing it, which sends SIGHUP,
    must not end the app). Raises :class:`Unsafe` for a path that cannot be pasted."""
    if t.method == "systemd":
        return f"systemctl --user start {UNIT}"
    if t.method == "launchagent":
        return join(["launchctl", "load", str(t.path)])
    if t.method == "startup":
        return f'"{t.path}"'
    if shutil.which("setsid"):
        return join(["setsid", "-f", *exe, "run"]) + " >/dev/null 2>&1"
    return f"log in again, or run {join([*exe, 'run'])} in a terminal you keep open"


def installed() -> list[Target]:
    candidates = [target("systemd"), target("xdg")] if sys.platform.startswith("linux") else [target()]
    return [t for t in candidates if t.path.exists()]


def remove() -> str:
    found = installed()
    if not found:
        return "autostart is not installed"
    lines = []
    for t in found:
        if t.method == "systemd":
            _systemctl("disable", UNIT)
        t.path.unlink()
        if t.method == "xdg":
            icon_file().unlink(missing_ok=True)
        lines.append(f"removed ({t.method}): {t.path}")
        if t.method == "systemd":
            _systemctl("daemon-reload")
    return "\n".join(lines)


def status() -> str:
    found = installed()
    if not found:
        return f"autostart is not installed (install would use: {target().method})"
    lines = []
    exe = executable()[0]
    for t in found:
        line = f"installed ({t.method}): {t.path}"
        if t.method == "systemd":
            ok, _ = _systemctl("is-enabled", UNIT)
            line += f" — {'enabled' if ok else 'not enabled'}"
        if exe not in t.path.read_text(errors="replace"):
            line += f"\n  note: it starts a different executable than {exe}; run 'autostart install' to update it"
        lines.append(line)
    return "\n".join(lines)
