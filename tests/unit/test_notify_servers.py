"""The actions chosen per notification server (as each described itself on a real desktop: see
tests/desktop/test_desktops.py), one click being one action, and text typed into a notification."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from notifier.core.codec import question_token
from notifier.core.commands import Answer
from notifier.core.model import Item, Notice, Option, Question, QuestionItem, SessionRef
from notifier.outputs.dbus import Once
from notifier.outputs.render import REPLY, Server, abilities, choose, offer_line, render, takes_text

from .test_desktop_actions import signalled

# What each server answered GetServerInformation and GetCapabilities with, here.
GNOME = Server.of(
    ("gnome-shell", "GNOME", "43.9", "1.2"),
    ("actions", "body", "body-markup", "icon-static", "persistence", "sound"),
)
PLASMA = Server.of(
    ("Plasma", "KDE", "5.27.5", "1.2"),
    (
        "body", "body-hyperlinks", "body-markup", "body-images", "icon-static", "actions",
        "persistence", "inline-reply", "x-kde-urls", "x-kde-origin-name", "x-kde-display-appname",
        "inhibitions",
    ),
)  # fmt: skip
XFCE = Server.of(
    ("Xfce Notify Daemon", "Xfce", "0.7.3", "1.2"),
    ("actions", "body", "body-hyperlinks", "body-markup", "icon-static", "x-canonical-private-icon-only"),
)
DUNST = Server.of(
    ("dunst", "knopwob", "1.9.0", "1.2"),
    ("actions", "body", "body-hyperlinks", "icon-static", "synchronous", "x-dunst-stack-tag"),
)
MAKO = Server.of(("mako", "emersion", "1.7.1", "1.2"), ("actions", "body", "body-markup"))
NO_ACTIONS = Server.of(("notify-osd", "Canonical Ltd", "1.0", "1.1"), ("body", "body-markup"))


def question(options: tuple[str, ...] = ("Yes", "No"), **kw: Any) -> Question:
    item = QuestionItem("Ship it?", options=tuple(Option(o) for o in options), **kw)
    return Question("c1", "question", (item,), 1.0)


def offered(q: Question) -> tuple[tuple[tuple[str, str], ...], bool]:
    ref = SessionRef("/s/a.jsonl", "id", "/home/me/webshop", None)
    message = render(Notice(1, "question", (Item((ref.key, q.tool_call_id), ref, q),)), True, False)
    return message.actions, message.takes_text


def sent(server: Server, q: Question) -> list[str]:
    actions, text = offered(q)
    return [a for a, _ in choose(actions, server, text)]


def labels(server: Server, q: Question) -> list[str]:
    actions, text = offered(q)
    return [label for _, label in choose(actions, server, text)]


def test_other_versions_of_a_server_are_read_the_same_until_measured() -> None:
    assert abilities(Server("gnome-shell", "GNOME", "46.0", GNOME.capabilities)) == abilities(GNOME)
    assert abilities(Server("Plasma", "KDE", "6.0.2", PLASMA.capabilities)) == abilities(PLASMA)


def test_gnome_gets_the_click_and_three_buttons_the_most_useful_first() -> None:
    assert sent(GNOME, question()) == ["default", "answer:1", "answer:2", "show"]
    assert sent(GNOME, question(("A", "B", "C"))) == ["default", "answer:1", "answer:2", "answer:3"]
    assert sent(GNOME, question(())) == ["default", "show", "snooze"]  # no free-text field on GNOME


def test_xfce_draws_the_default_as_its_one_go_to_session_button() -> None:
    assert sent(XFCE, question()) == ["answer:1", "answer:2", "default", "show", "snooze"]
    assert labels(XFCE, question()).count("Go to session") == 1


def test_xfce_keeps_its_bubble_on_screen_long_answers_give_way() -> None:
    """xfce4-notifyd widens the bubble to its one row of buttons: three options of some 30
    letters drew it wider than the screen. Then Show and Snooze give way first, then the answers,
    all of them; the way to the session stays."""
    long = ("Rewrite the parser in Rust now", "Keep the Python parser for now", "Ask the team on Monday first")
    assert sent(XFCE, question(long)) == ["default", "show", "snooze"]
    short = ("Use PostgreSQL", "Use SQLite too", "Keep it as is")
    assert sent(XFCE, question(short)) == ["answer:1", "answer:2", "answer:3", "default", "show"]
    assert sent(XFCE, question(("Yes", "Deploy the release to production"))) == [
        "answer:1", "answer:2", "default", "show", "snooze",
    ]  # fmt: skip


def test_plasma_one_row_of_buttons_and_the_reply_field_for_free_text() -> None:
    assert sent(PLASMA, question(())) == ["default", REPLY, "show", "snooze"]
    assert sent(PLASMA, question()) == ["default", "answer:1", "answer:2", REPLY]
    assert sent(PLASMA, question(("A", "B", "C"))) == ["default", "answer:1", "answer:2", "answer:3"]
    assert REPLY not in sent(PLASMA, question(other=False))  # no free-text row in its dialog
    # the same Plasma without the capability: no field
    bare = Server("Plasma", "KDE", "5.27.5", PLASMA.capabilities - {"inline-reply"})
    assert sent(bare, question(())) == ["default", "show", "snooze"]


def test_plasma_buttons_fit_one_row_or_the_later_ones_go() -> None:
    # measured on Plasma 5.27: these two fit one row; three 11-capital labels wrapped
    assert sent(PLASMA, question(("Deploy to production", "Roll back the release"), other=False)) == [
        "default", "answer:1", "answer:2",
    ]  # fmt: skip
    assert sent(PLASMA, question(("A" * 11, "B" * 11, "C" * 11))) == ["default", "answer:1", "answer:2"]
    # (with "Answer…" as well they wrapped: no room for the reply button)
    assert sent(PLASMA, question(("Deploy to production", "Roll back the release"))) == [
        "default", "answer:1", "answer:2",
    ]  # fmt: skip
    assert sent(PLASMA, question(("A" * 40,))) == ["default", "answer:1"]  # alone, a button cannot wrap
    assert sent(DUNST, question(("A" * 11, "B" * 11, "C" * 11)))[1:4] == ["answer:1", "answer:2", "answer:3"]


def test_spec_servers_get_every_button_once_and_the_click() -> None:
    for server in (DUNST, MAKO, Server.of(("some-new-server", "", "", ""), ("actions",))):
        assert sent(server, question()) == ["default", "answer:1", "answer:2", "show", "snooze"]
    assert sent(NO_ACTIONS, question()) == []


def test_a_label_is_never_shown_twice() -> None:
    # options that read like our own buttons: a click on "Show" could mean either, so those
    # options are answered in the window or the terminal, and the buttons keep their meaning
    for options in (("Show", "Snooze 15 min"), ("show", "Ship"), ("Go to session", "Stay"), ("SNOOZE  15 MIN",)):
        q = question(options)
        for server in (DUNST, MAKO, GNOME, XFCE, PLASMA):
            chosen = choose(offered(q)[0], server)
            assert not [a for a, label in chosen if a.startswith("answer:") and label.casefold() in OURS], server
    assert sent(DUNST, question(("Show", "Ship"))) == ["default", "answer:2", "show", "snooze"]
    # two options that read the same: neither is a button
    assert sent(DUNST, question(("Keep", "keep", "Drop"))) == ["default", "answer:3", "show", "snooze"]
    # an old caller's goto button beside the default: one of them
    old = (("default", "Go to session"), ("goto", "Go to session"), ("show", "Show"))
    assert choose(old, XFCE) == (("default", "Go to session"), ("show", "Show"))
    assert choose(old, DUNST) == (("default", "Go to session"), ("show", "Show"))


OURS = {"show", "snooze 15 min", "go to session", "snooze  15 min"}


@given(
    st.lists(st.sampled_from(["Yes", "No", "yes", "Show", "A", "B", "Go to session"]), max_size=3),
    st.sampled_from([GNOME, PLASMA, XFCE, DUNST, MAKO]),
    st.booleans(),
)
def test_never_more_buttons_than_shown_nor_a_label_twice(
    options: list[str], server: Server, text: bool
) -> None:
    q = question(tuple(options))
    actions, _ = offered(q)
    chosen = choose(actions, server, text)
    what = abilities(server)
    buttons = [a for a in chosen if what.default_button or a[0] != "default"]
    assert what.buttons is None or len(buttons) <= what.buttons
    keys = [" ".join(label.casefold().split()) for a, label in buttons]
    assert len(keys) == len(set(keys))
    # an answer's button never reads like any other action, the click included
    every = [" ".join(label.casefold().split()) for _, label in actions]
    for a, label in chosen:
        if a.startswith("answer:"):
            assert every.count(" ".join(label.casefold().split())) == 1
    # wherever the click cannot reach the session, a button does
    assert ("default", "Go to session") in chosen


def test_one_click_that_arrives_twice_is_one_action() -> None:
    now = [100.0]
    once = Once(1.0, clock=lambda: now[0])
    assert once.first((7, "default"))
    assert not once.first((7, "default"))  # the same click again (GNOME: shell and service)
    assert once.first((7, "show")) and once.first((8, "default"))  # another action, another bubble
    now[0] += 1.5
    assert once.first((7, "default"))  # a second click, later


def test_free_text_only_where_answer_text_would_take_it() -> None:
    assert takes_text(question(()), True) and takes_text(question(), True)
    assert not takes_text(question(), False)  # text hidden
    assert not takes_text(question(multi=True), True)
    assert not takes_text(question(other=False), True)
    gate = Question("c1", "bash_gate", (QuestionItem("Run rm -rf?"),), 1.0, kind="dialog", dialog="input")
    assert not takes_text(gate, True)


@pytest.mark.parametrize(
    ("q", "carried_out"),
    [
        (question(()), True),
        (question(other=False), False),
        (Question("c1", "ext", (QuestionItem("Name?"),), 1.0, kind="dialog", dialog="input"), False),
    ],
)
def test_a_reply_answers_as_answer_text_and_only_where_asked(q: Question, carried_out: bool) -> None:
    commands, _ = signalled(q, ("reply", 7, "ship it on Friday"), ("reply", 99, "another app's"))
    shown = question_token(q)  # (what the notification showed: refused once another question waits)
    assert commands == ([Answer("/s/a.jsonl", "c1", text="ship it on Friday", token=shown)] if carried_out else [])


def test_doctor_says_what_the_notifications_offer_there() -> None:
    assert offer_line(GNOME) == "a click goes to the session; at most 3 buttons, the most useful first"
    assert offer_line(XFCE).startswith("'Go to session' is a button (a click on the bubble only dismisses it)")
    assert offer_line(PLASMA).endswith("; free-text answers typed into the notification")
    assert offer_line(DUNST) == "a click goes to the session; every button, the most useful first"
    assert offer_line(NO_ACTIONS).startswith("no buttons")
