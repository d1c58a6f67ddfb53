"""Quiet hours in effect in ``status --json`` (``quiet_hours``), the text of ``status`` and the
tooltip: one judgement, said three ways, whether the app answers or ``status`` scans."""

from __future__ import annotations

import time
from datetime import datetime

from hypothesis import given
from hypothesis import strategies as st

from notifier.app import status_reply
from notifier.config import Config
from notifier.core.codec import iso
from notifier.core.commands import Status
from notifier.core.model import Snapshot
from notifier.core.planner import quiet_hours_line, quiet_hours_note, quiet_hours_obj
from notifier.outputs.tray import UiState, title


def _hhmm(minute: int) -> str:
    return f"{minute // 60 % 24:02d}:{minute % 60:02d}"


def _around(now: float, before: int, after: int) -> str:
    """A window from ``before`` minutes before ``now`` to ``after`` minutes after (local time)."""
    local = datetime.fromtimestamp(now)
    minute = local.hour * 60 + local.minute
    return f"{_hhmm(minute - before + 1440)}-{_hhmm(minute + after)}"


def test_in_effect_says_the_hours_and_until_when() -> None:
    local = time.localtime()
    now = time.mktime((*local[:3], 12, 0, 0, 0, 0, -1))  # noon today
    obj = quiet_hours_obj(" 11:00-13:30 ", now)["quiet_hours"]
    assert obj == {"hours": "11:00-13:30", "until": iso(now + 90 * 60)}
    assert quiet_hours_line(obj) == "Quiet hours until 13:30 (11:00-13:30): no notifications; the tray still counts.\n"
    assert quiet_hours_obj("22:00-11:00", now) == {"quiet_hours": None}  # ended at 11:00
    assert quiet_hours_obj("", now) == {"quiet_hours": None}
    assert quiet_hours_obj("25:00-nope", now) == {"quiet_hours": None}  # (the config refuses it anyway)
    assert quiet_hours_line(None) == "" and quiet_hours_line({"hours": 3}) == ""


def test_an_odd_reply_still_reads_as_one_clean_line() -> None:
    """What a running app answers is read back, not trusted: its text goes through clean()."""
    line = quiet_hours_line({"hours": "\x1b[31m22:00-07:00\nrm", "until": "x"})
    assert "\x1b" not in line and line.count("\n") == 1 and line.startswith("Quiet hours (")


@given(
    start=st.integers(0, 1439),
    end=st.integers(0, 1439),
    now=st.floats(1.7e9, 1.9e9, allow_nan=False),
)
def test_the_field_the_line_and_the_tooltip_agree(start: int, end: int, now: float) -> None:
    if start == end:
        return
    hours = f"{_hhmm(start)}-{_hhmm(end)}"
    obj = quiet_hours_obj(hours, now)["quiet_hours"]
    note = quiet_hours_note(hours, now)
    assert (obj is not None) == bool(note)
    snap = UiState(Snapshot((), now))
    assert title(snap, now, hours).endswith(f" — {note}") == bool(note)
    if obj is not None:
        until = datetime.fromisoformat(obj["until"].replace("Z", "+00:00")).timestamp()
        assert now < until <= now + 86400
        assert datetime.fromtimestamp(until).strftime("%H:%M") == _hhmm(end)
        assert quiet_hours_line(obj).startswith(f"Quiet hours until {_hhmm(end)} ({hours})")
    else:
        assert quiet_hours_line(obj) == ""


def test_the_app_answers_with_its_own_quiet_hours() -> None:
    """The app follows its config file: its reply carries the quiet hours it has now."""
    now = time.time()
    config = Config()
    config.set("sessions_dirs", ["/s"], "test")
    config.set("quiet_hours", _around(now, 30, 30), "test")
    reply = status_reply(config, Status(("/s",)), UiState(Snapshot((), now)))
    assert reply["ok"] and reply["status"]["quiet_hours"]["hours"] == config["quiet_hours"]
    config.set("quiet_hours", "", "the file")
    assert status_reply(config, Status(("/s",)), UiState(Snapshot((), now)))["status"]["quiet_hours"] is None
