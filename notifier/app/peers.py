"""One headless notifier per set of folders: two ``run --no-tray`` of the same folders side by
side (no app) would each notify every question. The one that holds this lock notifies; the
others stream and follow it, and the first of them to take the lock once it ended notifies from
then on (:mod:`notifier.cli.notify_turns`). Beside the app it stays with its holder, which takes
notifying back when the app ends. Runs of other folders have other locks (nobody else notifies
their questions)."""

from __future__ import annotations

import hashlib
import json
import os
import time
from collections.abc import Sequence

from notifier.system import paths

_FLAGS = os.O_RDWR | os.O_CREAT | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_CLOEXEC", 0)


class PeerLock:
    """Held exclusively, for its life, by the headless run that notifies ``roots``; the file
    names its pid for the others to follow."""

    def __init__(self, folder: str, roots: Sequence[str]) -> None:
        digest = hashlib.sha256(json.dumps(sorted(roots)).encode()).hexdigest()[:16]
        self.path = os.path.join(folder, f"notify-headless-{digest}.lock")
        self.fd: int | None = None

    @property
    def held(self) -> bool:
        return self.fd is not None

    def take(self) -> int | None:
        """Take the lock (not waiting): None when this run holds it now, else the pid of the
        run that does (0: it does not say)."""
        if self.fd is not None:
            return None
        try:
            import fcntl
        except ImportError:  # no flock (Windows): one headless notifier is not enforced there
            return None
        paths.own_folder(os.path.dirname(self.path) or ".", parents=True)
        fd = os.open(self.path, _FLAGS, 0o600)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            try:
                return _holder(fd)
            finally:
                os.close(fd)
        os.ftruncate(fd, 0)
        os.pwrite(fd, str(os.getpid()).encode(), 0)
        self.fd = fd
        return None

    def release(self) -> None:
        if self.fd is not None:
            os.close(self.fd)
            self.fd = None


def _holder(fd: int) -> int:
    """The pid the lock's holder wrote (0: none). A holder writes it just after it took the lock:
    read again for a moment while the file is still empty."""
    deadline = time.monotonic() + 0.5
    while True:
        said = os.pread(fd, 32, 0).decode("ascii", "replace").strip()
        if said or time.monotonic() >= deadline:
            return int(said) if said.isdigit() and int(said) != os.getpid() else 0
        time.sleep(0.01)
