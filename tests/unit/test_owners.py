"""Pairing sessions with the pi processes of their folder (notifier.core.owners), from literal
process and session data: which evidence tells neighbours apart, what stays ambiguous, and what
liveness keeps."""

from __future__ import annotations

import random
from dataclasses import replace

from hypothesis import given
from hypothesis import strategies as st

from notifier.core.owners import START_SLACK_S, Owners, Proc, Wanted, at_rest, bind, created_at, idle_editor, shows

RULE = "─" * 60


def dialog(text: str, options: list[str], history: str = "") -> str:
    """A pane as pi 1.6.0's question dialog draws it (the transcript above, the dialog between
    the rules, the footer below)."""
    rows = [f"{'>' if i == 0 else ' '} {i + 1}. {o}" for i, o in enumerate(options)]
    return "\n".join(
        [history, f" question {text}", f"   Options: {', '.join(options)}", RULE, f" {text}", "", *rows,
         f"  {len(options) + 1}. Type something.", "", " ↑↓ navigate • Enter to select • Esc to cancel",
         RULE, "/p", "↑10 ↓5 0.0%/128k (auto)      mock-model"]
    )  # fmt: skip


def idle(history: str = "") -> str:
    return "\n".join([history, RULE, "", RULE, "/p", "mock-model"])


def draft(history: str = "") -> str:
    """pi at rest with a draft the user has not sent in its input box (as pi 1.6 and 0.73 draw it:
    from the first column, wrapped at the width)."""
    return "\n".join([history, RULE, "a draft I am still writing and a second line that wraps", "around", RULE, "/p"])


# Two pis started 0.4 s apart (each creates its session ~0.3 s after it starts): the start times
# cannot tell whose session is whose.
A_START, B_START = 1000.0, 1000.4
PROD = "Drop the production database?"
STAGING = "Drop the production database? (the staging copy)"


def a(screen: str | None = None, session: str | None = None) -> Proc:
    return Proc("/p", A_START, 11, None, screen, session)


def b(screen: str | None = None, started: float = B_START, session: str | None = None) -> Proc:
    return Proc("/p", started, 22, None, screen, session)


def asking(key: str, text: str, options: list[str], created: float, at: float = 1100.0) -> Wanted:
    return Wanted(key, "/p", at, None, text, tuple(options), None, created)


def owners_of(o: Owners) -> dict[str, int]:
    return {k: p.pid for k, p in o.owners.items()}


def test_created_at_from_the_uuid7_id_or_the_file_name() -> None:
    sid = "01a23322-278d-739d-8b73-4d9e989ad382"
    name = f"/s/--p--/2026-12-01T19-43-26-093Z_{sid}.jsonl"
    assert created_at(name, sid) == created_at(name, None) == 1796154206.093
    assert created_at("/s/custom.jsonl", sid) == 1796154206.093  # --session custom.jsonl
    assert created_at("/s/2026-12-01T19-43-26-093Z_my-id.jsonl", "my-id") == 1796154206.093  # --session-id
    assert created_at("/s/s.jsonl", "6f1c9d2e-0c7a-4d55-8b0e-3a8e5e3c2f10") is None  # uuid4: no time
    assert created_at("/s/s.jsonl", None) is None


def test_the_pane_shows_a_question_only_exactly() -> None:
    screen = dialog(PROD, ["Yes", "No"])
    assert shows(screen, PROD, ["Yes", "No"])
    assert not shows(screen, PROD, ["Yes", "Later"])  # other options
    assert not shows(dialog(STAGING, ["Yes", "No"]), PROD, ["Yes", "No"])  # same beginning
    assert not shows(screen, STAGING, ["Yes", "No"])
    assert not shows(screen, "Drop the production", [])  # a prefix is not the question
    # only in the transcript (an answered question above the editor): not shown
    assert not shows(idle(f" question {PROD}\n   Options: 1. Yes, 2. No\n ✓ User selected: 1. Yes"), PROD, ["Yes"])
    # a question wrapped over lines in the dialog is shown
    long = "Which of these databases should we drop now that the migration to the new cluster is done?"
    wrapped = dialog(long, ["users", "orders"]).replace(f" {long}\n", " Which of these databases should we drop\n now that the migration to the new cluster is done?\n", 1)
    assert shows(wrapped, long, ["users", "orders"])
    # only pi's own input box says no dialog is open: empty, or a draft (from the first column)
    assert idle_editor(idle(f" question {PROD}")) and not idle_editor(screen) and not idle_editor("no rules")
    assert idle_editor(draft())
    assert not idle_editor(idle().replace(f"{RULE}\n\n{RULE}", f"{RULE}\n a line that starts with a space\n{RULE}"))
    # pi 1.6 at work (a tool running): its indicator sits in the rule above the input box
    working = idle(" bash: sleep 300\n $ sleep 300\n Elapsed 14.0s").replace(RULE, "── ⠙ Working " + RULE, 1)
    assert idle_editor(working) and idle_editor(working.replace(f"{RULE}\n\n", f"{RULE}\na steer typed\n", 1))
    assert not idle_editor(working.replace(f"{RULE}\n\n", f"{RULE}\n a dialog's title\n", 1))
    # every dialog as pi 1.6 draws it (captured): a line indented, whatever starts in the first column
    for box in (
        [" Which database should we use?", "> 1. PostgreSQL", "  2. SQLite", " ↑↓ navigate • Enter to select • Esc to cancel"],
        ["", " K42 your name?", "", "> typed name", "", " enter submit  escape/ctrl+c cancel", ""],
        ["  Task", " Which task are we planning now?", "❯ 1. Bug fix", "     about bug fix", "  4. Type something."],
    ):  # (question.ts; pi's input dialog; rpiv-ask-user-question)
        assert not idle_editor("\n".join([RULE, *box, RULE, "/p", "mock-model"])), box


def test_look_alike_dialogs_are_told_apart_by_their_panes() -> None:
    sa = asking("A.jsonl", PROD, ["Yes", "No"], A_START + 0.3)
    sb = asking("B.jsonl", STAGING, ["Yes", "No"], B_START + 0.3, at=1101.0)
    pa, pb = a(dialog(PROD, ["Yes", "No"])), b(dialog(STAGING, ["Yes", "No"]))
    o = bind([sa, sb], [pa, pb])
    assert owners_of(o) == {"A.jsonl": 11, "B.jsonl": 22} and "A.jsonl" in o.living and "B.jsonl" in o.living
    # the same text with other options is a look-alike too
    sb2 = asking("B.jsonl", PROD, ["Drop it", "Keep it"], B_START + 0.3, at=1101.0)
    o = bind([sa, sb2], [pa, b(dialog(PROD, ["Drop it", "Keep it"]))])
    assert owners_of(o) == {"A.jsonl": 11, "B.jsonl": 22}
    # one pane unknown (not in tmux): the other's exact screen still decides
    o = bind([sa, sb], [pa, b(None)])
    assert owners_of(o) == {"A.jsonl": 11, "B.jsonl": 22}


def test_identical_dialogs_or_no_evidence_stay_ambiguous() -> None:
    sa = asking("A.jsonl", PROD, ["Yes", "No"], A_START + 0.3)
    sb = asking("B.jsonl", PROD, ["Yes", "No"], B_START + 0.3, at=1101.0)
    same = dialog(PROD, ["Yes", "No"])
    for procs in ([a(same), b(same)], [a(None), b(None)]):
        o = bind([sa, sb], procs)
        assert o.owners == {}
        assert {p.pid for p in o.ambiguous.get("A.jsonl", ())} == {11, 22} == {p.pid for p in o.ambiguous.get("B.jsonl", ())}
        assert "A.jsonl" in o.living and "B.jsonl" in o.living  # both pis run: both questions are live


def test_start_times_tell_pis_started_seconds_apart() -> None:
    # B started 2 s after A: A's session was created before B existed
    sa = asking("A.jsonl", PROD, ["Yes", "No"], A_START + 0.3)
    sb = asking("B.jsonl", PROD, ["Yes", "No"], A_START + 2.3, at=1101.0)
    later = b(None, started=A_START + 2.0)
    o = bind([sa, sb], [a(None), later])
    assert owners_of(o) == {"A.jsonl": 11, "B.jsonl": 22}
    # A killed: B has its own session, A's question is nobody's
    o = bind([sa, sb], [later])
    assert owners_of(o) == {"B.jsonl": 22} and "A.jsonl" not in o.living


def test_a_killed_asker_is_not_kept_alive_by_its_neighbour() -> None:
    sa = asking("A.jsonl", PROD, ["Yes", "No"], A_START + 0.3)
    # the neighbour asks something else
    sb = asking("B.jsonl", "Which region?", ["eu", "us"], B_START + 0.3, at=1101.0)
    o = bind([sa, sb], [b(dialog("Which region?", ["eu", "us"]))])
    assert "A.jsonl" not in o.living and owners_of(o) == {"B.jsonl": 22}
    # the neighbour is idle on its own session (written before A asked), its pane shows no dialog
    sb_idle = Wanted("B.jsonl", "/p", 1050.0, None, None, (), None, B_START + 0.3)
    o = bind([sa, sb_idle], [b(idle())])
    assert "A.jsonl" not in o.living and owners_of(o) == {"B.jsonl": 22}
    # ... a draft in its input box (typed, not sent): no dialog either (it kept A's question,
    # located at B: 5 of 5, and a run started after the kill announced it)
    o = bind([sa, sb_idle], [b(draft())])
    assert "A.jsonl" not in o.living and owners_of(o) == {"B.jsonl": 22}
    # ... not in tmux: nothing tells, and the question is kept (no missed question)
    o = bind([sa, sb_idle], [b(None)])
    assert "A.jsonl" in o.living


# pi 0.73.1 at work: its spinner on a line of its own above the rule over the empty input box
LEGACY_WORKING = "\n".join([" $ sleep 300", " Elapsed 1.1s", " \u2807 Working...", RULE, "", RULE, "/p", "mock-model"])


def test_an_idle_neighbour_without_a_session_never_keeps_a_killed_askers_question() -> None:
    """Found live: A asks; B started before the question and was never prompted (no session file
    of its own); C, started just after, asks the very same question. A killed: B's pane shows pi at
    rest, so B has no question; C's dialog is its own session's. A's question is nobody's, and
    C's session is C's (never located at B)."""
    sa = asking("A.jsonl", PROD, ["Yes", "No"], A_START + 0.3, at=1100.0)
    c_start = 1100.0 + START_SLACK_S / 2
    sc = asking("C.jsonl", PROD, ["Yes", "No"], c_start + 0.3, at=1104.0)
    pb, pc = b(idle()), Proc("/p", c_start, 33, None, dialog(PROD, ["Yes", "No"]))
    o = bind([sa, sc], [pb, pc])
    assert "A.jsonl" not in o.living and owners_of(o) == {"C.jsonl": 33} and o.ambiguous == {}
    # B at work instead (a tool of its turn runs before a question): it may be A's, kept
    o = bind([sa, sc], [b(working()), pc])
    assert "A.jsonl" in o.living


def working(history: str = "") -> str:
    """A pane as pi 1.6.0 draws it while a tool runs: its indicator in the rule above the empty box."""
    return idle(history).replace(RULE, f"── ⠙ Working {RULE}", 1)


def test_a_killed_asker_among_two_working_neighbours_is_nobodys() -> None:
    """A asked; B (started with A) and C (started just after the question, within the start-time
    slack) run a tool on sessions of their own, written since. A killed: its question is nobody's,
    and B's and C's sessions are theirs."""
    sa = asking("A.jsonl", PROD, ["Yes", "No"], A_START + 0.3, at=1100.0)
    sb = Wanted("B.jsonl", "/p", 1130.0, None, None, (), None, B_START + 0.3)
    c_start = 1100.0 + START_SLACK_S / 2
    sc = Wanted("C.jsonl", "/p", 1130.0, None, None, (), None, c_start + 0.3)
    pc = Proc("/p", c_start, 33, None, working(" $ sleep 300"))
    pb = b(working(" $ sleep 300"))
    o = bind([sa, sb, sc], [pb, pc])
    assert "A.jsonl" not in o.living and o.ambiguous.get("A.jsonl", ()) == ()
    assert owners_of(o) == {"B.jsonl": 22, "C.jsonl": 33}
    # A alive, its dialog on screen: its question is A's, never a neighbour's
    o = bind([sa, sb, sc], [a(dialog(PROD, ["Yes", "No"])), pb, pc])
    assert owners_of(o) == {"A.jsonl": 11, "B.jsonl": 22, "C.jsonl": 33}


def test_a_pending_session_with_one_candidate_stays_alive_unless_that_pi_is_at_rest() -> None:
    """No missed question: the one candidate keeps it whatever its pane shows (no pane, a garble,
    a dialog, pi at work), except pi at rest waiting for a prompt (its input box empty, no spinner)
    where nothing else of the session's turn runs (it would show the dialog) and nothing exact
    says it is that pi's."""
    s = asking("A.jsonl", PROD, ["Yes", "No"], A_START + 0.3)
    for screen in (None, working(), LEGACY_WORKING, "garbled", dialog(PROD, ["Yes", "No"])):
        o = bind([s], [a(screen)])
        assert "A.jsonl" in o.living and owners_of(o) == {"A.jsonl": 11}, screen
    assert at_rest(idle()) and at_rest(draft()) and not at_rest(working()) and not at_rest(LEGACY_WORKING)
    o = bind([s], [a(idle())])
    assert "A.jsonl" not in o.living and o.owners == {}
    # a dialog drawn wholly from the first column reads as pi's own box: showing the question, it is
    # never pi at rest
    flat = "\n".join([RULE, PROD, "> 1. Yes", "2. No", "enter select", RULE, "/p"])
    assert at_rest(flat) and owners_of(bind([s], [a(flat)])) == {"A.jsonl": 11}
    # other tools of its turn run first (a sequential batch): an extension may hide the spinner
    o = bind([replace(s, busy=True)], [a(idle())])
    assert owners_of(o) == {"A.jsonl": 11}
    # exact evidence is not overruled by the look of a pane
    assert owners_of(bind([s], [a(idle(), session="A.jsonl")])) == {"A.jsonl": 11}  # (announced)
    assert owners_of(bind([replace(s, owner=(11, A_START))], [a(idle())])) == {"A.jsonl": 11}
    # a pi started after the question was asked did not ask it
    o = bind([s], [Proc("/p", 1100.0 + START_SLACK_S + 1, 33)])
    assert "A.jsonl" not in o.living and o.owners == {}


def test_a_resumed_session_needs_evidence() -> None:
    old = asking("old.jsonl", PROD, ["Yes", "No"], 500.0)  # created long before the pi started
    shown = a(dialog(PROD, ["Yes", "No"]))
    assert owners_of(bind([old], [shown])) == {"old.jsonl": 11}  # its pane shows the question
    assert "old.jsonl" not in bind([old], [a(idle())]).living  # its pane shows something else
    assert "old.jsonl" not in bind([old], [Proc("/p", A_START, 11, ("300",))]).living  # its arguments
    assert owners_of(bind([old], [Proc("/p", A_START, 11, ("-c",))])) == {"old.jsonl": 11}
    named = Proc("/p", A_START, 11, ("--session", "old.jsonl"))
    assert owners_of(bind([old], [named])) == {"old.jsonl": 11}
    # nothing can be seen of it (pi 1.6 outside tmux): it may have resumed it, the question is kept
    assert "old.jsonl" in bind([old], [a(None)]).living
    # ... but a pi with a session of its own is on that one
    own = Wanted("own.jsonl", "/p", 1050.0, None, None, (), None, A_START + 0.3)
    o = bind([old, own], [a(None)])
    assert "old.jsonl" not in o.living and owners_of(o) == {"own.jsonl": 11}


def test_what_the_companion_announced_is_exact() -> None:
    sa = asking("A.jsonl", PROD, ["Yes", "No"], A_START + 0.3)
    sb = asking("B.jsonl", PROD, ["Yes", "No"], B_START + 0.3)
    o = bind([sa, sb], [a(session="B.jsonl"), b()])
    assert owners_of(o) == {"A.jsonl": 22, "B.jsonl": 11}
    assert bind([sa], [a(session="B.jsonl")]).owners == {}  # it has another session


def test_a_process_seen_in_two_folders_is_one_process() -> None:
    s1 = Wanted("1.jsonl", "/real/p", 1050.0, None)
    s2 = Wanted("2.jsonl", "/link/p", 1040.0, None)
    o = bind([s1, s2], [Proc("/link/p", A_START, 5), Proc("/real/p", A_START, 5)])
    assert owners_of(o) == {"1.jsonl": 5} and "2.jsonl" not in o.living


# ---- properties over any processes and sessions ----

procs_st = st.lists(
    st.tuples(
        st.sampled_from(["/p", "/q"]),
        st.floats(0, 100),
        st.sampled_from([None, (), ("-c",), ("--session", "s1")]),
        st.sampled_from([None, "Q0", "Q1", "idle"]),
    ),
    max_size=5,
)
sessions_st = st.lists(
    st.tuples(
        st.sampled_from(["/p", "/q"]),
        st.floats(0, 120),
        st.one_of(st.none(), st.floats(0, 120)),
        st.sampled_from([None, "Q0", "Q1"]),
    ),
    max_size=6,
)


# (folder, started, argv, screen) and (folder, updated, created, question), as drawn above
ProcRow = tuple[str, float, tuple[str, ...] | None, str | None]
SessionRow = tuple[str, float, float | None, str | None]


def build(ps: list[ProcRow], ss: list[SessionRow]) -> tuple[list[Proc], list[Wanted]]:
    def screen(s: object) -> str | None:
        if s is None:
            return None
        return idle() if s == "idle" else dialog(f"Question {s}?", ["x", "y"])

    procs = [Proc(str(cwd), float(t), i + 1, argv, screen(sc)) for i, (cwd, t, argv, sc) in enumerate(ps)]
    wanted = [
        Wanted(f"s{i}", str(cwd), float(at), None, f"Question {q}?" if q else None, ("x", "y") if q else (), None, created)
        for i, (cwd, at, created, q) in enumerate(ss)
    ]
    return procs, wanted


@given(procs_st, sessions_st, st.randoms(use_true_random=False))
def test_pairing_invariants(ps: list[ProcRow], ss: list[SessionRow], rnd: random.Random) -> None:
    procs, wanted = build(ps, ss)
    o = bind(wanted, procs)
    pids = [p.pid for p in o.owners.values()]
    assert len(pids) == len(set(pids))  # never two sessions bound to one process
    assert not set(o.owners) & set(o.ambiguous)  # an ambiguous session is never bound
    assert all(len(c) >= 1 for c in o.ambiguous.values())
    assert set(o.owners) <= o.living
    by_key = {w.key: w for w in wanted}
    for key, p in o.owners.items():
        w = by_key[key]
        assert p.cwd == w.cwd and p.started <= w.updated_at + START_SLACK_S
    # the order given never matters
    rnd.shuffle(procs)
    rnd.shuffle(wanted)
    again = bind(wanted, procs)
    assert owners_of(again) == owners_of(o) and again.living == o.living
    assert {k: {p.pid for p in v} for k, v in again.ambiguous.items()} == {
        k: {p.pid for p in v} for k, v in o.ambiguous.items()
    }


@given(procs_st, sessions_st)
def test_no_more_sessions_alive_than_pis_can_hold_unless_undecidable(
    ps: list[ProcRow], ss: list[SessionRow]
) -> None:
    """Every bound session has its own pi; and sessions asking nothing are alive only as many
    as there are pis in their folder."""
    procs, wanted = build(ps, ss)
    o = bind(wanted, procs)
    for folder in ("/p", "/q"):
        idle_alive = [w for w in wanted if w.cwd == folder and not w.question and w.key in o.living]
        bound = [w for w in wanted if w.cwd == folder and w.key in o.owners]
        here = [p for p in procs if p.cwd == folder]
        assert len(bound) <= len(here)
        if not any(w.question for w in wanted if w.cwd == folder):
            # without questions the newest sessions win: ties only between equal write times
            times = {w.updated_at for w in idle_alive}
            assert len(idle_alive) <= len(here) or len(times) < len(idle_alive)


def test_many_pis_and_sessions_stay_fast() -> None:
    """Eight pis in one folder, forty sessions each could have: paired in well under a second."""
    import time

    procs = [Proc("/p", float(i), i + 1, None, None) for i in range(8)]
    wanted = [Wanted(f"s{j}", "/p", 100.0 + j, None, "Q?" if j % 5 == 0 else None) for j in range(40)]
    began = time.perf_counter()
    o = bind(wanted, procs)
    assert time.perf_counter() - began < 5.0
    assert len(o.living) >= 8 and len(o.owners) <= 8


def test_a_dialog_in_its_free_text_editor_still_shows_its_question() -> None:
    """pi 0.73.1's question dialog with "Type something." open draws the editor's own rules,
    indented, inside the dialog (as captured): they do not end the dialog area."""
    screen = "\n".join([
        f" question {PROD}", RULE, f" {PROD}", "", "  1. Yes", "  2. No", "> 3. Type something. ✎", "",
        " Your answer:", " " + RULE, "", " " + RULE, "", " Enter to submit • Esc to go back", RULE, "/p",
    ])  # fmt: skip
    assert shows(screen, PROD, ["Yes", "No"]) and not idle_editor(screen)


def test_a_dialog_not_showing_its_question_text_is_not_held_against_its_pi() -> None:
    """One pi, its earlier session (before /new) and its new one asking: the pane shows the
    dialog's second tab (not the first question's text). The question stays pending."""
    earlier = Wanted("earlier.jsonl", "/p", 1050.0, None, None, (), None, A_START + 0.3)
    now = asking("now.jsonl", "Which database?", ["pg", "sqlite"], 1060.0)
    tab2 = dialog("Which language for the scripts?", ["Python", "Shell"])
    o = bind([earlier, now], [a(tab2)])
    assert "now.jsonl" in o.living
    # its empty input box is another matter: no dialog is open, it is on its earlier session
    o = bind([earlier, now], [a(idle())])
    assert "now.jsonl" not in o.living and owners_of(o) == {"earlier.jsonl": 11}


def test_a_neighbour_showing_the_same_question_is_not_taken_for_a_killed_asker() -> None:
    """A killed; B (started with it) shows the very same dialog in its own session: B may be
    either session's, so A's is not given to B (nothing would be typed into B for it)."""
    sa = asking("A.jsonl", PROD, ["Yes", "No"], A_START + 0.3)
    sb = asking("B.jsonl", PROD, ["Yes", "No"], B_START + 0.3, at=1101.0)
    o = bind([sa, sb], [b(dialog(PROD, ["Yes", "No"]))])
    assert o.owners.get("A.jsonl") is None and o.owners.get("B.jsonl") is None
    assert [p.pid for p in o.ambiguous.get("A.jsonl", ())] == [22]
