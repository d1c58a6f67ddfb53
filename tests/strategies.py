"""Hypothesis strategies shared by several layers' tests: questions with every field drawn; and
the example count of a property test that needs more than the profile's."""

from __future__ import annotations

from typing import get_args

from hypothesis import settings
from hypothesis import strategies as st

from notifier.core.model import DialogKind, Option, Question, QuestionItem, QuestionKind

TEXT = st.text(st.characters(min_codepoint=0, max_codepoint=0x10FFFF), max_size=12)  # surrogates too
MAYBE = st.none() | TEXT

options = st.builds(Option, TEXT, MAYBE, st.booleans(), MAYBE)
items = st.builds(
    QuestionItem,
    TEXT,
    MAYBE,
    MAYBE,
    st.lists(options, max_size=3).map(tuple),
    st.booleans(),
    key=MAYBE,
    required=st.booleans(),
    show_when=st.none() | st.tuples(TEXT, TEXT),
    other=st.booleans(),
)
questions = st.builds(
    Question,
    TEXT,
    TEXT,
    st.lists(items, max_size=3).map(tuple),
    st.floats(allow_nan=False, allow_infinity=False),
    MAYBE,
    kind=st.sampled_from(get_args(QuestionKind)),
    dialog=st.none() | st.sampled_from(get_args(DialogKind)),
    instructions=MAYBE,
)


def examples(n: int) -> int:
    """``n`` examples where the profile loaded runs hypothesis's 100 (``make test``, CI), as many
    fewer as it runs fewer (`make check`'s profile, tests/conftest.py): for ``@settings(max_examples=...)``,
    which a profile does not change."""
    return max(1, n * settings().max_examples // 100)
