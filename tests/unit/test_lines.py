"""The byte pre-filter of the start-up read (notifier.pi.lines): a line it passes over must never
yield a reducer event, however the entry's type is spelled (escapes, hex case, key order)."""

from __future__ import annotations

import json
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from notifier.pi.entries import EntryError, to_events
from notifier.pi.lines import EVENT_TYPES, MARKERS, may_have_events
from notifier.pi.questions import QuestionCatalog

CATALOG = QuestionCatalog([])
NAMES = sorted(EVENT_TYPES - {"session"})


def _spell(text: str, escaped: list[bool], upper: bool) -> str:
    """``text`` as the inside of a JSON string, the chosen characters as ``\\u00XX`` escapes."""
    out = []
    for ch, esc in zip(text, escaped, strict=False):
        code = f"{ord(ch):04x}"
        out.append("\\u" + (code.upper() if upper else code) if esc else ch)
    out.extend(text[len(escaped) :])
    return "".join(out)


def _events(line: bytes) -> list[Any]:
    try:
        entry = json.loads(line)
    except ValueError:
        return []
    if not isinstance(entry, dict):
        return []
    try:
        return to_events(entry, CATALOG, 0.0)
    except EntryError:
        return []


@settings(max_examples=500, deadline=None)
@given(
    st.sampled_from(NAMES),
    st.lists(st.booleans(), max_size=16),
    st.booleans(),
    st.booleans(),
    st.sampled_from(["", " ", "\t"]),
)
def test_every_spelling_of_an_event_type_is_caught(
    name: str, escaped: list[bool], upper: bool, key_escaped: bool, space: str
) -> None:
    key = _spell("type", [True], upper) if key_escaped else "type"
    body = '"name":"n","summary":"s"'
    if name == "message":  # its "message" key spelled the same way (it holds the marker too)
        body = f'"{_spell("message", escaped, upper)}":{{"role":"user","content":"hi"}}'
    line = f'{{"{key}"{space}:{space}"{_spell(name, escaped, upper)}",{body}}}'.encode()
    assert _events(line), line  # the line does yield events …
    assert may_have_events(line)  # … so the filter must pass it
    assert any(m in line for m in MARKERS)


NEUTRAL = st.fixed_dictionaries(
    {
        "type": st.sampled_from(["label", "custom", "model_change", "thinking_level_change", "usage", "x"]),
        "data": st.recursive(
            st.none() | st.booleans() | st.integers() | st.text(max_size=12),
            lambda inner: (
                st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=6), inner, max_size=3)
            ),
            max_leaves=8,
        ),
    }
)


@settings(max_examples=300, deadline=None)
@given(
    st.one_of(NEUTRAL, st.builds(lambda n: {"type": n, "message": {"role": "user"}}, st.sampled_from(NAMES)))
)
def test_a_line_the_filter_passes_over_yields_no_event(entry: dict[str, Any]) -> None:
    for ensure_ascii in (True, False):
        line = json.dumps(entry, ensure_ascii=ensure_ascii).encode()
        if not may_have_events(line):
            assert _events(line) == []


def test_markers_are_few_and_hold_no_newline() -> None:
    assert len(MARKERS) <= 6
    assert all(b"\n" not in m and m for m in MARKERS)
