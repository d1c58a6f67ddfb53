"""What the app says about tray hosts: once at start, once per change, never per look."""

from __future__ import annotations

import logging

import pytest

from notifier.outputs.tray_hosts import HostLog, Hosts


def said(caplog: pytest.LogCaptureFixture, *seen: Hosts) -> list[str]:
    caplog.clear()
    say = HostLog()
    with caplog.at_level(logging.INFO, logger="notifier.outputs.tray_hosts"):
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


def test_a_host_that_holds_both_trays_gets_the_backend_whose_click_opens_the_window(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """XFCE's panel holds the XEmbed tray and the StatusNotifierWatcher (one program): it draws an
    XEmbed icon itself and gives it the left click, so auto picks gtk there. A watcher beside
    another XEmbed holder (KDE's xembedsniproxy relays into kded5's watcher) keeps the watcher's
    kind; the user's choice always wins."""
    from notifier.outputs import tray

    assert Hosts("xfce4-panel", "xfce4-panel").one
    assert not Hosts("xembedsniproxy", "kded5").one and not Hosts().one and not Hosts(None, "kded5").one
    monkeypatch.setenv("DISPLAY", ":0")
    monkeypatch.setattr(tray, "_gi", lambda version, *names: True)  # (PyGObject and Ayatana: as where both are)
    assert tray.tray_backend("auto", sni_host=True, one_host=True)[0] == "gtk"
    assert tray.tray_backend("auto", sni_host=True, one_host=False)[0] == "appindicator"
    assert tray.tray_backend("appindicator", sni_host=True, one_host=True)[0] == "appindicator"
    monkeypatch.setattr(tray, "_gi", lambda version, *names: False)  # no PyGObject: no gtk backend to choose
    assert tray.tray_backend("auto", sni_host=True, one_host=True)[0] == "xorg"
