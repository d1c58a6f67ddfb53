"""What a Notify call carries besides title and body (outputs/render.py): the expiry, the
urgency and the hints that keep a question on screen, its sound, and the reply field's hints."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from notifier.outputs.render import REPLY, REPLY_HINTS, Message, Server, notify_args

DUNST = Server.of(("dunst", "knopwob", "1.9.0"), ("actions", "body"))
PLASMA = Server.of(("Plasma", "KDE", "5.27.5"), ("actions", "body", "inline-reply"))
ASKS = Message("webshop needs an answer", "Deploy?", sticky=True)


def test_a_question_kept_until_answered_is_resident_and_critical() -> None:
    _, hints, timeout = notify_args(ASKS, DUNST, "never", "default")
    assert timeout == 0  # until closed
    assert hints["resident"] == ("b", True) and hints["urgency"] == ("y", 2)
    assert hints["sound-name"] == ("s", "message-new-instant")
    assert hints["category"] == ("s", "im.received") and hints["desktop-entry"] == ("s", "pi-notifier")


def test_a_question_that_expires_is_neither_resident_nor_critical() -> None:
    _, hints, timeout = notify_args(ASKS, DUNST, 30, "none")
    assert timeout == 30_000 and "resident" not in hints and hints["urgency"] == ("y", 1)
    assert hints["suppress-sound"] == ("b", True)


def test_what_needs_no_answer_takes_the_servers_default_and_no_sound() -> None:
    passing = Message("pi-notifier", "the session bus is back", actions=())
    actions, hints, timeout = notify_args(passing, DUNST, "never", "default")
    assert (actions, timeout) == ([], -1)
    assert hints["urgency"] == ("y", 1) and not {"resident", "sound-name"} & hints.keys()
    critical = Message("t", "b", critical=True)
    assert notify_args(critical, DUNST, "never", "default")[1]["urgency"] == ("y", 2)


def test_the_reply_field_comes_with_its_hints_only_where_it_is_offered() -> None:
    typed = Message("t", "Which name?", sticky=True, takes_text=True)
    actions, hints, _ = notify_args(typed, PLASMA, "never", "default")
    assert REPLY in actions[::2] and all(hints[k] == ("s", v) for k, v in REPLY_HINTS.items())
    actions, hints, _ = notify_args(typed, DUNST, "never", "default")
    assert REPLY not in actions[::2] and not REPLY_HINTS.keys() & hints.keys()


def test_a_server_without_actions_gets_none() -> None:
    bare = Server.of(("xx", "", "1"), ("body",))
    assert notify_args(ASKS, bare, "never", "default")[0] == []


@given(st.booleans(), st.booleans(), st.booleans(), st.sampled_from(["never", 0, 5, 600]))
def test_actions_go_as_key_label_pairs(sticky: bool, critical: bool, takes_text: bool, expire: str | int) -> None:
    message = Message("t", "b", critical=critical, sticky=sticky, takes_text=takes_text)
    actions, hints, timeout = notify_args(message, PLASMA, expire, "default")
    pairs = list(zip(actions[::2], actions[1::2], strict=True))
    assert pairs and pairs[0] == ("default", "Show")
    assert hints["urgency"] == ("y", 2 if critical or (sticky and timeout == 0) else 1)
    assert timeout == (-1 if not sticky else 0 if expire in ("never", 0) else int(expire) * 1000)
