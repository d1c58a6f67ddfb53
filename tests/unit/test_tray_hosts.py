"""What the app says about tray hosts: once at start, once per change, never per look."""

from __future__ import annotations

import logging

import pytest

from notifier.app.tray_hosts import HostLog, Hosts


def said(caplog: pytest.LogCaptureFixture, *seen: Hosts) -> list[str]:
    caplog.clear()
    say = HostLog()
    with caplog.at_level(logging.INFO, logger="notifier.app.tray_hosts"):
        for hosts in seen:
            say(hosts)
    return [r.getMessage() for r in caplog.records]


def test_none_then_one_that_comes_and_goes(caplog: pytest.LogCaptureFixture) -> None:
    lines = said(caplog, Hosts(), Hosts(), Hosts("trayer"), Hosts("trayer"), Hosts(), Hosts())
    assert len(lines) == 3
    assert lines[0].startswith("no tray host (no program owns the XEmbed tray selection")
    assert lines[1] == "tray host appeared: trayer (XEmbed system tray)"
    assert lines[2] == (
        "tray host gone: trayer (XEmbed system tray); the icon comes back when a tray host starts"
    )


def test_both_kinds_and_a_take_over(caplog: pytest.LogCaptureFixture) -> None:
    lines = said(caplog, Hosts("trayer", "kded5"), Hosts("tint2", "kded5"), Hosts("tint2", None))
    assert lines == [
        "tray host: trayer (XEmbed system tray) and kded5 (StatusNotifierItem watcher)",
        "tray host: tint2 (XEmbed system tray) took over from trayer",
        "tray host gone: kded5 (StatusNotifierItem watcher)",
    ]
