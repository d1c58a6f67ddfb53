"""A tool's result line read from its first keys (notifier.pi.parse.result_events), its output left
unparsed unless the reducer asks how the call ended: the same events as the line parsed whole, for
pi's own lines and for generated ones; any other line is left to the whole parse."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from notifier.core.model import Question
from notifier.core.reducer import Event, ToolEnd
from notifier.pi.parse import QuestionCatalog, odd_line_events, result_events, to_events

from ..conftest import ROOT
from ..strategies import examples

ASKED = Question("c1", "question", (), 0.0)  # (what a result ends: here no options)

CATALOG = QuestionCatalog([])
NO_NAMES = QuestionCatalog(builtin=())  # every result is an ordinary tool's: read from its first keys


def _plain(events: list[Event]) -> list[Any]:
    """The events as values, a judge replaced by what it says."""
    out: list[Any] = []
    for event in events:
        if isinstance(event, ToolEnd) and event.judge is not None:
            out.append(event._replace(judge=None) + event.judge(ASKED))
        else:
            out.append(event)
    return out


def _whole(line: bytes, catalog: QuestionCatalog) -> list[Any]:
    return _plain(to_events(json.loads(line), catalog, 7.0))


def _pi_line(message: dict[str, Any], ascii_only: bool = False, **entry: Any) -> bytes:
    head = {"type": "message", "id": "1a2b3c4d", "parentId": "0a1b2c3d", "timestamp": "2026-12-07T02:00:00.000Z"}
    return json.dumps({**head, **entry, "message": message}, separators=(",", ":"), ensure_ascii=ascii_only).encode()


def test_pi_result_lines_in_the_captures_read_as_parsed_whole() -> None:
    read = 0
    for path in sorted((ROOT / "tests" / "data").rglob("*.jsonl")):
        for line in Path(path).read_bytes().splitlines():
            for catalog in (CATALOG, NO_NAMES):
                fast = result_events(line, catalog, 7.0)
                if fast is not None:
                    read += 1
                    assert _plain(fast) == _whole(line, catalog), (path, line[:200])
    assert read >= 10  # (the captures' question results, read by name or not)


text = st.text(st.characters(codec="utf-8", exclude_categories=["Cs"]), max_size=40)
results = st.fixed_dictionaries(
    {
        "role": st.just("toolResult"),
        "toolCallId": text.filter(bool),
        "toolName": st.sampled_from(["bash", "read", "question", "pick", "ask_user", "x\u00e9\\\""]),
        "content": st.one_of(
            st.lists(st.fixed_dictionaries({"type": st.just("text"), "text": text}), max_size=3),
            text,
            st.none(),
        ),
        "details": st.one_of(st.none(), st.dictionaries(text, st.one_of(text, st.booleans(), st.none()), max_size=3)),
        "isError": st.booleans(),
        "timestamp": st.integers(0, 2**41),
    }
)


@settings(max_examples=examples(300), deadline=None)
@given(results, st.booleans(), st.sampled_from(["2026-12-07T02:00:00.000Z", "soon", "\u00e9"]), st.booleans())
def test_a_result_line_reads_as_parsed_whole(message: dict[str, Any], ascii_only: bool, stamp: str, root: bool) -> None:
    extra = {"parentId": None} if root else {}
    keys = ("role", "toolCallId", "toolName", "content", "details", "isError", "timestamp")  # (pi's order)
    line = _pi_line({key: message[key] for key in keys}, ascii_only, timestamp=stamp, **extra)
    for catalog in (CATALOG, NO_NAMES):
        fast = result_events(line, catalog, 7.0)
        if message["toolName"] in catalog:
            assert fast is None  # (a question tool's result: parsed whole, as before)
        else:
            assert fast is not None
            assert _plain(fast) == _whole(line, catalog)


def test_a_question_by_shape_is_judged_from_its_result_line() -> None:
    """The line is parsed when the reducer asks how the call ended: the answer pi recorded."""
    message = {"role": "toolResult", "toolCallId": "c1", "toolName": "pick", "isError": False,
               "content": [{"type": "text", "text": "User selected: SQLite"}], "details": {"answer": "SQLite"}}  # fmt: skip
    line = _pi_line(message)
    (end,) = fast = result_events(line, NO_NAMES, 7.0) or []
    assert isinstance(end, ToolEnd) and end.judge is not None
    assert _plain(fast) == _whole(line, NO_NAMES)
    assert end.judge(ASKED)[0] == "answered" and end.judge(ASKED)[1]


def test_a_result_line_broken_after_its_first_keys_ends_its_call_as_an_odd_line_does() -> None:
    line = _pi_line({"role": "toolResult", "toolCallId": "c1", "toolName": "bash", "content": "x"})[:-8]
    (end,) = result_events(line, CATALOG, 7.0) or []
    (odd,) = odd_line_events(line, CATALOG, 7.0)
    assert isinstance(end, ToolEnd) and isinstance(odd, ToolEnd) and end.judge is not None
    assert end._replace(judge=None) == odd and end.judge(ASKED) == ("answered", None)
    not_utf8 = line[:-2] + b"\xff\xfe"
    (end,) = result_events(not_utf8, CATALOG, 7.0) or []
    assert isinstance(end, ToolEnd) and end.judge is not None and end.judge(ASKED) == ("answered", None)


def test_other_lines_are_parsed_whole() -> None:
    result = {"role": "toolResult", "toolCallId": "c1", "toolName": "bash", "content": "x"}
    others = [
        json.dumps({"type": "message", "timestamp": "t", "message": result}).encode(),  # (spaces: not pi's writing)
        b" " + _pi_line(result),
        _pi_line({**result, "toolCallId": ""}),
        _pi_line({**result, "toolCallId": "c" * 513}),
        _pi_line({"toolCallId": "c1", **result}),  # (keys in another order)
        _pi_line({**result, "role": "assistant"}),
        _pi_line(result, type="custom_message"),
        _pi_line(result).replace(b'"c1"', b'"c\\q"'),  # (an escape JSON has not)
        _pi_line(result).replace(b'"2026-12-07T02:00:00.000Z"', b"17"),  # (a time that is no string)
    ]
    for line in others:
        assert result_events(line, CATALOG, 7.0) is None, line
    assert result_events(_pi_line(result), CATALOG, 7.0) is not None


def test_a_calls_result_is_found_in_its_file_whatever_its_id(tmp_path: Path) -> None:
    """`tail.result_entry` (answer's read-back, the history after a stop): the toolResult of a
    call id as pi writes it, JSON.stringify's way (UTF-8, a lone surrogate as its escape), among
    others' results; none for an id pi never ended."""
    from notifier.tail import result_entry

    def result(call: str, text: str) -> bytes:
        quoted = json.dumps(call, ensure_ascii=False).replace("\ud800", "\\ud800")  # (as JSON.stringify)
        body = json.dumps({"role": "toolResult", "content": [{"type": "text", "text": text}]})[1:]
        return f'{{"type":"message","message":{{"toolCallId":{quoted},{body}}}\n'.encode()

    f = tmp_path / "s.jsonl"
    ids = ["call_1", "é-ü 字", "lone\ud800x", 'a"b\\c']
    f.write_bytes(b"".join(result(call, f"answer {n}") for n, call in enumerate(ids)))
    for n, call in enumerate(ids):
        entry = result_entry(str(f), call)
        assert entry is not None and entry["message"]["content"][0]["text"] == f"answer {n}", call
    assert result_entry(str(f), "call_2") is None and result_entry(str(tmp_path / "gone.jsonl"), "call_1") is None
