"""Where things are: pi's sessions folder, and our per-OS config / state / runtime folders."""

from __future__ import annotations

import contextlib
import itertools
import json
import logging
import os
import stat
import tempfile
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING

import platformdirs

from notifier import APP_NAME

if TYPE_CHECKING:
    import socket
from notifier.core.text import clean
from notifier.system.log import LogOnce

log = logging.getLogger(__name__)


def _expand(value: str, home: str) -> str:
    """``~`` as pi expands it in these settings: only ``~`` and ``~/…``, with ``home`` the HOME of
    the environment given (doctor asks with a running pi's own). Not os.path.expanduser: that
    reads this process's HOME, and also expands ``~user``, which pi leaves as it is."""
    if value == "~":
        return home
    if value.startswith("~/") or value.startswith("~\\"):
        return os.path.join(home, value[2:])
    return value


def _home(env: Mapping[str, str]) -> str:
    return env.get("HOME") or os.path.expanduser("~")  # (without HOME: the password database's)


def _env_dir(env: Mapping[str, str], name: str, cwd: str | None = None) -> str | None:
    """The folder pi's variable ``name`` sets, if set (relative: from ``cwd``, the folder of the
    pi whose environment it is; else this process's)."""
    value = env.get(name)
    if not value:
        return None
    value = _expand(value, _home(env))
    return os.path.normpath(os.path.join(cwd, value)) if cwd else os.path.abspath(value)


def agent_dir(env: Mapping[str, str] = os.environ, cwd: str | None = None) -> str:
    """pi's agent folder, as the pi of environment ``env`` running in ``cwd`` has it."""
    return _env_dir(env, "PI_CODING_AGENT_DIR", cwd) or os.path.join(_home(env), ".pi", "agent")


def default_sessions_dir(env: Mapping[str, str] = os.environ) -> str:
    """pi's own precedence: PI_CODING_AGENT_SESSION_DIR, then ``sessionDir`` in the agent dir's
    settings.json (``~/…``, or a ``file://`` URL, as pi takes them), then ``<agent dir>/sessions``
    (``~/.pi/agent/sessions`` by default). A relative ``sessionDir`` is resolved by pi against
    each pi's own working folder, a folder per project that cannot be known here: said (once per
    process), and the default is watched."""
    explicit = _env_dir(env, "PI_CODING_AGENT_SESSION_DIR")
    if explicit:
        return explicit
    base = agent_dir(env)
    settings = os.path.join(base, "settings.json")
    value = _setting_dir(settings, _home(env))
    if value is not None and os.path.isabs(value):
        return os.path.normpath(value)
    if value is not None:
        said = "sessionDir %r is relative: pi puts each project's sessions under that project's folder,"
        said += " which pi-notifier cannot know; add those folders with --sessions-dir (or sessions_dirs)"
        _explained(settings, f"relative {value}", said, value)
    return os.path.join(base, "sessions")


def sessions_dir_of(cwd: str, argv: Sequence[str], env: Mapping[str, str]) -> str | None:
    """Where a running pi writes its sessions (``None``: nowhere, ``--no-session``), by pi's
    precedence: ``--session PATH`` (its folder), ``--session-dir``, PI_CODING_AGENT_SESSION_DIR,
    ``sessionDir`` in its project's ``.pi/settings.json`` then in the agent dir's (relative:
    from its folder ``cwd``), else the default. ``env``: its own environment, as far as known."""
    args = list(argv)
    if "--no-session" in args:
        return None
    flags = {a: b for a, b in itertools.pairwise(args) if a in ("--session", "--session-dir")}
    home = _home(env)
    session = flags.get("--session")
    if session and (os.sep in session or session.endswith(".jsonl")):  # (else an id, in its usual folder)
        return os.path.dirname(os.path.normpath(os.path.join(cwd, _expand(session, home))))
    explicit = flags.get("--session-dir") or env.get("PI_CODING_AGENT_SESSION_DIR")
    agent = agent_dir(env, cwd)
    for value in (explicit, *(_setting_dir(s, home) for s in (
        os.path.join(cwd, ".pi", "settings.json"), os.path.join(agent, "settings.json")
    ))):
        if value:
            return os.path.normpath(os.path.join(cwd, _expand(value, home)))
    return os.path.join(agent, "sessions")


def _setting_dir(settings: str, home: str) -> str | None:
    """``sessionDir`` of one pi settings file (``~`` and a ``file://`` URL expanded, as pi takes
    them; a relative one as it is), ``None`` where it sets none or cannot be read (said)."""
    try:
        with open(settings, encoding="utf-8") as fh:
            data = json.load(fh)
    except FileNotFoundError:
        return None
    except (OSError, ValueError) as exc:
        log.warning("cannot read %s (%s); taken as setting no sessions folder", clean(settings), clean(str(exc)))
        return None
    value = data.get("sessionDir") if isinstance(data, dict) else None
    if not isinstance(value, str) or not value.strip():
        return None
    value = value.strip()
    if value.startswith("file://"):
        from urllib.parse import urlparse
        from urllib.request import url2pathname

        value = url2pathname(urlparse(value).path)
    return _expand(value, home)


def config_dir() -> str:
    return platformdirs.user_config_dir(APP_NAME, appauthor=False)


def config_file() -> str:
    return os.path.join(config_dir(), "config.toml")


def state_dir() -> str:
    return platformdirs.user_state_dir(APP_NAME, appauthor=False)


# ---- the runtime folder (the control socket, the app's lock, the companion's sockets) ----
# Whoever can write in it can pose as the app or as a pi: it is used only when it is ours, checked
# without following links. In a private $XDG_RUNTIME_DIR (the usual /run/user/<uid>) that is
# ``pi-notifier`` there; in a shared one (``/tmp`` in some set-ups) another user may have taken
# that name, so ours is ``pi-notifier-<uid>`` (in a folder where nobody else can move it away);
# else, or when that one is not ours either, ``run`` in our state folder. The companion extension
# (resources/pi-extension/pi-notifier/places.ts, runtimeDir) makes the very same choice.


class NotOurs(OSError):
    """A folder another user owns or could change, or a link: never used, nothing done in it."""


_explained = LogOnce(log)  # which runtime-folder choices this process has explained already


def runtime_dir(announce: bool = False) -> str:
    """The user-only folder for the control socket, the app's lock and the companion's sockets:
    created (0700) when missing, checked to be ours. A choice other than the usual one is said
    once per process: as a warning when a folder was not ours, else at info level for the app
    (``announce``) and debug level for other commands. Raises :class:`NotOurs` when no folder
    can be trusted."""
    if os.name != "posix":
        return private_dir(os.path.join(state_dir(), "run"))
    candidates, why = _runtime_candidates(os.environ.get("XDG_RUNTIME_DIR", ""))
    refused: list[str] = []
    for path in candidates:
        try:
            if path == candidates[-1]:  # the state folder's own
                private_dir(os.path.dirname(path))
            own_folder(path)
        except OSError as exc:
            refused.append(str(exc) if isinstance(exc, NotOurs) else f"{path}: {exc.strerror or exc}")
            continue
        if why or refused:
            message = "; ".join([*refused, *([why] if why else [])]) + f": using {path}"
            level = logging.WARNING if refused else logging.INFO if announce else logging.DEBUG
            _explained("runtime folder", message, "%s", message, level=level)
        return path
    raise NotOurs("no runtime folder of our own: " + clean("; ".join(refused), 600))


def _runtime_candidates(base: str) -> tuple[list[str], str | None]:
    """The folders to try in order, and why the usual one is not among them (None: it is)."""
    fallback = os.path.join(state_dir(), "run")
    if not base.startswith("/"):
        return [fallback], None  # unset, or relative (the XDG spec says: ignore it)
    try:
        st = os.stat(base)  # (the variable may well name a link: what it names is judged)
    except OSError:
        return [fallback], None
    if not stat.S_ISDIR(st.st_mode):
        return [fallback], None
    uid = os.getuid()
    mode = stat.S_IMODE(st.st_mode)
    if st.st_uid == uid and not mode & 0o077:
        return [os.path.join(base, APP_NAME), fallback], None
    why = f"XDG_RUNTIME_DIR {base} is not private to this user (owner uid {st.st_uid}, mode {mode:04o})"
    if st.st_uid in (0, uid) and (not mode & 0o022 or mode & stat.S_ISVTX):
        # Others may add names there but not move ours away (sticky, or not theirs to write).
        return [os.path.join(base, f"{APP_NAME}-{uid}"), fallback], why
    return [fallback], why


def own_folder(path: str, parents: bool = False) -> str:
    """``path`` as a folder only this user can use: made (0700) when missing, then checked
    without following links (a real folder, owned by us); one others can read is made 0700
    through a descriptor of the very folder checked. ``parents``: missing parents are made too
    (user-only; existing ones are left as they are). Raises :class:`NotOurs` for a link, for
    anything but a folder and for another user's folder (nothing is changed in or on it), and
    OSError when it cannot be made."""
    if parents and os.path.dirname(path):
        os.makedirs(os.path.dirname(path), mode=0o700, exist_ok=True)
    try:
        os.mkdir(path, 0o700)
    except FileExistsError:
        pass
    if os.name != "posix":
        return path
    st = os.lstat(path)
    if stat.S_ISLNK(st.st_mode):
        raise NotOurs(f"{path} is a symbolic link")
    if not stat.S_ISDIR(st.st_mode):
        raise NotOurs(f"{path} is not a folder")
    if st.st_uid != os.getuid():
        raise NotOurs(f"{path} belongs to uid {st.st_uid}")
    if stat.S_IMODE(st.st_mode) & 0o077:
        fd = os.open(path, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC)
        try:
            now = os.fstat(fd)
            if (now.st_dev, now.st_ino) != (st.st_dev, st.st_ino) or now.st_uid != os.getuid():
                raise NotOurs(f"{path} was replaced while it was checked")
            os.fchmod(fd, 0o700)
        finally:
            os.close(fd)
    return path


# ---- private files and folders (the state folder holds question text and paths) ----


def private_dir(path: str) -> str:
    """Create ``path`` (and its parents) as a user-only folder (0700); an existing one we own
    that others can read is fixed. Raises OSError when it cannot be created."""
    os.makedirs(path, mode=0o700, exist_ok=True)
    _restrict(path, 0o700)
    return path


def private_file(path: str) -> str:
    """Make sure ``path`` exists as a user-only file (0600), its folder user-only too, before a
    library (SQLite, logging) opens it; an existing file we own is fixed. SQLite creates its
    -wal/-shm/-journal side files with the main file's mode; existing ones are fixed here too.

    A file that exists is looked at, never opened: closing any descriptor of a file lets go of
    every POSIX lock this process holds on it, SQLite's included. A second connection of this
    process to the state store (a headless run taking its turn) took the first one's locks away
    that way; another process's connection then closed as if it were the last, and deleted the
    -wal file under it, with what it wrote after."""
    private_dir(os.path.dirname(path) or ".")
    try:
        st: os.stat_result | None = os.lstat(path)
    except FileNotFoundError:
        st = None
    if st is None:
        flags = os.O_WRONLY | os.O_CREAT | os.O_APPEND | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_CLOEXEC", 0)
        fd = os.open(path, flags | getattr(os, "O_NONBLOCK", 0), 0o600)
        try:
            st = os.fstat(fd)
        finally:
            os.close(fd)
    if not stat.S_ISREG(st.st_mode):
        raise OSError(f"{path} is not a regular file")
    for p in (path, path + "-wal", path + "-shm", path + "-journal"):
        _restrict(p, 0o600)
    return path


def write_whole(path: str, data: bytes) -> None:
    """``path`` becomes ``data`` at once (0644, its folders made): written beside it under a name
    of its own, then renamed over it, so nothing half-written is ever read there."""
    folder = os.path.dirname(path) or "."
    os.makedirs(folder, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{APP_NAME}-", suffix=".tmp", dir=folder)
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
        os.chmod(tmp, 0o644)
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise


def _restrict(path: str, mode: int) -> None:
    """Take group/other access away from our own ``path``; a link is left alone: what it names
    may be anybody's."""
    if os.name != "posix":
        return  # per-user profile folders are private already on Windows
    try:
        st = os.lstat(path)
    except FileNotFoundError:
        return
    if stat.S_ISLNK(st.st_mode):
        return  # never changed through a link
    if st.st_uid == os.getuid() and st.st_mode & 0o777 & ~mode:
        try:
            os.chmod(path, mode)
        except OSError as exc:
            log.warning("cannot make %s private (%s)", path, exc)


def session_address() -> str | None:
    """The session bus address: ``DBUS_SESSION_BUS_ADDRESS``, else ``$XDG_RUNTIME_DIR/bus`` (the
    systemd user bus, where GLib and sd-bus look too), else None."""
    address = os.environ.get("DBUS_SESSION_BUS_ADDRESS")
    if address:
        return address
    runtime = os.environ.get("XDG_RUNTIME_DIR")
    path = os.path.join(runtime, "bus") if runtime else ""
    return f"unix:path={path}" if path and os.path.exists(path) else None


# ---- the companion extension's sockets (named here: `status` lists them without loading the companion) ----

SOCKET_PREFIX = "ext-"
SOCKET_SUFFIX = ".sock"


def is_socket_name(name: str) -> bool:
    return name.startswith(SOCKET_PREFIX) and name.endswith(SOCKET_SUFFIX) and "/" not in name


def list_sockets(folder: str | None = None) -> list[str]:
    """The extension's sockets: in pi-notifier's runtime folder (the extension makes the same
    choice and the same checks), unless ``folder`` is given."""
    try:
        folder = folder or runtime_dir()  # (OSError: no runtime folder of our own)
        names = sorted(os.listdir(folder))
    except OSError:
        return []
    return [os.path.join(folder, n) for n in names if is_socket_name(n)]


def connect_unix(path: str, timeout: float) -> socket.socket:
    """A unix stream socket connected to ``path``, closed again when the connect fails (OSError,
    as ``connect`` raises it); the caller closes it."""
    import socket  # (here: status imports this module and needs no sockets)

    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    sock.settimeout(timeout)
    try:
        sock.connect(path)
    except OSError:
        sock.close()
        raise
    return sock
