"""A question's plain object (codec.encode / codec.decode) carries every field: what the scan cache
keeps of a pending question comes back equal, whatever its fields hold; anything the object never
holds is refused. (The scan cache's whole summary, read back by notifier/sessions.py, is tested in
tests/unit/test_startup_cache.py: round trip, damage, limits.)"""

from __future__ import annotations

import json
from dataclasses import fields
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from notifier.core import codec
from notifier.core.codec import decode, encode
from notifier.core.model import Option, Question, QuestionItem
from notifier.core.reducer import SessionReducer, summarize

from ..conftest import json_paths, wrong_type
from ..strategies import questions

_encode = json.JSONEncoder(separators=(",", ":"), allow_nan=False).encode  # (as the scan cache writes)


@given(questions)
def test_a_question_comes_back_equal(q: Question) -> None:
    assert decode(Question, encode(q)) == q


@given(questions)
def test_a_question_comes_back_equal_through_json_and_the_bounded_parse(q: Question) -> None:
    assert decode(Question, codec.loads(_encode(encode(q)).encode("ascii"))) == q


def test_every_field_of_a_question_is_in_its_object() -> None:
    """A field added to the model and not to the object fails here (and the round trip above)."""
    q = Question(
        "c1",
        "questionnaire",
        (
            QuestionItem(
                "Q?", options=(Option("A", value="a"),), key="k", required=False, show_when=("p", "v"), other=False
            ),
        ),
        1.5,
        "T",
        kind="dialog",
        dialog="select",
    )
    obj = encode(q)
    assert {f.name for f in fields(Question)} - {"asked_at"} <= obj.keys()
    assert {f.name for f in fields(QuestionItem)} == obj["items"][0].keys()
    assert {f.name for f in fields(Option)} == obj["items"][0]["options"][0].keys()
    assert obj["items"][0] == {
        "text": "Q?", "header": None, "detail": None, "multi": False,
        "options": [{"label": "A", "description": None, "recommended": False, "value": "a"}],
        "key": "k", "required": False, "show_when": ["p", "v"], "other": False,
    }  # fmt: skip


@given(questions, st.data())
def test_anything_but_what_encode_writes_is_refused_with_a_value_error(q: Question, data: st.DataObject) -> None:
    """A field dropped, a field added, a value of another type: a ValueError (a damaged scan
    cache is rebuilt on it), never another exception."""
    obj = json.loads(json.dumps(encode(q)))
    path = data.draw(st.sampled_from(json_paths(obj)))
    parent: Any = obj
    for k in path[:-1]:
        parent = parent[k]
    change = data.draw(st.sampled_from(["drop", "add", "wrong type"] if isinstance(parent, dict) else ["wrong type"]))
    if change == "drop":
        del parent[path[-1]]
    elif change == "add":
        parent["extra"] = None
    else:
        parent[path[-1]] = wrong_type(parent[path[-1]])
    with pytest.raises(ValueError):
        decode(Question, obj)


@pytest.mark.parametrize(
    "change",
    [
        {"kind": "form"}, {"dialog": "popup"}, {"asked_at": float("nan")}, {"asked_at": float("inf")}, {"items": None},
        {"asked_at": 10**400},  # (an integer past floats: a ValueError too, not an OverflowError)
    ],
)  # fmt: skip
def test_unknown_kinds_and_times_that_are_not_finite_are_refused(change: dict[str, Any]) -> None:
    with pytest.raises(ValueError):
        decode(Question, {**encode(Question("c1", "question", (QuestionItem("Q?"),), 1.0)), **change})


@pytest.mark.parametrize("obj", [None, [], "question", 7, {"items": []}])
def test_what_is_not_a_question_object_is_refused(obj: Any) -> None:
    with pytest.raises(ValueError):
        decode(Question, obj)


def test_strings_and_lists_past_the_limits_are_refused() -> None:
    q = Question("c1", "question", (QuestionItem("x" * 10, options=(Option("A"), Option("B"))),), 1.0)
    assert decode(Question, encode(q), max_text=10, max_list=2) == q
    with pytest.raises(ValueError):
        decode(Question, encode(q), max_text=9)
    with pytest.raises(ValueError):
        decode(Question, encode(q), max_list=1)


def test_every_model_value_is_written_with_every_field() -> None:
    """encode/decode are one way for any frozen dataclass of the model, not for questions only."""
    option = Option("A", "first", True, "a")
    assert codec.encode(option) == {"label": "A", "description": "first", "recommended": True, "value": "a"}
    assert codec.decode(Option, codec.encode(option)) == option
    assert codec.encode("plain") == "plain"
    r = SessionReducer("s", "/p", None, base="idle", running={"t1": "bash"}, updated_at=2.0, has_header=True)
    assert summarize(r) == {
        "sid": "s", "cwd": "/p", "name": None, "base": "idle", "pending": [], "running": {"t1": "bash"}, "tool": None,
        "at": 2.0, "header": True,
    }  # fmt: skip
