"""The companion extension's same-user channel against a scripted socket, and
`pi-notifier pi-extension install|remove|status` run for real. (Its protocol:
tests/unit/test_companion.py.)"""

from __future__ import annotations

import json
import os
import socket
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from notifier.companion import CLOSED, answer_dialog, check_owner, connect
from notifier.system import paths
from notifier.system.paths import list_sockets

from ..conftest import cli
from ..extension import ExtensionStandIn

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


@pytest.fixture
def fake() -> Iterator[ExtensionStandIn]:
    ext = ExtensionStandIn(os.path.join(paths.runtime_dir(), "ext-1-abcd.sock"), [GATE], pid=1)
    yield ext
    ext.close()


def test_answer_dialog_sends_exactly_one_checked_answer(fake: ExtensionStandIn) -> None:
    assert list_sockets() == [fake.path]
    assert answer_dialog(fake.path, "ab12-1", "Maybe").error == "not one of the options"
    assert answer_dialog(fake.path, "other-2", "No").error == CLOSED
    assert fake.requests == []  # refused before anything was sent
    result = answer_dialog(fake.path, "ab12-1", "No")
    assert result.ok and result.closed
    assert fake.requests == [{"answer": {"id": "ab12-1", "value": "No"}}]


def test_a_custom_dialog_takes_key_names(fake: ExtensionStandIn) -> None:
    fake.dialogs = [{**GATE, "kind": "custom", "options": None, "remote": "keys"}]
    assert answer_dialog(fake.path, "ab12-1", keys=["down", "enter"]).ok
    assert fake.requests == [{"keys": {"id": "ab12-1", "keys": ["\x1b[B", "\r"]}}]


def test_sockets_outside_a_private_folder_are_refused(tmp_path: Path) -> None:
    folder = tmp_path / "open"
    folder.mkdir(mode=0o755)
    os.chmod(folder, 0o755)
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    sock.bind(str(folder / "ext-1-ab.sock"))
    try:
        with pytest.raises(paths.NotOurs, match="open to other users"):
            check_owner(str(folder / "ext-1-ab.sock"))
        (tmp_path / "ext-2-ab.sock").write_text("")
        os.chmod(tmp_path, 0o700)
        with pytest.raises(paths.NotOurs, match="not a socket"):
            connect(str(tmp_path / "ext-2-ab.sock"), attempts=1)
        assert not answer_dialog(str(folder / "ext-1-ab.sock"), "x", "No").ok
    finally:
        sock.close()


SHIPPED = Path(__file__).parents[2] / "notifier" / "resources" / "pi-extension" / "pi-notifier"


def test_install_status_remove(tmp_path: Path) -> None:
    agent = tmp_path / "agent"
    env = {**os.environ, "PI_CODING_AGENT_DIR": str(agent)}
    target = agent / "extensions" / "pi-notifier"
    st = json.loads(cli("pi-extension", "status", "--json", env=env).stdout)
    assert st["installed"] is False and st["path"] == str(target) and st["loaded"] == []
    out = cli("pi-extension", "install", env=env)
    assert out.returncode == 0 and "installed" in out.stdout
    # the whole folder: pi loads index.ts, which imports the modules beside it
    shipped = sorted(p.name for p in SHIPPED.glob("*.ts"))
    assert "index.ts" in shipped and sorted(p.name for p in target.iterdir()) == shipped
    for name in shipped:
        assert (target / name).read_bytes() == (SHIPPED / name).read_bytes()
        assert (target / name).stat().st_mode & 0o777 == 0o644
    assert "already installed" in cli("pi-extension", "install", env=env).stdout
    st = json.loads(cli("pi-extension", "status", "--json", env=env).stdout)
    assert st["installed"] is True and st["current"] is True
    # any file edited: not this version's copy, until install writes it again
    for name in shipped:
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
    tmp_path: Path, fake: ExtensionStandIn
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


