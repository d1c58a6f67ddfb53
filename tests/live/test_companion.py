"""The companion pi extension with the real pi (1.6.0, and 0.73.1 for feature detection) in its
terminal UI under tmux, driven by the scripted model: dialogs are announced on the extension's
socket at once, answered through it exactly, and pi behaves as before without a client or without
the extension. .ci/run installs pi 1.6 into .cache/pi16 (override: PI_NOTIFIER_PI16_DIR)."""

from __future__ import annotations

import contextlib
import json
import os
import socket
import time
from pathlib import Path

import pytest

from notifier import companion
from notifier.companion import CLOSED, Closed, Disconnected, ExtensionDialog, Hello, answer_dialog, hello_of
from notifier.system.paths import list_sockets

from ..conftest import cli, wait_for
from .pi_harness import (
    EXTENSION,
    GATE_COMMAND,
    PI073,
    PI16,
    ExtHarness,
    Listener,
    PiSession,
    needs,
    pi16,
    start_pi,
)

# An event is pushed the moment pi opens a dialog (about 1 ms here). The bound only tells "pushed"
# from "found by some later poll or batch", with room for a loaded CI machine's stalls.
AT_ONCE = 0.5


def _dialog_seen(pi: PiSession, lis: Listener, count: int, marker: str) -> tuple[ExtensionDialog, float, float]:
    """The count-th dialog, when it arrived, and when pi's terminal first showed ``marker``."""
    shown = wait_for(lambda: time.time() if marker in pi.screen() else None, 30, f"{marker!r} on the screen")
    arrived, dialog = wait_for(
        lambda: len(lis.of(ExtensionDialog)) >= count and lis.of(ExtensionDialog)[count - 1], 5, "the dialog event"
    )
    return dialog, arrived, shown


@needs("1.6.0")
def test_gate_is_announced_at_once_and_answered_exactly(
    tmp_path: Path, model: int, listener: Listener, capsys: pytest.CaptureFixture[str]
) -> None:
    pi = pi16(tmp_path, model, PI16.examples / "permission-gate.ts", EXTENSION)
    try:
        ((_, hello),) = wait_for(lambda: listener.of(Hello), 10, "the extension's hello")
        assert hello.pi_version == "1.6.0" and hello.mode == "wrap" and hello.dialogs == ()
        (sock,) = list_sockets()
        assert os.stat(sock).st_mode & 0o777 == 0o600
        assert os.stat(os.path.dirname(sock)).st_mode & 0o777 == 0o700

        # status sees the running pi that has it loaded
        status = json.loads(cli("pi-extension", "status", "--json").stdout)
        assert [item["pid"] for item in status["loaded"]] == [hello.pid] and status["installed"] is False

        pi.prompt(f"bash: {GATE_COMMAND}")
        dialog, arrived, shown = _dialog_seen(pi, listener, 1, "Allow?")
        assert dialog.kind in ("select", "confirm") and GATE_COMMAND in (dialog.title or "")
        assert dialog.options == ("Yes", "No") and dialog.tool == "bash" and dialog.command == GATE_COMMAND
        assert dialog.tool_call_id and dialog.tool_call_id.startswith("call_b")
        assert dialog.session_file == hello.session_file and dialog.pid == hello.pid
        assert dialog.at is not None
        latency = arrived - dialog.at
        assert latency < AT_ONCE, f"announced {latency * 1000:.1f} ms after pi opened the dialog"
        assert arrived <= shown + AT_ONCE  # before (or at once after) the terminal showed it
        with capsys.disabled():
            print(
                f"\n[companion] gate dialog: {latency * 1000:.1f} ms from pi opening it to the event; "
                f"event {1000 * (shown - arrived):.0f} ms before the pane showed it"
            )

        # wrong answers are refused and change nothing
        assert answer_dialog(sock, dialog.id, "Maybe").error == "not one of the options"
        assert not answer_dialog(sock, dialog.id, keys=["enter"]).ok
        assert not answer_dialog(sock, "nope-1", "No").ok
        result = answer_dialog(sock, dialog.id, "No")
        assert result.ok and result.closed
        assert wait_for(lambda: pi.tool_result("call_b"), 20, "the tool result") == "Blocked by user"
        closed = wait_for(lambda: listener.of(Closed), 5, "closed")
        assert [(e.id, e.how, e.answer) for _, e in closed] == [(dialog.id, "remote", "No")]
        # stale: the same id again is refused, nothing done
        assert answer_dialog(sock, dialog.id, "Yes").error == CLOSED
        wait_for(lambda: "Allow?" not in pi.screen(), 10, "the dialog to go away")

        # answered in the terminal instead: a closed event says so
        pi.prompt(f"bash: {GATE_COMMAND} again")
        second, arrived2, _ = _dialog_seen(pi, listener, 2, "Allow?")
        assert second.id != dialog.id and arrived2 - (second.at or 0) < AT_ONCE
        pi.keys("Down")
        pi.keys("Enter")
        wait_for(lambda: len(listener.of(Closed)) == 2, 10, "the second closed event")
        assert listener.of(Closed)[1][1] == Closed(second.id, "answered", "No")
        wait_for(lambda: pi.session_text().count("Blocked by user") == 2, 20, "the second refusal")
    finally:
        pi.close()
    wait_for(lambda: listener.of(Disconnected), 10, "the disconnect when pi quits")
    wait_for(lambda: not list_sockets(), 10, "the socket to be removed")


@needs("1.6.0")
def test_without_a_client_the_gate_works_by_keys(tmp_path: Path, model: int) -> None:
    pi = pi16(tmp_path, model, PI16.examples / "permission-gate.ts", EXTENSION)
    try:
        wait_for(list_sockets, 10, "the extension's socket")
        pi.prompt(f"bash: {GATE_COMMAND}")
        wait_for(lambda: "Allow?" in pi.screen(), 30, "the gate")
        pi.keys("Down")
        pi.keys("Enter")
        assert wait_for(lambda: pi.tool_result("call_b"), 20, "the tool result") == "Blocked by user"
    finally:
        pi.close()


@needs("1.6.0")
def test_question_tool_is_answered_through_the_channel(
    tmp_path: Path, model: int, listener: Listener
) -> None:
    pi = pi16(tmp_path, model, PI16.examples / "question.ts", EXTENSION)
    try:
        wait_for(lambda: listener.of(Hello), 10, "the extension's hello")
        (sock,) = list_sockets()
        pi.prompt("Ask me which database to use")
        dialog, arrived, _ = _dialog_seen(pi, listener, 1, "Enter to select")
        assert dialog.kind == "custom" and dialog.remote == "keys" and dialog.tool == "question"
        assert dialog.tool_call_id and dialog.tool_call_id.startswith("call_q")
        assert dialog.screen and any("Which database should we use?" in line for line in dialog.screen)
        assert arrived - (dialog.at or 0) < AT_ONCE
        assert "a custom dialog is answered with keys" in (
            answer_dialog(sock, dialog.id, "SQLite").error or ""
        )
        moved = answer_dialog(sock, dialog.id, keys=["down"])
        assert moved.ok and not moved.closed
        assert moved.screen and any(line.startswith("> 2. SQLite") for line in moved.screen)
        done = answer_dialog(sock, dialog.id, keys=["enter"])
        assert done.ok and done.closed
        assert wait_for(lambda: pi.tool_result("call_q"), 20, "the answer") == "User selected: 2. SQLite"
        closed = wait_for(lambda: listener.of(Closed), 5, "closed")
        assert [e for _, e in closed] == [Closed(dialog.id, "remote")]
    finally:
        pi.close()


@needs("1.6.0")
def test_pi_without_the_extension_works_as_before(tmp_path: Path, model: int) -> None:
    pi = pi16(tmp_path, model, PI16.examples / "permission-gate.ts", PI16.examples / "question.ts")
    try:
        pi.prompt("Ask me which database to use")
        try:
            wait_for(lambda: "Enter to select" in pi.screen(), 30, "the question")
        except AssertionError:
            raise AssertionError(pi.screen()) from None
        pi.keys("Down")
        pi.keys("Enter")
        assert wait_for(lambda: pi.tool_result("call_q"), 20, "the answer") == "User selected: 2. SQLite"
        assert list_sockets() == []
    finally:
        pi.close()


@needs("0.73.1")
def test_pi_073_loads_the_extension_without_error(
    tmp_path: Path, model: int, listener: Listener, capsys: pytest.CaptureFixture[str]
) -> None:
    pi = start_pi(tmp_path, PI073, model, PI073.example("question.ts"), EXTENSION, height=40)
    try:
        ((_, hello),) = wait_for(lambda: listener.of(Hello), 10, "the extension's hello")
        assert hello.pi_version == "0.73.1" and hello.mode in ("wrap", "events")
        with capsys.disabled():
            print(f"\n[companion] pi 0.73.1: extension loaded, mode {hello.mode}")
        screen = pi.screen().lower()
        assert "error" not in screen and "failed" not in screen
        pi.prompt("Ask me which database to use")
        wait_for(lambda: "Enter to select" in pi.screen(), 30, "the question")
        if hello.mode == "wrap":  # 0.73.1 has no prompt events, but its ctx.ui can be wrapped
            dialog = wait_for(lambda: listener.of(ExtensionDialog), 5, "the dialog")[0][1]
            assert dialog.kind == "custom"
            (sock,) = list_sockets()
            assert answer_dialog(sock, dialog.id, keys=["down", "enter"]).closed
        else:
            pi.keys("Down")
            pi.keys("Enter")
        assert wait_for(lambda: pi.tool_result("call_q"), 20, "the answer") == "User selected: 2. SQLite"
    finally:
        pi.close()


@needs("1.6.0")
def test_where_ctx_ui_cannot_be_wrapped_prompt_events_still_announce(listener: Listener) -> None:
    pi = ExtHarness()
    try:
        assert pi.do("start frozen") == {"ok": True, "wrapped": False}
        ((_, hello),) = wait_for(lambda: listener.of(Hello), 10, "hello")
        assert hello.mode == "events"
        pi.do("prompt select Allow rm -rf build?")
        _, dialog = wait_for(lambda: listener.of(ExtensionDialog), 5, "the dialog")[0]
        assert (dialog.kind, dialog.title, dialog.options, dialog.remote) == (
            "select",
            "Allow rm -rf build?",
            None,
            None,
        )
        (sock,) = list_sockets()
        assert "announces dialogs only" in (answer_dialog(sock, dialog.id, "Yes").error or "")
        pi.do("end")
        assert wait_for(lambda: listener.of(Closed), 5, "closed")[0][1].id == dialog.id
    finally:
        pi.close()


@needs("1.6.0")
def test_a_late_client_sees_open_dialogs_and_bad_clients_change_nothing() -> None:
    pi = ExtHarness()
    try:
        assert pi.do("start plain")["wrapped"] is True
        (sock,) = wait_for(list_sockets, 10, "the socket")
        pi.do("select Pick A,B")  # nobody listens: the dialog works as without the extension
        pi.do("resolve A")
        wait_for(lambda: pi.selected == ["A"], 5, "the terminal answer")
        pi.do("select Again A,B")
        # garbage, an unknown request, an over-long line: refused or dropped; pi carries on
        with socket.socket(socket.AF_UNIX) as bad:
            bad.connect(sock)
            bad.sendall(b'nonsense\n{"answer":{"id":"zz","value":"A"}}\n')
            replies = bad.makefile("rb")
            assert isinstance(companion.parse(replies.readline()), Hello)
            assert json.loads(replies.readline())["error"] == "not JSON"
            assert json.loads(replies.readline())["error"] == "unknown or closed dialog"
            with contextlib.suppress(OSError):  # dropped part way: a line longer than it buffers
                bad.sendall(b"x" * (4 << 20))
            try:
                rest = replies.readline()
            except OSError:
                rest = b""
            assert rest == b""
        # an app connecting now sees the open dialog in the hello, and answers it exactly
        dialogs = hello_of(sock).dialogs
        assert [d.title for d in dialogs] == ["Again"] and dialogs[0].options == ("A", "B")
        assert answer_dialog(sock, dialogs[0].id, "B").ok
        wait_for(lambda: pi.selected == ["A", "B"], 5, "the remote answer")
        pi.do("shutdown")
        assert list_sockets() == []
    finally:
        pi.close()


@needs("1.6.0")
def test_only_dialogs_that_wait_for_a_human_are_said_to(listener: Listener) -> None:
    """A custom dialog's component tells: a loader, or one shown while its extension's model call
    runs, or one that takes no input, does not wait; a question does (and a busy one once its model
    call returned). A select that closes by its timeout is cancelled, timed out."""
    pi = ExtHarness()
    try:
        assert pi.do("start plain")["wrapped"] is True
        wait_for(lambda: listener.of(Hello), 10, "hello")
        said: dict[str, ExtensionDialog] = {}
        for n, kind in enumerate(("loader", "question", "text", "busy")):
            pi.do(f"custom {kind}")

            def nth(n: int = n) -> tuple[float, ExtensionDialog] | None:
                return listener.of(ExtensionDialog)[n] if len(listener.of(ExtensionDialog)) > n else None

            _, said[kind] = wait_for(nth, 5, f"the {kind} dialog")
            if kind != "busy":
                pi.do("done x")
        waits = {k: d.waits for k, d in said.items()}
        assert waits == {"loader": False, "question": True, "text": False, "busy": False}
        pi.do("render")
        assert len(listener.of(ExtensionDialog)) == 4  # still busy: not announced again
        pi.do("model")
        _, again = wait_for(lambda: len(listener.of(ExtensionDialog)) == 5 and listener.of(ExtensionDialog)[4], 5, "busy, then not")
        assert again.id == said["busy"].id and again.waits is True
        pi.do("done picked")
        closed = wait_for(lambda: len(listener.of(Closed)) == 4 and [e for _, e in listener.of(Closed)], 5, "closes")
        assert closed[-1] == Closed(said["busy"].id, "answered", "picked")
        pi.do("timed 300")
        wait_for(lambda: pi.selected == [None], 5, "the select to time out")
        _, timed = wait_for(lambda: len(listener.of(Closed)) == 5 and listener.of(Closed)[4], 5, "closed")
        assert (timed.how, timed.answer, timed.timed_out) == ("cancelled", None, True)
    finally:
        pi.close()
