"""The companion extension's protocol (pure), the same-user channel against a scripted socket, and
`pi-notifier pi-extension install|remove|status`."""

from __future__ import annotations

import json
import os
import socket
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from notifier.companion import protocol
from notifier.companion.channel import ChannelError, answer_dialog, check_owner
from notifier.companion.protocol import Closed, Dialog, Hello, ProtocolError, Result, Screen
from notifier.companion.sockets import list_sockets
from notifier.system import paths

from ..conftest import cli

GATE: dict[str, Any] = {
    "event": "dialog",
    "id": "ab12-1",
    "kind": "select",
    "title": "⚠️ Dangerous command:\n\n  rm -rf build\n\nAllow?",
    "options": ["Yes", "No"],
    "tool": "bash",
    "tool_call_id": "call_1",
    "tool_input": {"command": "rm -rf build"},
    "session_file": "/s/a.jsonl",
    "cwd": "/p",
    "pid": 42,
    "at": 1700000000123,
    "remote": "value",
    "screen": None,
}


def line(obj: dict[str, Any]) -> bytes:
    return json.dumps(obj).encode()


def test_parse_a_gate_dialog() -> None:
    d = protocol.parse(line(GATE))
    assert isinstance(d, Dialog)
    assert d.kind == "select" and d.options == ("Yes", "No") and d.command == "rm -rf build"
    assert d.at == pytest.approx(1700000000.123) and d.remote == "value" and d.pid == 42


def test_parse_the_other_events() -> None:
    hello = protocol.parse(
        line(
            {
                "event": "hello",
                "protocol": 1,
                "pi_version": "1.6.0",
                "pid": 42,
                "mode": "wrap",
                "dialogs": [GATE],
            }
        )
    )
    assert isinstance(hello, Hello) and hello.dialogs[0].id == "ab12-1" and hello.mode == "wrap"
    assert protocol.parse(b'{"event":"closed","id":"x","how":"remote"}') == Closed("x", "remote")
    assert protocol.parse(b'{"event":"screen","id":"x","lines":["a","b"]}') == Screen("x", ("a", "b"))
    assert protocol.parse(
        b'{"event":"result","request":"answer","id":"x","ok":false,"error":"no"}'
    ) == Result("answer", "x", False, "no")
    assert protocol.parse(b'{"event":"something-new"}') is None


@pytest.mark.parametrize(
    "raw",
    [
        b"not json",
        b"[1]",
        b'{"event":"dialog","id":"x","kind":"popup"}',
        b'{"event":"dialog","id":"x","kind":"select","options":[1,2]}',
        b'{"event":"dialog","id":5,"kind":"select"}',
        b"[" * 100 + b"]" * 100,
        b'{"event":"closed","id":"' + b"x" * (protocol.MAX_LINE + 1) + b'"}',
        b"\xff\xfe",
    ],
)
def test_malformed_lines_are_refused(raw: bytes) -> None:
    with pytest.raises(ProtocolError):
        protocol.parse(raw)


def _dialog(**changes: Any) -> Dialog:
    d = protocol.parse(line({**GATE, **changes}))
    assert isinstance(d, Dialog)
    return d


def test_check_answer() -> None:
    gate = _dialog()
    assert protocol.check_answer(gate, "No") is None
    assert protocol.check_answer(gate, None) is None  # cancel
    assert protocol.check_answer(gate, "no") == "not one of the options"
    assert protocol.check_answer(gate, keys=["enter"]) is not None
    confirm = _dialog(kind="confirm", options=None)
    assert protocol.check_answer(confirm, True) is None and protocol.check_answer(confirm, "yes")
    assert protocol.check_answer(_dialog(kind="input", options=None), "text") is None
    custom = _dialog(kind="custom", options=None, remote="keys")
    assert protocol.check_answer(custom, keys=["down", "enter"]) is None
    assert protocol.check_answer(custom, "x") is not None
    assert "editor" in (protocol.check_answer(_dialog(kind="editor", remote=None), "x") or "")
    assert "announces" in (protocol.check_answer(_dialog(remote=None), "No") or "")


def test_key_names_become_terminal_input() -> None:
    assert protocol.key_sequence(["down", "Enter", "x", "hello", "\x1b[A"]) == [
        "\x1b[B",
        "\r",
        "x",
        "hello",
        "\x1b[A",
    ]


class FakeExtension:
    """A scripted extension socket: says hello with one open dialog, records requests, replies."""

    def __init__(self, path: str, dialog: dict[str, Any]) -> None:
        self.path = path
        self.dialog = dialog
        self.requests: list[dict[str, Any]] = []
        os.makedirs(os.path.dirname(path), mode=0o700, exist_ok=True)
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.sock.bind(path)
        self.sock.listen(4)
        threading.Thread(target=self._serve, daemon=True).start()

    def _serve(self) -> None:
        while True:
            try:
                conn, _ = self.sock.accept()
            except OSError:
                return
            with conn:
                hello = {"event": "hello", "protocol": 1, "pid": 1, "mode": "wrap", "dialogs": [self.dialog]}
                conn.sendall(line(hello) + b"\n")
                data = conn.makefile("rb").readline()
                if not data:
                    continue
                req = json.loads(data)
                self.requests.append(req)
                kind = "answer" if "answer" in req else "keys"
                conn.sendall(line({"event": "closed", "id": self.dialog["id"], "how": "remote"}) + b"\n")
                reply = {
                    "event": "result",
                    "request": kind,
                    "id": req[kind]["id"],
                    "ok": True,
                    "closed": True,
                }
                conn.sendall(line(reply) + b"\n")

    def close(self) -> None:
        self.sock.close()


@pytest.fixture
def fake() -> Iterator[FakeExtension]:
    ext = FakeExtension(os.path.join(paths.runtime_dir(), "ext-1-abcd.sock"), GATE)
    yield ext
    ext.close()


def test_answer_dialog_sends_exactly_one_checked_answer(fake: FakeExtension) -> None:
    assert list_sockets() == [fake.path]
    assert answer_dialog(fake.path, "ab12-1", "Maybe").error == "not one of the options"
    assert answer_dialog(fake.path, "other-2", "No").error == "that dialog is no longer open"
    assert fake.requests == []  # refused before anything was sent
    result = answer_dialog(fake.path, "ab12-1", "No")
    assert result.ok and result.closed
    assert fake.requests == [{"answer": {"id": "ab12-1", "value": "No"}}]


def test_a_custom_dialog_takes_key_names(fake: FakeExtension) -> None:
    fake.dialog = {**GATE, "kind": "custom", "options": None, "remote": "keys"}
    assert answer_dialog(fake.path, "ab12-1", keys=["down", "enter"]).ok
    assert fake.requests == [{"keys": {"id": "ab12-1", "keys": ["\x1b[B", "\r"]}}]


def test_sockets_outside_a_private_folder_are_refused(tmp_path: Path) -> None:
    folder = tmp_path / "open"
    folder.mkdir(mode=0o755)
    os.chmod(folder, 0o755)
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    sock.bind(str(folder / "ext-1-ab.sock"))
    try:
        with pytest.raises(ChannelError, match="open to other users"):
            check_owner(str(folder / "ext-1-ab.sock"))
        (tmp_path / "ext-2-ab.sock").write_text("")
        os.chmod(tmp_path, 0o700)
        with pytest.raises(ChannelError, match="not a socket"):
            check_owner(str(tmp_path / "ext-2-ab.sock"))
        assert not answer_dialog(str(folder / "ext-1-ab.sock"), "x", "No").ok
    finally:
        sock.close()


def test_unreachable_pi_is_a_plain_error(tmp_path: Path) -> None:
    result = answer_dialog(str(tmp_path / "ext-9-ff.sock"), "x", "No")
    assert not result.ok and "cannot be reached" in (result.error or "")


SHIPPED = Path(__file__).parents[2] / "notifier" / "resources" / "pi-extension" / "pi-notifier"


def test_install_status_remove(tmp_path: Path) -> None:
    agent = tmp_path / "agent"
    env = {**os.environ, "PI_CODING_AGENT_DIR": str(agent)}
    target = agent / "extensions" / "pi-notifier"
    st = json.loads(cli("pi-extension", "status", "--json", env=env).stdout)
    assert st["installed"] is False and st["path"] == str(target) and st["loaded"] == []
    out = cli("pi-extension", "install", env=env)
    assert out.returncode == 0 and "installed" in out.stdout
    # the whole folder: pi loads index.ts, which imports protocol.ts beside it
    assert sorted(p.name for p in target.iterdir()) == ["index.ts", "protocol.ts"]
    for name in ("index.ts", "protocol.ts"):
        assert (target / name).read_bytes() == (SHIPPED / name).read_bytes()
        assert (target / name).stat().st_mode & 0o777 == 0o644
    assert "already installed" in cli("pi-extension", "install", env=env).stdout
    st = json.loads(cli("pi-extension", "status", "--json", env=env).stdout)
    assert st["installed"] is True and st["current"] is True
    # either file edited: not this version's copy, until install writes it again
    for name in ("protocol.ts", "index.ts"):
        (target / name).write_text((target / name).read_text() + "// edited\n")
        assert "not this version's copy" in cli("pi-extension", "status", env=env).stdout
        assert cli("pi-extension", "install", env=env).stdout.startswith("installed ")
        assert "installed and current" in cli("pi-extension", "status", env=env).stdout
    (target / "notes.txt").write_text("mine")  # (not ours: kept, and so is the folder)
    assert cli("pi-extension", "remove", env=env).returncode == 0
    assert [p.name for p in target.iterdir()] == ["notes.txt"]
    (target / "notes.txt").unlink()
    assert cli("pi-extension", "install", env=env).returncode == 0
    assert cli("pi-extension", "remove", env=env).returncode == 0 and not target.exists()
    assert "not installed" in cli("pi-extension", "remove", env=env).stdout


def test_install_replaces_an_earlier_single_file_copy(tmp_path: Path) -> None:
    agent = tmp_path / "agent"
    env = {**os.environ, "PI_CODING_AGENT_DIR": str(agent)}
    old = agent / "extensions" / "pi-notifier.ts"
    old.parent.mkdir(parents=True)
    old.write_text("/**\n * pi-notifier companion extension (an earlier version)\n */\n")
    st = json.loads(cli("pi-extension", "status", "--json", env=env).stdout)
    assert st["installed"] is True and st["current"] is False
    assert cli("pi-extension", "install", env=env).returncode == 0
    # pi would load both, and serve two sockets: the old one is gone
    assert not old.exists() and (agent / "extensions" / "pi-notifier" / "index.ts").exists()
    assert json.loads(cli("pi-extension", "status", "--json", env=env).stdout)["current"] is True


def test_remove_leaves_a_foreign_file_alone(tmp_path: Path) -> None:
    env = {**os.environ, "PI_CODING_AGENT_DIR": str(tmp_path / "agent")}
    folder = tmp_path / "agent" / "extensions" / "pi-notifier"
    folder.mkdir(parents=True)
    (folder / "index.ts").write_text("export default function () {}\n")
    out = cli("pi-extension", "remove", env=env)
    assert out.returncode == 1 and "left alone" in out.stderr and (folder / "index.ts").exists()
    # a single file of that name that is not ours is not taken for an earlier version either
    (folder / "index.ts").unlink()
    folder.rmdir()
    other = folder.parent / "pi-notifier.ts"
    other.write_text("export default function () {}\n")
    assert cli("pi-extension", "install", env=env).returncode == 0 and other.exists()
    assert cli("pi-extension", "remove", env=env).returncode == 0 and other.exists()


def test_bad_usage_is_one_line_and_exit_2() -> None:
    out = cli("pi-extension", "upgrade")
    assert out.returncode == 2 and len(out.stderr.strip().splitlines()) == 1


def _doctor_line(env: dict[str, str]) -> str:
    out = cli("doctor", env=env)
    (found,) = [x for x in out.stdout.splitlines() if "companion extension:" in x]
    return found


def test_doctor_says_whether_the_extension_is_installed_current_and_loaded(
    tmp_path: Path, fake: FakeExtension
) -> None:
    agent = tmp_path / "agent"
    env = {**os.environ, "PI_CODING_AGENT_DIR": str(agent)}
    # optional: not installed is a note (never a FAIL); the running pi (a stand-in socket) counts
    line = _doctor_line(env)
    assert line.startswith("[note]") and "not installed" in line and "pi-extension install" in line
    assert "loaded by 1 running pi process(es)" in line
    assert cli("pi-extension", "install", env=env).returncode == 0
    target = agent / "extensions" / "pi-notifier"
    line = _doctor_line(env)
    assert line.startswith("[ok  ]") and "installed and current" in line and str(target) in line
    (target / "index.ts").write_text((target / "index.ts").read_text() + "// edited\n")
    line = _doctor_line(env)
    assert line.startswith("[note]") and "not this version's copy" in line
    fake.close()
    os.unlink(fake.path)  # that pi quit; another one died and left its socket behind
    dead = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    dead.bind(os.path.join(paths.runtime_dir(), "ext-2-dead.sock"))
    dead.close()
    assert _doctor_line(env).endswith("loaded by 0 running pi process(es), 1 socket(s) not answering")


def test_parse_what_a_dialog_returned_and_whether_it_waits() -> None:
    closed = protocol.parse(b'{"event":"closed","id":"x","how":"answered","answer":"No","timed_out":false}')
    assert closed == Closed("x", "answered", "No") and isinstance(closed, Closed) and closed.outcome == "answered"
    timed = protocol.parse(b'{"event":"closed","id":"x","how":"cancelled","answer":null,"timed_out":true}')
    assert isinstance(timed, Closed) and timed.timed_out and timed.outcome == "cancelled"
    # an older extension: no answer, no flag; a remote cancel was "remote" then
    old = protocol.parse(b'{"event":"closed","id":"x","how":"remote"}')
    assert old == Closed("x", "remote", None, False)
    assert protocol.parse(b'{"event":"closed","id":"x","how":"answered","answer":5}') == Closed("x", "answered")
    assert _dialog().waits is True  # (absent: an older extension announced only dialogs that wait)
    loader = _dialog(kind="custom", options=None, remote="keys", waits=False)
    assert loader.waits is False
    # a confirm has its two options, even from an extension that did not say them
    assert _dialog(kind="confirm", options=None).options == ("Yes", "No")
    startup = _dialog(session_file=None, session_dir="/a/sessions", tool=None, tool_call_id=None)
    assert startup.session_file is None and startup.session_dir == "/a/sessions" and startup.pid == 42


def test_which_extensions_open_dialogs_only_the_companion_shows() -> None:
    from notifier.pi.catalog import QuestionCatalog
    from notifier.pi.extensions import dialog_kinds, extension_args

    catalog = QuestionCatalog()
    gate = 'pi.on("tool_call", async (event, ctx) => {\n const choice = await ctx.ui.select(`Allow?`, ["Yes", "No"]);'
    assert dialog_kinds(gate, catalog) == ["select"]
    destructured = "const { ui } = ctx;\nconst ok = await ui.confirm('Sure?', 'x');\nui.custom<string>((tui) => x);"
    assert dialog_kinds(destructured, catalog) == ["confirm", "custom"]
    # a question tool of the catalog: its own dialog is the question, read from the session file
    question = 'pi.registerTool({\n name: "question",\n execute: async () => ctx.ui.custom((t) => c) })'
    assert dialog_kinds(question, catalog) == []
    assert dialog_kinds(question.replace('"question"', '"pick_one"'), catalog) == ["custom"]
    assert dialog_kinds(question + '\npi.registerCommand("x", {})', catalog) == ["custom"]
    assert dialog_kinds("ctx.ui.notify('hi'); ctx.ui.setStatus('a', 'b'); // ui.select is mentioned", catalog) == []
    assert extension_args(["node", "cli.js", "--no-extensions", "-e", "a.ts", "--extension=b.ts"]) == (
        ["a.ts", "b.ts"],
        True,
    )
    assert extension_args(["pi", "-e"]) == ([], False)


def test_the_extensions_pis_banner_lists() -> None:
    from notifier.pi.extensions import listed_extensions

    banner = (
        " ▀▀█  v1.6.0\n\n[Context]\n  AGENTS.md\n\n[Extensions]\n  permission-gate.ts, qna.ts,\n"
        "  handoff.ts\n\n Warning: fd not found.\n"
    )
    assert listed_extensions(banner) == ["permission-gate.ts", "qna.ts", "handoff.ts"]
    assert listed_extensions("[Extensions]\n[Skills]\n  x\n") == []
    assert listed_extensions("no banner here") == []
