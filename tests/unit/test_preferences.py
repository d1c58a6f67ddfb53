"""The user's choices as one immutable value."""

from __future__ import annotations

from notifier.core.preferences import Preferences

NOW = 1000.0


def test_snoozes_and_mutes() -> None:
    p = Preferences()
    assert p.silenced_until("/s/a", "shop") == 0.0
    p = p.snoozed(NOW + 60, NOW, session="/s/a").snoozed(NOW + 600, NOW, project="shop")
    assert p.silenced_until("/s/a", "other") == NOW + 60
    assert p.silenced_until("/s/b", "shop") == NOW + 600
    p = p.snoozed(NOW + 3600, NOW)
    assert p.silenced_until("/s/c", "x") == NOW + 3600
    resumed = p.snoozed(0.0, NOW)
    assert resumed.silenced_until("/s/a", "shop") == 0.0 and resumed.snooze_all_until == 0.0
    muted = resumed.with_mute("shop", True)
    assert muted.is_muted("shop") and not muted.with_mute("shop", False).is_muted("shop")
    assert p.expired(NOW + 700) == Preferences(NOW + 3600)


def test_values_are_immutable() -> None:
    p = Preferences().snoozed(NOW + 60, NOW, session="/s/a")
    q = p.snoozed(NOW + 90, NOW, session="/s/b")
    assert dict(p.sessions) == {"/s/a": NOW + 60} and dict(q.sessions) == {"/s/a": NOW + 60, "/s/b": NOW + 90}
    try:
        p.sessions["/s/x"] = 1.0  # type: ignore[index]  # (deliberately: it must refuse)
    except TypeError:
        pass
    else:  # pragma: no cover
        raise AssertionError("preferences must not be changed in place")
