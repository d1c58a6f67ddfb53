"""The board's view list keeps a dict's order (what snapshots listed before it was a list)."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from notifier.core.model import SessionRef, SessionView
from notifier.core.session_views import SessionViews


def _view(key: str, at: float) -> SessionView:
    return SessionView(SessionRef(key, None, None, None), "idle", (), (), None, at)


_OPS = st.lists(
    st.tuples(st.sampled_from(["set", "remove", "snapshot"]), st.sampled_from("abcdefg"), st.integers(0, 99)),
    max_size=60,
)


@settings(max_examples=300, deadline=None)
@given(ops=_OPS)
def test_the_order_and_content_are_a_dicts(ops: list[tuple[str, str, int]]) -> None:
    views, plain = SessionViews(), dict[str, SessionView]()
    for op, key, at in ops:
        if op == "set":
            views.set(key, _view(key, at))
            plain[key] = _view(key, at)
        elif op == "remove":
            views.remove(key)
            plain.pop(key, None)
        else:
            assert views.snapshot() == tuple(plain.values())
        assert len(views) == len(plain)
    assert views.snapshot() == tuple(plain.values())


def test_a_snapshot_never_changes_afterwards() -> None:
    views = SessionViews()
    views.set("a", _view("a", 1))
    views.set("b", _view("b", 1))
    first = views.snapshot()
    views.set("a", _view("a", 2))
    views.remove("b")
    assert first == (_view("a", 1), _view("b", 1)) and views.snapshot() == (_view("a", 2),)
