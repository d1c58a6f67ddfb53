"""Going to a session and answering from the desktop, without a desktop: the notification's
actions (Goto / Answer commands: their wire form is in test_commands.py), title and sound, the
tray menu and the window's model."""

from __future__ import annotations

import contextlib
import dataclasses
import threading
import time
from collections.abc import Iterator
from typing import Any

import pytest

from notifier.config import Config
from notifier.core.board import Board
from notifier.core.codec import question_token
from notifier.core.commands import Answer, Command, Focus, Goto, Show, Snooze
from notifier.core.model import (
    Item,
    Notice,
    Option,
    Question,
    QuestionItem,
    QuestionKind,
    SessionRef,
    Snapshot,
    Transition,
)
from notifier.core.owners import Proc
from notifier.core.planner import Silences
from notifier.core.reducer import Header, Renamed, ToolStart
from notifier.engine import Batch
from notifier.outputs.dbus import Backend
from notifier.outputs.desktop import Notifier
from notifier.outputs.render import Message, option_actions, render, sound_hints, who
from notifier.outputs.tray import UiState, menu
from notifier.pi.parse import extract
from notifier.system.supervisor import Worker
from notifier.window.view import (
    Shown,
    Where,
    details_text,
    mark_snoozes,
    shorten_middle,
    where_text,
    window_obj,
)

from ..conftest import wait_for


def question(
    options: tuple[str, ...] = ("Yes", "No"),
    tool: str = "question",
    multi: bool = False,
    items: int = 1,
    kind: QuestionKind = "question",
) -> Question:
    item = QuestionItem("Ship it?", options=tuple(Option(o) for o in options), multi=multi)
    return Question("c1", tool, (item,) * items, 1.0, kind=kind, dialog="select" if kind == "dialog" else None)


def notice(q: Question, ref: SessionRef | None = None) -> Notice:
    ref = ref or SessionRef("/s/a.jsonl", "id", "/home/me/webshop", "billing refactor")
    return Notice(1, "question", (Item((ref.key, q.tool_call_id), ref, q),))


def test_title_names_folder_and_session_and_remote() -> None:
    assert render(notice(question()), True, False).title == "webshop · billing refactor needs an answer"
    plain = SessionRef("/s/a.jsonl", "id", "/home/me/webshop", None)
    assert render(notice(question(), plain), True, False).title == "webshop needs an answer"
    remote = SessionRef("@devbox:/s/a.jsonl", "id", "/srv/webshop", "billing refactor", host="devbox")
    assert who(remote) == "devbox · webshop · billing refactor"
    assert who(SessionRef("/s/a.jsonl", None, None, None)) == "pi"
    assert who(SessionRef("/s/a.jsonl", None, "/x/same", "same")) == "same"


def test_option_actions_only_where_an_answer_can_be_given() -> None:
    actions = render(notice(question()), True, False).actions
    assert actions[0] == ("default", "Go to session")  # the click; per server: test_notify_servers.py
    assert ("answer:1", "Yes") in actions and ("answer:2", "No") in actions
    assert actions[-2:] == (("show", "Show"), ("snooze", "Snooze 15 min"))
    for q, show_text in (
        (question(kind="dialog"), True),  # an extension dialog, a permission gate: never
        (question(("a", "b", "c", "d")), True),  # more than 3 options
        (question(multi=True), True),
        (question(items=2), True),  # a form
        (question(), False),  # text hidden: its options too
        (question(()), True),
        (question((), tool="ask_user"), True),  # no options: nothing to press
    ):
        assert option_actions(q, show_text) == ()
        assert not [a for a, _ in render(notice(q), show_text, False).actions if a.startswith("answer:")]
    # whatever the tool is called: its question's shape decides (options, one question, one pick)
    for tool in ("my_ask", "ask_user", "clarify_prompt", "mcp__server__ask"):
        assert option_actions(question(tool=tool), True) == (("answer:1", "Yes"), ("answer:2", "No"))


def test_sound_hints() -> None:
    assert sound_hints("default") == {"sound-name": ("s", "message-new-instant")}
    assert sound_hints("none") == {"suppress-sound": ("b", True)}
    assert sound_hints("bell") == {"sound-name": ("s", "bell")}
    assert sound_hints("/usr/share/sounds/x.oga") == {"sound-file": ("s", "/usr/share/sounds/x.oga")}


@pytest.mark.parametrize("value", ["", "a b", "../x", 5, "x" * 65, "/a\nb"])
def test_sound_key_range(value: Any) -> None:
    from notifier.config import KEYS, Invalid

    with pytest.raises(Invalid):
        KEYS["notifications.sound"].check(value)


class Server(Backend):
    """A notification server as the notifier sees it (its ``backend``): what it was asked to show,
    numbered from 7."""

    name = "stand-in"
    markup = False
    online = True
    owner = ":1.7"
    found = "server"
    connected = True

    def __init__(self) -> None:
        self.shown: list[Message] = []
        self.closed: list[int] = []

    def show(self, message: Message, replaces: int) -> int:
        self.shown.append(message)
        return replaces or 6 + len(self.shown)

    def close(self, server_id: int) -> None:
        self.closed.append(server_id)

    def shutdown(self) -> None:
        pass


@contextlib.contextmanager
def outputs_thread() -> Iterator[Worker]:
    """A started :class:`Worker`, as the app's one outputs thread the notifier runs on; stopped
    (and its end awaited) on leaving."""
    stopping = threading.Event()
    worker = Worker("outputs", stopping)
    worker.start()
    try:
        yield worker
    finally:
        stopping.set()
        assert worker.sync(5)


def signalled(
    q: Question, *signals: tuple[str, int, str], show_text: bool = True
) -> tuple[list[Command], list[int]]:
    """The commands the notifier gave ``execute`` when the server sent ``signals`` ("action" or "reply",
    server id, action or text) after it showed the notification of ``q`` (server id 7), and the
    notifications it closed meanwhile."""
    commands: list[Command] = []
    config = Config()
    config.set("notifications.show_text", show_text, "test")
    config.set("notifications.skip_when_focused", False, "test")
    config.set("settle_ms", 0, "test")
    server = Server()
    ref = SessionRef("/s/a.jsonl", "id", "/home/me/webshop", "billing refactor")
    with outputs_thread() as worker:
        alerts = Notifier(config, execute=commands.append, backend=server, worker=worker)
        alerts.start()
        try:
            alerts.publish(Batch((Transition("needs_input", ref, q, time.time()),), Snapshot()))
            wait_for(lambda: server.shown, 5, "the question's notification")
            for kind, server_id, arg in signals:
                (alerts.on_server_action if kind == "action" else alerts.on_server_reply)(server_id, arg)
            alerts.tell("the signals were taken", "")  # (after them, in order)
            wait_for(lambda: len(server.shown) == 2, 5, "the signals taken")
            closed = list(server.closed)  # (before the notifier stops: then it closes what it shows)
        finally:
            alerts.stop()
    return commands, closed


def test_notification_actions_route_to_goto_answer_and_show() -> None:
    signals = [("action", 7, action) for action in ("default", "goto", "answer:2", "show")]
    commands, _ = signalled(question(), *signals, ("action", 99, "default"))  # 99: another app's
    assert commands == [
        Goto("/s/a.jsonl", "c1"),
        Goto("/s/a.jsonl", "c1"),
        # a row number, never a label; and what was shown (the question's token)
        Answer("/s/a.jsonl", "c1", ("#2",), token=question_token(question())),
        Show(Focus("/s/a.jsonl", "c1")),
    ]


def test_snooze_on_a_notification_snoozes_its_session_and_closes_it() -> None:
    before = time.time()
    commands, closed = signalled(question(), ("action", 7, "snooze"))
    assert [type(c) for c in commands] == [Snooze] and isinstance(commands[0], Snooze)
    assert commands[0].session == "/s/a.jsonl" and commands[0].until >= before + 15 * 60
    assert closed == [7]


@pytest.mark.parametrize("q", [question(kind="dialog"), question(("a", "b", "c", "d"))])
def test_an_answer_action_not_offered_is_never_carried_out(q: Question) -> None:
    """A forged "answer:1" on a gate's notification (or one that offered no options) does nothing."""
    commands, _ = signalled(q, ("action", 7, "answer:1"), ("action", 7, "answer:9"))
    assert commands == []
    commands, _ = signalled(question(), ("action", 7, "answer:1"), show_text=False)
    assert commands == []


def board() -> Board:
    b = Board(liveness=True)
    args = {"question": "Which?", "options": [{"label": "A"}, {"label": "B"}]}
    for key, cwd, at in (("/s/a.jsonl", "/home/u/shop", 100.0), ("/s/b.jsonl", "/home/u/api", 200.0)):
        b.local.apply(
            key,
            [Header("id-" + key, cwd), ToolStart(at, "c", "question", extract("question", args, "c", at))],
            at,
        )
    b.local.set_processes([Proc("/home/u/shop", 50.0)], 300.0)  # a's pi runs; b's has stopped
    return b


def test_menu_has_a_go_to_session_entry_per_waiting_question() -> None:
    entries = menu(UiState(board().snapshot(0)), 500.0)
    goto = next(e for e in entries if e.label == "Go to session")
    assert [c.action(600.0) for c in goto.children if c.action] == [Goto("/s/a.jsonl", "c")]
    empty = menu(UiState(Board().snapshot(0)), 500.0)
    assert not [e for e in empty if e.label == "Go to session"]


def test_resume_only_when_no_live_pi_holds_the_session() -> None:
    data = window_obj(board().snapshot(300.0))
    by_file = {q["file"]: q for q in data["questions"]}
    running, stopped = Shown.from_obj(by_file["/s/a.jsonl"]), Shown.from_obj(by_file["/s/b.jsonl"])
    assert running.live and "Resume:" not in details_text(running, 400.0)
    assert not stopped.live and "Resume:  cd /home/u/api && pi --session /s/b.jsonl" in details_text(
        stopped, 400.0
    )
    unknown = dict(by_file["/s/a.jsonl"], alive=None)
    assert not Shown.from_obj(unknown).live and "Resume:" in details_text(Shown.from_obj(unknown), 400.0)
    located = Shown.from_obj(
        dict(unknown, location={"pid": 7, "tty": "/dev/pts/1", "tmux": {"session": "w", "window": 1, "pane": "%2"}})
    )
    assert located.live and where_text(located) == "tmux w:1 %2"
    assert "Where:   pid 7 · tmux w:1 %2" in details_text(located, 400.0)
    assert where_text(dataclasses.replace(located, location=Where(7, "/dev/pts/1"))) == "/dev/pts/1"


def test_snoozed_questions_are_marked_and_can_be_unsnoozed() -> None:
    data = window_obj(board().snapshot(300.0))
    silences = Silences(sessions={"/s/a.jsonl": 900.0}, projects={"api": 5000.0})
    marked = mark_snoozes(data, silences, 400.0)["questions"]
    by_file = {q["file"]: Shown.from_obj(q) for q in marked}
    assert by_file["/s/a.jsonl"].snoozed_until == 900.0 and by_file["/s/a.jsonl"].unsnooze() == Snooze(
        0.0, "/s/a.jsonl"
    )
    assert by_file["/s/b.jsonl"].unsnooze() == Snooze(0.0, project="api")
    assert "Snoozed: for 8 min more (session)" in details_text(by_file["/s/a.jsonl"], 420.0)
    everything = mark_snoozes(
        window_obj(board().snapshot(300.0)), dataclasses.replace(Silences(), snooze_all_until=800.0), 400.0
    )
    assert {Shown.from_obj(q).unsnooze() for q in everything["questions"]} == {Snooze(0.0)}
    assert everything["snoozed_until"] == 800.0  # the window's heading says so
    over = mark_snoozes(window_obj(board().snapshot(300.0)), silences, 6000.0)
    assert all(q["snoozed_until"] is None and Shown.from_obj(q).unsnooze() is None for q in over["questions"])
    assert over["snoozed_until"] is None


def test_a_named_session_snoozed_by_its_folder_is_marked_and_lifted_by_that_name() -> None:
    """`snooze webshop 1h` holds back a named session in ~/webshop (Item.projects): the window
    says it is snoozed by its project, and lifting it lifts the folder's snooze."""
    b = Board(liveness=False)
    args = {"question": "Which?", "options": [{"label": "A"}, {"label": "B"}]}
    b.local.apply(
        "/s/n.jsonl",
        [Header("id-n", "/home/u/webshop"), Renamed("feature-x"), ToolStart(100.0, "c", "question", extract("question", args, "c", 100.0))],
        100.0,
    )
    (q,) = mark_snoozes(window_obj(b.snapshot(300.0)), Silences(projects={"webshop": 5000.0}), 400.0)["questions"]
    shown = Shown.from_obj(q)
    assert shown.project == "feature-x" and (shown.snoozed_until, shown.snoozed_by) == (5000.0, "project")
    assert shown.unsnooze() == Snooze(0.0, project="webshop")


def test_long_paths_are_shortened_in_the_middle() -> None:
    path = "/home/developer/projects/clients/acme/monorepo/services/billing-webshop"
    short = shorten_middle(path, 30)
    assert len(short) == 30 and short.startswith("/home/develope") and short.endswith("billing-webshop")
    assert "…" in short and shorten_middle(path, 0) == path and shorten_middle("/a/b", 30) == "/a/b"
    obj = window_obj(board().snapshot(300.0))["questions"][0]
    q = Shown.from_obj(dict(obj, session={**obj["session"], "cwd": path}))
    assert f"Folder:  {shorten_middle(path, 40)}" in details_text(q, 400.0, width=49)
    # a narrow pane (or one not laid out yet) still shows a useful path
    assert f"Folder:  {shorten_middle(path, 32)}" in details_text(q, 400.0, width=10)
    assert f"Folder:  {path}" in details_text(q, 400.0)
