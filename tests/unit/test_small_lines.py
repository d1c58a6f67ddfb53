"""A line of at most jsonbound.SMALL bytes is within every bound already: pi's adapter reads its
values as they are instead of through shrink()'s bounded copy. Same events either way."""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from notifier.core import jsonbound
from notifier.core.jsonbound import SMALL, Budget, loads, shrink
from notifier.pi import entries
from notifier.pi.catalog import QuestionCatalog
from notifier.pi.entries import to_events

from ..conftest import FIXTURES

CATALOG = QuestionCatalog()

_JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False, allow_infinity=False) | st.text(max_size=30),
    lambda inner: st.lists(inner, max_size=8) | st.dictionaries(st.text(max_size=8), inner, max_size=8),
    max_leaves=60,
)


# Keys and values the adapter looks at (question-tools.md §3 and §4), so the shapes that matter come up.
_WORDS = st.sampled_from(
    ["question", "questions", "options", "choices", "title", "header", "label", "prompt", "text", "tab",
     "description", "multiSelect", "recommended", "value", "id", "type", "confirm", "status", "kind",
     "dismissed", "outcome", "cancelReason", "error", "timedOut", "cancelled", "answer", "answers",
     "response", "selectedOptions", "customInput", "results", "mode", "chatRedirect", "submitted",
     "user", "ok", "print", "Yes", "No", "User cancelled", "Error: no UI", "aborted"]
)
_SCALAR = st.none() | st.booleans() | st.integers(-2, 3) | _WORDS | st.text(max_size=12)
_SHAPED = st.recursive(
    _SCALAR,
    lambda inner: st.lists(inner, max_size=5) | st.dictionaries(_WORDS, inner, max_size=6),
    max_leaves=40,
)
_CONTENT = st.lists(st.fixed_dictionaries({"type": st.just("text"), "text": _WORDS | st.text(max_size=20)}), max_size=3)


def _events(entry: Any, small: bool) -> Any:
    try:
        return to_events(entry, CATALOG, 5.0, small=small)
    except Exception as exc:  # (an entry of the wrong shape: the same error either way)
        return type(exc), str(exc)


def _line(obj: Any) -> bytes:
    return json.dumps(obj, ensure_ascii=False, separators=(",", ":")).encode()


def test_the_bounds_are_all_above_small() -> None:
    assert SMALL < 2 * jsonbound.MAX_ITEMS + 3  # a list or object cut needs 2 × MAX_ITEMS + 3 bytes
    assert min(jsonbound.MAX_STR, jsonbound.BUDGET_CHARS, jsonbound.BUDGET_NODES) >= SMALL
    assert SMALL <= entries.RESULT_CHARS


@pytest.mark.parametrize(
    "text",
    [
        b"[" + b"1," * 999 + b"1]",  # 1,000 entries: 2,001 bytes, the most a list keeps
        b'"' + b"x" * (SMALL - 2) + b'"',
        b"[" * 64 + b"]" * 64,
        b"{" + b",".join(b'"%d":0' % i for i in range(250)) + b"}",
    ],
)
def test_values_of_small_texts_come_back_equal_from_shrink(text: bytes) -> None:
    value = loads(text)
    budget = Budget()
    assert shrink(value, budget) == value and budget.chars >= 0 and budget.nodes >= 0


@settings(max_examples=600, deadline=None)
@given(
    arguments=_SHAPED | _JSON,
    content=_CONTENT | _SHAPED,
    details=_SHAPED | _JSON,
    as_string=st.booleans(),
)
def test_a_small_line_gives_the_same_events_read_as_it_is(
    arguments: Any, content: Any, details: Any, as_string: bool
) -> None:
    call = {"type": "toolCall", "id": "q1", "name": "question", "arguments": json.dumps(arguments) if as_string else arguments}
    ask = {"type": "message", "timestamp": "2026-11-30T00:00:01.000Z",
           "message": {"role": "assistant", "stopReason": "toolUse", "content": [call, dict(call, id="q2")]}}
    result = {"type": "message", "timestamp": "2026-11-30T00:00:02.000Z",
              "message": {"role": "toolResult", "toolCallId": "q1", "toolName": "question",
                          "content": content, "details": details, "isError": False}}
    for obj in (ask, result):
        line = _line(obj)
        assume(len(line) <= SMALL)
        entry = loads(line)
        assert _events(entry, True) == _events(entry, False)


@pytest.mark.skipif(FIXTURES is None, reason="real pi captures missing")
def test_every_small_line_of_the_real_captures_gives_the_same_events() -> None:
    assert FIXTURES is not None
    compared = 0
    for path in sorted(FIXTURES.rglob("*.jsonl")):
        for line in path.read_bytes().split(b"\n"):
            if not line or len(line) > SMALL:
                continue
            entry = loads(line)
            assert _events(entry, True) == _events(entry, False), line[:200]
            compared += 1
    assert compared > 200
