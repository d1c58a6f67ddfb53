"""Who may talk to the app: only its own user. The socket is bound 0600 in a 0700 folder of
ours, and the uid of the process at the other end is checked on every connection where the OS
tells it, both ways: the app refuses other users' clients, a client trusts only a socket file of
ours served by a process of ours. (No ``socket`` or ``struct`` import at the top:
``status`` checks a socket file before it knows there is an app to talk to.)"""

from __future__ import annotations

import contextlib
import os
import stat
import sys
from typing import TYPE_CHECKING

from notifier.system import paths

if TYPE_CHECKING:
    import socket


def listen_private(path: str) -> socket.socket:
    """A non-blocking listening Unix socket at ``path`` that only this user can connect to
    (its folder must be ours and not a link, and is made 0700; the socket 0600; a stale socket
    there is replaced). Raises :class:`~notifier.system.paths.NotOurs` for a folder that is not
    ours: nothing is created, changed or removed in it."""
    import socket

    paths.own_folder(os.path.dirname(path) or ".", parents=True)
    with contextlib.suppress(FileNotFoundError):
        if stat.S_ISSOCK(os.lstat(path).st_mode):  # (anything else there makes bind fail)
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
    import socket
    import struct

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


def socket_not_ours(path: str) -> str | None:
    """Why the socket file at ``path`` cannot have been made by this user (None: it can): a link,
    something other than a socket, or a socket another user owns. Checked without following
    links; raises OSError (FileNotFoundError) when there is nothing there."""
    st = os.lstat(path)
    if not stat.S_ISSOCK(st.st_mode):
        return "it is a symbolic link" if stat.S_ISLNK(st.st_mode) else "it is not a socket"
    if hasattr(os, "getuid") and st.st_uid != os.getuid():
        return f"it belongs to uid {st.st_uid}"
    return None


def server_not_ours(sock: socket.socket) -> str | None:
    """Why the process serving a connected ``sock`` is not one of this user's (None: it is, or
    the system does not tell)."""
    uid = peer_uid(sock)
    if uid is not None and hasattr(os, "getuid") and uid != os.getuid():
        return f"it is served by uid {uid}"
    return None
