"""The invoking user's own pi-notifier files, listed before and after a test run.

conftest.py takes a listing when pytest starts (before any test moves HOME and the XDG folders)
and fails the run if the listing at the end differs: a test that wrote into the real folders is
caught by the run itself, not by the user finding a stranger's question in `pi-notifier history`."""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path

APP = "pi-notifier"
Listing = dict[str, tuple[int, int] | None]


def places(env: Mapping[str, str]) -> list[Path]:
    """Every folder and file the app (or one of its commands) writes, for this environment."""
    home = Path(env.get("HOME") or os.path.expanduser("~"))

    def xdg(name: str, default: str) -> Path:
        value = env.get(name, "")
        return Path(value) if value.startswith("/") else home / default

    config, state = xdg("XDG_CONFIG_HOME", ".config"), xdg("XDG_STATE_HOME", ".local/state")
    data, cache = xdg("XDG_DATA_HOME", ".local/share"), xdg("XDG_CACHE_HOME", ".cache")
    found = [
        config / APP,
        state / APP,
        data / APP,
        cache / APP,
        config / "autostart" / f"{APP}.desktop",
        config / "systemd" / "user" / f"{APP}.service",
        data / "icons" / "hicolor" / "256x256" / "apps" / f"{APP}.png",
        Path(env.get("PI_CODING_AGENT_DIR") or home / ".pi" / "agent") / "extensions" / f"{APP}.ts",
    ]
    runtime = env.get("XDG_RUNTIME_DIR", "")
    if runtime.startswith("/"):
        found += [Path(runtime) / APP, Path(runtime) / f"{APP}-{os.getuid()}"]
    return found


def listing(roots: list[Path]) -> Listing:
    """(size, mtime in ns) of every file and folder under ``roots``; None for a root not there."""
    out: Listing = {}
    for root in roots:
        if not root.exists() and not root.is_symlink():
            out[str(root)] = None
            continue
        for path in [root, *(sorted(root.rglob("*")) if root.is_dir() else [])]:
            try:
                st = path.lstat()
            except OSError:
                continue
            out[str(path)] = (st.st_size, st.st_mtime_ns)
    return out


def changes(before: Listing, after: Listing) -> list[str]:
    lines = []
    for path in sorted(set(before) | set(after)):
        old, new = before.get(path), after.get(path)
        if old != new:
            what = "created" if old is None else "removed" if new is None else "changed"
            lines.append(f"{what}: {path}")
    return lines
