"""What runs beside pi-notifier, installed, removed and checked from here: ``pi-notifier autostart
install | remove | status`` (start with the desktop session: :mod:`notifier.system.autostart`)
and ``pi-notifier pi-extension install | remove | status``, the optional companion pi extension.

install copies the shipped extension, a folder (``index.ts``, pi's entry point, and the modules
it imports beside it), into pi's extensions folder (``$PI_CODING_AGENT_DIR/extensions``,
default ``~/.pi/agent/extensions``) as ``pi-notifier/``, where every pi started afterwards loads it
(a running pi: ``/reload``); a single-file ``pi-notifier.ts`` of an earlier version is removed, or
pi would load both. status says whether it is installed, whether the installed copy is this
version's, and which running pi processes have it loaded (their sockets answer ``hello``).
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
from dataclasses import asdict, dataclass

from notifier import APP_NAME, resources
from notifier.cli.parser import fail, out
from notifier.companion import hellos
from notifier.config import Config
from notifier.core.text import clean
from notifier.system import autostart, paths

DIR_NAME = "pi-notifier"
LEGACY_FILE = "pi-notifier.ts"  # (versions before the extension was a folder)
RESOURCE = "pi-extension/pi-notifier"
# index.ts last: a pi starting while install writes never finds an index.ts newer than a module it imports
FILES = ("protocol.ts", "components.ts", "places.ts", "dialogs.ts", "server.ts", "wrap.ts", "index.ts")
ENTRY = "index.ts"
MARKER = "pi-notifier companion extension"


def shipped() -> dict[str, bytes]:
    return {name: resources.read_bytes(f"{RESOURCE}/{name}") for name in FILES}


def is_ours(path: str) -> bool:
    """Whether a path names this extension as pi loads it: the folder, its index.ts, or the single
    file of an earlier version."""
    base = os.path.basename(path.rstrip("/"))
    if base in ("index.ts", "index.js"):
        base = os.path.basename(os.path.dirname(path))
    return base in (DIR_NAME, LEGACY_FILE)


def target() -> str:
    return os.path.join(paths.agent_dir(os.environ), "extensions", DIR_NAME)


def _legacy(folder: str) -> str:
    return os.path.join(os.path.dirname(folder), LEGACY_FILE)


def _read(path: str, limit: int = -1) -> bytes | None:
    try:
        with open(path, "rb") as fh:
            return fh.read(limit)
    except OSError:
        return None


def _marked(path: str) -> bool:
    """Whether the file at ``path`` is one of ours (its head carries the extension's marker)."""
    head = _read(path, 4096)
    return head is not None and MARKER.encode() in head


def _remove_legacy(folder: str) -> bool:
    old = _legacy(folder)
    if _marked(old):
        os.unlink(old)
        return True
    return False


def install() -> tuple[bool, str]:
    """(changed, folder): write the shipped files that differ, each atomically (0644), and remove
    an earlier version's single file; anything else in the extensions folder is left untouched."""
    folder = target()
    os.makedirs(folder, exist_ok=True)
    changed = False
    for name, data in shipped().items():
        file = os.path.join(folder, name)
        if _read(file) != data:
            paths.write_whole(file, data)
            changed = True
    return _remove_legacy(folder) or changed, folder


def remove() -> tuple[bool, str]:
    """(removed, folder). A folder of that name that is not ours is left alone (ValueError)."""
    folder = target()
    if not os.path.lexists(folder):
        return _remove_legacy(folder), folder
    if not os.path.isdir(folder) or os.path.islink(folder) or not _marked(os.path.join(folder, ENTRY)):
        raise ValueError(f"{folder} is not pi-notifier's extension; left alone")
    _remove_legacy(folder)
    for name in FILES:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(os.path.join(folder, name))
    with contextlib.suppress(OSError):
        os.rmdir(folder)  # (kept when something else was put in it)
    return True, folder


@dataclass
class Loaded:
    socket: str
    pid: int | None
    pi_version: str | None
    session_file: str | None
    mode: str
    dialogs: int


@dataclass
class Status:
    path: str
    installed: bool
    current: bool
    loaded: list[Loaded]
    unreachable: list[str]

    def said(self) -> str:
        """Whether it is installed and this version's copy, in a few words with what to do."""
        if not self.installed:
            return f"not installed (would go to {clean(self.path)}); install: {APP_NAME} pi-extension install"
        if self.current:
            return f"installed and current: {clean(self.path)}"
        return f"installed but not this version's copy: {clean(self.path)} (update: {APP_NAME} pi-extension install)"


def status() -> Status:
    folder = target()
    installed = {name: _read(os.path.join(folder, name)) for name in FILES}
    ours_legacy = _marked(_legacy(folder))
    found = hellos()
    loaded = [Loaded(sock, h.pid, h.pi_version, h.session_file, h.mode, len(h.dialogs))
              for sock, h in found.items() if h is not None]
    unreachable = [sock for sock, h in found.items() if h is None]
    current = installed == shipped() and not ours_legacy
    return Status(folder, installed[ENTRY] is not None or ours_legacy, current, loaded, unreachable)


def cmd_pi_extension(args: argparse.Namespace, config: Config) -> int:
    if args.action == "install":
        changed, path = install()
        out(f"installed {clean(path)}; pi processes started from now on load it (a running pi: /reload)\n"
            if changed else f"already installed and current: {clean(path)}\n")
        return 0
    if args.action == "remove":
        try:
            removed, path = remove()
        except ValueError as exc:
            return fail(1, exc)
        done = f"removed {clean(path)}; running pi processes keep it until they restart"
        out(f"{done if removed else f'not installed ({clean(path)})'}\n")
        return 0
    st = status()
    if args.json:
        out(json.dumps(asdict(st), ensure_ascii=False), "\n")
        return 0
    loaded = f"loaded by {len(st.loaded)} running pi process(es):" if st.loaded else "no running pi has it loaded"
    lines = [st.said(), loaded]
    for item in st.loaded:
        how = "answerable" if item.mode == "wrap" else "announce-only"
        lines.append(f"  pid {item.pid} (pi {clean(item.pi_version) or '?'}, {how}, {item.dialogs} open dialog(s))"
                     f" {clean(item.session_file)}")
    out("\n".join(lines), "\n")
    return 0


def cmd_autostart(args: argparse.Namespace, config: Config) -> int:
    try:
        said = getattr(autostart, args.action)()
    except OSError as exc:
        return fail(1, f"autostart {args.action} failed: {clean(exc, 200)}")
    out(said, "\n")
    return 0
