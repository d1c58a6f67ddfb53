"""`pi-notifier pi-extension install | remove | status`: the optional companion pi extension.

install copies the shipped ``pi-notifier.ts`` into pi's extensions folder
(``$PI_CODING_AGENT_DIR/extensions``, default ``~/.pi/agent/extensions``), where every pi started
afterwards loads it (a running pi: ``/reload``). status says whether it is installed, whether the
installed copy is this version's, and which running pi processes have it loaded (their sockets
answer ``hello``).
"""

from __future__ import annotations

import argparse
import contextlib
import hashlib
import json
import os
import sys
import tempfile
from dataclasses import asdict, dataclass, field
from typing import Any

from notifier import APP_NAME, resources
from notifier.core.text import clean
from notifier.system import paths

FILE_NAME = "pi-notifier.ts"
RESOURCE = "pi-extension/pi-notifier.ts"
MARKER = "pi-notifier companion extension"


def shipped() -> bytes:
    return resources.read_bytes(RESOURCE)


def target(env: dict[str, str] | None = None) -> str:
    return os.path.join(paths.agent_dir(os.environ if env is None else env), "extensions", FILE_NAME)


def _digest(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def install(path: str | None = None) -> tuple[bool, str]:
    """(changed, path): write the shipped extension atomically (0644), leaving others untouched."""
    path = path or target()
    data = shipped()
    try:
        with open(path, "rb") as fh:
            if fh.read() == data:
                return False, path
    except OSError:
        pass
    folder = os.path.dirname(path)
    os.makedirs(folder, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=".pi-notifier-", suffix=".tmp", dir=folder)
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
        os.chmod(tmp, 0o644)
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise
    return True, path


def remove(path: str | None = None) -> tuple[bool, str]:
    """(removed, path). A file of that name that is not ours is left alone (ValueError)."""
    path = path or target()
    try:
        with open(path, "rb") as fh:
            head = fh.read(4096)
    except FileNotFoundError:
        return False, path
    if MARKER.encode() not in head:
        raise ValueError(f"{path} is not pi-notifier's extension; left alone")
    os.unlink(path)
    return True, path


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
    loaded: list[Loaded] = field(default_factory=list)
    unreachable: list[str] = field(default_factory=list)


def status(path: str | None = None, timeout: float = 1.0) -> Status:
    from notifier.companion.channel import ChannelError, list_sockets, open_dialogs

    path = path or target()
    try:
        with open(path, "rb") as fh:
            data: bytes | None = fh.read()
    except OSError:
        data = None
    result = Status(path, data is not None, data is not None and _digest(data) == _digest(shipped()))
    for sock in list_sockets():
        try:
            hello, dialogs = open_dialogs(sock, timeout=timeout)
        except (ChannelError, OSError):
            result.unreachable.append(sock)
            continue
        result.loaded.append(
            Loaded(sock, hello.pid, hello.pi_version, hello.session_file, hello.mode, len(dialogs))
        )
    return result


def _status_text(st: Status) -> str:
    if not st.installed:
        lines = [f"not installed (would go to {clean(st.path)}); install: {APP_NAME} pi-extension install"]
    elif st.current:
        lines = [f"installed and current: {clean(st.path)}"]
    else:
        lines = [
            f"installed but not this version's copy: {clean(st.path)} (update: {APP_NAME} pi-extension install)"
        ]
    if st.loaded:
        lines.append(f"loaded by {len(st.loaded)} running pi process(es):")
        for item in st.loaded:
            how = "answerable" if item.mode == "wrap" else "announce-only"
            lines.append(
                f"  pid {item.pid} (pi {clean(item.pi_version) or '?'}, {how}, {item.dialogs} open dialog(s))"
                f" {clean(item.session_file)}"
            )
    else:
        lines.append("no running pi has it loaded")
    return "\n".join(lines)


def cmd_pi_extension(args: argparse.Namespace, config: Any = None) -> int:
    action = args.action
    if action == "install":
        changed, path = install()
        if changed:
            print(
                f"installed {clean(path)}; pi processes started from now on load it (a running pi: /reload)"
            )
        else:
            print(f"already installed and current: {clean(path)}")
        return 0
    if action == "remove":
        try:
            removed, path = remove()
        except ValueError as exc:
            sys.stderr.write(f"{APP_NAME}: {clean(exc)}\n")
            return 1
        print(
            f"removed {clean(path)}; running pi processes keep it until they restart"
            if removed
            else f"not installed ({clean(path)})"
        )
        return 0
    st = status()
    if getattr(args, "json", False):
        print(json.dumps(asdict(st), ensure_ascii=False))
    else:
        print(_status_text(st))
    return 0
