"""The one command vocabulary: parse once, round-trip, refuse anything malformed."""

from __future__ import annotations

import pytest

from notifier.core.commands import (
    Answer,
    Clear,
    Command,
    CommandError,
    Focus,
    Goto,
    Health,
    Mute,
    Ping,
    Quit,
    Show,
    Snooze,
    Status,
    Subscribe,
    parse,
    to_obj,
)

NOW = 1_000_000.0


@pytest.mark.parametrize(
    "command",
    [
        Ping(),
        Show(),
        Show(Focus("/s/a.jsonl", "call_1")),
        Show(wait=2.0),
        Snooze(NOW + 900),
        Snooze(NOW + 900, session="/s/a.jsonl"),
        Snooze(NOW + 3600, project="webshop"),
        Snooze(0.0),
        Mute("webshop"),
        Mute("webshop", on=False),
        Clear(),
        Clear("/s/a.jsonl", "call_1"),
        Status(("/home/me/.pi/agent/sessions",), "auto", ("my_ask",)),
        Subscribe(),
        Health(),
        Quit(),
        Goto(),
        Goto("/s/a.jsonl", "call_1"),
        Goto("@devbox:/s/a.jsonl"),
        Answer("/s/a.jsonl", "call_1", ("2",)),
        Answer("/s/a.jsonl", "call_1", ("1", "3")),
        Answer("/s/a.jsonl", "call_1", (), "free text"),
    ],
)
def test_round_trip(command: Command) -> None:
    assert parse(to_obj(command), NOW) == command


def test_snooze_in_seconds_is_made_absolute() -> None:
    assert parse({"cmd": "snooze", "seconds": 900}, NOW) == Snooze(NOW + 900)
    assert parse({"cmd": "snooze", "seconds": 0, "session": "/s"}, NOW) == Snooze(0.0, "/s")


@pytest.mark.parametrize(
    "obj",
    [
        None,
        [],
        "ping",
        {},
        {"cmd": "nope"},
        {"cmd": "snooze", "seconds": "15"},
        {"cmd": "snooze", "seconds": True},
        {"cmd": "snooze", "seconds": float("nan")},
        {"cmd": "snooze", "until": float("inf")},
        {"cmd": "show", "focus": ["only-one"]},
        {"cmd": "show", "focus": [1, 2]},
        {"cmd": "show", "focus": "x"},
        {"cmd": "mute"},
        {"cmd": "mute", "project": "p", "on": "yes"},
        {"cmd": "clear", "session": 5},
        {"cmd": "status", "roots": "/"},
        {"cmd": "status", "roots": [1]},
        {"cmd": "status", "roots": ["/"] * 1000},
        {"cmd": "snooze", "seconds": 10, "project": "x" * 10_000},
        {"cmd": "show", "wait": "soon"},
        {"cmd": "act"},
        {"cmd": "act", "verb": "explode"},
        {"cmd": "act", "verb": "snooze", "arg": "later"},
        {"cmd": "act", "verb": "show", "arg": 3},
        {"cmd": "act", "verb": "clear", "arg": ["a"]},
        {"cmd": "act", "verb": "clear", "arg": [1, 2]},
        {"cmd": "act", "verb": "unmute", "arg": None},
        {"cmd": "goto", "session": 3},
        {"cmd": "goto", "session": "x" * 10_000},
        {"cmd": "answer", "call": "c", "choices": ["1"]},  # no session
        {"cmd": "answer", "session": "/s", "choices": ["1"]},  # no call
        {"cmd": "answer", "session": "/s", "call": "c"},  # neither choices nor text
        {"cmd": "answer", "session": "/s", "call": "c", "choices": ["1"], "text": "x"},  # both
        {"cmd": "answer", "session": "/s", "call": "c", "choices": "1"},
        {"cmd": "answer", "session": "/s", "call": "c", "choices": [""]},
        {"cmd": "answer", "session": "/s", "call": "c", "choices": [str(i) for i in range(40)]},
        {"cmd": "answer", "session": "/s", "call": "c", "text": 5},
        {"cmd": "answer", "session": "/s", "call": "c", "text": "x" * 10_000},
    ],
)
def test_malformed_requests_are_refused(obj: object) -> None:
    with pytest.raises(CommandError):
        parse(obj, NOW)


def test_huge_numbers_are_clamped_not_overflowed() -> None:
    snooze = parse({"cmd": "snooze", "seconds": 10**400}, NOW)
    assert isinstance(snooze, Snooze) and snooze.until > NOW


def test_absent_and_null_numbers_are_zero() -> None:
    assert parse({"cmd": "snooze", "seconds": None}, NOW) == Snooze(0.0)  # resume
    assert parse({"cmd": "show", "wait": None}, NOW) == Show()


def test_show_waits_at_most_two_seconds() -> None:
    assert parse({"cmd": "show", "wait": 60}, NOW) == Show(wait=2.0)
    assert parse({"cmd": "show", "wait": -1}, NOW) == Show()
