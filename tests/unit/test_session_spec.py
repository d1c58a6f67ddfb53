"""SESSION on the command line: short ids that tell UUIDv7 sessions apart, names, projects,
``next``, and one line naming the candidates when it fits several."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from notifier.actions import goto
from notifier.core import commands
from notifier.core.model import Question, QuestionItem, SessionRef, SessionView, Snapshot


def view(
    sid: str, cwd: str, name: str | None = None, pending: bool = False, alive: bool | None = True, at: float = 0.0
) -> SessionView:
    q = (Question(f"call-{sid}", "question", (QuestionItem("Which?"),), asked_at=100.0 + at),) if pending else ()
    return SessionView(SessionRef(f"/s/{sid}.jsonl", sid, cwd, name), "needs_input" if q else "idle", q, (), alive, at)


# Two pis started a minute apart: UUIDv7 ids share their first 8 hex digits.
A = "01a232c1-5e1b-7a4d-9c2e-6f0b1d2e3a4b"
B = "01a232c1-9d70-7f21-8b3c-0a1b2c3d4e5f"


def test_short_ids_of_sessions_started_a_minute_apart_differ() -> None:
    assert A[:8] == B[:8]
    assert commands.short_id(A) == "1d2e3a4b" and commands.short_id(B) == "2c3d4e5f"
    assert commands.short_id(None) is None


@given(st.uuids(version=4))
def test_a_short_id_is_eight_hex_digits_ending_the_id(u: object) -> None:
    sid = str(u)
    short = commands.short_id(sid)
    assert short is not None and len(short) == 8 and sid.replace("-", "").endswith(short)


def test_by_short_id_project_and_name() -> None:
    blog = view(A, "/home/me/blog", pending=True)
    shop = view(B, "/home/me/shop", name="billing refactor")
    snap = Snapshot((blog, shop))
    assert goto.pick(snap, "1d2e3a4b")[0] is blog
    assert goto.pick(snap, "blog")[0] is blog
    assert goto.pick(snap, "billing refactor")[0] is shop
    assert goto.pick(snap, "shop")[0] is shop
    assert goto.pick(snap, "SHOP")[0] is shop  # any case, when nothing matches exactly
    assert goto.pick(snap, A)[0] is blog
    assert goto.pick(snap, "01a232c1-5")[0] is blog  # a unique id prefix, as before
    assert goto.pick(snap, "/s/" + B + ".jsonl")[0] is shop


def test_next_is_the_question_waiting_longest() -> None:
    old = view(A, "/p/a", pending=True, at=0.0)
    new = view(B, "/p/b", pending=True, at=50.0)
    assert goto.pick(Snapshot((new, old)), "next")[0] is old
    with pytest.raises(goto.Refused) as nothing:
        goto.pick(Snapshot((view(A, "/p/a"),)), "next")
    assert str(nothing.value) == "no pi session is waiting for an answer"
    q = Question("c1", "question", (QuestionItem("Which?"),), asked_at=1.0)
    gone = SessionView(SessionRef("/s/x.jsonl", B, "/p/b", None), "needs_input", (), (q,), False, 1.0)
    with pytest.raises(goto.Refused) as left:  # only abandoned ones: said, with what to do
        goto.pick(Snapshot((gone,)), "next")
    assert "(1 abandoned: their pi stopped; 'goto SESSION' says how to resume one)" in str(left.value)


def test_a_project_with_old_sessions_means_the_one_that_waits() -> None:
    old = [view(f"{i:08d}-0000-7000-8000-00000000000{i}", "/home/me/blog", alive=False) for i in range(5)]
    waiting = view(A, "/home/me/blog", pending=True)
    assert goto.pick(Snapshot((*old, waiting)), "blog")[0] is waiting
    live = view(B, "/home/me/blog", alive=True)
    assert goto.pick(Snapshot((*old, live)), "blog")[0] is live


def test_ambiguous_is_one_line_naming_the_candidates() -> None:
    snap = Snapshot((view(A, "/home/me/blog", pending=True), view(B, "/home/me/blog", pending=True)))
    for spec in ("blog", "01a232c1"):
        with pytest.raises(goto.Ambiguous) as info:
            goto.pick(snap, spec)
        said = str(info.value)
        assert "\n" not in said and "2 sessions" in said
        assert "blog 1d2e3a4b" in said and "blog 2c3d4e5f" in said


def test_no_such_session() -> None:
    with pytest.raises(goto.BadSession) as info:
        goto.pick(Snapshot((view(A, "/p/blog"),)), "nothing")
    assert not isinstance(info.value, goto.Ambiguous) and "'nothing'" in str(info.value)
    with pytest.raises(goto.BadSession):
        goto.pick(Snapshot((view(A, "/p/blog"),)), " ")


def test_the_window_shows_the_short_id_too() -> None:
    """The window's Session column (a session without a name) showed the id's first 8 digits,
    the same for two pis started a minute apart."""
    from notifier.window.view import Shown, question_obj
    from notifier.window.window import QuestionList

    a, b = view(A, "/p/blog", pending=True), view(B, "/p/blog", pending=True)
    shown = {QuestionList.values(Shown.from_obj(question_obj(v, v.pending[0], False)))[1] for v in (a, b)}
    assert shown == {"1d2e3a4b", "2c3d4e5f"}


def test_a_project_is_named_as_status_shows_it() -> None:
    """A folder name holding characters the sanitizer removes (a bidi override, an escape) is
    shown without them: typed as shown, it names its session (in any case too)."""
    odd = view(A, "/home/me/blog\u202e", pending=True)
    esc = view(B, "/home/me/my\x1b[31mshop", pending=True)
    snap = Snapshot((odd, esc))
    assert commands.label(odd) == "blog 1d2e3a4b"
    assert goto.pick(snap, "blog")[0] is odd
    assert goto.pick(snap, commands.label(esc).split()[0])[0] is esc
    assert goto.pick(snap, "BLOG")[0] is odd


def test_a_name_and_a_folder_that_read_the_same_are_both_named() -> None:
    """A session named "blog" in ~/webshop and a session in ~/blog: "blog" names both (status
    shows both as blog; mute blog holds back both), so a word that fits two waiting sessions is
    ambiguous, whichever way each is called it."""
    named = view(A, "/home/me/webshop", name="blog", pending=True)
    folder = view(B, "/home/me/blog", pending=True)
    for spec in ("blog", "BLOG"):
        with pytest.raises(goto.Ambiguous) as info:
            goto.pick(Snapshot((named, folder)), spec)
        assert "2 sessions" in str(info.value)
    # only one of them waits: that one
    assert goto.pick(Snapshot((named, view(B, "/home/me/blog"))), "blog")[0] is named
    assert goto.pick(Snapshot((view(A, "/home/me/webshop", name="blog"), folder)), "blog")[0] is folder
    # an exact spelling still beats another case
    assert goto.pick(Snapshot((view(A, "/home/me/webshop", name="Blog", pending=True), folder)), "blog")[0] is folder


def test_answer_call_of_a_question_whose_pi_stopped_says_how_to_resume() -> None:
    """``answer --call ID`` of an abandoned question, with SESSION or without: the pi that asked
    has stopped, and the command that resumes it (not "answered, or never asked")."""
    from notifier.actions.answer import _waiting

    q = Question("call1", "question", (QuestionItem("Which?"),), asked_at=100.0)
    gone = SessionView(SessionRef("/s/a.jsonl", A, "/home/me/blog", None), "idle", (), (q,), False, 0.0)
    for spec in (None, "blog"):
        with pytest.raises(goto.Refused) as said:
            _waiting(Snapshot((gone,)), spec, "call1")
        assert "the pi that asked has stopped; resume it with: cd /home/me/blog && pi --session /s/a.jsonl" in str(said.value)
    with pytest.raises(goto.Refused) as said:
        _waiting(Snapshot((gone,)), None, "other")
    assert "is not waiting (it was answered, or never asked)" in str(said.value)
