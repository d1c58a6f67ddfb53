"""KWin's scripting interface (notifier.system.window_manager), the parts that need no process: only a
unique bus name goes into the script, its report parsed (any text or JSON: a report or None),
the focus method chosen from the environment. (The script run in Node and the D-Bus exchange
with a stand-in KWin: tests/processes/test_kwin.py; the real KWin: tests/desktop/test_kwin_focus.py.)"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from notifier.system import window_manager as wm


def test_only_a_unique_bus_name_goes_into_the_script() -> None:
    for bad in ['org.kde.KWin', ':1.2"); workspace.activeClient = null; ("', ":1.2\n", ""]:
        with pytest.raises(ValueError):
            wm.script_text(bad, 1)
    assert '":1.2"' in wm.script_text(":1.2", 1)


def test_a_report_of_another_run_or_not_one_is_none() -> None:
    good = json.dumps({"token": 5, "asked": True, "windows": [{"pid": 3, "active": True}]})
    assert wm.parse_report(good, 5) == {"asked": True, "windows": [(3, True)]}
    assert wm.parse_report(good, 6) is None
    assert wm.parse_report("not json", 5) is None
    assert wm.parse_report("[]", 5) is None
    odd = json.dumps({"token": 5, "windows": [{"pid": True}, {"pid": -1}, {"pid": "7"}, 8, {"pid": 9, "active": 1}]})
    assert wm.parse_report(odd, 5) == {"asked": False, "windows": [(9, False)]}


@given(st.text())
def test_any_text_parses_or_is_none(text: str) -> None:
    report = wm.parse_report(text, 1)
    assert report is None or all(isinstance(p, int) and p > 0 for p, _ in report["windows"])


@given(st.recursive(st.none() | st.booleans() | st.integers() | st.text(), lambda c: st.lists(c) | st.dictionaries(st.text(), c)))
def test_any_json_parses_or_is_none(data: Any) -> None:
    report = wm.parse_report(json.dumps({"token": 1, "windows": data}), 1)
    assert report is None or all(isinstance(p, int) and p > 0 for p, _ in report["windows"])


# ---- the exchange (against a stand-in KWin on a real bus: tests/processes/test_kwin.py) ----


def test_no_session_bus_is_a_kwin_error(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.delenv("DBUS_SESSION_BUS_ADDRESS", raising=False)
    monkeypatch.setenv("XDG_RUNTIME_DIR", str(tmp_path))
    with pytest.raises(wm.KWinError, match="no session bus"):
        wm.run_script()


# ---- the chooser ----


def test_kwin_is_the_focus_method_on_kde_wayland(tmp_path: Path) -> None:
    env = {"XDG_RUNTIME_DIR": str(tmp_path), "WAYLAND_DISPLAY": "wayland-0", "XDG_CURRENT_DESKTOP": "KDE"}
    assert getattr(wm.focus_method(env), "backend", None) is wm.KWIN
    assert getattr(wm.focus_method(dict(env, DISPLAY=":1")), "backend", None) is wm.KWIN  # (XWayland's too)
    kde = wm.focus_method({**env, "XDG_CURRENT_DESKTOP": "", "KDE_FULL_SESSION": "true"})
    assert getattr(kde, "backend", None) is wm.KWIN
    # KDE on X11: EWMH, as before
    x_env = {"XDG_RUNTIME_DIR": str(tmp_path), "DISPLAY": ":1", "XDG_CURRENT_DESKTOP": "KDE"}
    assert getattr(wm.focus_method(x_env), "backend", None) is wm.X11
    # another Wayland desktop is not taken for KDE
    other = wm.focus_method(dict(env, XDG_CURRENT_DESKTOP="niri"))
    assert isinstance(other, wm.Missing) and "niri" in other.reason
    assert wm.Window("kwin", 1305).describe() == "KWin window of pid 1305"
