from __future__ import annotations

from notifier.core.board import Board
from notifier.core.model import Question, QuestionItem, SessionRef, Transition, remote_key
from notifier.core.owners import Proc
from notifier.core.reducer import Header, Input, SessionReducer, ToolEnd, ToolStart
from notifier.pi.parse import extract


def asked(cid: str, at: float = 100.0) -> ToolStart:
    return ToolStart(at, cid, "question", extract("question", {"question": cid + "?"}, cid, at))


def test_no_header_no_transitions() -> None:
    b = Board(liveness=False)
    assert b.local.apply("f", [asked("q1")], 0) == []
    assert len(b.local) == 0


def test_needs_input_then_resolved_with_wait() -> None:
    b = Board(liveness=False)
    (t,) = b.local.apply("f", [Header("s", "/p"), asked("q1", 100.0)], 200.0, initial=True)
    assert t.kind == "needs_input" and t.initial and t.session.cwd == "/p"
    (r,) = b.local.apply("f", [ToolEnd(130.0, "q1", "question", judge=lambda q: ("answered", "A"))], 200.0)
    assert r.kind == "resolved" and r.waited_s == 30.0 and r.answer == "A"


def test_liveness_abandons_only_questions_without_their_pi() -> None:
    b = Board(liveness=True)
    b.local.apply("f", [Header("s", "/p"), asked("q1", 100.0)], 100.0)
    b.local.apply("g", [Header("t", "/other"), asked("q2", 100.0)], 100.0)
    out = b.local.set_processes([Proc("/p/", 50.0)], 101.0)
    assert [(t.kind, t.question.tool_call_id) for t in out] == [("abandoned", "q2")]
    snap = b.snapshot(101.0)
    assert snap.pending_count == 1 and len(snap.abandoned) == 1
    assert b.local.set_processes([Proc("/p", 50.0)], 102.0) == []  # once, not per check
    assert b.local.needs_liveness()


def test_pi_started_after_the_question_does_not_keep_it_alive() -> None:
    b = Board(liveness=True)
    b.local.apply("f", [Header("s", "/p"), asked("q1", 100.0)], 100.0)
    (t,) = b.local.set_processes([Proc("/p", 500.0)], 501.0)
    assert t.kind == "abandoned"


def test_unknown_process_table_changes_nothing() -> None:
    b = Board(liveness=True)
    b.local.apply("f", [Header("s", "/p"), asked("q1")], 100.0)
    assert b.local.set_processes(None, 1.0) == []
    assert b.snapshot(1).pending_count == 1


def test_liveness_off_never_abandons() -> None:
    b = Board(liveness=False)
    b.local.apply("f", [Header("s", "/p"), asked("q1")], 100.0)
    assert b.local.set_processes([], 1.0) == [] and not b.local.needs_liveness()
    assert b.snapshot(1).sessions[0].alive is None


def test_replace_and_forget() -> None:
    b = Board(liveness=False)
    b.local.apply("f", [Header("s", "/p"), asked("q1"), asked("q2")], 1.0)
    out = b.local.replace("f", [Header("s", "/p"), asked("q3"), asked("q2")], 2.0)
    assert sorted((t.kind, t.question.tool_call_id) for t in out) == [  # (one waits at a time)
        ("needs_input", "q3"),
        ("resolved", "q1"),
    ]
    (gone,) = b.local.forget("f", 3.0)
    assert (gone.question.tool_call_id, gone.outcome) == ("q3", "superseded")
    assert len(b.local) == 0


def test_clear_abandoned() -> None:
    b = Board(liveness=True)
    b.local.apply("f", [Header("s", "/p"), asked("q1")], 100.0)
    b.local.set_processes([], 101.0)
    assert b.clear_abandoned("f")
    assert b.snapshot(102).abandoned == ()


def test_input_supersedes_through_board() -> None:
    b = Board(liveness=False)
    b.local.apply("f", [Header("s", "/p"), asked("q1")], 1.0)
    (r,) = b.local.apply("f", [Input(5.0)], 5.0)
    assert r.outcome == "superseded"


def test_replace_caught_empty_still_reports_what_ended() -> None:
    b = Board(liveness=False)
    b.local.apply("f", [Header("s", "/p"), asked("q1")], 1.0)
    (r,) = b.local.replace("f", [], 2.0)  # the re-read saw the file between truncate and write
    assert r.kind == "resolved" and r.question.tool_call_id == "q1" and r.session.cwd == "/p"
    (n,) = b.local.apply("f", [Header("s", "/p"), asked("q2")], 3.0)
    assert n.kind == "needs_input" and n.question.tool_call_id == "q2"


def test_live_turn_changes_are_reported_once() -> None:
    from notifier.core.reducer import TurnEnd

    b = Board(liveness=False)
    b.local.apply("f", [Header("s", "/p"), Input(1.0), TurnEnd(2.0, "idle")], 2.0, initial=True)
    assert b.local.drain_turns() == []  # start-up scan: nothing is news
    b.local.apply("f", [Input(3.0)], 3.0)
    b.local.apply("f", [TurnEnd(4.0, "failed")], 4.0)
    (turn,) = b.local.drain_turns()
    assert turn.state == "failed" and turn.session.cwd == "/p"
    assert b.local.drain_turns() == []


def test_only_a_real_first_header_makes_a_session() -> None:
    import pytest

    from notifier.pi.parse import EntryError, QuestionCatalog, to_events

    with pytest.raises(EntryError):
        to_events({"type": "session", "cwd": "/x"}, QuestionCatalog(), 0.0)
    b = Board(liveness=False)
    b.local.apply("f", [Header("first", "/a"), Header("second", "/b")], 1.0)
    view = b.view("f")
    assert view is not None and (view.ref.id, view.ref.cwd) == ("first", "/a")


def test_incremental_snapshots_follow_every_change() -> None:
    b = Board(liveness=True)
    b.local.apply("f", [Header("s", "/p"), asked("q1", 100.0)], 100.0)
    b.local.apply("g", [Header("t", "/q")], 100.0)
    first = b.snapshot(1.0)
    assert first.pending_count == 1 and len(first.sessions) == 2
    b.local.set_processes([], 101.0)  # q1 abandoned, alive flags change
    second = b.snapshot(2.0)
    assert second.pending_count == 0 and len(second.abandoned) == 1
    assert {v.ref.key: v.alive for v in second.sessions} == {"f": False, "g": False}
    b.clear_abandoned("f")
    assert b.snapshot(3.0).abandoned == ()
    b.local.forget("g", 4.0)
    assert [v.ref.key for v in b.snapshot(4.0).sessions] == ["f"]
    assert first.pending_count == 1  # earlier snapshots never change


def test_snapshots_follow_local_remote_and_dialog_sessions_coming_and_going() -> None:
    """Whatever mix is on the board (only local files, or dialogs and remote sessions too, each
    snapshot built incrementally), a snapshot lists exactly the sessions there are, as they are."""
    b = Board(liveness=False)

    def shown() -> dict[str, tuple[str, tuple[str, ...]]]:
        return {
            v.ref.key: (v.state, tuple(q.tool_call_id for q in v.pending)) for v in b.snapshot(1.0).sessions
        }

    b.local.restore("/s/a.jsonl", SessionReducer("a", "/p", base="idle", has_header=True), 1.0, initial=True)
    b.local.apply("/s/b.jsonl", [Header("b", "/q"), asked("q1")], 1.0)
    assert shown() == {"/s/a.jsonl": ("idle", ()), "/s/b.jsonl": ("needs_input", ("q1",))}
    gate = Question("g1", "bash", (QuestionItem("Allow?"),), 2.0, kind="dialog", dialog="confirm")
    b.dialogs.open(("/run/x.sock", "1"), SessionRef("/s/a.jsonl", "a", "/p", None), gate, 2.0)
    b.dialogs.open(("/run/x.sock", "2"), SessionRef("/s/c.jsonl", "c", "/r", None), gate, 2.0)
    remote = SessionRef(remote_key("devbox", "/s/d.jsonl"), "d", "/w", None, "devbox")
    b.remote.asked(remote, Question("r1", "question", (QuestionItem("There?"),), 3.0), 3.0, True)
    assert shown() == {
        "/s/a.jsonl": ("needs_input", ("g1",)),
        "/s/b.jsonl": ("needs_input", ("q1",)),
        "/s/c.jsonl": ("needs_input", ("g1",)),  # its file not read: known from its dialog
        remote.key: ("needs_input", ("r1",)),
    }
    b.dialogs.close(("/run/x.sock", "1"), "answered", 4.0)
    b.dialogs.close(("/run/x.sock", "2"), None, 4.0)
    b.local.apply("/s/b.jsonl", [ToolEnd(4.0, "q1", "question")], 4.0)
    assert shown() == {
        "/s/a.jsonl": ("idle", ()),
        "/s/b.jsonl": ("working", ()),
        remote.key: ("needs_input", ("r1",)),
    }
    b.remote.ended(remote, Question("r1", "question", (QuestionItem("There?"),), 3.0), 5.0, "answered")
    b.local.forget("/s/a.jsonl", 5.0)
    assert shown() == {"/s/b.jsonl": ("working", ())}


# ---- liveness judged only on process lists read after the question was seen ----


def test_a_process_list_read_before_the_question_cannot_abandon_it() -> None:
    """The autostarted app read the table before this pi started: the stale list must not count."""
    b = Board(liveness=True)
    b.local.apply("old", [Header("o", "/elsewhere"), asked("q0", 10.0)], 10.0)
    assert [t.kind for t in b.local.set_processes([], 11.0)] == ["abandoned"]  # an old question, no pi
    out = b.local.apply("f", [Header("s", "/p"), asked("q1", 100.0)], 100.0)  # pi started at 50, unseen
    assert [t.kind for t in out] == ["needs_input"]
    assert b.snapshot(100.0).pending_count == 1
    mark = b.local.mark()
    assert b.local.set_processes([Proc("/p", 50.0)], 101.0, as_of=mark) == []
    assert b.snapshot(101.0).pending_count == 1 and b.snapshot(101.0).sessions


def test_a_read_begun_before_the_question_is_ignored_even_if_it_arrives_later() -> None:
    b = Board(liveness=True)
    b.local.apply("f", [Header("s", "/p")], 1.0)
    early = b.local.mark()  # the probe began reading here …
    b.local.apply("f", [asked("q1", 100.0)], 100.0)  # … then the question was written
    assert b.local.set_processes([], 101.0, as_of=early) == []  # its (empty) list says nothing about q1
    (t,) = b.local.set_processes([], 102.0, as_of=b.local.mark())
    assert t.kind == "abandoned" and t.question.tool_call_id == "q1"


def test_a_list_read_before_the_pi_could_draw_its_question_does_not_abandon_it() -> None:
    """The process table is read at once for a pi not seen asking before; pi shows the dialog a
    moment after it writes the line, so its pane cannot be evidence yet (a resumed session's pi
    was judged gone, its question abandoned, then announced again): neither gone nor alive until
    a list read once it had time to draw it."""
    b = Board(liveness=True)
    b.local.apply("f", [Header("s", "/p"), asked("q1", 100.0)], 100.0)
    assert b.local.set_processes([], 100.03, as_of=b.local.mark()) == []
    assert b.snapshot(100.03).pending_count == 1 and b.snapshot(100.03).sessions[0].alive is None
    (t,) = b.local.set_processes([], 101.5, as_of=b.local.mark())
    assert t.kind == "abandoned" and b.snapshot(101.5).sessions[0].alive is False
    # one written long before it was seen (a file copied in, a folder back): judged at once, so
    # it is abandoned before its settle window ends, never notified
    b.local.apply("g", [Header("t", "/q"), asked("q2", 500.0)], 1000.0)
    (t,) = b.local.set_processes([], 1000.02, as_of=b.local.mark())
    assert t.kind == "abandoned" and t.question.tool_call_id == "q2"


def test_wall_clock_jumps_do_not_matter_only_the_order_of_reads() -> None:
    b = Board(liveness=True)
    b.local.apply("f", [Header("s", "/p"), asked("q1", 5000.0)], 5000.0)
    mark = b.local.mark()
    # the wall clock stepped back an hour between seeing the question and reading the table
    (t,) = b.local.set_processes([], 5000.0 - 3600, as_of=mark)
    assert t.kind == "abandoned"


def test_an_older_read_arriving_after_a_newer_one_is_dropped() -> None:
    b = Board(liveness=True)
    b.local.apply("f", [Header("s", "/p"), asked("q1", 100.0)], 100.0)
    old = b.local.mark()
    b.local.apply("g", [Header("t", "/q")], 101.0)
    new = b.local.mark()
    assert b.local.set_processes([Proc("/p", 50.0)], 102.0, as_of=new) == []
    assert b.local.set_processes([], 103.0, as_of=old) == []  # stale: must not abandon q1


def test_an_abandoned_question_whose_pi_is_seen_again_is_pending_again() -> None:
    b = Board(liveness=True)
    b.local.apply("f", [Header("s", "/p"), asked("q1", 100.0)], 100.0)
    (gone,) = b.local.set_processes([], 101.0)  # a read that missed the pi
    assert gone.kind == "abandoned" and b.snapshot(101.0).pending_count == 0
    (back,) = b.local.set_processes([Proc("/p", 50.0)], 102.0)
    assert back.kind == "needs_input" and not back.initial and back.question.tool_call_id == "q1"
    snap = b.snapshot(102.0)
    assert snap.pending_count == 1 and snap.abandoned == ()
    assert b.local.set_processes([Proc("/p", 50.0)], 103.0) == []  # once


def test_a_pi_started_after_we_saw_the_question_does_not_revive_it() -> None:
    b = Board(liveness=True)
    b.local.apply("f", [Header("s", "/p"), asked("q1", 100.0)], 100.0)
    b.local.set_processes([], 101.0)
    assert b.local.set_processes([Proc("/p", 500.0)], 501.0) == []


def test_a_live_question_with_an_odd_file_time_is_bounded_by_when_we_saw_it() -> None:
    """The file says 1000; we saw it being written at 10_000 while a pi started at 9_000 ran."""
    b = Board(liveness=True)
    b.local.apply("f", [Header("s", "/p"), asked("q1", 1000.0)], 10_000.0)
    b.local.set_processes([Proc("/p", 9_000.0)], 10_001.0)
    assert b.snapshot(10_001.0).pending_count == 1


def test_an_abandoned_question_that_ends_gets_no_second_terminal_transition() -> None:
    b = Board(liveness=True)
    b.local.apply("f", [Header("s", "/p"), asked("q1", 100.0)], 100.0)
    b.local.set_processes([], 101.0)
    assert b.local.apply("f", [ToolEnd(102.0, "q1", "question", judge=lambda q: ("answered", "A"))], 102.0) == []
    assert b.snapshot(102.0).abandoned == ()
    b.local.apply("f", [asked("q2", 103.0)], 103.0)
    b.local.set_processes([], 104.0)
    assert b.local.forget("f", 105.0) == []


# ---- liveness per session: the pis of one folder are told apart ----

RULE = "─" * 40


def uuid7(at: float) -> str:
    """A UUIDv7 session id created at ``at`` (pi's ids carry their creation time)."""
    h = f"{int(at * 1000):012x}"
    return f"{h[:8]}-{h[8:]}-7abc-8def-0123456789ab"


def pane(text: str | None) -> str:
    """A pane of pi: its dialog for ``text`` (options A, B), or just its empty editor."""
    body = [f" {text}", "> 1. A", "  2. B", " ↑↓ navigate • Enter to select • Esc to cancel"] if text else [""]
    return "\n".join([" history", RULE, *body, RULE, "/p"])


def asked_ab(cid: str, text: str, at: float) -> ToolStart:
    args = {"question": text, "options": [{"label": "A"}, {"label": "B"}]}
    return ToolStart(at, cid, "question", extract("question", args, cid, at))


def test_a_killed_asker_is_abandoned_while_its_neighbour_runs() -> None:
    """Two pis in /p started 0.4 s apart (start times cannot tell their sessions apart), both
    asking; their panes can. The asker of "a" is killed: its question is abandoned, the other stays."""
    b = Board(liveness=True)
    b.local.apply("a", [Header(uuid7(50.3), "/p"), asked_ab("qa", "Drop the production database?", 100.0)], 100.0)
    b.local.apply("b", [Header(uuid7(50.7), "/p"), asked_ab("qb", "Drop the staging database?", 101.0)], 101.0)
    pa = Proc("/p", 50.0, 11, None, pane("Drop the production database?"))
    pb = Proc("/p", 50.4, 22, None, pane("Drop the staging database?"))
    assert b.local.set_processes([pa, pb], 102.0) == []
    (gone,) = b.local.set_processes([pb], 103.0)
    assert (gone.kind, gone.session.key) == ("abandoned", "a")
    snap = b.snapshot(103.0)
    alive = {v.ref.key: v.alive for v in snap.sessions}
    assert alive == {"a": False, "b": True} and snap.pending_count == 1
    # the old rule (any pi of the folder started before the question) would have kept it
    assert pb.started <= 100.0


def test_an_idle_neighbour_on_its_own_session_does_not_keep_a_dead_question() -> None:
    b = Board(liveness=True)
    b.local.apply("b", [Header(uuid7(50.7), "/p"), Input(60.0)], 60.0)  # the neighbour's own session
    b.local.apply("a", [Header(uuid7(50.3), "/p"), asked_ab("qa", "Drop it?", 100.0)], 100.0)
    pa, pb = Proc("/p", 50.0, 11, None, pane("Drop it?")), Proc("/p", 50.4, 22, None, pane(None))
    assert b.local.set_processes([pa, pb], 101.0) == []
    (gone,) = b.local.set_processes([pb], 102.0)
    assert gone.kind == "abandoned" and gone.session.key == "a"
    # its pi seen again (an earlier read missed it): pending again
    (back,) = b.local.set_processes([pa, pb], 103.0)
    assert back.kind == "needs_input" and back.session.key == "a"


def test_the_only_pi_that_can_have_a_question_keeps_it_unless_it_is_at_rest() -> None:
    """No false "abandoned": the one candidate's pane may not show the dialog (the pane is too
    small, pi runs other tools of its turn first: its spinner shows): its question stays pending.
    Shown at rest, waiting for a prompt (it resumed the session of a pi gone), it is not asking."""
    b = Board(liveness=True)
    b.local.apply("a", [Header(uuid7(50.3), "/p"), asked_ab("qa", "Drop it?", 100.0)], 100.0)
    working = pane(None).replace(RULE, "── \u280f Working " + RULE, 1)
    for screen in (working, " Drop it?\n> 1. A", None):
        assert b.local.set_processes([Proc("/p", 50.0, 11, None, screen)], 101.0) == []
        assert b.snapshot(101.0).pending_count == 1
    assert b.local.asking_folders() == {"/p"}
    (t,) = b.local.set_processes([Proc("/p", 50.0, 11, None, pane(None))], 102.0)
    assert t.kind == "abandoned" and b.snapshot(102.0).pending_count == 0


def test_a_question_of_a_pi_in_raw_mode_names_its_asker() -> None:
    """The pi the evidence gives a session to, seen with its terminal in raw mode (pi's TUI), is
    the asker its view names for the next question (notified at once); a cooked or unknown
    terminal names none."""
    for raw, want in ((True, (11, 50.0)), (False, None), (None, None)):
        b = Board(liveness=True)
        b.local.apply("a", [Header(uuid7(50.3), "/p"), asked_ab("q1", "First?", 100.0)], 100.0)
        b.local.set_processes([Proc("/p", 50.0, 11, None, pane("First?"), None, None, raw)], 101.0)
        *_, t = b.local.apply("a", [ToolEnd(101.5, "q1", "question"), asked_ab("q2", "Second?", 102.0)], 102.0)
        assert (t.kind, t.question.tool_call_id) == ("needs_input", "q2"), raw
        assert b.local.asker("a") == want and b.snapshot(102.0).sessions[0].asker == want, raw


def test_a_snapshot_merges_the_local_remote_and_dialog_sources() -> None:
    """Each source is fed on its own; the snapshot shows them merged, and only what changed is
    built again (a view that did not change is the same object)."""
    b = Board(liveness=False)
    b.local.apply("/s/a.jsonl", [Header("id-a", "/p"), asked("q1")], 100.0)
    b.local.apply("/s/quiet.jsonl", [Header("id-q", "/p")], 100.0)
    gate = Question("gate-1", "permission", (QuestionItem("Allow rm -rf?"),), 101.0)
    early = Question("gate-2", "permission", (QuestionItem("Trust this folder?"),), 101.0)
    (opened,) = b.dialogs.open(("/run/x.sock", "1"), SessionRef("/s/a.jsonl", None, "/p", None), gate, 101.0)
    assert opened.session.id == "id-a"  # named as its file says
    b.dialogs.open(("/run/y.sock", "1"), SessionRef("pid:7", None, "/p", None), early, 101.0)
    ref = SessionRef(remote_key("devbox", "/s/r.jsonl"), "id-r", "/w", None, "devbox")
    b.remote.asked(ref, Question("r1", "question", (QuestionItem("Deploy?"),), 102.0), 102.0, False)
    views = {v.ref.key: v for v in b.snapshot(103.0).sessions}
    assert [q.tool_call_id for q in views["/s/a.jsonl"].pending] == ["q1", "gate-1"]
    assert [q.tool_call_id for q in views["pid:7"].pending] == ["gate-2"]  # its file not read yet
    assert [q.tool_call_id for q in views[ref.key].pending] == ["r1"]
    quiet = views["/s/quiet.jsonl"]

    (done,) = b.dialogs.close(("/run/y.sock", "1"), "answered", 104.0)
    assert done.kind == "resolved"
    b.remote.ended(ref, Question("r1", "question", (QuestionItem("Deploy?"),), 102.0), 104.0, "answered")
    views = {v.ref.key: v for v in b.snapshot(105.0).sessions}
    assert set(views) == {"/s/a.jsonl", "/s/quiet.jsonl"} and views["/s/quiet.jsonl"] is quiet
    b.dialogs.close(("/run/x.sock", "1"), None, 106.0)
    (view,) = [v for v in b.snapshot(107.0).sessions if v.ref.key == "/s/a.jsonl"]
    assert [q.tool_call_id for q in view.pending] == ["q1"] and b.view("/s/a.jsonl") == view


def test_clearing_an_abandoned_question_goes_to_the_source_that_has_it() -> None:
    b = Board(liveness=False)
    ref = SessionRef(remote_key("devbox", "/s/r.jsonl"), "id-r", "/w", None, "devbox")
    q = Question("r1", "question", (QuestionItem("Deploy?"),), 102.0)
    b.remote.asked(ref, q, 102.0, False)
    b.remote.ended(ref, q, 103.0)  # its host says: abandoned
    assert [q.tool_call_id for _, q in b.snapshot(104.0).abandoned] == ["r1"]
    assert b.clear_abandoned(ref.key) and b.snapshot(105.0).abandoned == ()
    assert not b.clear_abandoned("/s/none.jsonl")


def test_a_pi_started_after_the_last_process_list_is_not_called_gone_when_it_asks() -> None:
    """A list read before a session asked cannot say its pi is gone (a pi that started since):
    its liveness is not known (None, never False) until a list read after the question, and that
    list changing who is alive is a change of the snapshot even without a transition."""
    b = Board(liveness=True)
    b.local.apply("a", [Header("a", "/p"), asked("q1", 100.0)], 100.0)
    assert b.local.set_processes([Proc("/p", 50.0, pid=1)], 101.0) == []
    assert b.local.take_alive_changed()  # (a: alive now)
    assert not b.local.take_alive_changed()
    # pi 2 starts in /q after that read, and asks
    out = b.local.apply("b", [Header("b", "/q"), asked("q2", 200.0)], 200.0)
    assert [t.kind for t in out] == ["needs_input"]
    view = next(v for v in b.snapshot(200.0).sessions if v.ref.key == "b")
    assert view.alive is None and len(view.pending) == 1
    assert b.local.set_processes([Proc("/p", 50.0, pid=1), Proc("/q", 150.0, pid=2)], 201.0) == []
    assert b.local.take_alive_changed()
    view = next(v for v in b.snapshot(201.0).sessions if v.ref.key == "b")
    assert view.alive is True
    # and a list read after the question without its pi: gone
    (gone,) = b.local.set_processes([Proc("/p", 50.0, pid=1)], 202.0)
    assert gone.kind == "abandoned" and b.local.take_alive_changed()
    assert next(v for v in b.snapshot(202.0).sessions if v.ref.key == "b").alive is False


def test_the_first_question_of_a_pi_not_seen_yet_gets_its_asker_from_the_next_list() -> None:
    """A new pi's session appears with its first question: no list has paired it yet (no
    asker). The list read then, its terminal raw, names the asker in the session's view: a
    change of the snapshot (take_alive_changed), so the notifier can raise it without the settle window."""
    b = Board(liveness=True)
    (t,) = b.local.apply("a", [Header(uuid7(50.3), "/p"), asked_ab("q1", "First?", 100.0)], 100.0)
    assert t.kind == "needs_input" and b.local.asker("a") is None
    assert b.snapshot(100.0).sessions[0].asker is None
    b.local.take_alive_changed()
    b.local.set_processes([Proc("/p", 50.0, 11, None, pane("First?"), None, None, True)], 100.1)
    assert b.local.take_alive_changed()
    view = b.snapshot(100.1).sessions[0]
    assert view.asker == (11, 50.0) and view.alive is True
    (r,) = b.local.apply("a", [ToolEnd(101.0, "q1", "question", judge=lambda q: ("answered", "A"))], 101.0)
    assert r.kind == "resolved" and b.snapshot(101.0).sessions[0].asker is None  # (asking nothing)


def test_an_asker_is_forgotten_once_a_list_no_longer_has_a_pi_in_its_folder() -> None:
    """The pi that waited for a human quits; a list read then has no pi in that folder: the
    session's next question names no asker (a ``pi -p`` appending to the file is not notified at once)."""
    b = Board(liveness=True)
    b.local.apply("a", [Header(uuid7(50.3), "/p"), asked_ab("q1", "First?", 100.0)], 100.0)
    b.local.set_processes([Proc("/p", 50.0, 11, None, pane("First?"), None, None, True)], 100.1)
    assert b.snapshot(100.1).sessions[0].asker == (11, 50.0)
    b.local.set_processes([Proc("/elsewhere", 60.0, 12, None, None, None, None, True)], 101.0)
    *_, t = b.local.apply("a", [ToolEnd(101.5, "q1", "question"), asked_ab("q2", "Second?", 102.0)], 102.0)
    assert t.kind == "needs_input" and b.snapshot(102.0).sessions[0].asker is None


def test_three_pis_asking_the_same_question_the_one_killed_is_abandoned() -> None:
    """Three pis in /p ask the same question (their panes cannot tell them apart), the third
    started after the first two asked. A list read while all ran paired each with its own session
    (by times); one is killed: its question is abandoned at the next list, the others stay theirs.
    Before, the two live pis could each have been the killed one's (a pi can start a new session),
    so its question stayed "needs answer" for ever."""
    same = "Should we drop the table?"
    for killed in ("a", "b", "c"):
        b = Board(liveness=True)
        b.local.apply("a", [Header(uuid7(50.3), "/p"), asked_ab("qa", same, 100.0)], 100.0)
        b.local.apply("b", [Header(uuid7(60.3), "/p"), asked_ab("qb", same, 110.0)], 110.0)
        b.local.apply("c", [Header(uuid7(200.3), "/p"), asked_ab("qc", same, 210.0)], 210.0)
        procs = {k: Proc("/p", at, pid, None, pane(same), None, None, True)
                 for k, at, pid in (("a", 50.0, 11), ("b", 60.0, 22), ("c", 200.0, 33))}
        assert b.local.set_processes(list(procs.values()), 211.0) == []
        left = [p for k, p in procs.items() if k != killed]
        (gone,) = b.local.set_processes(left, 212.0)
        assert (gone.kind, gone.session.key) == ("abandoned", killed)
        alive = {v.ref.key: v.alive for v in b.snapshot(212.0).sessions}
        assert alive == {k: k != killed for k in "abc"}
        assert b.local.set_processes(left, 213.0) == []  # (once, not per list)


def test_a_pairing_known_before_the_question_is_no_evidence_for_it() -> None:
    """What a list read before a question was seen paired is not carried to that question: a pi
    that asks again in a session another pi resumed meanwhile is judged afresh."""
    same = "Again?"
    b = Board(liveness=True)
    b.local.apply("a", [Header(uuid7(50.3), "/p"), asked_ab("q1", same, 100.0)], 100.0)
    pa = Proc("/p", 50.0, 11, None, pane(same), None, None, True)
    assert b.local.set_processes([pa], 101.0) == []
    b.local.apply("a", [ToolEnd(102.0, "q1", "question", judge=lambda q: ("answered", "A"))], 102.0)
    b.local.apply("a", [asked_ab("q2", same, 300.0)], 300.0)  # asked by a pi that resumed it
    resumer = Proc("/p", 250.0, 44, ("-c",), pane(same), None, None, True)
    assert b.local.set_processes([resumer], 301.0) == []  # (its question: kept, not abandoned)
    assert b.snapshot(301.0).pending_count == 1


def test_a_pi_seen_with_a_session_is_known_again_after_the_wall_clock_stepped() -> None:
    """The start time of one process read after the wall clock stepped (NTP, a resume from
    suspend) differs by a fraction of a second: still that pi, its question still pending."""
    same = "Keep it?"
    b = Board(liveness=True)
    b.local.apply("a", [Header(uuid7(50.3), "/p"), asked_ab("qa", same, 100.0)], 100.0)
    b.local.apply("c", [Header(uuid7(200.3), "/p"), asked_ab("qc", same, 210.0)], 210.0)
    pa = Proc("/p", 50.0, 11, None, pane(same), None, None, True)
    pc = Proc("/p", 200.0, 33, None, pane(same), None, None, True)
    assert b.local.set_processes([pa, pc], 211.0) == []
    for step in (0.1, 0.3, -0.4, 0.9):
        moved = [Proc("/p", p.started + step, p.pid, None, pane(same), None, None, True) for p in (pa, pc)]
        assert b.local.set_processes(moved, 212.0) == [], step
    assert b.snapshot(212.0).pending_count == 2


def test_a_question_id_used_again_after_its_question_ended_is_judged_afresh() -> None:
    """Some providers number tool calls from 0 in every turn: ``call_0`` answered, its pi quit,
    ``pi -c`` resumed the session and asks ``call_0`` again. What was seen of the first pi says
    nothing of the second question."""
    same = "Again?"
    b = Board(liveness=True)
    b.local.apply("a", [Header(uuid7(50.3), "/p"), asked_ab("call_0", same, 100.0)], 100.0)
    assert b.local.set_processes([Proc("/p", 50.0, 11, None, pane(same), None, None, True)], 101.0) == []
    b.local.apply("a", [ToolEnd(102.0, "call_0", "question", judge=lambda q: ("answered", "A"))], 102.0)
    b.local.apply("a", [asked_ab("call_0", same, 300.0)], 300.0)
    resumer = Proc("/p", 250.0, 44, ("-c",), pane(same), None, None, True)
    assert b.local.set_processes([resumer], 301.0) == []
    assert b.snapshot(301.0).pending_count == 1


# ---- a pi recorded as a session's owner only on what it shows (found by a review) ----


def _kinds(out: list[Transition]) -> list[tuple[str, str]]:
    return [(t.kind, t.session.key) for t in out]


def test_a_read_missing_the_asker_once_does_not_hand_its_question_to_a_neighbour() -> None:
    """A (pid 11) asks in session a. One process read misses A (psutil error on its cwd, a
    process-table race): the only pi left in /p, X (pid 22, idle, no session on the board, no
    pane), is a's sole candidate and is recorded as a's owner. Later reads see A again; then X
    quits. A still runs and still asks: its question must stay pending."""
    b = Board(liveness=True)
    b.local.apply("a", [Header(uuid7(50.3), "/p"), asked_ab("qa", "Ship it?", 100.0)], 100.0)
    A = Proc("/p", 50.0, 11, None, None, None, None, True)
    X = Proc("/p", 40.0, 22, None, None, None, None, True)
    b.local.set_processes([X], 101.0)  # (the read that missed A: a kept alive by X, as before)
    assert b.local.set_processes([A, X], 104.0) == []
    out = b.local.set_processes([A], 107.0)  # X quits; A runs, in its dialog
    assert out == [], _kinds(out)
    assert b.snapshot(107.0).pending_count == 1



def test_a_resumed_asker_outside_tmux_keeps_its_question_when_an_idle_neighbour_quits() -> None:
    """Session a was created at 20.3 by a pi since quit; A = `pi -c` (started 60, pi 1.6 outside
    tmux: no argv, no pane) resumed it and asks. X (started 10, in tmux, its pane showing its
    empty input box, no session written yet) idles in /p. Every read has both. The best pairing
    prefers X (not resumed, beats A's resumed+unseen penalty even with its idle editor counting
    against it), so X is recorded as a's owner. X's user closes it: A still asks."""
    b = Board(liveness=True)
    b.local.apply("a", [Header(uuid7(20.3), "/p"), Input(61.0), asked_ab("qa", "Ship it?", 100.0)], 100.0)
    A = Proc("/p", 60.0, 11, None, None, None, None, True)
    X = Proc("/p", 10.0, 22, None, pane(None), None, None, True)
    assert b.local.set_processes([A, X], 101.0) == []
    out = b.local.set_processes([A], 104.0)
    assert out == [], _kinds(out)
    assert b.snapshot(104.0).pending_count == 1


def test_a_resumed_asker_whose_pane_capture_failed_once_keeps_its_question() -> None:
    """As above but A is in tmux: one capture of its pane failed (None), so that read preferred
    the idle neighbour X and recorded it; every later read shows A's pane with the question."""
    b = Board(liveness=True)
    b.local.apply("a", [Header(uuid7(20.3), "/p"), Input(61.0), asked_ab("qa", "Ship it?", 100.0)], 100.0)
    A0 = Proc("/p", 60.0, 11, None, None, None, None, True)  # (capture failed)
    A = Proc("/p", 60.0, 11, None, pane("Ship it?"), None, None, True)
    X = Proc("/p", 10.0, 22, None, pane(None), None, None, True)
    assert b.local.set_processes([A0, X], 101.0) == []
    assert b.local.set_processes([A, X], 104.0) == []
    # the view names its asker: it should be A (pid 11), the pi whose pane shows the dialog
    view = b.snapshot(104.0).sessions[0]
    assert view.asker == (11, 60.0), view.asker
    out = b.local.set_processes([A], 107.0)
    assert out == [], _kinds(out)



def test_a_pi_wrongly_recorded_for_another_session_still_keeps_its_own_question() -> None:
    """From scenario 1: X is recorded as a's owner. X then writes its own session b and asks in
    it; its pane shows that dialog. b's question must be pending (X runs and asks it)."""
    b = Board(liveness=True)
    b.local.apply("a", [Header(uuid7(50.3), "/p"), asked_ab("qa", "Ship it?", 100.0)], 100.0)
    X = Proc("/p", 40.0, 22, None, None, None, None, True)
    b.local.set_processes([X], 101.0)  # (missed A)
    b.local.apply("b", [Header(uuid7(40.3), "/p"), Input(149.0), asked_ab("qb", "Deploy?", 150.0)], 150.0)
    Ap = Proc("/p", 50.0, 11, None, pane("Ship it?"), None, None, True)
    Xp = Proc("/p", 40.0, 22, None, pane("Deploy?"), None, None, True)
    out = b.local.set_processes([Ap, Xp], 151.0)
    assert out == [], _kinds(out)
    assert b.snapshot(151.0).pending_count == 2


def test_a_companion_announcing_its_own_session_does_not_orphan_the_real_askers() -> None:
    """X wrongly recorded for a (scenario 1); X's companion extension then announces X's own
    session b. A (no companion) runs and asks a: a must stay pending."""
    b = Board(liveness=True)
    b.local.apply("a", [Header(uuid7(50.3), "/p"), asked_ab("qa", "Ship it?", 100.0)], 100.0)
    b.local.apply("b", [Header(uuid7(40.3), "/p"), Input(45.0)], 45.0)
    A = Proc("/p", 50.0, 11, None, None, None, None, True)
    X = Proc("/p", 40.0, 22, None, None, None, None, True)
    # (missed A; b idle and a asking: X prefers a? both R^3, a is ambiguous then -> not recorded)
    b.local.set_processes([X], 101.0)
    Xc = Proc("/p", 40.0, 22, None, None, "b", None, True)
    out = b.local.set_processes([A, Xc], 104.0)
    assert out == [], _kinds(out)


def test_companion_variant_where_b_is_not_on_the_board_at_the_missed_read() -> None:
    b = Board(liveness=True)
    b.local.apply("a", [Header(uuid7(50.3), "/p"), asked_ab("qa", "Ship it?", 100.0)], 100.0)
    A = Proc("/p", 50.0, 11, None, None, None, None, True)
    X = Proc("/p", 40.0, 22, None, None, None, None, True)
    b.local.set_processes([X], 101.0)  # (missed A: X recorded)
    b.local.apply("b", [Header(uuid7(40.3), "/p"), Input(102.0)], 102.0)
    Xc = Proc("/p", 40.0, 22, None, None, "b", None, True)
    out = b.local.set_processes([A, Xc], 104.0)
    assert out == [], _kinds(out)



def test_a_dismissed_question_whose_id_is_asked_again_after_pi_c_is_judged_afresh() -> None:
    """A asks call_0 (a provider numbering calls from 0), is killed: abandoned; the user dismisses
    it. `pi -c` (B) resumes the session, the user types, and B asks call_0 again, its pane
    showing it. B is the only pi and asks: pending, not abandoned."""
    b = Board(liveness=True)
    b.local.apply("a", [Header(uuid7(50.3), "/p"), asked_ab("call_0", "Again?", 100.0)], 100.0)
    assert b.local.set_processes([Proc("/p", 50.0, 11, None, pane("Again?"), None, None, True)], 101.0) == []
    (gone,) = b.local.set_processes([], 104.0)
    assert gone.kind == "abandoned"
    assert b.clear_abandoned("a")
    b.local.apply("a", [Input(290.0), asked_ab("call_0", "Again?", 300.0)], 300.0)
    resumer = Proc("/p", 250.0, 44, ("-c",), pane("Again?"), None, None, True)
    out = b.local.set_processes([resumer], 301.0)
    assert out == [], _kinds(out)
    assert b.snapshot(301.0).pending_count == 1



def test_killed_asker_then_pi_c_does_not_revive_and_new_turn_clears() -> None:
    b = Board(liveness=True)
    b.local.apply("a", [Header(uuid7(50.3), "/p"), asked_ab("q1", "Same?", 100.0)], 100.0)
    b.local.apply("n", [Header(uuid7(60.3), "/p"), asked_ab("qn", "Same?", 110.0)], 110.0)
    A = Proc("/p", 50.0, 11, None, pane("Same?"), None, None, True)
    N = Proc("/p", 60.0, 22, None, pane("Same?"), None, None, True)
    assert b.local.set_processes([A, N], 111.0) == []
    (gone,) = b.local.set_processes([N], 112.0)
    assert _kinds([gone]) == [("abandoned", "a")]
    B = Proc("/p", 300.0, 44, ("-c",), pane(None), None, None, True)
    assert b.local.set_processes([N, B], 301.0) == []  # (the resumer does not revive it)
    out = b.local.apply("a", [Input(302.0), asked_ab("q2", "Other?", 303.0)], 303.0)
    assert [t.kind for t in out] == ["needs_input"]
    B2 = Proc("/p", 300.0, 44, ("-c",), pane("Other?"), None, None, True)
    assert b.local.set_processes([N, B2], 304.0) == []
    assert b.snapshot(304.0).pending_count == 2


def test_the_pi_that_showed_it_has_a_session_is_in_its_view() -> None:
    """What the board learned of a session's pi (paired with it in every reading of a list read
    after it asked, its pane showing the question) is in the view, for answer and goto to use."""
    b = Board(liveness=True)
    b.local.apply("a", [Header(uuid7(50.3), "/p"), asked_ab("qa", "Drop it?", 100.0)], 100.0)
    assert b.snapshot(100.0).sessions[0].owner is None
    b.local.set_processes([Proc("/p", 50.0, 11, None, pane("Drop it?"))], 101.0)
    assert b.snapshot(101.0).sessions[0].owner == (11, 50.0)
    b.local.apply("a", [ToolEnd(102.0, "qa", "question")], 102.0)
    assert b.snapshot(102.0).sessions[0].owner is None


def test_a_tool_of_the_turn_run_before_the_question_excuses_a_pane_with_no_dialog() -> None:
    """A batch [bash, question] run one by one (pi 1.6.0's question tool asks for that): the
    question is pending while bash runs, and its pi's pane may show no dialog (an extension may
    hide the spinner); such a session is not judged by a pane at rest. A batch [question, bash]
    shows the dialog first: there a pi at rest (an idle neighbour) is not its pi."""
    at_rest = pane(None)
    for order, busy in ((("b1", "qa"), True), (("qa", "b1"), False)):
        b = Board(liveness=True)
        starts = [asked_ab(c, "Drop it?", 100.0) if c == "qa" else ToolStart(100.0, c, "bash") for c in order]
        b.local.apply("a", [Header(uuid7(50.3), "/p"), *starts], 100.0)
        b.local.set_processes([Proc("/p", 50.0, 11, None, at_rest)], 101.0)
        assert b.snapshot(101.0).pending_count == (1 if busy else 0), order
