"""The user's choices as one immutable value."""

from __future__ import annotations

from notifier.core.model import Item, Question, SessionRef
from notifier.core.planner import Silences

NOW = 1000.0


def item(key: str, folder: str, name: str | None = None) -> Item:
    return Item((key, "c1"), SessionRef(key, "id", f"/home/u/{folder}", name), Question("c1", "question", (), 0.0))


def test_snoozes_and_mutes() -> None:
    p = Silences()
    assert p.silenced_until(item("/s/a", "shop")) == 0.0
    p = p.snoozed(NOW + 60, session="/s/a").snoozed(NOW + 600, project="shop")
    assert p.silenced_until(item("/s/a", "other")) == NOW + 60
    assert p.silenced_until(item("/s/b", "shop")) == NOW + 600
    p = p.snoozed(NOW + 3600)
    assert p.silenced_until(item("/s/c", "x")) == NOW + 3600
    muted = Silences(muted=frozenset({"shop"}))
    assert muted.mutes(item("/s/a", "shop")) and not muted.mutes(item("/s/a", "other"))


def test_a_project_is_muted_or_snoozed_by_its_folder_also_for_named_sessions() -> None:
    """A folder's name mutes every session in it, named or not; a session's name mutes only the
    sessions shown by that name."""
    named, other, plain = item("/s/a", "webshop", "billing refactor"), item("/s/b", "webshop", "checkout"), item("/s/c", "webshop")
    by_folder = Silences(muted=frozenset({"webshop"}))
    assert all(by_folder.mutes(i) for i in (named, other, plain))
    by_name = Silences(muted=frozenset({"billing refactor"}))
    assert [by_name.mutes(i) for i in (named, other, plain)] == [True, False, False]
    snoozed = Silences().snoozed(NOW + 600, project="webshop")
    assert {snoozed.silenced_until(i) for i in (named, other, plain)} == {NOW + 600}


def test_values_are_immutable() -> None:
    p = Silences().snoozed(NOW + 60, session="/s/a")
    q = p.snoozed(NOW + 90, session="/s/b")
    assert dict(p.sessions) == {"/s/a": NOW + 60} and dict(q.sessions) == {"/s/a": NOW + 60, "/s/b": NOW + 90}
    try:
        p.sessions["/s/x"] = 1.0  # type: ignore[index]  # (deliberately: it must refuse)
    except TypeError:
        pass
    else:  # pragma: no cover
        raise AssertionError("silences must not be changed in place")


def test_snooze_words_take_every_form_the_readme_promises() -> None:
    """`snooze [all|PROJECT|SESSION] [DURATION]`, DURATION also "tomorrow" and "off", for every
    WHAT (README: `snooze all tomorrow`, `snooze PROJECT tomorrow` once exited 2)."""
    from datetime import datetime

    import pytest

    from notifier.core.planner import DEFAULT_SNOOZE_S, snooze_words, tomorrow_morning

    now = datetime(2026, 12, 6, 18, 30).timestamp()
    morning = tomorrow_morning(now) - now
    assert datetime.fromtimestamp(now + morning).timetuple()[2:5] == (7, 8, 0)
    for what in (None, "all", "blog", "1d2e3a4b"):
        lead = [what] if what else []
        assert snooze_words([*lead, "tomorrow"], now) == (what, morning)
        assert snooze_words([*lead, "Tomorrow"], now) == (what, morning)
        assert snooze_words([*lead, "1h"], now) == (what, 3600.0)
        assert snooze_words([*lead, "off"], now) == (what, 0.0)
        assert snooze_words(lead, now) == (what, DEFAULT_SNOOZE_S)
    for words, said in (
        (["blog", "2x"], "'2x' is not a DURATION"),
        (["blog", "1h", "extra"], "snooze takes [WHAT] [DURATION]"),
        (["blog", "8d"], "a snooze lasts at most 7 d"),
        (["all", "tomorrow", "1h"], "snooze takes [WHAT] [DURATION]"),
    ):
        with pytest.raises(ValueError) as refused:
            snooze_words(words, now)
        assert said in str(refused.value)
