"""Who may talk to the app: only its own user. The socket is bound 0600 in a 0700 folder, and
the uid of the process at the other end is checked on every connection where the OS tells it."""

from __future__ import annotations

import contextlib
import os
import socket
import stat
import struct
import sys


def listen_private(path: str) -> socket.socket:
    """A non-blocking listening Unix socket at ``path`` that only this user can connect to
    (its folder made 0700, the socket 0600; a stale socket there is replaced)."""
    folder = os.path.dirname(path)
    os.makedirs(folder, mode=0o700, exist_ok=True)
    st = os.stat(folder)
    if st.st_uid != os.getuid() or stat.S_IMODE(st.st_mode) & 0o077:
        os.chmod(folder, 0o700)
    with contextlib.suppress(FileNotFoundError):
        os.unlink(path)
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    old = os.umask(0o177)
    try:
        sock.bind(path)
    except OSError:
        sock.close()
        raise
    finally:
        os.umask(old)
    os.chmod(path, 0o600)
    sock.listen(socket.SOMAXCONN)
    sock.setblocking(False)
    return sock


def peer_uid(sock: socket.socket) -> int | None:
    """The uid of the process at the other end of a Unix socket; None where it cannot be known."""
    try:
        if hasattr(socket, "SO_PEERCRED"):  # Linux: struct ucred {pid, uid, gid}
            creds = sock.getsockopt(socket.SOL_SOCKET, socket.SO_PEERCRED, struct.calcsize("3i"))
            return int(struct.unpack("3i", creds)[1])
        if sys.platform == "darwin" or "bsd" in sys.platform:
            # getpeereid(3) is LOCAL_PEERCRED at SOL_LOCAL: struct xucred {u_int version; uid_t uid; …}
            data = sock.getsockopt(0, 0x001, 76)
            return int(struct.unpack_from("2I", data)[1])
    except (OSError, struct.error):
        return None
    return None
