"""Status bars (tmux segment, waybar JSON), snooze durations and what status says is silenced."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from notifier.core import codec, planner
from notifier.core.model import Question, QuestionItem, SessionRef, SessionView, Snapshot
from notifier.core.planner import Silences

NOW = 1_800_000_000.0


def waiting(sid: str, cwd: str, asked: float, text: str = "Which?") -> SessionView:
    q = Question(f"c-{sid}", "question", (QuestionItem(text),), asked_at=asked)
    return SessionView(SessionRef(f"/s/{sid}.jsonl", sid, cwd, None), "needs_input", (q,), (), True, asked)


def test_tmux_segment_is_the_count_or_nothing() -> None:
    assert codec.tmux_segment(codec.bar_summary(Snapshot(), NOW)) == ""
    two = Snapshot((waiting("a-11111111", "/p/blog", NOW - 60), waiting("b-22222222", "/p/shop", NOW - 5)))
    assert codec.tmux_segment(codec.bar_summary(two, NOW)) == "π 2"
    assert codec.tmux_segment(codec.bar_summary(two, NOW, snoozed_until=NOW + 600)) == "π 2 z"
    assert codec.tmux_segment(codec.bar_summary(two, NOW, snoozed_until=NOW - 1)) == "π 2"


def test_bar_json_lists_the_longest_waiting_first() -> None:
    snap = Snapshot((waiting("b-22222222", "/p/shop", NOW - 5, "Ship \x1b[31mit\x1b[0m?"), waiting("a-11111111", "/p/blog", NOW - 240)))
    obj = codec.bar_obj(json.loads(json.dumps(codec.bar_summary(snap, NOW))), NOW)  # (as it crosses the socket)
    assert obj["text"] == "π 2" and obj["class"] == "needs"
    assert obj["tooltip"].splitlines() == ["blog 11111111: Which? (4 min)", "shop 22222222: Ship it? (5 s)"]
    idle = codec.bar_obj(codec.bar_summary(Snapshot(), NOW), NOW)
    assert idle == {"text": "", "tooltip": "no pi is waiting for an answer", "class": "idle"}


_JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=20),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.sampled_from(["project", "id", "text", "waited_s"]), inner, max_size=4),
    max_leaves=12,
)


def test_the_bar_tooltip_says_quiet_hours_in_effect() -> None:
    snap = Snapshot((waiting("a-11111111", "/p/blog", NOW - 60),))
    quiet = codec.bar_obj(json.loads(json.dumps(codec.bar_summary(snap, NOW, quiet="quiet hours until 07:30"))), NOW)
    assert quiet["tooltip"].splitlines()[-1] == "quiet hours until 07:30: no notifications"
    assert quiet["class"] == "needs" and quiet["text"] == "π 1"
    idle = codec.bar_obj(codec.bar_summary(Snapshot(), NOW, quiet="quiet hours until 07:30"), NOW)
    assert idle["tooltip"] == "no pi is waiting for an answer\nquiet hours until 07:30: no notifications"
    assert "quiet" not in codec.bar_obj(codec.bar_summary(snap, NOW), NOW)["tooltip"]


def test_the_bar_tooltip_is_markup_escaped() -> None:
    """waybar renders a custom module's tooltip as Pango markup: a question or folder name with
    tags or entities is shown as written, never as markup (nor as broken markup, which waybar
    shows as nothing)."""
    snap = Snapshot((waiting("a-11111111", "/p/<i> & y", NOW - 60, "Use <span size='99999'>big</span> &amp; AT&T?"),))
    tooltip = codec.bar_obj(json.loads(json.dumps(codec.bar_summary(snap, NOW))), NOW)["tooltip"]
    assert "<" not in tooltip and ">" not in tooltip
    assert tooltip == (
        "&lt;i&gt; &amp; y 11111111: Use &lt;span size=&#39;99999&#39;&gt;big&lt;/span&gt;"
        " &amp;amp; AT&amp;T? (1 min)"
    )


@given(st.dictionaries(st.sampled_from(["pending", "abandoned", "snoozed_until", "quiet", "questions"]), _JSON))
def test_a_broken_summary_never_raises(s: dict[str, object]) -> None:
    """The summary comes over the socket: whatever it holds, the bar prints something."""
    assert isinstance(codec.tmux_segment(s), str)
    try:
        obj = codec.bar_obj(s, NOW)
    except (TypeError, ValueError):
        pytest.fail("bar_obj raised")
    assert set(obj) == {"text", "tooltip", "class"}


@pytest.mark.parametrize(
    ("text", "seconds"),
    [("15m", 900), ("15min", 900), ("1h", 3600), ("2h30m", 9000), ("90s", 90), ("1d", 86400), ("20", 1200), ("off", 0), ("0", 0)]
    + [("0m", 0), ("0s", 0), ("0h0m", 0), ("1H", 3600), ("1h30m", 5400), ("1.5h", 5400)],
)
def test_durations(text: str, seconds: float) -> None:
    assert planner.parse_duration(text) == seconds


@pytest.mark.parametrize("text", ["blog", "1x", "-5m", "8d", "h", "", "1h blog"])
def test_not_durations(text: str) -> None:
    assert planner.parse_duration(text) is None


def test_what_status_says_is_silenced() -> None:
    view = waiting("01a232c1-5e1b-7a4d-9c2e-6f0b1d2e3a4b", "/p/blog", NOW)
    silences = (
        Silences(muted=frozenset({"blog"}))
        .snoozed(NOW + 600)
        .snoozed(NOW + 3600, session=view.ref.key)
        .snoozed(NOW + 60, project="shop")
        .snoozed(NOW - 1, project="old")  # (over: not said)
    )
    line = planner.silenced_line(silences, Snapshot((view,)), NOW)
    assert line == (
        "snoozed: everything for 10 min, session blog 1d2e3a4b for 1 h 00 min, project shop for 1 min; muted: blog"
    )
    obj = planner.silenced_obj(silences, NOW)
    assert obj["muted"] == ["blog"] and list(obj["snoozed"]["projects"]) == ["shop"]
    assert obj["snoozed"]["all"] and obj["snoozed"]["sessions"] == {view.ref.key: obj["snoozed"]["sessions"][view.ref.key]}
    assert planner.silenced_line(planner.Silences(), Snapshot(), NOW) == ""


def test_the_saved_choices_read_back_as_the_store_wrote_them(tmp_path: Path) -> None:
    """`status` reads snoozes and mutes with a read-only query of its own: the same as the
    store's own reading (the app's), for every kind of scope."""
    import time

    from notifier.store import Store, saved_silences

    now = time.time()
    assert saved_silences(str(tmp_path), now) == planner.Silences()  # nothing saved: none, nothing made
    assert not list(tmp_path.iterdir())
    store = Store(str(tmp_path / "state.sqlite3"))
    store.snooze(now + 600)
    store.snooze(now + 60, session="/s/a.jsonl")
    store.snooze(now + 120, project="blog")
    store.snooze(now - 5, project="over")
    store.mute("shop", True)
    expected = store.silences(now)
    store.close()
    got = saved_silences(str(tmp_path), now)
    assert got == expected and got.projects == {"blog": now + 120} and got.muted == {"shop"}
