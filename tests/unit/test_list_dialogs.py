"""Any question dialog drawn as a list is read off the screen by its question's text and option
labels (pure): the rows as drawn, numbered or not, whatever marks them; the highlighted row is the
one row with a cursor mark; the keys move one row at a time from it to the chosen row, then Enter.
What cannot be read with certainty is refused, saying why."""

from __future__ import annotations

import pytest

from notifier.actions.answer import drive, finder
from notifier.core.model import Option, Question, QuestionItem
from notifier.pi.keys import Step, Unsupported, UsageError, bound, check_screen, plan_list
from notifier.pi.records import result_mismatch
from notifier.pi.screens import Rows, find_list, rows

LABELS = ("Redis", "Memcached", "None")
Q = Question("c1", "ask_user", (QuestionItem("Which cache?", options=tuple(Option(x) for x in LABELS)),), 1.0)


def options_of(shown: Rows) -> tuple[str, ...]:
    """The option rows read (not the free-text row below them)."""
    return tuple(t for i, t in enumerate(shown.texts) if i != shown.other)


def drawn(mark: str, cursor: int, rest: str = "  ", numbered: bool = False, states: tuple[str, str] = ("", "")) -> str:
    """A dialog as layout classes of third-party tools draw one: the question, then a row per
    option with the cursor mark on one, optional numbers, radio marks or check boxes."""
    body = []
    for i, label in enumerate(LABELS):
        state = (states[1] if i == cursor else states[0]) if states[0] else ""
        number = f"{i + 1}. " if numbered else ""
        body.append(f"{mark if i == cursor else rest}{number}{state}{label}")
    return "\n".join([" ask_user Which cache?", "─" * 40, " Which cache?", "", *body, "  Other (type your own)", "", " enter select", "─" * 40])


LAYOUTS = [
    ("> ", "  ", False, ("", "")),
    ("❯ ", "  ", False, ("", "")),
    ("👉 ", "   ", True, ("", "")),
    ("→ ", "  ", True, ("", "")),
    ("❯ ", "  ", False, ("○ ", "● ")),
    ("> ", "  ", False, ("[ ] ", "[ ] ")),
    ("▸ ", "  ", True, ("☐ ", "☐ ")),
    ("> ● ", "  ○ ", True, ("", "")),  # (a radio mark before the number)
]


@pytest.mark.parametrize(("mark", "rest", "numbered", "states"), LAYOUTS)
def test_every_layout_class_is_read_by_its_labels(mark: str, rest: str, numbered: bool, states: tuple[str, str]) -> None:
    for cursor in range(3):
        screen = drawn(mark, cursor, rest, numbered, states)
        found = finder(Q, screen)
        assert found is not None
        _, dialog = found
        assert dialog.variant == "list" and (options_of(rows(dialog)), rows(dialog).cursor) == (LABELS, cursor)
        assert check_screen(dialog, Q) is None and bound(dialog, Q, 0) is None
    # the keys: from the highlighted row to the chosen one, each bound to the row it leaves
    steps = plan_list(Q, ["None"], None, Rows(LABELS, 1)).steps
    assert [(s.keys, s.cursor, s.cursor_text) for s in steps] == [(("Down",), 1, "Memcached"), (("Enter",), 2, "None")]
    up = plan_list(Q, ["1"], None, Rows(LABELS, 2)).steps
    assert [s.keys for s in up] == [("Up",), ("Up",), ("Enter",)]


def test_what_cannot_be_read_is_refused_with_the_reason() -> None:
    # highlighted by colour only: no row has a cursor mark
    screen = drawn("  ", 0)
    found = finder(Q, screen)
    assert found is not None and rows(found[1]).cursor is None
    with pytest.raises(Unsupported, match="colour"):
        plan_list(Q, ["2"], None, rows(found[1]))
    # a label on two rows, a missing row, another question's text: not this question's list
    assert find_list(drawn("> ", 0).replace("  None", "  Redis"), "Which cache?", LABELS) is None
    assert find_list(drawn("> ", 0).replace("  None", ""), "Which cache?", LABELS) is None
    assert finder(Q, drawn("> ", 0).replace(" Which cache?\n", " Which cache now?\n")) is None
    # usage: one choice of one question; no typed answer in a layout not known
    with pytest.raises(UsageError):
        plan_list(Q, ["1", "2"], None, Rows(LABELS, 0))
    with pytest.raises(Unsupported, match="typed answer"):
        plan_list(Q, None, "text", Rows(LABELS, 0))
    multi = Question("c1", "ask_user", (QuestionItem("Which?", options=Q.first.options, multi=True),), 1.0)
    with pytest.raises(Unsupported, match="multi-select"):
        plan_list(multi, ["1"], None, Rows(LABELS, 0))


def test_what_pi_recorded_must_name_the_option_chosen_alone() -> None:
    done = plan_list(Q, ["Redis"], None, Rows(LABELS, 0))
    assert result_mismatch(Q, done, "User selected: Redis", None) is None
    assert result_mismatch(Q, done, "User selected: Memcached", None)
    # the text decides (details often list every option), and the question's own words do not count
    assert result_mismatch(Q, done, "Answer: Memcached", {"options": list(LABELS)})
    assert result_mismatch(Q, done, "Which cache? Redis", {"options": list(LABELS)}) is None
    assert result_mismatch(Q, done, "Redis or None?", None)
    near = Question("c1", "ask_user", (QuestionItem("Which?", options=(Option("Redis"), Option("Redis Cluster"))),), 1.0)
    done = plan_list(near, ["Redis"], None, Rows(("Redis", "Redis Cluster"), 0))
    assert result_mismatch(near, done, "User selected: Redis Cluster", None)  # (not Redis alone)


def test_a_list_dialog_is_driven_key_by_key() -> None:
    from notifier.actions.answer import Seen

    screens = iter([drawn("❯ ", 0), drawn("❯ ", 0), drawn("❯ ", 1), drawn("❯ ", 2)])
    last = [""]
    sent: list[tuple[str, ...]] = []

    def look() -> Seen:
        last[0] = next(screens, last[0])
        return Seen(find_list(last[0], "Which cache?", LABELS))

    steps = plan_list(Q, ["3"], None, Rows(LABELS, 0))
    def send(step: Step, seen: Seen) -> bool:
        sent.append(step.keys)
        return True

    drive(look, send, Q, steps, lambda: None)
    assert sent == [("Down",), ("Down",), ("Enter",)]


def test_a_numbered_form_row_with_a_note_after_its_label() -> None:
    """The layout class of a tool that numbers its rows, marks the recommended one after its
    label, indents descriptions, and adds rows of its own below (a typed answer, a chat row)."""
    labels = ("Bug fix", "New feature", "Bug fix later")
    q = Question("c2", "ask_user_question", (QuestionItem("Which task now?", options=tuple(Option(x) for x in labels)),), 1.0)
    screen = "\n".join(
        [
            "─" * 50, "", " Which task now?", "",
            "  1. Bug fix (Recommended)", "     Patch a production issue.",
            "❯ 2. New feature", "     Implement a capability.",
            "  3. Bug fix later", "  4. Type something.", "─" * 50, "", "  5. Chat about this", "",
            " Enter to select · ↑/↓ to navigate · Esc to cancel",
        ]
    )  # fmt: skip
    found = finder(q, screen)
    assert found is not None and (options_of(rows(found[1])), rows(found[1]).cursor) == (labels, 1)
    steps = plan_list(q, ["Bug fix"], None, rows(found[1])).steps
    assert [(st.keys, st.cursor) for st in steps] == [(("Up",), 1), (("Enter",), 0)]


def test_a_list_whose_help_says_space_selects_is_ticked_then_submitted() -> None:
    """The layout class of a tool whose rows are check boxes ("› [ ] label — what it means") under a
    numbered question, where Space selects and Enter submits what is ticked."""

    def screen(cursor: int, ticked: int | None = None) -> str:
        body = [
            f"{'› ' if i == cursor else '  '}[{'x' if i == ticked else ' '}] {label} — about {label.lower()}"
            for i, label in enumerate(LABELS)
        ]
        return "\n".join([" Ask User", "", " Question 1 of 1", "", "1. Which cache?", " Select one.", "", *body,
                          "  [ ] Other — type your own answer", "", " ↑/↓ option · Space select · Enter submit · Esc dismiss"])  # fmt: skip

    found = finder(Q, screen(0))
    assert found is not None
    dialog = found[1]
    assert dialog.toggles and rows(dialog).checked == (False, False, False, False) and check_screen(dialog, Q) is None
    steps = plan_list(Q, ["Memcached"], None, rows(dialog), dialog.toggles).steps
    assert [(st.keys, st.cursor, st.checked) for st in steps] == [(("Down",), 0, ()), (("Space",), 1, ()), (("Enter",), 1, (1,))]
    # driven: Enter only once the chosen box alone reads ticked
    from notifier.actions.answer import Seen
    from notifier.pi.keys import unready

    other = find_list(screen(1, 0), "Which cache?", LABELS)
    assert other is not None and unready(other, steps[1]) is not None  # (another box ticked)
    looks = iter([screen(0), screen(1), screen(1), screen(1, 1)])
    last = [""]
    sent: list[tuple[str, ...]] = []

    def look() -> Seen:
        last[0] = next(looks, last[0])
        return Seen(find_list(last[0], "Which cache?", LABELS))

    def send(step: object, seen: Seen) -> bool:
        sent.append(step.keys)  # type: ignore[attr-defined]
        return True

    drive(look, send, Q, plan_list(Q, ["Memcached"], None, rows(dialog), True), lambda: None)
    assert sent == [("Down",), ("Space",), ("Enter",)]
    # a box layout without Space in its help: no box to read back means no Space plan
    with pytest.raises(Unsupported, match="no check box"):
        plan_list(Q, ["1"], None, Rows(LABELS, 0, (None, None, None)), True)


def test_a_form_of_one_question_with_a_note_after_its_text_and_values_in_its_record() -> None:
    """The layout class of a form tool: a title, the question with a note after it ("[single-select]"),
    radio rows that do not follow the cursor; its record names the option's value ("Q1: ref")."""
    options = (Option("Bug fix", value="fix"), Option("Refactor", value="ref"))
    q = Question("c3", "ask_user_question", (QuestionItem("Which task now?", options=options),), 1.0)
    screen = "\n".join([" Planning", "", "  Which task now? [single-select]", " *required", "",
                         "  ❯ ○ Bug fix", "    ○ Refactor", "    ○ Other...", "", " ↑↓ navigate • Enter select • Esc cancel"])  # fmt: skip
    found = finder(q, screen)
    assert found is not None and (options_of(rows(found[1])), rows(found[1]).cursor) == (("Bug fix", "Refactor"), 0)
    assert not found[1].toggles
    done = plan_list(q, ["Refactor"], None, rows(found[1]))
    assert result_mismatch(q, done, "Q1: ref", None) is None
    assert result_mismatch(q, done, "Q1: fix", None)
    assert result_mismatch(q, done, "Q1: prefix", None)  # (a word that holds the value is not it)
    # a note after the text is one in brackets: more words are another question (its help line is
    # that of pi's questionnaire: refused as that layout, which does not show this question either)
    other = finder(q, screen.replace("[single-select]", "or not?"))
    assert other is None or "does not show this question" in (check_screen(other[1], q) or "")


MULTI = Question("m1", "ask_user", (QuestionItem("Which caches?", options=tuple(Option(x) for x in LABELS), multi=True),), 1.0)
BOXES = [("☐ ", "☑ "), ("[ ] ", "[x] "), ("◯ ", "◉ ")]


def boxes(cursor: int, ticked: tuple[int, ...], states: tuple[str, str], help_line: str) -> str:
    """A multi-select list as such tools draw one: check boxes (or radio marks) on every row, the
    cursor mark on one, a help line naming the key that ticks and the one that submits."""
    body = [f"{'❯ ' if i == cursor else '  '}{states[i in ticked]}{label}" for i, label in enumerate(LABELS)]
    return "\n".join(["─" * 40, " Which caches?", "", *body, "", f" {help_line}", "─" * 40])


@pytest.mark.parametrize("states", BOXES)
@pytest.mark.parametrize(
    ("help_line", "key"),
    [("↑↓ navigate • Space toggle • Enter submit • Esc cancel", "Space"), ("x to toggle · enter to confirm", "x")],
)
def test_a_multi_select_list_ticks_each_chosen_row_then_submits(
    states: tuple[str, str], help_line: str, key: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`answer CALL 1 3`: rows 1 and 3 ticked with the key the help line names, every box read
    back after each key, Enter only once exactly those boxes read ticked."""
    from notifier.actions.answer import Seen
    from notifier.pi.keys import plan_for, unready

    first = find_list(boxes(1, (), states, help_line), "Which caches?", LABELS)
    assert first is not None and (first.toggle_key, first.submits) == (key, True)
    assert rows(first).checked == (False, False, False) and rows(first).cursor == 1
    done = plan_for(first, MULTI, ["1", "3"], None)
    assert done.picks == {0: [0, 2]}
    assert [(s.keys, s.cursor, s.checked) for s in done.steps] == [
        (("Up",), 1, ()), ((key,), 0, ()), (("Down",), 0, (0,)), (("Down",), 1, (0,)), ((key,), 2, (0,)), (("Enter",), 2, (0, 2)),
    ]  # fmt: skip
    # a box the tool ticked itself, or one that did not take the key: no further key
    wrong = find_list(boxes(2, (1, 0), states, help_line), "Which caches?", LABELS)
    assert wrong is not None and "selection" in (unready(wrong, done.steps[-1]) or "")
    # driven against a stand-in that does what the help line says
    state = {"cursor": 1, "ticked": set[int]()}
    sent: list[tuple[str, ...]] = []

    def look() -> Seen:
        return Seen(find_list(boxes(state["cursor"], tuple(state["ticked"]), states, help_line), "Which caches?", LABELS))  # type: ignore[arg-type]

    def send(step: Step, seen: Seen) -> bool:
        sent.append(step.keys)
        k = step.keys[0]
        if k in ("Up", "Down"):
            state["cursor"] += 1 if k == "Down" else -1  # type: ignore[operator]
        elif k == key:
            state["ticked"] ^= {state["cursor"]}  # type: ignore[operator]
        return True

    drive(look, send, MULTI, done, lambda: None)
    assert sent == [s.keys for s in done.steps] and state["ticked"] == {0, 2}
    # one key of the stand-in lost: the box does not read ticked, so no Enter
    state.update(cursor=1, ticked=set())
    sent.clear()

    def lossy(step: Step, seen: Seen) -> bool:
        if step.keys != (key,):
            send(step, seen)
        else:
            sent.append(step.keys)
        return True

    from notifier.actions.goto import Refused

    monkeypatch.setattr("notifier.actions.answer.STEP_TIMEOUT_S", 0.05)
    with pytest.raises(Refused, match="did not move on"):
        drive(look, lossy, MULTI, done, lambda: None)
    assert ("Enter",) not in sent
    # what pi recorded: every chosen label, no other
    assert result_mismatch(MULTI, done, "User selected: Redis, None", None) is None
    assert result_mismatch(MULTI, done, "User selected: Redis", None)
    assert result_mismatch(MULTI, done, "User selected: Redis, Memcached, None", None)


def test_a_multi_select_list_whose_help_does_not_say_how_is_refused() -> None:
    for help_line, why in [
        ("↑↓ navigate • Enter submit", "which key ticks"),
        ("↑↓ navigate • Space toggle • Esc cancel", "Enter submits"),
    ]:
        dialog = find_list(boxes(0, (), BOXES[0], help_line), "Which caches?", LABELS)
        assert dialog is not None
        from notifier.pi.keys import plan_for

        with pytest.raises(Unsupported, match=why):
            plan_for(dialog, MULTI, ["1", "3"], None)
    # rows without boxes: nothing to read back
    plain = find_list(boxes(0, (), ("", ""), "Space toggle • Enter submit"), "Which caches?", LABELS)
    assert plain is not None
    with pytest.raises(Unsupported, match="no check box"):
        plan_list(MULTI, ["1"], None, rows(plain), toggle="Space", submits=True)
    with pytest.raises(UsageError, match="twice"):
        plan_list(MULTI, ["1", "Redis"], None, Rows(LABELS, 0, (False,) * 3), toggle="Space", submits=True)


class StandIn:
    """A list dialog with a free-text row as such tools draw one, driven by the keys it is sent:
    ``ticks`` (its help says Space selects, Enter submits): Space on the free-text row opens the
    input, Enter there saves the text into the row and Enter submits; else Enter on that row opens
    the input and Enter there submits the text."""

    def __init__(self, ticks: bool, other: str = "Other — type your own answer") -> None:
        self.ticks, self.other, self.cursor, self.editing, self.text, self.saved = ticks, other, 0, False, "", ""
        self.submitted: str | None = None

    def screen(self) -> str:
        rows_ = [*LABELS, self.other + (f": {self.saved}" if self.saved else "")]
        box = "[ ] " if self.ticks else ""
        body = [f"{'› ' if i == self.cursor else '  '}{box}{label}" for i, label in enumerate(rows_)]
        help_line = "↑/↓ option · Space select · Enter submit · Esc dismiss" if self.ticks else "↑↓ navigate • Enter select"
        editor = ["", " Your answer:", f"  {self.text}"] if self.editing else []
        if self.editing:
            help_line = "Enter save answer · Esc go back" if self.ticks else "Enter to submit • Esc to go back"
        return "\n".join(["─" * 40, " Which cache?", "", *body, *editor, "", f" {help_line}", "─" * 40])

    def send(self, step: Step, seen: object) -> bool:
        paste, keys = step.paste, step.keys
        if paste is not None:
            self.text += paste if self.editing else ""
        elif self.editing and keys == ("Enter",):
            self.editing = False
            if self.ticks:
                self.saved = self.text
            else:
                self.submitted = self.text
        elif keys in (("Up",), ("Down",)):
            self.cursor += 1 if keys == ("Down",) else -1
        elif self.cursor == len(LABELS) and keys == (("Space",) if self.ticks else ("Enter",)):
            self.editing = True
        elif keys == ("Enter",):
            self.submitted = self.saved or LABELS[self.cursor] if self.ticks else LABELS[self.cursor]
        return True


@pytest.mark.parametrize("ticks", [False, True])
@pytest.mark.parametrize("other", ["Other — type your own answer", "Type something.", "Other..."])
def test_a_typed_answer_goes_through_the_free_text_row(ticks: bool, other: str) -> None:
    """`answer --text TEXT`: to the free-text row, open it, paste once the input is open, Enter once
    the text reads back in it (and, where the list's Enter submits, Enter again once it is saved)."""
    from notifier.actions.answer import Seen
    from notifier.pi.keys import plan_for

    tool = StandIn(ticks, other)

    def look() -> Seen:
        return Seen(find_list(tool.screen(), "Which cache?", LABELS))

    first = look().dialog
    assert first is not None and rows(first).other == 3 and rows(first).texts[3] == other
    done = plan_for(first, Q, [], "a Redis cluster, please")
    assert [s.keys for s in done.steps][:4] == [("Down",), ("Down",), ("Down",), ("Space",) if ticks else ("Enter",)]
    drive(look, tool.send, Q, done, lambda: None)
    assert tool.submitted == "a Redis cluster, please"
    assert result_mismatch(Q, done, "User answered: a Redis cluster, please", None) is None
    assert result_mismatch(Q, done, "User selected: Redis", None)


def test_a_typed_answer_is_refused_without_a_free_text_row_or_an_input_that_opens(monkeypatch: pytest.MonkeyPatch) -> None:
    from notifier.actions.answer import Seen
    from notifier.actions.goto import Refused
    from notifier.pi.keys import plan_for

    bare = find_list(drawn("> ", 0).replace("  Other (type your own)\n", ""), "Which cache?", LABELS)
    assert bare is not None and rows(bare).other is None
    with pytest.raises(Unsupported, match="no row for a typed answer"):
        plan_for(bare, Q, [], "text")
    with pytest.raises(UsageError, match="line breaks"):
        plan_list(Q, None, "two\nlines", Rows((*LABELS, "Other"), 0, other=3))
    # the row confirmed, but no input opens (its help still speaks of the rows): nothing pasted
    tool = StandIn(False)
    sent: list[tuple[str, ...]] = []

    def send(step: Step, seen: Seen) -> bool:  # (a tool whose input never opens)
        sent.append(step.keys or ("paste",))
        return True

    def look() -> Seen:
        tool.cursor = min(len(sent), 3)
        return Seen(find_list(tool.screen(), "Which cache?", LABELS))

    monkeypatch.setattr("notifier.actions.answer.STEP_TIMEOUT_S", 0.05)
    first = look().dialog
    assert first is not None
    with pytest.raises(Refused, match="did not move on"):
        drive(look, send, Q, plan_for(first, Q, [], "my text"), lambda: None)
    assert ("paste",) not in sent and sent[-1] == ("Enter",)


FORM = Question(
    "f1",
    "ask_user",
    (
        QuestionItem("Which cache?", header="Cache", options=tuple(Option(x) for x in LABELS)),
        QuestionItem("Which release gets it?", header="Release", options=(Option("Next"), Option("Later"))),
    ),
    1.0,
)


class FormStandIn:
    """A form of two questions drawn one at a time as lists under a tab bar of their headers, as
    such tools draw one: Space selects, Enter goes to the next question, on the last submits."""

    def __init__(self, help_line: str = "Tab/←→ question · ↑/↓ option · Space select · Enter next/submit · Esc dismiss") -> None:
        self.tab, self.cursor, self.help = 0, 0, help_line
        self.picked: dict[int, int] = {}
        self.submitted: list[str] | None = None

    def screen(self) -> str:
        item = FORM.items[self.tab]
        tabs = "  ".join(("■ " if k == self.tab else "□ ") + (it.header or "") for k, it in enumerate(FORM.items))
        body = [
            f"{'› ' if i == self.cursor else '  '}[{'x' if self.picked.get(self.tab) == i else ' '}] {o.label}"
            for i, o in enumerate(item.options)
        ]
        return "\n".join(["─" * 40, f" {tabs}", "", f" {item.text}", "", *body, "", f" {self.help}", "─" * 40])

    def send(self, step: Step, seen: object) -> bool:
        key = step.keys[0]
        if key in ("Up", "Down"):
            self.cursor += 1 if key == "Down" else -1
        elif key == "Space":
            self.picked[self.tab] = self.cursor
        elif key == "Enter" and self.tab in self.picked:
            if self.tab + 1 < len(FORM.items):
                self.tab, self.cursor = self.tab + 1, 0
            else:
                self.submitted = [FORM.items[k].options[p].label for k, p in sorted(self.picked.items())]
        return True


def form_look(tool: FormStandIn) -> object:
    from notifier.actions.answer import Seen, finder

    def look() -> Seen:
        found = finder(FORM, tool.screen())
        return Seen(found[1] if found else None)

    return look


def test_a_form_of_lists_is_answered_question_by_question() -> None:
    """`answer CALL 2 1`: question 1 → option 2, question 2 → option 1, each key bound to the
    question whose list is on screen; the last Enter submits (the help says so)."""
    from notifier.pi.keys import check_usage, plan_for

    tool = FormStandIn()
    look = form_look(tool)
    first = look().dialog  # type: ignore[operator]
    assert first is not None and first.submits and first.toggles
    done = plan_for(first, FORM, ["2", "1"], None)
    assert done.picks == {0: [1], 1: [0]}
    assert [(s.keys, s.item) for s in done.steps] == [
        (("Down",), 0), (("Space",), 0), (("Enter",), 0), (("Space",), 1), (("Enter",), 1),
    ]  # fmt: skip
    drive(look, tool.send, FORM, done, lambda: None)  # type: ignore[arg-type]
    assert tool.submitted == ["Memcached", "Next"]
    assert result_mismatch(FORM, done, "Cache: Memcached; Release: Next", None) is None
    assert result_mismatch(FORM, done, "Cache: Memcached; Release: Later", None)
    with pytest.raises(UsageError, match="one answer for each"):
        check_usage(FORM, ["2"], None)


def test_a_form_is_refused_where_its_help_does_not_say_enter_submits_or_not_at_its_first_question(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from notifier.actions.goto import Refused
    from notifier.pi.keys import plan_for

    tool = FormStandIn("↑↓ navigate • Enter select • Esc cancel")
    first = form_look(tool)().dialog  # type: ignore[operator]
    assert first is not None
    with pytest.raises(Unsupported, match="does not say that Enter submits"):
        plan_for(first, FORM, ["2", "1"], None)
    tool = FormStandIn()
    tool.tab = 1
    second = form_look(tool)().dialog  # type: ignore[operator]
    assert second is not None
    with pytest.raises(Unsupported, match="not at its first question"):
        plan_for(second, FORM, ["2", "1"], None)
    # a later question that opens with its highlight on another row (kept there): its keys go from there
    tool = FormStandIn()
    look = form_look(tool)
    done = plan_for(look().dialog, FORM, ["2", "1"], None)  # type: ignore[operator]
    sent: list[tuple[str, ...]] = []

    def send(step: Step, seen: object) -> bool:
        sent.append(step.keys)
        tool.send(step, seen)
        if tool.tab == 1 and step.keys == ("Enter",):
            tool.cursor = 1
        return True

    drive(look, send, FORM, done, lambda: None)  # type: ignore[arg-type]
    assert sent == [("Down",), ("Space",), ("Enter",), ("Up",), ("Space",), ("Enter",)]
    assert tool.submitted == [FORM.items[0].options[1].label, FORM.items[1].options[0].label]
    # ... and one whose highlight is moved away after it opened (by someone else) stops the answer
    tool = FormStandIn()
    look = form_look(tool)
    done = plan_for(look().dialog, FORM, ["2", "1"], None)  # type: ignore[operator]
    sent.clear()

    def moved(step: Step, seen: object) -> bool:
        sent.append(step.keys)
        tool.send(step, seen)
        if tool.tab == 1 and step.keys == ("Space",):
            tool.cursor = 1  # (the user's Down, between two of ours)
        return True

    monkeypatch.setattr("notifier.actions.answer.STEP_TIMEOUT_S", 0.05)
    with pytest.raises(Refused):
        drive(look, moved, FORM, done, lambda: None)  # type: ignore[arg-type]
    assert tool.submitted is None and ("Enter",) not in sent[3:]


class ReviewStandIn:
    """A form of two questions drawn one at a time as numbered lists under a tab bar that names a
    Submit step, as such tools draw one: Enter selects the highlighted row and opens the next
    question; after the last, a review lists each question's header and its answer, then a list
    "Submit answers" / "Cancel" where Enter does what the row says. ``slips``: the tool records the
    row below the highlighted one for the second question (a review that must not be confirmed)."""

    def __init__(self, slips: bool = False, cursor_on_cancel: bool = False, numbered: bool = True) -> None:
        self.tab, self.cursor, self.slips, self.numbered = 0, 0, slips, numbered
        self.cancel_first = cursor_on_cancel
        self.picked: dict[int, int] = {}
        self.submitted: list[str] | None = None
        self.cancelled = False

    def _row(self, i: int, label: str) -> str:
        return f"{'❯ ' if i == self.cursor else '  '}{f'{i + 1}. ' if self.numbered else ''}{label}"

    def screen(self) -> str:
        tabs = "  ".join(("■ " if k in self.picked else "□ ") + (it.header or "") for k, it in enumerate(FORM.items))
        top = ["─" * 50, f" ←  {tabs}  ✓ Submit  →"]
        help_line = " Enter to select · ↑/↓ to navigate · Tab to switch questions · Esc to cancel"
        if self.tab < len(FORM.items):
            item = FORM.items[self.tab]
            body = [self._row(i, o.label) for i, o in enumerate(item.options)]
            body.append(self._row(len(item.options), "Type something."))
            return "\n".join([*top, f" {item.text}", *body, "─" * 50, help_line])
        answers = [line for k, it in enumerate(FORM.items) for line in (f"  ● {it.header}", f"    → {it.options[self.picked[k]].label}")]
        steps = [self._row(i, label) for i, label in enumerate(("Submit answers", "Cancel"))]
        return "\n".join([*top, " Review your answers", *answers, "─" * 50, " Ready to submit your answers?", *steps, help_line])

    def send(self, step: Step, seen: object) -> bool:
        key = step.keys[0]
        if key in ("Up", "Down"):
            self.cursor += 1 if key == "Down" else -1
        elif key == "Enter" and self.tab < len(FORM.items):
            self.picked[self.tab] = min(self.cursor + (self.slips and self.tab == 1), len(FORM.items[self.tab].options) - 1)
            self.tab, self.cursor = self.tab + 1, 0
            if self.tab == len(FORM.items) and self.cancel_first:
                self.cursor = 1
        elif key == "Enter":
            if self.cursor == 0:
                self.submitted = [FORM.items[k].options[p].label for k, p in sorted(self.picked.items())]
            else:
                self.cancelled = True
        return True


def review_look(tool: ReviewStandIn) -> object:
    from notifier.actions.answer import Seen, finder

    def look() -> Seen:
        found = finder(FORM, tool.screen())
        return Seen(found[1] if found else None)

    return look


@pytest.mark.parametrize("numbered", [True, False])
def test_a_form_that_ends_in_a_review_is_submitted_once_the_review_shows_the_answers(numbered: bool) -> None:
    """`answer CALL 2 1` on a form whose tab bar names a Submit step and whose help says Enter
    selects: each question answered in turn, then the review read (each header, the answer chosen
    for it alone) and Enter on its highlighted "Submit answers" row; what was recorded is read back."""
    from notifier.pi.keys import plan_for
    from notifier.pi.screens import find_review

    tool = ReviewStandIn(numbered=numbered)
    look = review_look(tool)
    first = look().dialog  # type: ignore[operator]
    assert first is not None and not first.submits
    done = plan_for(first, FORM, ["2", "1"], None)
    assert [(s.keys, s.item) for s in done.steps] == [(("Down",), 0), (("Enter",), 0), (("Enter",), 1), (("Enter",), None)]
    assert done.steps[-1].answers == ((1,), (0,))
    drive(look, tool.send, FORM, done, lambda: None)  # type: ignore[arg-type]
    assert tool.submitted == ["Memcached", "Next"] and not tool.cancelled
    assert result_mismatch(FORM, done, '"Which cache?"="Memcached". "Which release gets it?"="Next".', None) is None
    # the review as read: its last rows are its list, the highlighted one submits
    tool = ReviewStandIn(numbered=numbered)
    tool.tab, tool.picked = 2, {0: 1, 1: 0}
    review = find_review(tool.screen(), (("Cache", "Which cache?"), ("Release", "Which release gets it?")))
    assert review is not None and review.variant == "review"
    assert (rows(review).texts, rows(review).cursor) == (("Submit answers", "Cancel"), 0)
    assert find_review(tool.screen().replace("  ● Release", "  ● Other"), (("Cache",), ("Release",))) is None


@pytest.mark.parametrize("fault", ["slips", "cursor_on_cancel"])
def test_a_review_that_does_not_show_the_answers_or_its_submit_row_is_not_confirmed(
    fault: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The review shows another answer than the one chosen (the tool took another row), or its
    highlight is on "Cancel": no key is sent to it; the answer stops saying what was typed."""
    from notifier.actions.goto import Refused
    from notifier.pi.keys import plan_for

    tool = ReviewStandIn(**{fault: True})
    look = review_look(tool)
    done = plan_for(look().dialog, FORM, ["2", "1"], None)  # type: ignore[operator]
    sent: list[tuple[str, ...]] = []

    def send(step: Step, seen: object) -> bool:
        sent.append(step.keys)
        return tool.send(step, seen)

    monkeypatch.setattr("notifier.actions.answer.STEP_TIMEOUT_S", 0.05)
    with pytest.raises(Refused, match="typed for this question") as err:
        drive(look, send, FORM, done, lambda: None)  # type: ignore[arg-type]
    assert "Down, Enter, Enter" in str(err.value)
    assert sent == [("Down",), ("Enter",), ("Enter",)] and tool.submitted is None and not tool.cancelled


def test_a_typed_answer_is_refused_before_any_key_where_no_help_line_can_be_read() -> None:
    """A list with a free-text row but no help line below it: whether that row opens an input,
    and how its text is saved, cannot be read; refused before any key, saying so."""
    from notifier.pi.keys import plan_for

    screen = drawn("> ", 0).replace(" enter select", "")
    dialog = find_list(screen, "Which cache?", LABELS)
    assert dialog is not None and rows(dialog).other == 3
    with pytest.raises(Unsupported, match="no help line .* nothing was typed"):
        plan_for(dialog, Q, [], "a Redis cluster")
    assert plan_for(dialog, Q, ["Redis"], None).steps  # (a choice of a row reads its highlight back: kept)


class ListlessReview(ReviewStandIn):
    """The same form, its review drawn without a list: each question's header and answer on one
    line ("Cache: Memcached"), then "Press Enter to submit", where Enter submits."""

    def screen(self) -> str:
        if self.tab < len(FORM.items):
            return super().screen()
        answers = [f"  {it.header}: {it.options[self.picked[k]].label}" for k, it in enumerate(FORM.items)]
        return "\n".join(["─" * 50, " ←  ■ Cache  ■ Release  ✓ Submit  →", " Ready to submit", "", *answers, "", " Press Enter to submit", "─" * 50])

    def send(self, step: Step, seen: object) -> bool:
        if self.tab == len(FORM.items) and step.keys == ("Enter",):
            self.submitted = [FORM.items[k].options[p].label for k, p in sorted(self.picked.items())]
            return True
        return super().send(step, seen)


@pytest.mark.parametrize("slips", [False, True])
def test_a_review_without_a_list_is_confirmed_where_it_says_enter_submits(slips: bool, monkeypatch: pytest.MonkeyPatch) -> None:
    from notifier.actions.goto import Refused
    from notifier.pi.keys import plan_for

    tool = ListlessReview(slips=slips)
    look = review_look(tool)
    done = plan_for(look().dialog, FORM, ["2", "1"], None)  # type: ignore[operator]
    monkeypatch.setattr("notifier.actions.answer.STEP_TIMEOUT_S", 0.05)
    if slips:  # (the review shows "Later" for the release: not confirmed)
        with pytest.raises(Refused):
            drive(look, tool.send, FORM, done, lambda: None)  # type: ignore[arg-type]
        assert tool.submitted is None
    else:
        drive(look, tool.send, FORM, done, lambda: None)  # type: ignore[arg-type]
        assert tool.submitted == ["Memcached", "Next"]
    # a review that draws a list it cannot read (a cursor row that is no submit row) is not guessed at
    tool = ListlessReview()
    tool.tab, tool.picked = 2, {0: 1, 1: 0}
    odd = tool.screen().replace(" Press Enter to submit", "❯ Looks good\n   Press Enter to submit")
    from notifier.pi.screens import find_review

    assert find_review(tool.screen(), (("Cache",), ("Release",))) is not None
    assert find_review(odd, (("Cache",), ("Release",))) is None


class UnderRule:
    """A list whose help line is drawn under its bottom rule, as such tools draw one: numbered
    rows (check boxes on a multi-select question's), a description under each, then "Type
    something." (a free-text row that is the input itself: it opens as it is highlighted, shows
    the text typed in the row, and the help then names the newline key) and, on a multi-select
    question, a "Submit" row. Space or Enter ticks a row of a multi-select question (Enter does not
    submit it): Enter on "Submit" does; Enter on a single-select row chooses it; Enter in the
    input submits what it holds, even nothing."""

    def __init__(self, multi: bool, help_under: bool = True) -> None:
        self.multi, self.help_under, self.cursor, self.buffer = multi, help_under, 0, ""
        self.ticked: set[int] = set()
        self.submitted: object = None

    @property
    def open(self) -> bool:
        return self.cursor == len(LABELS)

    def screen(self) -> str:
        body = []
        for i, label in enumerate(LABELS):
            box = f"[{'✔' if i in self.ticked else ' '}] " if self.multi else ""
            body += [f"{'❯ ' if i == self.cursor else '  '}{i + 1}. {box}{label}", f"     about {label.lower()}"]
        box = "[ ] " if self.multi else ""
        n = len(LABELS) + 1
        body.append(f"❯ {n}. {box}{self.buffer}\xa0" if self.open else f"  {n}. {box}{self.buffer or 'Type something.'}")
        if self.multi:
            body.append(f"{'❯ ' if self.cursor == n else '  '}Submit")
        hints = ["Enter to select", "↑/↓ to navigate", *(["Space to toggle"] if self.multi else [])]
        hints += [*([] if self.open else ["n to add notes"]), "Esc to cancel", "Ctrl+] to collapse"]
        hints += ["Shift+Enter for newline", "Ctrl+U to clear"] if self.open else []
        under = ["", " " + " · ".join(hints)] if self.help_under else []
        return "\n".join(["─" * 60, "", " Which caches?", "", *body, "", "─" * 60, *under])

    def send(self, step: Step, seen: object) -> bool:
        key = step.keys[0] if step.keys else None
        last = len(LABELS) + (1 if self.multi else 0)
        if step.paste is not None:
            self.buffer += step.paste if self.open else ""
        elif key in ("Up", "Down"):
            self.cursor = max(0, min(last, self.cursor + (1 if key == "Down" else -1)))
        elif self.open and key == "Enter":
            self.submitted = ("custom", self.buffer)
        elif key == "Enter" and self.cursor == len(LABELS) + 1:
            self.submitted = sorted(LABELS[i] for i in self.ticked)
        elif self.cursor < len(LABELS) and (key == "Space" or key == "Enter") and self.multi:
            self.ticked ^= {self.cursor}
        elif self.cursor < len(LABELS) and key == "Enter":
            self.submitted = LABELS[self.cursor]
        return True

    def look(self) -> object:
        from notifier.actions.answer import Seen

        return lambda: Seen(find_list(self.screen(), MULTI.first.text if self.multi else "Which caches?", LABELS))


Q_CACHES = Question("s1", "ask_user_question", (QuestionItem("Which caches?", options=Q.first.options),), 1.0)


def test_the_help_line_under_a_dialogs_bottom_rule_is_read_as_its_help() -> None:
    """A help line of key hints just under the dialog's frame is its help ("Space to toggle");
    a line there that reads no key hints (pi's footer) is not, nor one below another row."""
    from notifier.pi.keys import plan_for

    tool = UnderRule(multi=True)
    dialog = find_list(tool.screen(), "Which caches?", LABELS)
    assert dialog is not None and (dialog.toggles, dialog.toggle_key, dialog.submits) == (True, "Space", False)
    shown = rows(dialog)
    assert (shown.other, shown.commit, shown.cursor) == (3, 4, 0) and shown.texts[3:] == ("Type something.", "Submit")
    assert shown.checked == (False, False, False, False, None) and check_screen(dialog, MULTI) is None
    # the same list, under its rule a footer and not a help line: refused as before, nothing typed
    for under in ("~/project (main)", "↑0 ↓0 $0.000 0.0%/128k (auto) · mock-model", "x · y"):
        bare = find_list(tool.screen().replace(tool.screen().splitlines()[-1], f" {under}"), "Which caches?", LABELS)
        assert bare is not None and bare.toggle_key is None
        with pytest.raises(Unsupported, match="which key ticks a row: answer it in the terminal; nothing was typed"):
            plan_for(bare, MULTI, ["1", "3"], None)
    # a single-select list's help under its rule does not make it tick: Down, then Enter on the row
    single = UnderRule(multi=False)
    one = find_list(single.screen(), "Which caches?", LABELS)
    assert one is not None and not one.toggles and one.helps and rows(one).commit is None
    assert [s.keys for s in plan_for(one, Q_CACHES, ["2"], None).steps] == [("Down",), ("Enter",)]


def test_a_multi_select_list_with_a_submit_row_is_ticked_then_submitted_on_that_row(monkeypatch: pytest.MonkeyPatch) -> None:
    """`answer CALL 1 3` where Enter ticks a row too: each chosen row ticked with Space, then down
    past the free-text row (its input open while it is highlighted: its text not read) to "Submit",
    Enter there only once exactly the chosen boxes read ticked."""
    from notifier.actions.goto import Refused
    from notifier.pi.keys import plan_for

    tool = UnderRule(multi=True)
    look = tool.look()
    done = plan_for(look().dialog, MULTI, ["1", "3"], None)  # type: ignore[operator]
    assert [(s.keys, s.cursor, s.cursor_text, s.checked) for s in done.steps] == [
        (("Space",), 0, "Redis", ()), (("Down",), 0, "Redis", (0,)), (("Down",), 1, "Memcached", (0,)),
        (("Space",), 2, "None", (0,)), (("Down",), 2, "None", (0, 2)), (("Down",), 3, None, (0, 2)),
        (("Enter",), 4, "Submit", (0, 2)),
    ]  # fmt: skip
    drive(look, tool.send, MULTI, done, lambda: None)  # type: ignore[arg-type]
    assert tool.submitted == ["None", "Redis"]
    # a tick lost: the boxes do not read as chosen, so no Enter reaches "Submit"
    tool = UnderRule(multi=True)
    sent: list[tuple[str, ...]] = []

    def lossy(step: Step, seen: object) -> bool:
        sent.append(step.keys)
        return True if step.keys == ("Space",) and len(sent) > 1 else tool.send(step, seen)

    monkeypatch.setattr("notifier.actions.answer.STEP_TIMEOUT_S", 0.05)
    with pytest.raises(Refused):
        drive(tool.look(), lossy, MULTI, done, lambda: None)  # type: ignore[arg-type]
    assert ("Enter",) not in sent and tool.submitted is None
    # a form whose multi-select question is submitted by such a row: refused before any key
    form = Question("f2", "ask_user_question", (MULTI.first, FORM.items[1]), 1.0)
    with pytest.raises(Unsupported, match="row of their own .* nothing was typed"):
        plan_for(UnderRule(multi=True).look()().dialog, form, ["1,3", "1"], None)  # type: ignore[operator]


@pytest.mark.parametrize("multi", [False, True])
def test_a_typed_answer_goes_into_a_free_text_row_that_opens_as_it_is_highlighted(
    multi: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`answer --text TEXT`: down to the free-text row, whose input opens as it is highlighted (so
    no key opens it: Enter there would submit it empty), the text pasted once the input shows
    open, Enter once the text reads back in the row."""
    from dataclasses import replace

    from notifier.actions.goto import Refused
    from notifier.pi.keys import plan_for, unready

    question = MULTI if multi else Q_CACHES
    tool = UnderRule(multi)
    look = tool.look()
    done = plan_for(look().dialog, question, [], "a Redis cluster, please")  # type: ignore[operator]
    sent: list[tuple[str, ...]] = []

    def send(step: Step, seen: object) -> bool:
        sent.append(step.keys or ("paste",))
        return tool.send(step, seen)

    drive(look, send, question, done, lambda: None)  # type: ignore[arg-type]
    assert sent == [("Down",), ("Down",), ("Down",), ("paste",), ("Enter",)]
    assert tool.submitted == ("custom", "a Redis cluster, please")
    # a text the row wraps onto lines below it (above its "Submit" row) reads back there too
    tool = UnderRule(multi)
    tool.cursor, tool.buffer = len(LABELS), "a Redis cluster, please"
    wrapped = find_list(tool.screen().replace("cluster, please", "cluster,\n          please"), "Which caches?", LABELS)
    assert wrapped is not None and wrapped.typing and unready(wrapped, done.steps[-1]) is None
    assert unready(wrapped, replace(done.steps[-1], typed="a Redis cluster, thanks")) is not None
    # the paste lost: the text does not read back, so no Enter submits the input empty
    tool = UnderRule(multi)
    sent.clear()

    def lossy(step: Step, seen: object) -> bool:
        sent.append(step.keys or ("paste",))
        return True if step.paste is not None else tool.send(step, seen)

    monkeypatch.setattr("notifier.actions.answer.STEP_TIMEOUT_S", 0.05)
    with pytest.raises(Refused):
        drive(tool.look(), lossy, question, done, lambda: None)  # type: ignore[arg-type]
    assert sent[-1] == ("paste",) and tool.submitted is None
    # the input already open at the first look (the highlight left on that row): refused before any key
    tool = UnderRule(multi)
    tool.cursor = len(LABELS)
    dialog = tool.look()().dialog  # type: ignore[operator]
    assert dialog is not None and dialog.typing and "text input open" in (check_screen(dialog, question) or "")
    # without its help under the rule, the input cannot be read: refused before any key, as before
    bare = UnderRule(multi, help_under=False).look()().dialog  # type: ignore[operator]
    with pytest.raises(Unsupported, match="no help line .* nothing was typed"):
        plan_for(bare, question, [], "a Redis cluster")


@pytest.mark.parametrize("said", ["keeps the file as it is", "adds a final newline to every file", "Done", "Next"])
def test_an_options_description_is_neither_an_open_input_nor_the_row_that_submits(said: str) -> None:
    """What an option's description reads ("… newline …", "Done") is not a help naming the key
    that breaks a line (an open input) nor a row that submits: that is a row of its own, drawn
    where the options' rows are."""
    from notifier.pi.keys import plan_for

    rule = "─" * 60
    single = Question("c1", "ask", (QuestionItem("Which style?", options=(Option("Keep"), Option("Normalize"))),), 1.0)
    screen = "\n".join([rule, " Which style?", "", "❯ 1. Keep", "     leave it", "  2. Normalize", f"     {said}", "",
                        " ↑↓ navigate • Enter to select • Esc to cancel", rule])  # fmt: skip
    d = find_list(screen, "Which style?", ("Keep", "Normalize"))
    assert d is not None and not d.typing and check_screen(d, single) is None
    assert [(s.keys, s.cursor) for s in plan_for(d, single, ["2"], None).steps] == [(("Down",), 0), (("Enter",), 1)]
    multi = Question("c2", "ask", (QuestionItem("Which ones?", options=(Option("Lint"), Option("Ship it")), multi=True),), 1.0)
    screen = "\n".join([rule, " Which ones?", "", "❯ 1. [ ] Lint", "     checks style", "  2. [ ] Ship it",
                        f"     {said}", "", " ↑↓ navigate • Space toggle • Enter submit • Esc cancel", rule])  # fmt: skip
    d = find_list(screen, "Which ones?", ("Lint", "Ship it"))
    assert d is not None and rows(d).commit is None and not d.typing
    steps = [(s.keys, s.cursor) for s in plan_for(d, multi, ["1", "2"], None).steps]
    assert steps == [(("Space",), 0), (("Down",), 0), (("Space",), 1), (("Enter",), 1)]
