"""Extension dialogs as pending questions (issue 11): the board, the JSON objects, the window's
details, and the exact values ``pi-notifier answer`` gives each kind of dialog."""

from __future__ import annotations

import dataclasses
from typing import Any

import pytest

from notifier.actions.answer import dialog_value
from notifier.companion import DialogFeed, ExtensionDialog, counts, dialog_from, question_of, ref_of
from notifier.core.board import Board, add_dialogs
from notifier.core.codec import event_obj, question_obj, status_obj
from notifier.core.model import Snapshot, Transition
from notifier.core.reducer import Header, ToolStart
from notifier.pi.keys import UsageError
from notifier.pi.parse import QuestionCatalog, extract
from notifier.window.view import Shown, details_text, window_obj

COMMAND = "rm -rf build \\\n  && echo \x1b[31mdone"


def gate(**over: Any) -> ExtensionDialog:
    obj = {
        "id": "ab12cd34-1",
        "kind": "select",
        "title": f"⚠️ Dangerous command:\n\n  {COMMAND}\n\nAllow?",
        "options": ["Yes", "No"],
        "tool": "bash",
        "tool_call_id": "call_b1",
        "tool_input": {"command": COMMAND},
        "session_file": "/s/a.jsonl",
        "cwd": "/home/dev/shop",
        "pid": 42,
        "at": 1_700_000_000_000,
        "remote": "value",
    }
    obj.update(over)
    return dialog_from(obj)


def test_a_gate_is_a_dialog_question_with_its_command_and_options() -> None:
    q = question_of(gate(), 0.0)
    assert (q.kind, q.dialog, q.tool, q.tool_call_id, q.options) == (
        "dialog",
        "select",
        "bash",
        "call_b1",
        ("Yes", "No"),
    )
    assert q.text == "⚠️ Dangerous command: rm -rf build \\ && echo done Allow?"  # one line, no escapes
    assert q.asked_at == 1_700_000_000.0
    obj = question_obj(q)
    assert list(obj) == ["tool_call_id", "tool", "text", "header", "options", "count", "kind", "dialog", "token"]
    assert question_of(gate(tool=None, tool_call_id=None, title=None), 5.0).tool_call_id == "ab12cd34-1"


def test_board_adds_resolves_and_abandons_dialogs_by_socket_and_id() -> None:
    b = Board(liveness=False)
    b.local.apply("/s/a.jsonl", [Header("id-a", "/home/dev/shop")], 1.0)
    ref = ref_of(gate(), ["/s"])
    assert ref is not None and ref_of(gate(), ["/elsewhere"]) is None
    (t,) = b.dialogs.open(("/run/x.sock", "ab12cd34-1"), ref, question_of(gate(), 2.0), 2.0)
    assert t.kind == "needs_input" and t.session.id == "id-a"  # the session as the board knows it
    assert b.dialogs.open(("/run/x.sock", "ab12cd34-1"), ref, question_of(gate(), 2.0), 2.0) == []
    (view,) = b.snapshot(3.0).sessions
    assert view.state == "needs_input" and [q.kind for q in view.pending] == ["dialog"]
    assert status_obj(b.snapshot(3.0))["pending"] == 1
    (done,) = b.dialogs.close(("/run/x.sock", "ab12cd34-1"), "cancelled", 1_700_000_004.0)
    assert done.kind == "resolved" and done.outcome == "cancelled" and done.waited_s == 4.0
    assert event_obj(done)["question"]["kind"] == "dialog"
    assert b.snapshot(4.0).pending_count == 0
    # a pi that went away: abandoned, and not listed among the abandoned questions
    b.dialogs.open(
        ("/run/y.sock", "1"),
        ref_of(gate(session_file="/s/new.jsonl"), ["/s"]) or ref,
        question_of(gate(), 5),
        5,
    )
    assert [v.ref.key for v in b.snapshot(5).sessions if v.pending] == ["/s/new.jsonl"]  # file unread yet
    assert b.dialogs.sources("/run/y.sock") == [("/run/y.sock", "1")]
    (gone,) = b.dialogs.close(("/run/y.sock", "1"), None, 6.0)
    assert gone.kind == "abandoned" and b.snapshot(6).abandoned == () and b.snapshot(6).pending == ()


def test_a_question_tools_own_dialog_is_not_shown_twice() -> None:
    catalog = QuestionCatalog()
    own = gate(kind="custom", tool="question", tool_call_id="call_q1", options=None, remote="keys")
    assert not counts(own, catalog) and counts(gate(), catalog)
    # a question tool nobody named: its own dialog too, by its arguments' shape (as its file call)
    clarify = {"question": "Which part?", "options": ["Parser", "Lexer", "Both"]}
    unnamed = gate(tool="clarify_prompt", tool_call_id="call_c1", tool_input=clarify, title="Which part?")
    assert not counts(unnamed, catalog)
    assert counts(gate(tool="clarify_prompt", tool_input={"command": "ls"}), catalog)
    b = Board(liveness=False)
    args = {"question": "Which database?", "options": [{"label": "SQLite"}]}
    b.local.apply(
        "/s/a.jsonl",
        [
            Header("id-a", "/p"),
            ToolStart(1.0, "call_q1", "question", extract("question", args, "call_q1", 1.0)),
        ],
        1.0,
    )
    ref = ref_of(own, ["/s"])
    assert ref is not None
    merged = add_dialogs(b.snapshot(2.0), [(ref, question_of(own, 2.0)), (ref, question_of(gate(), 2.0))])
    assert sorted((q.kind, q.tool_call_id) for _, q in merged.pending) == [
        ("dialog", "call_b1"),
        ("question", "call_q1"),
    ]
    assert merged.pending_count == 2
    assert add_dialogs(Snapshot(), [(ref, question_of(gate(), 2.0))]).pending_count == 1


def test_the_window_shows_a_gates_whole_command_before_yes() -> None:
    b = Board(liveness=False)
    ref = ref_of(gate(), ["/s"])
    assert ref is not None
    b.dialogs.open(("/run/x.sock", "ab12cd34-1"), ref, question_of(gate(), 2.0), 2.0)
    (obj,) = window_obj(b.snapshot(3.0))["questions"]
    row = Shown.from_obj(obj)  # (as the window reads it)
    assert obj["question"]["kind"] == "dialog" and obj["question"]["dialog"] == "select" and row.gate
    text = details_text(row, 1_700_000_010.0)
    assert "bash asks (select) — read all of it before answering:" in text
    assert "   rm -rf build \\\n   && echo done\n" in text and "\x1b" not in text
    confirm = question_of(gate(kind="confirm", tool=None, tool_call_id=None, options=None), 2.0)
    assert Shown(ref, confirm).gate
    assert not Shown(ref, dataclasses.replace(confirm, dialog="input", tool="dialog")).gate


def test_answer_values_are_exact_per_kind() -> None:
    g = gate()
    assert dialog_value(g, ["No"], None) == ("No", "No") and dialog_value(g, ["1"], None) == ("Yes", "Yes")
    assert dialog_value(g, ["no"], None) == ("No", "No")
    confirm = gate(kind="confirm", options=None)
    assert dialog_value(confirm, ["yes"], None) == (True, "Yes") and dialog_value(confirm, ["n"], None) == (False, "No")
    assert dialog_value(gate(kind="input", options=None), [], "a b") == ("a b", "a b")
    for d, choices, text in (
        (g, ["Maybe"], None),
        (g, ["Yes", "No"], None),
        (g, [], "x"),
        (confirm, ["perhaps"], None),
        (gate(kind="input", options=None), ["x"], None),
        *((gate(kind="input", options=None), [], f"a{c}b") for c in ("\n", "\r", "\t", "\x1b[31m", "\a", "\x7f")),
    ):
        with pytest.raises(UsageError):
            dialog_value(d, choices, text)
    with pytest.raises(UsageError, match=r"one choice, not 2 \('p', 'Yes'; a first word that names no session"):
        dialog_value(g, ["p", "Yes"], None)  # (answer p Yes, where p names no session)


def test_a_gate_is_never_approved_from_a_notification(monkeypatch: pytest.MonkeyPatch) -> None:
    """A gate's notification offers going to the session, "Show" and "Snooze" only: its options
    are never actions (the window, after the whole command, is where it is answered)."""
    from notifier.core.model import Item, Notice
    from notifier.outputs.dbus import DBusBackend
    from notifier.outputs.render import render

    ref = ref_of(gate(), ["/s"])
    assert ref is not None
    notice = Notice(1, "question", (Item(("/s/a.jsonl", "call_b1"), ref, question_of(gate(), 0.0)),))
    backend = DBusBackend()
    backend.capabilities = ("actions", "body")
    sent: list[tuple[Any, ...]] = []

    def request(method: str, signature: str, body: tuple[Any, ...]) -> tuple[Any, ...]:
        sent.append(body)
        return (7,)

    monkeypatch.setattr(backend, "_call", request)
    assert backend.show(render(notice, True, False), 0) == 7
    actions = sent[0][5]
    assert actions == ["default", "Go to session", "show", "Show", "snooze", "Snooze 15 min"]
    assert not [a for a in actions[::2] if a.startswith("answer:")] and "Yes" not in actions


# --- issue 21 ----------------------------------------------------------------------------------


class _Engine:
    """What DialogFeed.apply uses of the engine: its board and options (``emitted``: what the
    feed's calls returned, which the engine would hand to every output)."""

    def __init__(self, roots: list[str]) -> None:
        from notifier.sessions import EngineOptions

        self.board = Board(liveness=False)
        self.options = EngineOptions(roots=roots)
        self.emitted: list[Any] = []


class _Feed(DialogFeed):
    """The feed whose ``apply`` also keeps what it returns in ``emitted`` (as the engine's call
    does)."""

    emitted: list[Any]

    def apply(self, path: str, event: object) -> list[Transition]:
        out = super().apply(path, event)
        self.emitted.extend(out)
        return out


def _feed(engine: _Engine) -> _Feed:
    feed = _Feed.__new__(_Feed)  # (no watcher: events are handed to apply directly)
    # a stand-in engine (only its board and options are used), deliberately not an Engine:
    feed.engine, feed.wall, feed.started = engine, (lambda: 1_700_000_010.0), 0.0  # type: ignore[assignment]
    feed._files, feed._bye = {}, set()
    feed.emitted = engine.emitted
    return feed


def test_a_dialog_that_does_not_wait_for_a_human_is_never_on_the_board() -> None:
    from notifier.companion import Closed

    engine = _Engine(["/s"])
    feed = _feed(engine)
    loader = gate(kind="custom", options=None, remote="keys", tool=None, tool_call_id=None, waits=False)
    feed.apply("/run/x.sock", loader)
    feed.apply("/run/x.sock", Closed(loader.id, "answered", "Q: ..."))
    assert engine.emitted == [] and engine.board.snapshot(1.0).pending == ()
    # the same dialog announced again once it waits (a loader that became a question): on the board
    feed.apply("/run/x.sock", gate(kind="custom", options=None, remote="keys", id="ab12cd34-2", waits=False))
    feed.apply("/run/x.sock", gate(kind="custom", options=None, remote="keys", id="ab12cd34-2"))
    assert [t.kind for t in engine.emitted] == ["needs_input"]


def test_closed_dialogs_keep_their_answer_and_a_timed_out_one_is_cancelled() -> None:
    from notifier.companion import Closed

    engine = _Engine(["/s"])
    feed = _feed(engine)
    feed.apply("/run/x.sock", gate())
    feed.apply("/run/x.sock", Closed("ab12cd34-1", "answered", "No\x1b[31m"))
    feed.apply("/run/x.sock", gate(id="2", kind="confirm", options=None, tool=None, tool_call_id=None))
    feed.apply("/run/x.sock", Closed("2", "cancelled", None, timed_out=True))
    feed.apply("/run/x.sock", gate(id="3", kind="input", options=None, tool=None, tool_call_id=None))
    feed.apply("/run/x.sock", Closed("3", "answered", "", timed_out=True))  # (a timeout, whatever it says)
    done = [(t.question.dialog, t.outcome, t.answer) for t in engine.emitted if t.kind == "resolved"]
    assert done == [("select", "answered", "No"), ("confirm", "cancelled", None), ("input", "cancelled", None)]
    assert [event_obj(t)["answer"] for t in engine.emitted if t.kind == "resolved"] == ["No", None, None]
    needs = [t for t in engine.emitted if t.kind == "needs_input"]
    assert question_obj(needs[1].question)["options"] == ["Yes", "No"]


def test_a_start_up_dialog_belongs_to_its_pi_until_it_has_a_session() -> None:
    from notifier.core.board import startup_key

    early = gate(session_file=None, session_dir="/s", tool=None, tool_call_id=None, title="Project trust for:\n/p")
    ref = ref_of(early, ["/s"])
    assert ref is not None and ref.key == startup_key(42) == "pid:42" and ref.cwd == "/home/dev/shop"
    assert ref_of(early, ["/elsewhere"]) is None  # its sessions go where nobody watches
    assert ref_of(gate(session_file=None), ["/s"]) is None  # (an older extension: not known where)
    b = Board(liveness=True)
    (t,) = b.dialogs.open(("/run/x.sock", "1"), ref, question_of(early, 1.0), 1.0)
    assert event_obj(t)["session"]["file"] == "pid:42" and event_obj(t)["session"]["cwd"] == "/home/dev/shop"
    (view,) = b.snapshot(2.0).sessions
    assert view.state == "needs_input" and view.pending[0].text == "Project trust for: /p"
    # notified like any question: titled by its folder
    from notifier.core.model import Notice
    from notifier.core.planner import Planner

    planner = Planner(settle_s=0.25)
    planner.feed([t], 1.0)
    (notice,) = [a for a in planner.tick(1.3) if isinstance(a, Notice)]
    assert notice.items[0].project == "shop" and notice.items[0].ref.key == "pid:42"
    b.dialogs.close(("/run/x.sock", "1"), "answered", 3.0, "Trust this session")
    assert b.snapshot(3.0).sessions == ()  # gone with its dialog: the pi goes on in its session


def test_a_working_session_whose_pi_is_gone_is_stopped() -> None:
    from notifier.core.codec import status_obj as status_of
    from notifier.core.owners import Proc

    b = Board(liveness=True)
    b.local.apply("/s/a.jsonl", [Header("id-a", "/p"), ToolStart(1.0, "call_b1", "bash", None)], 1.0)
    assert b.snapshot(1.0).sessions[0].state == "working"
    b.local.set_processes([Proc("/p", 0.5)], 2.0)
    assert b.snapshot(2.0).sessions[0].state == "working"
    b.local.set_processes([], 3.0)  # killed while the gate was open
    (row,) = status_of(b.snapshot(3.0))["sessions"]
    assert (row["state"], row["alive"]) == ("stopped", False)


def test_a_question_tools_select_fallback_is_that_question_too() -> None:
    """Question tools that fall back to pi's select / input (pi-ask-user, RPC routes) ask through a
    dialog of the same tool call: one question on the board, not two."""
    catalog = QuestionCatalog()
    fallback = gate(kind="select", tool="ask_user", tool_call_id="call_q1", options=["SQLite", "PostgreSQL"])
    assert not counts(fallback, catalog)
    engine = _Engine(["/s"])
    _feed(engine).apply("/run/x.sock", fallback)
    assert engine.emitted == []
    b = Board(liveness=False)
    args = {"question": "Which database?", "options": [{"title": "SQLite"}]}
    b.local.apply("/s/a.jsonl", [Header("id-a", "/p"), ToolStart(1.0, "call_q1", "ask_user", extract("ask_user", args, "call_q1", 1.0))], 1.0)
    ref = ref_of(fallback, ["/s"])
    assert ref is not None
    merged = add_dialogs(b.snapshot(2.0), [(ref, question_of(fallback, 2.0))])
    assert [(q.kind, q.tool_call_id) for _, q in merged.pending] == [("question", "call_q1")]


def test_a_pi_lost_without_a_goodbye_died_in_its_session() -> None:
    """The companion's connection lost without ``bye``: the pi was killed; its working session
    is stopped at once (no process table needed). With ``bye`` (quit, /new, /reload) it is not."""
    from notifier.companion import Bye, Disconnected, Hello, parse

    assert parse(b'{"event":"bye","reason":"quit"}') == Bye("quit")
    for said_bye, state in ((False, "stopped"), (True, "working")):
        engine = _Engine(["/s"])
        engine.board = Board(liveness=True)
        engine.board.local.apply("/s/a.jsonl", [Header("id-a", "/p"), ToolStart(1.0, "call_b1", "bash", None)], 1.0)
        feed = _feed(engine)
        feed.apply("/run/x.sock", Hello(1, "1.6.0", 42, "/s/a.jsonl", "id-a", "/p", "wrap", (gate(),)))
        if said_bye:
            feed.apply("/run/x.sock", Bye("reload"))
        feed.apply("/run/x.sock", Disconnected("/run/x.sock"))
        (view,) = engine.board.snapshot(2.0).sessions
        assert (view.state, view.alive, view.pending) == (state, False if not said_bye else None, ())


def test_one_pi_keeps_at_most_max_dialogs_on_the_board_and_another_pi_is_not_held_up() -> None:
    """One extension cannot flood the board (it could put 20,000 dialogs there): the channel's
    limit per peer holds; a dialog it already has is still updated, and another pi's dialog counts."""
    from notifier.channel import MAX_DIALOGS
    from notifier.companion import Closed

    engine = _Engine(["/s"])
    feed = _feed(engine)
    for n in range(MAX_DIALOGS + 50):
        feed.apply("/run/x.sock", gate(id=f"d{n}", kind="confirm", options=None, tool=None, tool_call_id=None))
    assert engine.board.snapshot(1.0).pending_count == MAX_DIALOGS
    feed.apply("/run/x.sock", Closed("d0", "answered", "Yes"))  # room again: the next one is taken
    feed.apply("/run/x.sock", gate(id="late", kind="confirm", options=None, tool=None, tool_call_id=None))
    feed.apply("/run/y.sock", gate(id="other", kind="confirm", options=None, tool=None, tool_call_id=None))
    pending = {q.tool_call_id for _, q in engine.board.snapshot(1.0).pending}
    assert len(pending) == MAX_DIALOGS + 1 and {"late", "other"} <= pending and "d0" not in pending


def test_a_question_tools_dialog_inside_another_call_is_that_sessions_question() -> None:
    """A codemode script's question (issue 29, 2c): the session file has only the codemode call,
    so the nested question tool's custom dialog is listed, asking what its arguments ask; the
    same tool's dialog as the model's own call is not (its question is read from the file)."""
    catalog = QuestionCatalog()
    args = {"question": "Which database?", "options": [{"label": "PostgreSQL"}, {"label": "SQLite"}]}
    fields: dict[str, Any] = {"kind": "custom", "title": None, "options": None, "remote": "keys", "waits": True}
    own = gate(**fields, tool="question", tool_call_id="call_q1", tool_input=args)
    nested = gate(**fields, tool="question", tool_call_id="call_c1/1", tool_input=args, outer_tool_call_id="call_c1")
    assert nested.outer_tool_call_id == "call_c1" and own.outer_tool_call_id is None
    assert not counts(own, catalog) and counts(nested, catalog)
    engine = _Engine(["/s"])
    feed = _feed(engine)
    feed.apply("/run/x.sock", own)
    assert engine.emitted == []
    feed.apply("/run/x.sock", nested)
    (t,) = engine.emitted
    q = t.question
    assert (t.kind, q.kind, q.dialog, q.tool) == ("needs_input", "dialog", "custom", "question")
    assert q.tool_call_id == "call_c1/1"  # (pi's id for the nested call: unique, under call_c1)
    assert (q.text, q.options) == ("Which database?", ("PostgreSQL", "SQLite"))
    # a nested call's dialog that is not a question tool's (a gate on a script's bash): its title
    gated = gate(tool_call_id="call_c1/2", outer_tool_call_id="call_c1")
    assert question_of(gated, 0.0, catalog).options == ("Yes", "No")
    # a custom dialog with nothing to read its question from: the generic text, as before
    assert question_of(gate(**fields, tool="run_script", tool_input={"code": "x"}), 0.0, catalog).options == ()


def test_what_a_dialog_and_its_answer_may_make_the_app_hold_is_bounded() -> None:
    """A companion's dialog is bounded whatever it sends (a huge title, call id, arguments and
    options), as a session line is; so is a closed dialog's answer, which history records."""
    import json

    from notifier.channel import DIALOG_CHARS, MAX_DIALOGS
    from notifier.companion import Closed, Hello, parse
    from notifier.core.codec import MAX_STR
    from notifier.pi.parse import ID_LIMIT

    def event(size: int) -> dict[str, Any]:
        big = "x" * size
        return {**dataclasses.asdict(gate()), "event": "dialog", "title": big, "tool_call_id": big,
                "options": [big[:5000]] * 10, "tool_input": {"command": big}}  # fmt: skip

    one = parse(json.dumps(event(300_000)))
    hello = parse(json.dumps({"event": "hello", "dialogs": [event(3_000)] * (MAX_DIALOGS + 4)}))
    assert isinstance(hello, Hello) and len(hello.dialogs) == MAX_DIALOGS
    for d in (one, *hello.dialogs):
        assert isinstance(d, ExtensionDialog)
        kept = [d.title or "", *(d.options or ()), *d.tool_input.values()]
        assert sum(map(len, kept)) <= DIALOG_CHARS and len(d.title or "") <= MAX_STR
        assert (d.title or "").startswith("xxx")  # (cut, not dropped)
        assert d.tool_call_id is not None and len(d.tool_call_id) <= ID_LIMIT  # (as a session line's)
        assert d.session_file == "/s/a.jsonl" and d.cwd == "/home/dev/shop"  # (where it is: never cut short)
    closed = parse(json.dumps({"event": "closed", "id": "1", "answer": "x" * 900_000}))
    assert isinstance(closed, Closed) and closed.answer is not None and len(closed.answer) <= MAX_STR
