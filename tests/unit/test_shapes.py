"""A question seen by the shape of its arguments, whatever its tool's name (docs/question-tools.md
§7); names and glob patterns of the user's list; a tool that waits for a human elsewhere; a line
that cannot be parsed whole that still asks; and no false alarm on ordinary tool calls, generated
or captured."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from notifier.core import codec
from notifier.core.reducer import Ended, SessionReducer, ToolEnd, ToolStart
from notifier.pi.parse import (
    BUILTIN_QUESTION_TOOLS,
    TOO_ODD,
    QuestionCatalog,
    is_pattern,
    is_question_shaped,
    odd_line_events,
    to_events,
)
from notifier.sessions import OneFileReader

from ..conftest import ROOT
from ..strategies import examples
from ..writer import answer, append, ask, header, line, ts, user

CATALOG = QuestionCatalog()
NO_NAMES = QuestionCatalog(builtin=())  # no name known: what is a question is so by its shape alone


def call(name: str, arguments: Any, call_id: str = "c1") -> dict[str, Any]:
    """An assistant message entry with one tool call."""
    return {
        "type": "message",
        "timestamp": "2026-12-01T10:00:00.000Z",
        "message": {
            "role": "assistant",
            "stopReason": "toolUse",
            "content": [{"type": "toolCall", "id": call_id, "name": name, "arguments": arguments}],
        },
    }


def asked(name: str, arguments: Any, catalog: QuestionCatalog = CATALOG) -> Any:
    """The question the call asks, or ``None``."""
    starts = [e for e in to_events(call(name, arguments), catalog, 0.0) if isinstance(e, ToolStart)]
    assert len(starts) == 1
    return starts[0].question


# ---- the shapes of the question tools people publish, under names nobody told us ----

SHAPES: dict[str, Any] = {
    # a select-based clarify tool: a question and plain-string suggestions
    "clarify_prompt": {"question": "Which part should I refactor?", "options": ["Parser", "Lexer", "Both"]},
    # an MCP tool
    "mcp__server__ask": {"question": "Deploy now?", "options": [{"label": "Yes"}, {"label": "Not yet"}]},
    # Claude's shape
    "AskQuestions": {
        "questions": [
            {
                "question": "Which broker?",
                "header": "Broker",
                "options": [{"label": "Kafka", "description": "logs"}, {"label": "RabbitMQ"}],
                "multiSelect": False,
            }
        ]
    },
    # a topic chip and prompt, options with values
    "question_v2": {
        "questions": [
            {
                "questionTopic": "Storage",
                "prompt": "Where do we keep uploads?",
                "type": "single",
                "options": [{"value": "s3", "label": "S3"}, {"value": "disk", "label": "Local disk"}],
            }
        ]
    },
    # a radio/checkbox/text form with a title and instructions
    "form_ask": {
        "title": "Release",
        "description": "Answer these before the release.",
        "questions": [
            {"id": "v", "type": "radio", "prompt": "Which version?", "label": "Version",
             "options": [{"value": "1", "label": "1.0"}, {"value": "2", "label": "2.0"}]},
            {"id": "n", "type": "text", "prompt": "Release notes?"},
        ],
    },  # fmt: skip
    # an adapter: a short title beside the message it asks
    "ask_adapter": {"method": "select", "title": "Database", "message": "Which database for tests?",
                    "options": ["SQLite", "Postgres"]},  # fmt: skip
    # options sent as a JSON string
    "pick_one": {"prompt": "Pick a colour", "choices": json.dumps(["red", "green", "blue"])},
    # questions sent as a JSON string
    "survey": {"questions": json.dumps([{"question": "Tabs or spaces?", "options": ["Tabs", "Spaces"]}])},
}


@pytest.mark.parametrize("name", sorted(SHAPES))
def test_a_question_shape_is_a_question_whatever_its_name(name: str) -> None:
    assert name not in CATALOG
    q = asked(name, SHAPES[name])
    assert q is not None and q.tool == name and q.first.options


def test_the_shapes_read_as_their_dialogs_show_them() -> None:
    clarify = asked("clarify_prompt", SHAPES["clarify_prompt"])
    assert (clarify.text, clarify.options) == ("Which part should I refactor?", ("Parser", "Lexer", "Both"))
    topic = asked("question_v2", SHAPES["question_v2"])
    assert (topic.text, topic.header, topic.options) == ("Where do we keep uploads?", "Storage", ("S3", "Local disk"))
    form = asked("form_ask", SHAPES["form_ask"])
    assert (form.title, form.instructions, form.count) == ("Release", "Answer these before the release.", 2)
    assert (form.text, form.header) == ("Which version?", "Version")
    adapter = asked("ask_adapter", SHAPES["ask_adapter"])
    assert (adapter.text, adapter.header) == ("Which database for tests?", "Database")
    assert asked("pick_one", SHAPES["pick_one"]).options == ("red", "green", "blue")
    assert asked("survey", SHAPES["survey"]).text == "Tabs or spaces?"


def test_the_real_captures_question_calls_are_questions_by_their_shape_alone() -> None:
    """pi's own `question` and `questionnaire`, pi-ask's and dreki's, as captured: with no name
    known, their arguments' shape still makes each a question, with the same text."""
    calls = list(_captured_calls())
    assert len(calls) >= 20
    for name, arguments in calls:
        assert name in BUILTIN_QUESTION_TOOLS
        by_name, by_shape = asked(name, arguments), asked(name, arguments, NO_NAMES)
        assert by_shape is not None, (name, arguments)
        assert by_shape.items == by_name.items


# ---- names and glob patterns ----


def test_question_tools_take_glob_patterns_matched_as_fnmatch_does() -> None:
    cat = QuestionCatalog(["mcp__*__ask*", "my_tool", "clarify_[pq]rompt"], ignore=["mcp__test__*"])
    assert is_pattern("mcp__*__ask*") and not is_pattern("my_tool")
    assert "mcp__server__ask" in cat and "mcp__server__ask_user" in cat and "my_tool" in cat
    assert "clarify_prompt" in cat and "clarify_qrompt" in cat and "clarify_xrompt" not in cat
    assert "mcp__server__tell" not in cat and "MCP__server__ask" not in cat  # (case-sensitive)
    assert "mcp__test__ask" not in cat  # ignored by a pattern
    assert "question" in cat and "ask_user" in cat
    narrowed = QuestionCatalog(ignore=["ask_*"])
    assert "ask_user" not in narrowed and "ask" in narrowed
    assert narrowed.kind("ask_user", SHAPES["clarify_prompt"]) is None  # ignored: not even by shape
    assert QuestionCatalog().kind("ask_user", SHAPES["clarify_prompt"]) == "question"


def test_the_cache_key_changes_with_the_patterns() -> None:
    assert QuestionCatalog(["a*"]).key != QuestionCatalog(["a"]).key != QuestionCatalog().key
    assert QuestionCatalog(ignore=["x*"]).key != QuestionCatalog().key


def test_a_pattern_reaches_a_question_whose_arguments_have_no_question_shape() -> None:
    args = {"query": "continue?"}
    assert asked("mcp__srv__ask", args) is None
    q = asked("mcp__srv__ask", args, QuestionCatalog(["mcp__*__ask*"]))
    assert q is not None and q.tool == "mcp__srv__ask"


# ---- waiting for a human elsewhere ----


def test_a_tool_that_waits_for_a_human_elsewhere_is_shown_waiting_with_what_it_waits_on() -> None:
    q = asked("ask_human", {"question": "May I drop the staging DB?", "context": "cleanup", "confidence": 0.4})
    assert q is not None and q.text == "May I drop the staging DB?" and q.first.detail == "cleanup"
    assert q.title is not None and "outside pi" in q.title and "ask_human" in q.title
    assert not q.first.options and not q.first.other  # nothing to pick or type in pi's terminal
    assert asked("zulip_ask_human", {"message": "Ship it?", "thread_id": "t1"}) is not None
    assert asked("slack_ask_human", {"question": "Ship it?", "channel": "#ops"}) is not None  # (waits there)
    buttons = asked("ask_human", {"question": "Ship it?", "options": ["Yes", "No"]})  # picked in the chat
    assert buttons.title is not None and "outside pi" in buttons.title and not buttons.first.options


@pytest.mark.parametrize(
    ("name", "args"),
    [
        ("ask_human", {}),  # no question text
        ("ask_human", {"command": "echo Ship it?"}),  # work, not a question
        ("ask_human", {"path": "/tmp/q.txt", "question": "Ship?"}),
        ("notify_human", {"message": "Build done?"}),  # not a name that waits
        ("human_resources_lookup", {"query": "who?"}),
        ("ask_model", {"question": "What is 2+2?"}),  # another model, not a human
    ],
)
def test_only_a_waiting_name_with_a_question_text_waits_for_a_human(name: str, args: dict[str, Any]) -> None:
    assert asked(name, args) is None


# ---- zero false alarms: ordinary tool calls ----

WORDS = [
    "Which option should I pick?",
    "ask the user which option they prefer",
    "question: does this work?",
    "options: [\"a\", \"b\"]",
    "Do you want to continue? (y/n)",
    "select opt in Yes No; do echo $opt; done",
    "What should the prompt say?",
    "choices = ['Yes', 'No', 'Maybe']",
    "A? B? C?",
    "",
]
TEXT = st.sampled_from(WORDS) | st.text(max_size=40)
LABELS = st.lists(st.sampled_from(["Yes", "No", "Maybe", "-v", "--force", "a", "b"]), min_size=2, max_size=5)


def _ordinary() -> st.SearchStrategy[tuple[str, dict[str, Any]]]:
    """Calls of ordinary tools whose arguments talk of questions, question marks and options."""
    q = TEXT
    return st.one_of(
        st.tuples(st.just("bash"), st.fixed_dictionaries({"command": q}, optional={"timeout": st.integers(1, 99)})),
        st.tuples(st.just("bash"), st.builds(lambda t, o: {"command": f"select o in {' '.join(o)}; do {t}; done"}, q, LABELS)),
        st.tuples(st.just("read"), st.fixed_dictionaries({"path": q}, optional={"offset": st.integers(0, 9)})),
        st.tuples(st.just("edit"), st.builds(lambda p, a, b: {"path": p, "oldText": a, "newText": b}, q, q, q)),
        st.tuples(
            st.just("edit"),
            st.builds(
                lambda p, o: {"path": p, "edits": [{"oldText": "options: []", "newText": f"options: {json.dumps(o)}"}]},
                q,
                LABELS,
            ),
        ),
        st.tuples(st.just("write"), st.builds(lambda p, o, t: {"path": p, "content": f"question = {t!r}\noptions = {o}"}, q, LABELS, q)),
        st.tuples(st.just("grep"), st.fixed_dictionaries({"pattern": q, "path": q}, optional={"glob": q})),
        st.tuples(st.just("find"), st.fixed_dictionaries({"pattern": q}, optional={"path": q})),
        st.tuples(st.just("fetch"), st.fixed_dictionaries({"url": q}, optional={"prompt": q, "options": LABELS})),
        st.tuples(st.just("web_search"), st.fixed_dictionaries({"query": q}, optional={"options": st.fixed_dictionaries({"limit": st.integers(1, 9)})})),
        st.tuples(st.just("subagent"), st.fixed_dictionaries({"agent": q, "task": q}, optional={"options": LABELS})),
        st.tuples(st.just("subagent"), st.builds(lambda t, o: {"tasks": [{"agent": "scout", "task": t, "options": o}]}, q, LABELS)),
        st.tuples(st.just("subagent"), st.builds(lambda t: {"prompt": t, "model": "gpt", "options": ["fast", "deep"]}, q)),
        st.tuples(st.just("todo"), st.builds(lambda t: {"todos": [{"text": t, "status": "pending"}], "question": t}, q)),
        st.tuples(st.just("todo"), st.fixed_dictionaries({"action": st.just("add"), "text": q})),
        st.tuples(st.just("generate_quiz"), st.builds(
            lambda t, o: {"path": "quiz.json", "questions": [{"question": t or "?", "options": o, "answer": o[0]}]}, q, LABELS)),
        st.tuples(st.just("make_quiz"), st.builds(
            lambda t, o: {"questions": [{"question": t or "?", "options": o, "correct": 0}]}, q, LABELS)),
        st.tuples(st.just("draft_questions"), st.fixed_dictionaries({"questions": q})),
        st.tuples(st.just("image"), st.fixed_dictionaries({"prompt": q, "options": st.fixed_dictionaries({"size": q})})),
        st.tuples(st.just("run_cli"), st.fixed_dictionaries({"message": q, "options": st.lists(st.sampled_from(["-v", "--dry-run"]), min_size=2)})),
    )  # fmt: skip


@settings(max_examples=examples(1500), deadline=None)
@given(_ordinary())
def test_no_ordinary_tool_call_is_ever_a_question(case: tuple[str, dict[str, Any]]) -> None:
    name, arguments = case
    assert CATALOG.kind(name, arguments) is None
    assert asked(name, arguments) is None
    assert asked(name, json.dumps(arguments)) is None  # (arguments saved as a JSON string)


def test_a_fixed_corpus_of_ordinary_calls_raises_nothing() -> None:
    """The generated corpus's cases written out, so a change of the rule is seen failing here."""
    corpus: list[tuple[str, Any]] = [
        ("bash", {"command": 'select db in "SQLite" "Postgres"; do echo "Which one? $db"; break; done'}),
        ("bash", {"command": "read -p 'Continue? [y/N] ' ans", "timeout": 30}),
        ("edit", {"path": "ui.ts", "edits": [{"oldText": "options: []", "newText": 'options: ["Yes", "No"]'}]}),
        ("edit", {"path": "q.py", "oldText": "question = None", "newText": "question = 'Why?'"}),
        ("write", {"path": "ask.ts", "content": "ctx.ui.select('Which?', ['A', 'B'])"}),
        ("read", {"path": "docs/questions.md"}),
        ("grep", {"pattern": "question|options", "path": "src"}),
        ("find", {"pattern": "*question*"}),
        ("fetch", {"url": "https://example.com/faq?q=options", "prompt": "Which options exist?"}),
        ("subagent", {"agent": "planner", "task": "Ask the user which option they prefer: A or B?"}),
        ("subagent", {"tasks": [{"agent": "scout", "task": "Which option? options: [A, B]"}]}),
        ("todo", {"todos": [{"text": "Ask which option?", "status": "pending"}]}),
        ("todo", {"action": "add", "text": "question: options A or B?"}),
        ("web_search", {"query": "which option is best?", "options": {"limit": 5}}),
        ("llm", {"prompt": "Which is best?", "model": "gpt-x", "options": ["json", "short"]}),
        ("cli", {"message": "Run it?", "options": ["--force", "--dry-run"]}),
        ("notes", {"text": "Which?\nMaybe", "options": ["line one\nline two", "x"]}),
        ("quiz", {"path": "q.json", "questions": [{"question": "2+2?", "options": ["3", "4"], "answer": "4"}]}),
        ("mcp", {"tool": "ask_user", "args": '{"question": "Hidden?", "options": ["a", "b"]}'}),
        # a poll sent to a chat returns at once: no question in pi
        ("send_poll", {"chat_id": 42, "question": "Lunch?", "options": ["Pizza", "Sushi"]}),
        ("mcp__slack__post_poll", {"channel": "#team", "question": "Lunch?", "options": [{"label": "Pizza"}, {"label": "Sushi"}]}),
    ]
    for name, arguments in corpus:
        assert asked(name, arguments) is None, name


def test_a_question_text_needs_at_least_two_short_options() -> None:
    assert not is_question_shaped({"question": "Continue?"})
    assert not is_question_shaped({"question": "Continue?", "options": ["Yes"]})
    assert not is_question_shaped({"question": "Continue?", "options": [str(n) for n in range(21)]})
    assert not is_question_shaped({"question": "Continue?", "options": ["x" * 201, "y"]})
    assert not is_question_shaped({"question": "", "options": ["Yes", "No"]})
    assert not is_question_shaped({"question": "x" * 4001, "options": ["Yes", "No"]})
    assert not is_question_shaped({"question": "Continue?", "options": {"a": 1, "b": 2}})
    assert not is_question_shaped({"question": "Continue?", "options": [{"weight": 1}, {"weight": 2}]})
    assert is_question_shaped({"question": "Continue?", "options": ["Yes", "No"]})
    assert is_question_shaped({"message": "Continue?", "options": [{"title": "Yes"}, {"name": "No"}]})
    assert not is_question_shaped({"questions": []})
    assert not is_question_shaped({"questions": [{"question": "Why?"}]})  # free text only: no option anywhere
    assert not is_question_shaped({"questions": [{"question": "A?", "options": ["a", "b"]}, "B?"]})


def _captured_calls() -> Any:
    for path in sorted((ROOT / "tests" / "data" / "pi-sessions").rglob("*.jsonl")):
        for raw in path.read_bytes().splitlines():
            entry = json.loads(raw)
            message = entry.get("message") if isinstance(entry, dict) else None
            if not isinstance(message, dict) or message.get("role") != "assistant":
                continue
            for block in message.get("content") or []:
                if isinstance(block, dict) and block.get("type") == "toolCall":
                    yield block["name"], block["arguments"]


def test_the_captures_raise_no_question_beside_their_question_tools() -> None:
    """Every tool call of the project's captures: a question by name is one by shape too, and
    no other call is one."""
    for path in sorted((ROOT / "tests" / "data" / "pi-sessions").rglob("*.jsonl")):
        for raw in path.read_bytes().splitlines():
            entry = json.loads(raw)
            if not isinstance(entry, dict) or not isinstance(entry.get("type"), str):
                continue  # (a timeline's row)
            for event in to_events(entry, NO_NAMES, 0.0):
                if isinstance(event, ToolStart):
                    assert (event.question is not None) == (event.tool in BUILTIN_QUESTION_TOOLS), path


# ---- the result of a question seen by its shape ----


def test_the_result_of_a_question_seen_by_its_shape_is_classified() -> None:
    r = SessionReducer()
    for event in to_events(call("clarify_prompt", SHAPES["clarify_prompt"], "c9"), CATALOG, 0.0):
        r.apply(event)
    assert list(r.pending) == ["c9"]
    result = {
        "type": "message",
        "timestamp": "2026-12-01T10:00:05.000Z",
        "message": {
            "role": "toolResult",
            "toolCallId": "c9",
            "toolName": "clarify_prompt",
            "content": [{"type": "text", "text": "No answer to: Which part should I refactor?"}],
            "details": {"cancelled": True},
            "isError": False,
        },
    }
    (end,) = to_events(result, CATALOG, 0.0)
    assert isinstance(end, ToolEnd) and end.judge is not None
    (ended,) = r.apply(end)
    assert isinstance(ended, Ended) and ended.outcome == "cancelled" and r.calls == {}


# ---- lines that cannot be parsed whole ----

def _odd_question(call_id: str, tool: str = "question") -> bytes:
    """A question's call whose arguments hold bytes that are not UTF-8."""
    good = ask(call_id, "Which \x00one?", tool=tool)
    return good.replace(b"\\u0000", b"\xff\xfe")


def _deep_question(call_id: str, tool: str = "ask_user") -> bytes:
    deep: Any = "x"
    for _ in range(200):
        deep = [deep]
    return ask(call_id, tool=tool, args={"question": "Deep?", "options": ["a", "b"], "meta": deep})


@pytest.mark.parametrize("make", [_odd_question, _deep_question])
def test_a_question_line_that_cannot_be_parsed_whole_is_still_asked(make: Any) -> None:
    raw = make("c1").rstrip(b"\n")
    with pytest.raises(ValueError):  # (UnicodeDecodeError is one)
        codec.loads(raw)  # the engine's bounded parse refuses it whole
    events = odd_line_events(raw, CATALOG, 5.0)
    starts = [e for e in events if isinstance(e, ToolStart)]
    assert [(s.tool_call_id, s.question.text if s.question else None) for s in starts] == [("c1", TOO_ODD)]


def test_an_odd_line_of_another_tool_asks_nothing() -> None:
    raw = ask("b1", tool="bash", args={"command": "printf '\\u0000'"}).replace(b"\\u0000", b"\xff")
    starts = [e for e in odd_line_events(raw, CATALOG, 5.0) if isinstance(e, ToolStart)]
    assert [(s.tool, s.question) for s in starts] == [("bash", None)]


@pytest.mark.parametrize("make", [_odd_question, _deep_question])
def test_the_engine_reads_an_odd_question_line_as_a_question_and_its_result_ends_it(
    tmp_path: Path, make: Any
) -> None:
    f = tmp_path / "s.jsonl"
    append(f, header("/p"), user(), make("q1"))
    followed = OneFileReader(str(f), QuestionCatalog())
    view = followed.view()
    assert view is not None and [(q.tool_call_id, q.text) for q in view.pending] == [("q1", TOO_ODD)]
    append(f, answer("q1", tool="ask_user"))
    (t,) = followed.read()
    assert (t.kind, t.question.tool_call_id, t.outcome) == ("resolved", "q1", "answered")


def test_the_engine_reads_an_unknown_named_question_and_its_result(tmp_path: Path) -> None:
    f = tmp_path / "s.jsonl"
    append(f, header("/p"), user())
    followed = OneFileReader(str(f), QuestionCatalog())
    append(f, ask("m1", tool="mcp__server__ask", args=SHAPES["mcp__server__ask"]))
    (t,) = followed.read()
    assert (t.kind, t.question.text, t.question.options) == ("needs_input", "Deploy now?", ("Yes", "Not yet"))
    append(f, answer("m1", "User cancelled the question", tool="mcp__server__ask", details={"cancelled": True}))
    (t,) = followed.read()
    assert (t.kind, t.outcome) == ("resolved", "cancelled")


def test_two_parallel_questions_of_one_message_list_one_until_it_ends(tmp_path: Path) -> None:
    """The ghost: pi writes the second call's refusal only after the first question's result."""
    f = tmp_path / "s.jsonl"
    two = {
        "type": "message",
        "id": "m1",
        "parentId": None,
        "timestamp": ts(),
        "message": {
            "role": "assistant",
            "stopReason": "toolUse",
            "content": [
                {"type": "toolCall", "id": f"q{n}", "name": "questionnaire",
                 "arguments": {"questions": [{"id": "a", "prompt": f"Question {n}?", "options": [{"label": "x"}]}]}}
                for n in (1, 2)
            ],
        },
    }  # fmt: skip
    append(f, header("/p"), user(), line(two))
    followed = OneFileReader(str(f), QuestionCatalog())
    view = followed.view()
    assert view is not None and [q.tool_call_id for q in view.pending] == ["q1"]
    refused = answer("q2", "Another questionnaire is already active", tool="questionnaire", details={})
    append(f, answer("q1", tool="questionnaire", details={"cancelled": False}), refused)
    out = followed.read()
    assert [(t.kind, t.question.tool_call_id) for t in out] == [
        ("resolved", "q1"),
        ("needs_input", "q2"),
        ("resolved", "q2"),
    ]
    view = followed.view()
    assert view is not None and view.pending == ()


# ---- extraction as the dialog shows it, under the tools' own names ----


def test_an_adapters_short_title_is_the_header_and_its_message_the_question() -> None:
    single = asked("ask_user", {"method": "select", "title": "DB", "message": "Which database?", "options": ["A", "B"]})
    assert (single.text, single.header, single.title) == ("Which database?", "DB", None)
    batch = asked(
        "ask_user",
        {"questions": [{"method": "select", "title": "DB", "message": "Which database?", "options": ["A", "B"]},
                       {"method": "input", "title": "Name"}]},
    )  # fmt: skip
    assert [(i.text, i.header) for i in batch.items] == [("Which database?", "DB"), ("Name", None)]
    # a short title beside the question is its header (when it has none)
    beside = asked("ask_user", {"title": "Storage", "question": "Where do uploads go?", "options": ["S3", "Disk"]})
    assert (beside.text, beside.header) == ("Where do uploads go?", "Storage")
    # a title alone is still the question; a title with a prompt keeps the prompt as its detail
    assert asked("ask_user", {"title": "Continue?", "options": ["y", "n"]}).text == "Continue?"
    black = asked("ask", {"questions": [{"title": "Pick one", "prompt": "Why it matters"}]})
    assert (black.text, black.first.detail) == ("Pick one", "Why it matters")


def test_a_topic_chip_is_the_header_and_a_forms_title_and_instructions_are_kept() -> None:
    topic = asked("question", SHAPES["question_v2"])
    assert (topic.text, topic.header) == ("Where do we keep uploads?", "Storage")
    form = asked("ask_user_question", SHAPES["form_ask"])
    assert (form.title, form.instructions) == ("Release", "Answer these before the release.")
    assert [i.header for i in form.items] == ["Version", "n"]
    assert asked("question", {"question": "Q?", "description": "not a form"}).instructions is None


def test_ordinary_calls_with_json_string_arguments_leave_a_later_questions_bounds_whole() -> None:
    """Arguments saved as a JSON string that mention "message" are parsed to judge their shape;
    an ordinary call judged so costs nothing of the message's budget, so the question the
    message asks last comes out whole however many such calls come first."""
    note = json.dumps({"message": "x" * 20_000, "path": "notes.md"})
    question = {"question": "Ship the release now?", "options": ["Yes", "No"]}
    content: list[dict[str, Any]] = [
        {"type": "toolCall", "id": f"w{i}", "name": "write", "arguments": note} for i in range(40)
    ]
    content.append({"type": "toolCall", "id": "q", "name": "clarify_prompt", "arguments": question})
    entry = call("write", {})
    entry["message"]["content"] = content
    (start,) = [e for e in to_events(entry, CATALOG, 0.0) if isinstance(e, ToolStart) and e.question is not None]
    assert start.question is not None and start.question.text == "Ship the release now?"
    assert list(start.question.options) == ["Yes", "No"]
