"""The user's choices as one immutable value."""

from __future__ import annotations

import time
from datetime import datetime

import pytest

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


def test_tomorrow_is_the_coming_morning_while_the_night_lasts(monkeypatch: pytest.MonkeyPatch) -> None:
    """"Until tomorrow" (the tray's snooze, `snooze tomorrow`) is 08:00 of the next morning: said
    after midnight, before 04:00, that is 08:00 of this day, not of the day after (a snooze
    at 02:39 lasted 29 h)."""
    from notifier.core.planner import tomorrow_morning

    monkeypatch.setenv("TZ", "Pacific/Pago_Pago")
    time.tzset()
    try:
        for (hour, minute), hours in [((2, 39), 5 + 21 / 60), ((0, 0), 8), ((3, 59), 4 + 1 / 60),
                                      ((4, 0), 28), ((12, 0), 20), ((23, 30), 8.5)]:  # fmt: skip
            now = datetime(2026, 12, 7, hour, minute).timestamp()
            assert tomorrow_morning(now) - now == pytest.approx(hours * 3600), (hour, minute)
    finally:
        monkeypatch.undo()
        time.tzset()


def test_a_snooze_says_how_long_it_lasts_whole() -> None:
    """What `snooze` prints: not rounded down as an age is ("90s" once printed "for 1 min", a
    29 h snooze "for 1 d")."""
    from notifier.cli.snooze import length

    said = [length(s) for s in (45, 90, 900, 3599, 5400, 86400, 105660, 7 * 86400)]
    assert said == ["45 s", "1 min 30 s", "15 min", "59 min 59 s", "1 h 30 min", "1 d", "1 d 5 h 21 min", "7 d"]
