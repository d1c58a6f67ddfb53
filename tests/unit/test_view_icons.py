"""Menu and window content built from snapshots, and icon rendering (no toolkit needed)."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from notifier.core.board import Board
from notifier.core.commands import Focus, Mute, Quit, Show, Snooze
from notifier.core.planner import Silences, tomorrow_morning
from notifier.core.reducer import Header, ToolStart
from notifier.outputs import tray
from notifier.outputs.tray import UiState, menu, title
from notifier.pi.parse import extract
from notifier.window.view import Shown, WindowView, details_text, resume_command, window_obj


def board_with(*questions: tuple[str, str, str, float]) -> Board:
    b = Board(liveness=False)
    for key, cwd, text, at in questions:
        args = {
            "questions": [
                {
                    "question": text,
                    "header": "Hdr",
                    "multiSelect": True,
                    "options": [{"label": "A", "recommended": True}, {"label": "B", "description": "bee"}],
                }
            ]
        }
        b.local.apply(
            key,
            [
                Header("id-" + key, cwd),
                ToolStart(
                    at, "c-" + key, "ask_user_question", extract("ask_user_question", args, "c-" + key, at)
                ),
            ],
            at,
        )
    return b


def test_menu_lists_pending_newest_first_then_actions() -> None:
    b = board_with(
        ("f1", "/home/u/older", "Old \x1b[31mquestion?", 100.0),
        ("f2", "/home/u/newer", "New question?", 200.0),
    )
    entries = menu(UiState(b.snapshot(0)), 500.0)
    labels = [e.label for e in entries]
    assert labels[0] == "newer — New question? (4 min)"  # (ages told at the oldest's last whole minute, 460)
    assert labels[1] == "older — Old question? (6 min)"
    assert entries[0].action is not None and entries[0].action(600.0) == Show(Focus("f2", "c-f2"))
    assert [e.label for e in entries if e.action or e.children][-3:] == ["Snooze all", "Open window", "Quit"]
    snooze = next(e for e in entries if e.label == "Snooze all")
    # times are taken when the entry is clicked, not when the menu was built
    clicked = 10_000.0
    assert [c.action(clicked) for c in snooze.children if c.action] == [
        Snooze(clicked + 900),
        Snooze(clicked + 3600),
        Snooze(tomorrow_morning(clicked)),
    ]
    assert 0 < tomorrow_morning(clicked) - clicked <= 32 * 3600
    opened = next(e for e in entries if e.default)
    assert opened.label == "Open window" and opened.action is not None and opened.action(clicked) == Show()
    quit_ = next(e for e in entries if e.label == "Quit")
    assert quit_.action is not None and quit_.action(clicked) == Quit()


def test_menu_resume_and_unmute_give_commands() -> None:
    chosen = Silences(snooze_all_until=900.0, muted=frozenset({"shop"}))
    entries = menu(UiState(board_with().snapshot(0), chosen), 500.0)
    snooze = next(e for e in entries if e.label == "Snooze all")
    resume = next(c for c in snooze.children if c.label == "Resume notifications now")
    assert resume.action is not None and resume.action(600.0) == Snooze(0.0)
    (unmute,) = next(e for e in entries if e.label == "Unmute").children
    assert unmute.action is not None and unmute.action(600.0) == Mute("shop", on=False)


def test_menu_abandoned_section_and_empty_state() -> None:
    b = board_with(("f1", "/home/u/p", "Q?", 100.0))
    b.local.liveness = True
    b.local.set_processes([], 101.0)
    labels = [e.label for e in menu(UiState(b.snapshot(0)), 200.0)]
    assert labels[0] == "No questions waiting"
    assert "Abandoned (the pi that asked has stopped)" in labels and "Clear abandoned" in labels


def test_title() -> None:
    b = board_with(("f1", "/home/u/a", "Q?", 1.0), ("f2", "/home/u/b", "Q?", 1.0))
    assert title(UiState(b.snapshot(0)), 10.0) == "2 pi sessions need answers"
    assert title(UiState(Board().snapshot(0)), 10.0) == "pi-notifier: no questions waiting"
    # the user's choices and the health are the UI's own, beside the engine's snapshot
    ui = UiState(b.snapshot(0), Silences(snooze_all_until=130.0), ("engine failed once (Boom); restarted 1×",))
    assert title(ui, 10.0) == "2 pi sessions need answers — snoozed for 2 min — ⚠ engine failed once (Boom); restarted 1×"
    assert title(ui, 130.0) == "2 pi sessions need answers — ⚠ engine failed once (Boom); restarted 1×"


def test_window_details() -> None:
    b = board_with(("/s/x.jsonl", "/home/u/it's here", "Pick one?", 100.0))
    data = window_obj(b.snapshot(0))
    (q,) = data["questions"]
    text = details_text(Shown.from_obj(q), 160.0)
    assert "[Hdr] Pick one?" in text and "(several answers allowed)" in text
    assert "• A (recommended)" in text and "• B — bee" in text
    assert Shown.from_obj(q).resume()[0] == "cd '/home/u/it'\"'\"'s here' && pi --session /s/x.jsonl"
    assert resume_command(None, "/a b") == "pi --session '/a b'"


def test_the_window_reads_the_apps_json_once_into_model_values() -> None:
    """What the app sends the window (JSON) reads back into the snapshot's own Question and
    SessionRef; what cannot be read is left out, never a crash."""
    b = board_with(("/s/x.jsonl", "/home/u/shop", "Pick one?", 100.0), ("/s/y.jsonl", "/home/u/blog", "Ship?", 90.0))
    snapshot = b.snapshot(0)
    data = window_obj(snapshot)
    data["questions"] += [{"key": ["/s/z.jsonl"]}, "nonsense", dict(data["questions"][0], question="no"), None]
    read = WindowView.from_obj(data)
    assert [(q.session, q.question) for q in read.questions] == [(v.ref, q) for v, q in snapshot.pending]
    first = read.questions[0]
    assert first.token and not first.abandoned and first.project == "shop" and first.key == ["/s/x.jsonl", first.question.tool_call_id]
    assert Shown.from_obj(first.to_obj()) == first  # (the channel loses nothing the window uses)
    assert WindowView.from_obj("garbage") == WindowView() and WindowView.from_obj({"questions": 3}) == WindowView()


def test_window_details_show_a_forms_title_and_instructions() -> None:
    b = Board(liveness=False)
    args = {"title": "Release", "description": "Answer before the release.", "questions": [{"prompt": "Which?", "options": ["1", "2"]}]}
    b.local.apply("/s/f.jsonl", [Header("s", "/p"), ToolStart(1.0, "f1", "form", extract("form", args, "f1", 1.0))], 1.0)
    (q,) = window_obj(b.snapshot(0))["questions"]
    assert (q["question"]["title"], q["question"]["instructions"]) == ("Release", "Answer before the release.")
    lines = details_text(Shown.from_obj(q), 2.0).split("\n")
    assert lines[lines.index("Release") + 1] == "Answer before the release."


@pytest.mark.parametrize("size", [16, 22, 24, 32, 48, 64])
@pytest.mark.parametrize(
    ("state", "count"),
    [("idle", 0), ("working", 0), ("needs", 1), ("needs", 12), ("snoozed", 0), ("abandoned", 0)],
)
def test_icons_render_at_every_size(size: int, state: tray.IconState, count: int) -> None:
    img = tray.icon_image(state, count, size)
    assert img.size == (size, size) and img.mode == "RGBA"
    assert img.getbbox() is not None


def test_badge_changes_the_pixels_and_caps_at_9plus() -> None:
    assert tray.badge_text(3) == "3" and tray.badge_text(10) == "9+"
    assert tray.icon_image("needs", 1).tobytes() != tray.icon_image("needs", 2).tobytes()
    assert tray.icon_image("needs", 10).tobytes() == tray.icon_image("needs", 99).tobytes()
    assert tray.state_for(1, 3, True, False) == "needs"
    assert tray.state_for(1, 3, True, True) == "snoozed"  # the snooze shows, even with questions waiting
    assert tray.state_for(0, 1, False, False) == "abandoned"
    assert tray.state_for(0, 0, False, True) == "snoozed"


def test_options_that_would_read_the_same_say_which_they_are() -> None:
    """A button (box, list entry) always reads as the option it answers: labels that are the same
    once cut to the width, or once what is not seen is dropped, say their numbers as pi draws
    them, and a long one its end too; the others are their labels as they are."""
    from notifier.window.view import OPTION_WIDTH, option_labels

    long = "Use the PostgreSQL database on the staging server for all integration tests"
    shown = option_labels([f"{long} (recommended)", f"{long} (fallback)", "Keep"])
    assert shown[0].startswith("1. Use the") and shown[0].endswith("(recommended)")
    assert shown[1].startswith("2. Use the") and shown[1].endswith("(fallback)")
    assert shown[2] == "Keep" and all(len(s) <= OPTION_WIDTH for s in shown)
    assert option_labels(["Delete all", "Delete\u200b all", "Keep"]) == ["1. Delete all", "2. Delete all", "Keep"]
    assert option_labels(["Yes", "No"]) == ["Yes", "No"]
    # a label that reads as another's number: every option says its own
    assert option_labels(["2. A", "A", "A"]) == ["1. 2. A", "2. A", "3. A"]


@given(st.lists(st.text(max_size=60), min_size=1, max_size=12))
def test_no_two_options_ever_read_the_same(labels: list[str]) -> None:
    """Whatever the labels (alike, the same, numbers of their own, unseen characters, long), no
    two options read the same, and none is longer than the width."""
    from notifier.window.view import OPTION_WIDTH, option_labels

    shown = option_labels(labels)
    assert len(set(shown)) == len(labels) and all(len(s) <= OPTION_WIDTH for s in shown)
