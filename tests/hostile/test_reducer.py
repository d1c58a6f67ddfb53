"""Property test: the reducer and board fed random entry sequences keep their invariants.

Operations: assistant messages with question and non-question tool calls, tool results with
matching and non-matching ids, user messages, compactions, new runs, renames, and process lists
(fresh, or read before later questions were seen) interleaved, over two sessions."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from notifier.core.board import Board
from notifier.core.model import Transition
from notifier.core.owners import Proc
from notifier.core.reducer import Event, Header, Input, Renamed, Supersede, ToolEnd, ToolStart, TurnEnd
from notifier.pi.parse import extract

KEYS = {"a": "/a", "b": "/b"}
IDS = [f"c{i}" for i in range(6)]

session = st.sampled_from(sorted(KEYS))
call = st.tuples(st.sampled_from(IDS), st.booleans())  # (id, is it a question tool)
ops = st.one_of(
    st.tuples(st.just("assistant"), session, st.lists(call, min_size=0, max_size=3)),
    st.tuples(st.just("result"), session, st.sampled_from([*IDS, "nope"])),
    st.tuples(st.just("user"), session),
    st.tuples(st.just("compaction"), session),
    st.tuples(st.just("run_end"), session),
    st.tuples(st.just("rename"), session, st.text(max_size=5)),
    # a process list: which projects have a pi (started long before, or only now), and whether
    # the read began now or back before some of the recent feedings
    st.tuples(
        st.just("procs"),
        st.sampled_from(["none", "a-old", "b-old", "both-old", "a-new", "both-new"]),
        st.integers(min_value=0, max_value=3),
    ),
)


@dataclass
class Model:
    """What the file says: per session, question calls without a result and not overtaken, in
    call order; the first of them is the one waiting (the others queue behind it)."""

    pending: dict[str, dict[str, None]] = field(default_factory=lambda: {k: {} for k in KEYS})

    def waiting(self, key: str) -> set[str]:
        return set(list(self.pending[key])[:1])
    seen: dict[tuple[str, str], int] = field(default_factory=dict)  # board mark when seen


def procs_for(kind: str, now: float) -> list[Proc]:
    out = []
    for key, cwd in KEYS.items():
        if kind == "both-old" or kind == f"{key}-old":
            out.append(Proc(cwd, 0.0))
        if kind == "both-new" or kind == f"{key}-new":
            out.append(Proc(cwd, now + 1000.0))  # started after every question: asked none of them
    return out


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(ops, max_size=40))
def test_board_invariants_hold_for_any_entry_sequence(seq: list[tuple[Any, ...]]) -> None:
    board = Board(liveness=True)
    model = Model()
    marks: list[int] = []
    log: list[Transition] = []
    now = 100.0
    for key, cwd in KEYS.items():
        log += board.local.apply(key, [Header(key, cwd)], now)
    for op in seq:
        now += 1.0
        marks.append(board.local.mark())
        kind = op[0]
        if kind == "procs":
            _, which, back = op
            as_of = marks[max(0, len(marks) - 1 - back)]
            latest_read = as_of
            out = board.local.set_processes(procs_for(which, now), now, as_of=as_of)
            for t in out:
                if t.kind == "abandoned":  # only on a list read after the question was seen
                    assert model.seen[(t.session.key, t.question.tool_call_id)] <= latest_read
            log += out
            continue
        key = op[1]
        events: list[Event] = []
        pending = model.pending[key]
        if kind == "assistant":
            events.append(Supersede(now))  # a new assistant message overtakes unanswered calls
            pending.clear()
            started: set[str] = set()
            for cid, is_question in op[2]:
                if cid in started:
                    continue
                started.add(cid)
                if is_question:
                    events.append(ToolStart(now, cid, "question", extract("question", {"question": cid}, cid, now)))
                    pending[cid] = None
                else:
                    events.append(ToolStart(now, cid, "bash"))
        elif kind == "result":
            events.append(ToolEnd(now, op[2], "question", judge=lambda q: ("answered", "yes")))
            pending.pop(op[2], None)
        elif kind == "user":
            events.append(Input(now))
            pending.clear()
        elif kind == "compaction":
            events.append(Supersede(now))
            pending.clear()
        elif kind == "run_end":
            events.append(TurnEnd(now, "idle"))
        elif kind == "rename":
            events.append(Renamed(op[2] or None))
        out = board.local.apply(key, events, now)
        for t in out:
            if t.kind == "needs_input":
                model.seen[(key, t.question.tool_call_id)] = board.local.mark()
        log += out
        # a question just seen is never called abandoned on the list read before it
        assert not any(t.kind == "abandoned" and t.question.tool_call_id in pending for t in out)

    # Replay the transitions: every needs_input is followed by at most one terminal transition
    # for that call before it is asked (or revived) again; nothing ends that was not open.
    state: dict[tuple[str, str], str] = {}
    for t in log:
        k = (t.session.key, t.question.tool_call_id)
        if t.kind == "needs_input":
            assert state.get(k) in (None, "closed", "abandoned"), (k, t.kind, state.get(k))
            state[k] = "open"
        else:
            assert state.get(k) == "open", (k, t.kind, state.get(k))
            state[k] = "abandoned" if t.kind == "abandoned" else "closed"

    snap = board.snapshot(now)
    views = {v.ref.key: v for v in snap.sessions}
    for key in KEYS:
        view = views[key]
        shown = {q.tool_call_id for q in view.pending}
        gone = {q.tool_call_id for q in view.abandoned}
        # pending ⇔ the first question call without a result and not overtaken (abandoned ones included)
        assert shown | gone == model.waiting(key) and not shown & gone
        assert shown == {cid for (k, cid), s in state.items() if k == key and s == "open"}
        # (an abandoned question that later ends has had its terminal transition: it goes quietly)
        assert gone == {cid for (k, cid), s in state.items() if k == key and s == "abandoned"} & model.waiting(key)
    # the badge counts exactly the pending questions that are not abandoned
    assert snap.pending_count == sum(len(v.pending) for v in snap.sessions) == sum(
        1 for s in state.values() if s == "open"
    )
