"""The bounded JSON parse: size and depth caps before decoding."""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from notifier.core.codec import BoundedJSONError, Budget, loads, shrink

from ..strategies import examples


def test_ordinary_json_parses() -> None:
    assert loads(b'{"a":[1,{"b":"[[[[{{{{"}]}') == {"a": [1, {"b": "[[[[{{{{"}]}


def test_brackets_inside_strings_do_not_count() -> None:
    line = json.dumps({"text": "[" * 5000 + '\\"{' * 100}).encode()
    assert loads(line, max_depth=4)["text"].startswith("[[[")


def test_deep_nesting_is_refused_without_recursion() -> None:
    deep = b"[" * 100_000 + b"]" * 100_000
    with pytest.raises(BoundedJSONError, match="deeper"):
        loads(deep)


def test_size_cap_and_bad_input() -> None:
    with pytest.raises(BoundedJSONError, match="longer"):
        loads(b"[1, 2, 3]", max_bytes=4)
    with pytest.raises(ValueError):
        loads(b"{not json")
    with pytest.raises(UnicodeDecodeError):
        loads(b'"\xff"')


def test_depth_limit_is_exact() -> None:
    assert loads(b"[" * 64 + b"]" * 64, max_depth=64) is not None
    with pytest.raises(BoundedJSONError):
        loads(b"[" * 65 + b"]" * 65, max_depth=64)


def test_a_deep_line_of_megabytes_is_refused_and_a_flat_one_parses() -> None:
    text = "x" * (1 << 20)
    flat = json.dumps({"message": {"content": [{"type": "text", "text": text}]}}).encode()
    assert loads(flat)["message"]["content"][0]["text"] == text
    with pytest.raises(BoundedJSONError, match="deeper"):
        loads(b"[" * 65 + json.dumps(text).encode() + b"]" * 65)


@pytest.mark.parametrize(
    "text",
    [
        '{"a": 1}',
        ' \t{"a": 1}\r\n',
        '{"a": 1} x',
        '{"a": 1}{"b": 2}',
        "\ufeff{}",
        "",
        "   ",
        "[1, 2",
        '"\\ud800"',
        "NaN",
        "-Infinity",
        "1e999",
        '{"a": "\\u00e9", "b": [true, false, null]}',
        "9" * 5000,
    ],
)
def test_the_same_values_and_refusals_as_json_loads(text: str) -> None:
    """loads gives what json.loads gives, or refuses what it refuses."""
    try:
        expected = json.loads(text)
    except ValueError:
        with pytest.raises(BoundedJSONError):
            loads(text.encode("utf-8", "surrogatepass"))
        return
    got = loads(text.encode("utf-8", "surrogatepass"))
    assert json.dumps(got) == json.dumps(expected)  # (NaN ≠ NaN, so compared as text)


class _Text(str):
    pass


_JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=12)
    | st.builds(_Text, st.text(max_size=12)),
    lambda inner: st.lists(inner, max_size=6) | st.dictionaries(st.text(max_size=6), inner, max_size=6),
    max_leaves=40,
)


def _measure(value: Any, depth: int = 0) -> tuple[int, int, int, int, int]:
    """(values, characters in string values, longest string, most entries, deepest container)."""
    if isinstance(value, str):
        return 1, len(value), len(value), 0, 0
    if isinstance(value, (list, dict)):
        items = list(value.values()) if isinstance(value, dict) else value
        parts = [_measure(item, depth + 1) for item in items]
        return (
            1 + sum(p[0] for p in parts),
            sum(p[1] for p in parts),
            max([0, *(len(k) for k in value if isinstance(value, dict))] + [p[2] for p in parts]),
            max([len(items)] + [p[3] for p in parts]),
            max([depth + 1] + [p[4] for p in parts]),
        )
    return 1, 0, 0, 0, 0


@settings(max_examples=examples(400), deadline=None)
@given(
    value=_JSON,
    chars=st.integers(0, 60),
    nodes=st.integers(0, 30),
    max_str=st.integers(0, 8),
    max_items=st.integers(0, 5),
    depth=st.integers(0, 4),
)
def test_shrink_keeps_every_bound(value: Any, chars: int, nodes: int, max_str: int, max_items: int, depth: int) -> None:
    got = shrink(value, Budget(chars, nodes), max_str, max_items, depth)
    values, total, longest, most, deepest = _measure(got)
    assert values <= nodes + 1 and total <= chars and longest <= max_str
    assert most <= max_items and deepest <= depth


def test_shrink_gives_back_what_is_within_the_bounds() -> None:
    value = {"a": [1, 2.5, None, True, "text"], "b": {"c": "d"}}
    assert shrink(value) == value
    assert shrink({"a": "x" * 10, "b": [1, 2, 3]}, max_str=4, max_items=2) == {"a": "xxxx", "b": [1, 2]}
