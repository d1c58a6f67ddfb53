"""Two local users, a planted folder and a symlink (issue 22, "A shared runtime folder").

Where ``XDG_RUNTIME_DIR`` is shared (``/tmp`` in some set-ups), another user can take the name
``pi-notifier`` first, serve a ``control.sock`` there posing as our app, or plant a link to a
folder of ours. The runtime folder is used only when it is ours (checked without following
links), a client trusts a socket only when the file and the process serving it are ours, and
nothing is created, changed or removed in a folder that is not ours.

The other user is uid 65534 (nobody), so these tests need root (as here and in CI); without it
they skip. Its processes are forked from this one and drop to that uid: this interpreter may live
where that user cannot run it."""

from __future__ import annotations

import contextlib
import json
import logging
import os
import select
import shutil
import signal
import socket
import stat
import tempfile
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from notifier.companion import connect
from notifier.control import Server, request, subscribe
from notifier.system import paths
from notifier.system.paths import list_sockets

from ..app_process import AppProcess
from ..conftest import cli, wait_for
from ..writer import append, ask, header, user

pytestmark = [
    pytest.mark.skipif(os.name != "posix", reason="owners, modes and peer credentials are POSIX"),
    pytest.mark.skipif(
        os.name == "posix" and os.geteuid() != 0,
        reason="needs root: the other local user (uid 65534) is started from root",
    ),
]

OTHER = 65534  # nobody
MADE_UP = "Paste your GitHub token here"
FAKE_REPLY = (
    json.dumps(
        {
            "ok": True,
            "pid": 1,
            "window": "opened",
            "status": {
                "sessions": [{"id": "evil", "name": MADE_UP, "state": "needs_input", "pending": []}],
                "pending": 1,
            },
        }
    )
    + "\n"
).encode()


def mode(p: Path) -> int:
    return stat.S_IMODE(os.lstat(p).st_mode)


def as_other_user() -> None:
    os.setgroups([])
    os.setgid(OTHER)
    os.setuid(OTHER)
    os.umask(0)


def run_as_other_user(work: Callable[[], None]) -> None:
    """Run ``work`` in a child process of the other user; it must succeed."""
    pid = os.fork()
    if pid == 0:  # pragma: no cover - the child
        code = 1
        try:
            as_other_user()
            work()
            code = 0
        finally:
            os._exit(code)
    _, status = os.waitpid(pid, 0)
    assert os.waitstatus_to_exitcode(status) == 0


class FakeApp:
    """The other user's process posing as our app at ``path``: every request gets a reply with a
    made-up session (as status, show and ping would read it); what it was asked is kept.
    ``bind_first``: the socket file is bound (so owned) by us before the process drops to the other
    user and listens, so only the server's peer credentials tell it apart."""

    def __init__(self, path: Path, bind_first: bool = False, folder_mode: int | None = None) -> None:
        self.path = path
        r, w = os.pipe()
        pid = os.fork()
        if pid == 0:  # pragma: no cover - the child
            try:
                os.close(r)
                sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
                if bind_first:
                    sock.bind(str(path))
                as_other_user()
                if folder_mode is not None:
                    path.parent.mkdir()
                    os.chmod(path.parent, folder_mode)
                if not bind_first:
                    sock.bind(str(path))
                    os.chmod(path, 0o777)
                sock.listen(64)
                os.write(w, b"ready\n")
                while True:
                    conn, _ = sock.accept()
                    conn.settimeout(5)
                    with contextlib.suppress(OSError):
                        data = conn.recv(1 << 16)
                        os.write(w, data.rstrip(b"\n") + b"\n")
                        conn.sendall(FAKE_REPLY)
                    conn.close()
            finally:
                os._exit(1)
        os.close(w)
        self.pid = pid
        self._r = r
        self._buf = b""
        wait_for(lambda: b"ready\n" in self._read(), 10, "the other user's fake app")

    def _read(self) -> bytes:
        while select.select([self._r], [], [], 0)[0]:
            chunk = os.read(self._r, 1 << 16)
            if not chunk:
                break
            self._buf += chunk
        return self._buf

    def requests(self) -> list[str]:
        """What clients sent it (a client that hung up at once sent nothing)."""
        return [line for line in self._read().decode().splitlines() if line not in ("ready", "")]

    def stop(self) -> None:
        with contextlib.suppress(ProcessLookupError):
            os.kill(self.pid, signal.SIGKILL)
        os.waitpid(self.pid, 0)
        os.close(self._r)


@pytest.fixture
def shared(monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """A shared ``XDG_RUNTIME_DIR`` like /tmp (root's, 1777), where the other user can reach it
    (pytest's tmp_path is not searchable by other users)."""
    base = Path(tempfile.mkdtemp(prefix="pi-notifier-shared-"))
    os.chmod(base, 0o1777)
    monkeypatch.setenv("XDG_RUNTIME_DIR", str(base))
    try:
        yield base
    finally:
        shutil.rmtree(base, ignore_errors=True)


@pytest.fixture
def fakes() -> Iterator[list[FakeApp]]:
    started: list[FakeApp] = []
    try:
        yield started
    finally:
        for fake in started:
            fake.stop()


def state_run() -> Path:
    return Path(os.environ["XDG_STATE_HOME"]) / "pi-notifier" / "run"


def sessions_with_a_question(tmp_path: Path) -> Path:
    sessions = tmp_path / "s"
    append(sessions / "--p--" / "a.jsonl", header("/home/u/p"), user(), ask("c1", "Our own question?"))
    return sessions


def headless() -> dict[str, str]:
    drop = ("DISPLAY", "WAYLAND_DISPLAY", "DBUS_SESSION_BUS_ADDRESS", "PI_NOTIFIER_SOCKET")
    return {k: v for k, v in os.environ.items() if k not in drop}


def start_app(sessions: Path) -> AppProcess:
    """The tray app (the one that would hand over to another), without a display."""
    return AppProcess("run", "--liveness", "off", "--sessions-dir", str(sessions), env=headless())


def our_app_answers(app: AppProcess, where: Path) -> None:
    def ping() -> dict[str, object] | None:
        if app.proc.poll() is not None:
            raise AssertionError(f"the app exited ({app.proc.returncode}): {app.stderr[-10:]}")
        return request({"cmd": "ping"}, path=str(where / "control.sock"), timeout=2)

    reply = wait_for(ping, 30, f"our app at {where}")
    assert reply is not None and reply["pid"] == app.proc.pid


# ---- the folder chosen (in-process) ----


PLANTS = ["their open folder", "their private folder", "a link to a folder of ours", "their file"]


def plant(kind: str, where: Path, ours: Path) -> None:
    """Put what the other user could have put at ``where`` (as root here, then given away)."""
    if kind == "their open folder":
        where.mkdir()
        os.chmod(where, 0o777)
    elif kind == "their private folder":
        where.mkdir(mode=0o700)
    elif kind == "a link to a folder of ours":
        where.symlink_to(ours)
    else:
        where.write_text("x")
    os.chown(where, OTHER, OTHER, follow_symlinks=False)


def look(p: Path) -> tuple[int, int, int, list[str]]:
    st = os.lstat(p)
    names = sorted(os.listdir(p)) if p.is_dir() else []
    return st.st_uid, stat.S_IMODE(st.st_mode), st.st_ino, names


@pytest.mark.parametrize("base_kind", ["private", "shared"])
@pytest.mark.parametrize("kind", PLANTS)
def test_a_planted_runtime_folder_is_never_used_nor_touched(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture, base_kind: str, kind: str
) -> None:
    base = tmp_path / "xdg"
    base.mkdir()
    os.chmod(base, 0o700 if base_kind == "private" else 0o1777)
    monkeypatch.setenv("XDG_RUNTIME_DIR", str(base))
    usual = base / ("pi-notifier" if base_kind == "private" else f"pi-notifier-{os.getuid()}")
    ours = tmp_path / "our-data"
    ours.mkdir()
    os.chmod(ours, 0o755)
    (ours / "control.sock").write_text("not a socket: must stay")
    plant(kind, usual, ours)
    before = (look(usual), look(ours))

    with caplog.at_level(logging.DEBUG, logger="notifier.system.paths"):
        chosen = Path(paths.runtime_dir())
        assert Path(paths.runtime_dir()) == chosen  # the same choice every time ...
    said = [r for r in caplog.records if str(usual) in r.getMessage()]
    assert len(said) == 1, said  # ... said once
    assert said[0].getMessage().startswith("runtime folder: ") and str(chosen) in said[0].getMessage()
    assert said[0].levelno == logging.WARNING

    assert chosen == state_run()
    st = os.lstat(chosen)
    assert stat.S_ISDIR(st.st_mode) and st.st_uid == os.getuid() and mode(chosen) == 0o700
    assert (look(usual), look(ours)) == before
    assert (ours / "control.sock").read_text() == "not a socket: must stay"

    # the app's own parts refuse it too, creating and changing nothing there
    with pytest.raises(paths.NotOurs):
        paths.own_folder(str(usual))
    if kind != "their file":
        server = Server(str(usual / "control.sock"), lambda req, conn: {"ok": True})
        with pytest.raises(paths.NotOurs):
            server.start()
        server.stop()  # (what an app that could not serve does on its way out)
        from notifier.instance import InstanceLock

        with pytest.raises(paths.NotOurs):
            InstanceLock(str(usual / "app.lock")).acquire()
    assert (look(usual), look(ours)) == before


def test_in_a_shared_runtime_dir_ours_is_a_folder_of_our_own_name(
    shared: Path, caplog: pytest.LogCaptureFixture
) -> None:
    (shared / "pi-notifier").mkdir()  # whoever took the common name: it is not even looked at
    os.chmod(shared / "pi-notifier", 0o777)
    with caplog.at_level(logging.DEBUG, logger="notifier.system.paths"):
        chosen = Path(paths.runtime_dir())
    assert chosen == shared / f"pi-notifier-{os.getuid()}"
    assert mode(chosen) == 0o700 and os.lstat(chosen).st_uid == os.getuid()
    assert mode(shared / "pi-notifier") == 0o777
    (said,) = [r for r in caplog.records if r.name == "notifier.system.paths"]
    assert said.levelno == logging.DEBUG  # a plain fact of this set-up: the app says it at info level
    assert "not private to this user" in said.getMessage()


def test_with_no_folder_of_our_own_status_scans_and_run_says_why(
    tmp_path: Path, shared: Path
) -> None:
    ours = tmp_path / "our-data"
    ours.mkdir()
    plant("their open folder", shared / f"pi-notifier-{os.getuid()}", ours)
    state_run().parent.mkdir(parents=True)
    plant("a link to a folder of ours", state_run(), ours)
    with pytest.raises(paths.NotOurs, match="no runtime folder of our own"):
        paths.runtime_dir()
    sessions = sessions_with_a_question(tmp_path)
    done = cli("status", "--json", "--liveness", "off", "--sessions-dir", str(sessions))
    assert done.returncode == 0 and "Our own question?" in done.stdout, done.stderr
    done = cli("run", "--liveness", "off", "--sessions-dir", str(sessions), env=headless(), timeout=30)
    assert done.returncode == 1 and "Traceback" not in done.stderr
    assert done.stderr.count("cannot start the app: no runtime folder of our own") == 1, done.stderr
    assert os.listdir(ours) == [] and os.listdir(shared / f"pi-notifier-{os.getuid()}") == []


@pytest.mark.parametrize("base_mode", [0o777, 0o770])
def test_a_runtime_dir_others_may_write_without_a_sticky_bit_is_not_used(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, base_mode: int
) -> None:
    base = tmp_path / "xdg"
    base.mkdir()
    os.chmod(base, base_mode)  # anyone may rename our folder away and put theirs in its place
    monkeypatch.setenv("XDG_RUNTIME_DIR", str(base))
    assert Path(paths.runtime_dir()) == state_run()
    assert os.listdir(base) == []


def test_our_own_open_runtime_folder_is_made_private(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    base = tmp_path / "xdg"
    base.mkdir(mode=0o700)
    (base / "pi-notifier").mkdir()
    os.chmod(base / "pi-notifier", 0o755)
    monkeypatch.setenv("XDG_RUNTIME_DIR", str(base))
    assert Path(paths.runtime_dir()) == base / "pi-notifier"
    assert mode(base / "pi-notifier") == 0o700


# ---- the real app and commands, with the other user's fake app ----


def test_a_fake_app_of_another_user_in_a_shared_runtime_dir_is_never_trusted(
    tmp_path: Path, shared: Path, fakes: list[FakeApp]
) -> None:
    planted = shared / "pi-notifier"
    fakes.append(FakeApp(planted / "control.sock", folder_mode=0o777))
    sessions = sessions_with_a_question(tmp_path)

    done = cli("status", "--json", "--liveness", "off", "--sessions-dir", str(sessions))
    assert done.returncode == 0, done.stderr
    assert MADE_UP not in done.stdout
    assert [s["pending"][0]["text"] for s in json.loads(done.stdout)["sessions"]] == ["Our own question?"]

    with start_app(sessions) as app:
        ours = shared / f"pi-notifier-{os.getuid()}"
        our_app_answers(app, ours)
        assert not [line for line in app.stderr if "already running" in line]
        said = [line for line in app.stderr if "runtime folder" in line]
        assert len(said) == 1 and str(ours) in said[0], app.stderr
        # the commands reach our app, not the other user's
        pong = request({"cmd": "ping"})
        assert pong is not None and pong["pid"] == app.proc.pid
        done = cli("status", "--json", "--liveness", "off", "--sessions-dir", str(sessions))
        assert MADE_UP not in done.stdout and "Our own question?" in done.stdout
        second = cli("run", "--liveness", "off", "--sessions-dir", str(sessions), env=headless(), timeout=30)
        assert second.returncode == 0 and "already running" in second.stderr
    assert request({"cmd": "ping"}, path=str(planted / "control.sock")) is None  # (said why)
    assert fakes[0].requests() == []  # nothing of ours was sent to it
    assert sorted(os.listdir(planted)) == ["control.sock"] and mode(planted) == 0o777


def test_a_planted_link_to_a_folder_of_ours_is_not_followed(
    tmp_path: Path, shared: Path
) -> None:
    ours = Path(tempfile.mkdtemp(prefix="pi-notifier-victim-"))
    try:
        os.chmod(ours, 0o755)
        (ours / "control.sock").write_text("a file of ours that happens to have this name")
        os.chmod(ours / "control.sock", 0o644)
        before = look(ours)

        victim = os.getuid()

        def plant_links() -> None:
            os.symlink(ours, shared / "pi-notifier")
            os.symlink(ours, shared / f"pi-notifier-{victim}")

        run_as_other_user(plant_links)
        sessions = sessions_with_a_question(tmp_path)
        with start_app(sessions) as app:
            our_app_answers(app, state_run())
            said = [line for line in app.stderr if "runtime folder" in line]
            assert len(said) == 1 and "is a symbolic link" in said[0], app.stderr
            done = cli("status", "--json", "--liveness", "off", "--sessions-dir", str(sessions))
            assert "Our own question?" in done.stdout
        assert look(ours) == before  # mode 0755, nothing removed, no app.lock, no socket
        assert (ours / "control.sock").read_text().startswith("a file of ours")
    finally:
        shutil.rmtree(ours, ignore_errors=True)


# ---- peer credentials ----


@pytest.fixture
def open_folder() -> Iterator[Path]:
    folder = Path(tempfile.mkdtemp(prefix="pi-notifier-peer-"))
    os.chmod(folder, 0o1777)
    try:
        yield folder
    finally:
        shutil.rmtree(folder, ignore_errors=True)


@pytest.mark.parametrize(
    ("bind_first", "why"),
    [(True, "it is served by uid 65534"), (False, "it belongs to uid 65534")],
    ids=["socket-of-ours-served-by-them", "socket-of-theirs"],
)
def test_a_control_socket_of_another_user_is_not_trusted(
    tmp_path: Path,
    open_folder: Path,
    fakes: list[FakeApp],
    monkeypatch: pytest.MonkeyPatch,
    bind_first: bool,
    why: str,
) -> None:
    path = open_folder / "control.sock"
    fakes.append(FakeApp(path, bind_first=bind_first))
    assert (os.lstat(path).st_uid == os.getuid()) is bind_first
    assert request({"cmd": "status"}, path=str(path)) is None
    assert list(subscribe({"cmd": "subscribe"}, path=str(path), timeout=2)) == []

    monkeypatch.setenv("PI_NOTIFIER_SOCKET", str(path))  # where we are told the app is
    sessions = sessions_with_a_question(tmp_path)
    done = cli("status", "--json", "--liveness", "off", "--sessions-dir", str(sessions))
    assert done.returncode == 0 and MADE_UP not in done.stdout and "Our own question?" in done.stdout
    (said,) = [line for line in done.stderr.splitlines() if "control socket" in line]
    assert why in said and "not this user's app" in said
    assert fakes[0].requests() == []  # nothing of ours was sent to it


@pytest.mark.parametrize("bind_first", [True, False], ids=["served-by-them", "socket-of-theirs"])
def test_a_companion_socket_of_another_user_is_refused(
    open_folder: Path, fakes: list[FakeApp], bind_first: bool
) -> None:
    folder = Path(paths.runtime_dir())  # ours: the socket itself must tell
    path = folder / "ext-1-abcd.sock"
    if bind_first:
        fakes.append(FakeApp(path, bind_first=True))
        match = "served by uid 65534"
    else:
        fakes.append(FakeApp(open_folder / "ext-2-abcd.sock"))
        os.link(open_folder / "ext-2-abcd.sock", path)  # their socket inode, in our folder
        match = "belongs to uid 65534"
    assert str(path) in list_sockets()
    with pytest.raises(paths.NotOurs, match=match):
        connect(str(path), attempts=1, timeout=2)
    from notifier.companion import answer_dialog

    assert not answer_dialog(str(path), "x", "Yes").ok
    assert fakes[0].requests() == []


# ---- the companion extension (its own choice of folder) ----


@pytest.mark.parametrize("kind", ["their open folder", "a link to a folder of ours"])
def test_the_extension_chooses_our_folder_and_keeps_out_of_a_planted_one(
    shared: Path, kind: str
) -> None:
    from ..live.pi_harness import PI16, ExtHarness

    if not PI16.installed:
        pytest.skip("pi 1.6's Node (which runs the extension) is not installed; .ci/run installs it")
    ours = Path(tempfile.mkdtemp(prefix="pi-notifier-victim-"))
    try:
        os.chmod(ours, 0o755)
        usual = shared / f"pi-notifier-{os.getuid()}"
        plant(kind, usual, ours)
        before = (look(usual), look(ours))
        pi = ExtHarness()
        try:
            assert pi.do("start plain")["ok"]
            (sock,) = wait_for(lambda: list(state_run().glob("ext-*.sock")), 10, "the extension's socket")
            assert list_sockets() == [str(sock)]  # the Python side made the same choice
            assert os.lstat(sock).st_uid == os.getuid() and mode(state_run()) == 0o700
            assert (look(usual), look(ours)) == before
        finally:
            pi.close()
    finally:
        shutil.rmtree(ours, ignore_errors=True)
