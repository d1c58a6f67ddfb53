"""The board's session views: a dict's order, snapshots that behave as tuples and never change."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from notifier.core import board
from notifier.core.board import SessionViews
from notifier.core.model import SessionRef, SessionView, Snapshot, Views

from ..strategies import examples


def _view(key: str, at: float) -> SessionView:
    return SessionView(SessionRef(key, None, None, None), "idle", (), (), None, at)


_OPS = st.lists(
    st.tuples(st.sampled_from(["set", "set", "remove", "snapshot", "bulk"]), st.integers(0, 40), st.integers(0, 9)),
    max_size=200,
)


@settings(max_examples=examples(300), deadline=None)
@given(ops=_OPS, chunk=st.integers(1, 5))
def test_the_order_and_content_are_a_dicts_and_snapshots_never_change(
    ops: list[tuple[str, int, int]], chunk: int
) -> None:
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(board, "CHUNK", chunk)
        views, plain = SessionViews(), dict[str, SessionView]()
        taken: list[tuple[Views, tuple[SessionView, ...]]] = []
        for step, (op, n, at) in enumerate(ops):
            key = f"k{n}"
            if op == "bulk":  # n keys not there yet, between two snapshots
                new = [(f"b{step}-{i}", _view(f"b{step}-{i}", at)) for i in range(n % 12)]
                for k, v in new:
                    views.set(k, v)
                plain.update(new)
            elif op == "set":
                views.set(key, _view(key, at))
                plain[key] = _view(key, at)
            elif op == "remove":
                views.remove(key)
                plain.pop(key, None)
            else:
                taken.append((views.snapshot(), tuple(plain.values())))
            assert len(views) == len(plain)
        snap = views.snapshot()
        assert snap == tuple(plain.values()) and list(snap) == list(plain.values()) and len(snap) == len(plain)
        for then, want in taken:
            assert then == want and tuple(then) == want


def test_views_behave_as_the_tuple_of_their_views() -> None:
    a, b, c = _view("a", 1), _view("b", 2), _view("c", 3)
    views = Views([(a, b), (), (c,)])
    plain = (a, b, c)
    assert views == plain and plain == views and views != (a, b) and views != [a, b, c]
    assert hash(views) == hash(plain) and len(views) == 3 and bool(views) and not Views()
    assert [views[i] for i in range(-3, 3)] == [a, b, c, a, b, c] and views[1:] == (b, c)
    assert c in views and views.index(c) == 2 and list(reversed(views)) == [c, b, a]
    with pytest.raises(IndexError):
        views[3]
    with pytest.raises(IndexError):
        views[-4]
    assert Snapshot(sessions=views) == Snapshot(sessions=plain)  # (a snapshot compares by its views)
