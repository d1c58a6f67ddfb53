"""The bounded JSON parse: size and depth caps before decoding."""

from __future__ import annotations

import json

import pytest

from notifier.core.jsonbound import BoundedJSONError, loads, nesting_depth


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
