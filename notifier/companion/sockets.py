"""Where the companion extension's sockets are and what they are called: one per pi that loaded
it, ``ext-….sock`` in pi-notifier's runtime folder. Listing them needs no socket library (most
of the time there are none, and ``status`` looks no further)."""

from __future__ import annotations

import os

from notifier.system import paths

SOCKET_PREFIX = "ext-"
SOCKET_SUFFIX = ".sock"


def is_socket_name(name: str) -> bool:
    return name.startswith(SOCKET_PREFIX) and name.endswith(SOCKET_SUFFIX) and "/" not in name


def socket_folder() -> str:
    """Where the extension puts its sockets: pi-notifier's runtime folder (checked to be ours;
    the extension makes the same choice and the same checks)."""
    return paths.runtime_dir()


def list_sockets(folder: str | None = None) -> list[str]:
    try:
        folder = folder or socket_folder()  # (OSError: no runtime folder of our own)
        names = sorted(os.listdir(folder))
    except OSError:
        return []
    return [os.path.join(folder, n) for n in names if is_socket_name(n)]
