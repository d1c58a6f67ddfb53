"""The companion extension's protocol (pure): the events parsed, malformed lines refused, answers
checked, key names as terminal input, which extensions open dialogs. (The same-user channel
against a scripted socket and `pi-notifier pi-extension install|remove|status`:
tests/processes/test_companion.py.)"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from notifier import channel, companion
from notifier.companion import Closed, DialogText, ExtensionDialog, Hello, Result, answer_dialog

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
    d = companion.parse(line(GATE))
    assert isinstance(d, ExtensionDialog)
    assert d.kind == "select" and d.options == ("Yes", "No") and d.command == "rm -rf build"
    assert d.at == pytest.approx(1700000000.123) and d.remote == "value" and d.pid == 42


def test_parse_the_other_events() -> None:
    hello = companion.parse(
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
    assert companion.parse(b'{"event":"closed","id":"x","how":"remote"}') == Closed("x", "remote")
    assert companion.parse(b'{"event":"screen","id":"x","lines":["a","b"]}') == DialogText("x", ("a", "b"))
    assert companion.parse(
        b'{"event":"result","request":"answer","id":"x","ok":false,"error":"no"}'
    ) == Result("answer", "x", False, "no")
    assert companion.parse(b'{"event":"something-new"}') is None


@pytest.mark.parametrize(
    "raw",
    [
        b"not json",
        b"[1]",
        b'{"event":"dialog","id":"x","kind":"popup"}',
        b'{"event":"dialog","id":"x","kind":"select","options":[1,2]}',
        b'{"event":"dialog","id":5,"kind":"select"}',
        b"[" * 100 + b"]" * 100,
        b'{"event":"closed","id":"' + b"x" * (channel.MAX_LINE + 1) + b'"}',
        b"\xff\xfe",
    ],
)
def test_malformed_lines_are_refused(raw: bytes) -> None:
    with pytest.raises(channel.BadLine):
        companion.parse(raw)


def _dialog(**changes: Any) -> ExtensionDialog:
    d = companion.parse(line({**GATE, **changes}))
    assert isinstance(d, ExtensionDialog)
    return d


def test_check_answer() -> None:
    gate = _dialog()
    assert companion.check_answer(gate, "No") is None
    assert companion.check_answer(gate, None) is None  # cancel
    assert companion.check_answer(gate, "no") == "not one of the options"
    assert companion.check_answer(gate, keys=["enter"]) == "a select dialog is answered with a value, not keys"
    confirm = _dialog(kind="confirm", options=None)
    assert companion.check_answer(confirm, True) is None and companion.check_answer(confirm, "yes")
    assert companion.check_answer(_dialog(kind="input", options=None), "text") is None
    custom = _dialog(kind="custom", options=None, remote="keys")
    assert companion.check_answer(custom, keys=["down", "enter"]) is None
    assert companion.check_answer(custom, "x") == "a custom dialog is answered with keys"
    assert "editor" in (companion.check_answer(_dialog(kind="editor", remote=None), "x") or "")
    assert "announces" in (companion.check_answer(_dialog(remote=None), "No") or "")


def test_key_names_become_terminal_input() -> None:
    assert companion.key_sequence(["down", "Enter", "x", "hello", "\x1b[A"]) == [
        "\x1b[B",
        "\r",
        "x",
        "hello",
        "\x1b[A",
    ]


def test_unreachable_pi_is_a_plain_error(tmp_path: Path) -> None:
    result = answer_dialog(str(tmp_path / "ext-9-ff.sock"), "x", "No")
    assert not result.ok and "cannot be reached" in (result.error or "")


def test_parse_what_a_dialog_returned_and_whether_it_waits() -> None:
    closed = companion.parse(b'{"event":"closed","id":"x","how":"answered","answer":"No","timed_out":false}')
    assert closed == Closed("x", "answered", "No") and isinstance(closed, Closed) and closed.outcome == "answered"
    timed = companion.parse(b'{"event":"closed","id":"x","how":"cancelled","answer":null,"timed_out":true}')
    assert isinstance(timed, Closed) and timed.timed_out and timed.outcome == "cancelled"
    # an older extension: no answer, no flag; a remote cancel was "remote" then
    old = companion.parse(b'{"event":"closed","id":"x","how":"remote"}')
    assert old == Closed("x", "remote", None, False)
    assert companion.parse(b'{"event":"closed","id":"x","how":"answered","answer":5}') == Closed("x", "answered")
    assert _dialog().waits is True  # (absent: an older extension announced only dialogs that wait)
    loader = _dialog(kind="custom", options=None, remote="keys", waits=False)
    assert loader.waits is False
    # a confirm has its two options, even from an extension that did not say them
    assert _dialog(kind="confirm", options=None).options == ("Yes", "No")
    startup = _dialog(session_file=None, session_dir="/a/sessions", tool=None, tool_call_id=None)
    assert startup.session_file is None and startup.session_dir == "/a/sessions" and startup.pid == 42


def test_which_extensions_open_dialogs_only_the_companion_shows() -> None:
    from notifier.pi.parse import QuestionCatalog, dialog_kinds, extension_args

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
    from notifier.pi.parse import listed_extensions

    banner = (
        " ▀▀█  v1.6.0\n\n[Context]\n  AGENTS.md\n\n[Extensions]\n  permission-gate.ts, qna.ts,\n"
        "  handoff.ts\n\n Warning: fd not found.\n"
    )
    assert listed_extensions(banner) == ["permission-gate.ts", "qna.ts", "handoff.ts"]
    assert listed_extensions("[Extensions]\n[Skills]\n  x\n") == []
    assert listed_extensions("no banner here") == []


def test_an_optional_field_of_the_wrong_type_is_read_as_missing() -> None:
    dialog = companion.parse(b'{"event":"dialog","id":"x","kind":"select","options":["a"],"title":5,"pid":true,'
                             b'"waits":"no","tool_input":{"command":"ls"}}')
    assert isinstance(dialog, ExtensionDialog)
    assert (dialog.title, dialog.pid, dialog.waits, dialog.command) == (None, None, True, "ls")
    assert companion.parse(b'{"event":["dialog"]}') is None  # (an event name that is no name: unknown)
    hello = companion.parse(b'{"event":"hello","protocol":"1","mode":7}')
    assert hello == Hello()  # every field at its default


def test_a_dialog_is_keyed_as_its_file_is_read_under_the_watched_folder(tmp_path: Path) -> None:
    """pi gives its session file by another path to the same place (the sessions folder is
    configured through a symlink): the dialog goes to the session the board reads under the
    configured folder, not to a second session of the same file."""
    real = tmp_path / "real" / "--p--"
    real.mkdir(parents=True)
    (tmp_path / "link").symlink_to(tmp_path / "real")
    root = str(tmp_path / "link")

    def dialog(session_file: str | None, session_dir: str | None = None) -> ExtensionDialog:
        return ExtensionDialog("d1", "select", "Allow?", ("Yes", "No"), None, None, None, session_file, "/p", 7, None,
                      "value", None, session_dir=session_dir)

    ref = companion.ref_of(dialog(str(real / "s.jsonl")), [root])
    assert ref is not None and ref.key == str(tmp_path / "link" / "--p--" / "s.jsonl")
    assert companion.ref_of(dialog(str(tmp_path / "elsewhere.jsonl")), [root]) is None
    early = companion.ref_of(dialog(None, str(tmp_path / "real")), [root])  # before pi has a session
    assert early is not None and early.key.startswith("pid:")
