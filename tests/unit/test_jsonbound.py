"""The bounded JSON parse: size and depth caps before decoding."""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from notifier.core.jsonbound import BoundedJSONError, Budget, loads, nesting_depth, shrink


def test_ordinary_json_parses() -> None:
    assert loads(b'{"a":[1,{"b":"[[[[{{{{"}]}') == {"a": [1, {"b": "[[[[{{{{"}]}


def test_brackets_inside_strings_do_not_count() -> None:
    line = json.dumps({"text": "[" * 5000 + '\\"{' * 100}).encode()
    assert loads(line, max_depth=4)["text"].startswith("[[[")


def test_deep_nesting_is_refused_without_recursion() -> None:
    deep = b"[" * 100_000 + b"]" * 100_000
    with pytest.raises(BoundedJSONError, match="deeper"):
        loads(deep)
    assert nesting_depth(b'[{"a":[1]}]') == 3


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


@settings(max_examples=200, deadline=None)
@given(
    st.lists(st.sampled_from([b"[", b"{", b"]", b"}", b'"', b"\\", b"x" * 4000, b"y"]), max_size=120),
    st.integers(-2, 80),
)
def test_long_lines_count_their_brackets_as_short_ones_do(pieces: list[bytes], limit: int) -> None:
    """Past 64 KB the opening brackets are searched for, not counted byte by byte: the same
    decision whether a line could nest too deeply, however many there are and wherever."""
    from notifier.core.jsonbound import _LONG, _openers_over

    raw = b"".join(pieces)
    raw += b" " * max(0, _LONG - len(raw))  # (long enough for the search)
    assert _openers_over(raw, limit) == (raw.count(b"[") + raw.count(b"{") > limit)


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
    """The fast path (the decoder's scanner) gives what json.loads gives, or refuses what it refuses."""
    try:
        expected = json.loads(text)
    except ValueError:
        with pytest.raises(BoundedJSONError):
            loads(text.encode("utf-8", "surrogatepass"))
        return
    got = loads(text.encode("utf-8", "surrogatepass"))
    assert json.dumps(got) == json.dumps(expected)  # (NaN ≠ NaN, so compared as text)


def _reference_shrink(value: Any, budget: Budget, max_str: int, max_items: int, depth: int) -> Any:
    """shrink's rules written plainly (one recursive call per value): the fast paths of
    notifier.core.jsonbound._shrink must give exactly this, and leave the budget the same."""
    budget.nodes -= 1
    if isinstance(value, str):
        keep = max(0, min(len(value), max_str, budget.chars))
        budget.chars -= keep
        return value if keep == len(value) else value[:keep]
    if value is None or isinstance(value, (bool, int, float)):
        return value
    if depth <= 0:
        return None
    if isinstance(value, list):
        out = []
        for item in value[:max_items]:
            if budget.nodes <= 0:
                break
            out.append(_reference_shrink(item, budget, max_str, max_items, depth - 1))
        return out
    if isinstance(value, Mapping):
        obj = {}
        for count, (key, item) in enumerate(value.items()):
            if count >= max_items or budget.nodes <= 0:
                break
            if not isinstance(key, str) or len(key) > max_str:
                continue
            budget.chars -= len(key)
            obj[key] = _reference_shrink(item, budget, max_str, max_items, depth - 1)
        return obj
    return None


class _Text(str):
    pass


_JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=12)
    | st.builds(_Text, st.text(max_size=12)),
    lambda inner: st.lists(inner, max_size=6) | st.dictionaries(st.text(max_size=6), inner, max_size=6),
    max_leaves=40,
)


@settings(max_examples=400, deadline=None)
@given(
    value=_JSON,
    chars=st.integers(0, 60),
    nodes=st.integers(0, 30),
    max_str=st.integers(0, 8),
    max_items=st.integers(0, 5),
    depth=st.integers(0, 4),
)
def test_shrink_is_the_plain_rules(value: Any, chars: int, nodes: int, max_str: int, max_items: int, depth: int) -> None:
    fast, plain = Budget(chars, nodes), Budget(chars, nodes)
    got = shrink(value, fast, max_str, max_items, depth)
    want = _reference_shrink(value, plain, max_str, max_items, depth)
    assert json.dumps(got) == json.dumps(want)
    assert (fast.chars, fast.nodes) == (plain.chars, plain.nodes)
