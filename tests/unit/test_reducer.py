"""The reducer: question start and end, other tools never hiding a question, supersession (the
rules: docs/pi-sessions.md §4 and §5)."""

from __future__ import annotations

from notifier.core.model import Outcome, Question, State
from notifier.core.reducer import (
    Activity,
    Asked,
    Ended,
    Header,
    Input,
    SessionReducer,
    Supersede,
    ToolEnd,
    ToolStart,
    TurnEnd,
)
from notifier.pi.parse import extract


def q_start(tool: str, args: object, call_id: str = "c1", at: float = 1.0) -> ToolStart:
    return ToolStart(at, call_id, tool, extract(tool, args, call_id, at))


def test_question_start_needs_input_with_text() -> None:
    r = SessionReducer()
    changes = r.apply(q_start("question", {"question": "Approve?"}))
    assert r.state == "needs_input"
    assert [q.text for q in r.pending.values()] == ["Approve?"]
    assert list(r.pending) == ["c1"]
    assert r.current_tool is None
    assert [q.text for q in r.pending.values()] == ["Approve?"]  # (the one displayed)
    assert isinstance(changes[0], Asked)


def test_questionnaire_prompt_is_the_question() -> None:
    r = SessionReducer()
    r.apply(q_start("questionnaire", {"questions": [{"prompt": "Pick scope"}]}))
    assert [q.text for q in r.pending.values()] == ["Pick scope"]  # (the one displayed)
    assert r.state == "needs_input"


def test_tool_end_clears_pending_and_returns_to_working() -> None:
    r = SessionReducer()
    r.apply(q_start("question", {"question": "Approve?"}))
    changes = r.apply(ToolEnd(2.0, "c1", "question", judge=lambda q: ("answered", "yes")))
    assert r.pending == {}
    assert r.state == "working"
    assert isinstance(changes[0], Ended) and changes[0].outcome == "answered"


def test_drop_forgets_a_pending_question_without_ending_it() -> None:
    r = SessionReducer()
    r.apply(q_start("question", {"question": "First?"}, "q1"))
    r.apply(q_start("question", {"question": "Second?"}, "q2"))
    r.drop("q2")  # a queued one: only it
    r.drop("never-asked")  # (nothing to drop: no error)
    assert list(r.pending) == ["q1"] and r.state == "needs_input"
    r.apply(q_start("question", {"question": "Third?"}, "q3"))
    r.drop("q1")  # the one asked: its pi is gone, so are the calls queued behind it
    assert (r.pending, r.calls, r.state) == ({}, {}, "working")
    assert r.apply(ToolEnd(2.0, "q1", "question", judge=lambda q: ("answered", "yes"))) == []  # (no end of a dropped one)


def test_other_tools_never_hide_a_pending_question() -> None:
    r = SessionReducer()
    r.apply(q_start("question", {"question": "First?"}, "q1"))
    r.apply(ToolStart(1.0, "b1", "bash"))
    r.apply(ToolEnd(1.5, "b1", "bash"))
    assert r.state == "needs_input"
    assert [q.text for q in r.pending.values()] == ["First?"]  # (the one displayed)


def test_parallel_questions_one_waits_the_others_queue_behind_it() -> None:
    r = SessionReducer()
    assert [type(c) for c in r.apply(q_start("question", {"question": "First?"}, "q1"))] == [Asked]
    assert r.apply(q_start("ask_user", {"question": "Second?"}, "q2")) == []  # queued: not asked
    assert list(r.pending) == ["q1"] and list(r.calls) == ["q1", "q2"]
    changes = r.apply(ToolEnd(2.0, "q1", "question", judge=lambda q: ("answered", None)))
    assert [type(c) for c in changes] == [Ended, Asked]
    asked = changes[1]
    assert isinstance(asked, Asked) and asked.question.tool_call_id == "q2" and asked.question.asked_at == 2.0
    assert [q.text for q in r.pending.values()] == ["Second?"]  # (the one displayed)
    assert list(r.pending) == ["q2"] and r.state == "needs_input"


def test_a_parallel_call_refused_at_once_is_never_listed() -> None:
    """The tool refused the second call at once; pi writes that result only after the first
    question's: while the first waits, only it is listed; the refusal ends the second as it is
    asked (in the same read, so never notified)."""
    r = SessionReducer()
    r.apply(q_start("questionnaire", {"questions": [{"prompt": "Scope?"}]}, "q1"))
    r.apply(q_start("questionnaire", {"questions": [{"prompt": "Again?"}]}, "q2"))
    assert [q.text for q in r.pending.values()] == ["Scope?"]
    changes = r.apply(ToolEnd(9.0, "q1", "questionnaire", judge=lambda q: ("answered", "Scope: all")))
    changes += r.apply(ToolEnd(9.0, "q2", "questionnaire", judge=lambda q: ("error", "Another questionnaire is already active")))
    assert [(type(c).__name__, c.question.tool_call_id) for c in changes] == [
        ("Ended", "q1"),
        ("Asked", "q2"),
        ("Ended", "q2"),
    ]
    assert r.calls == {} and r.state == "working"


def test_a_queued_call_that_ends_first_ends_silently() -> None:
    r = SessionReducer()
    r.apply(q_start("question", {"question": "First?"}, "q1"))
    r.apply(q_start("question", {"question": "Second?"}, "q2"))
    assert r.apply(ToolEnd(2.0, "q2", "question", judge=lambda q: ("error", None))) == []
    assert list(r.pending) == ["q1"] and list(r.calls) == ["q1"]


def test_supersede_ends_only_the_question_asked() -> None:
    r = SessionReducer()
    r.apply(q_start("question", {"question": "First?"}, "q1"))
    r.apply(q_start("question", {"question": "Second?"}, "q2"))
    changes = r.apply(Supersede(3.0))
    assert [(type(c).__name__, c.question.tool_call_id) for c in changes] == [("Ended", "q1")]
    assert r.calls == {}


def test_a_question_seen_by_its_shape_is_judged_at_its_end() -> None:
    r = SessionReducer()
    r.apply(q_start("clarify_prompt", {"question": "Which?", "options": ["a", "b"]}, "q1"))
    judged: list[str] = []

    def judge(question: Question) -> tuple[Outcome, str | None]:
        judged.append("q1")
        return "cancelled", None

    def never(question: Question) -> tuple[Outcome, str | None]:
        judged.append("b1")
        return "answered", None

    r.apply(ToolStart(1.0, "b1", "bash"))
    r.apply(ToolEnd(1.5, "b1", "bash", judge=never))
    (end,) = r.apply(ToolEnd(2.0, "q1", "clarify_prompt", judge=judge))
    assert judged == ["q1"]  # an ordinary tool's result is never judged
    assert isinstance(end, Ended) and end.outcome == "cancelled"


def test_user_message_supersedes_a_dangling_call() -> None:
    r = SessionReducer()
    r.apply(q_start("question", {"question": "Q?"}))
    changes = r.apply(Input(5.0))
    assert r.pending == {} and r.state == "working"
    assert isinstance(changes[0], Ended) and changes[0].outcome == "superseded"


def test_new_assistant_message_supersedes() -> None:
    r = SessionReducer()
    r.apply(q_start("question", {"question": "Q?"}))
    r.apply(Supersede(6.0))
    assert r.pending == {}


def state_of(r: SessionReducer) -> State:
    """``r.state`` read anew (mypy would carry one check's narrowing past the next ``apply``)."""
    return r.state


def test_states() -> None:
    r = SessionReducer()
    r.apply(Header("s", "/p"))
    assert state_of(r) == "starting"
    r.apply(Activity(1.0))
    assert state_of(r) == "working"
    for state in ("idle", "failed", "stopped"):
        r.apply(TurnEnd(2.0, state))
        assert state_of(r) == state


def test_duplicate_start_is_one_question() -> None:
    r = SessionReducer()
    assert r.apply(q_start("question", {"question": "Q?"}))
    assert r.apply(q_start("question", {"question": "Q?"})) == []
