"""``pi-notifier answer``: answer a waiting pi's question from here: through the companion
extension when that pi has it (exact for select / confirm / input, keys forwarded to a custom
dialog such as a question tool's, never an editor), else by keys into its tmux pane.

Keys are blind: if the dialog has closed they land in pi's prompt editor. So nothing is typed
unless, just before, (1) the session file still has this tool call unanswered and (2) the pane
shows this very dialog, untouched (its question, its options, the cursor on the first option).
Multi-step plans re-check the dialog between steps. Afterwards the answer is confirmed from the
session file (with a deadline).
"""

from __future__ import annotations

import logging
import os
import time
from dataclasses import dataclass

from notifier.app.goto import Refused, pick, resume_hint
from notifier.companion import protocol
from notifier.companion.channel import all_open_dialogs, answer_dialog
from notifier.companion.protocol import Dialog as ExtDialog
from notifier.core.model import Question, SessionView, Snapshot, Transition
from notifier.core.text import clean
from notifier.engine.follow import FollowedFile
from notifier.engine.options import EngineOptions
from notifier.pi.keymaps import Dialog, Step, Unsupported, UsageError, check_screen, find_dialog, plan
from notifier.system.config import Config
from notifier.system.locate import locate_sessions
from notifier.system.tmux import TmuxPane, capture, tmux

log = logging.getLogger(__name__)

STEP_TIMEOUT_S = 5.0
RESULT_TIMEOUT_S = 15.0
# The dialog variant a tool's own dialog most likely is (used to check the usage before looking).
_GUESS = {"question": "question", "questionnaire": "questionnaire", "ask_user_question": "pi-ask"}


@dataclass(frozen=True)
class Answered:
    question: Question
    outcome: str | None
    answer: str | None


class SessionFile:
    """One session file read like the engine reads it, then followed as it grows."""

    def __init__(self, options: EngineOptions, path: str) -> None:
        self.path = path
        self.file = FollowedFile(path, options.catalog)
        self.resolved: dict[str, Transition] = {}

    def pending(self, call_id: str) -> bool:
        for t in self.file.read():
            if t.kind == "resolved":
                self.resolved[t.question.tool_call_id] = t
        view = self.file.view()
        return view is not None and any(q.tool_call_id == call_id for q in view.pending)


def _wait(predicate: object, timeout: float) -> bool:
    deadline = time.monotonic() + timeout
    delay = 0.01
    while True:
        if predicate():  # type: ignore[operator]
            return True
        if time.monotonic() > deadline:
            return False
        time.sleep(delay)
        delay = min(delay * 2, 0.1)


def dialog_of(pane: TmuxPane, tool: str) -> Dialog | None:
    screen = capture(pane)
    return find_dialog(screen, tool) if screen is not None else None


def send(pane: TmuxPane, step: Step) -> bool:
    if step.literal is not None:
        return tmux(pane.socket, "send-keys", "-t", pane.pane, "-l", step.literal) is not None
    return tmux(pane.socket, "send-keys", "-t", pane.pane, *step.keys) is not None


def answer(
    options: EngineOptions,
    snapshot: Snapshot,
    spec: str | None,
    call: str | None,
    choices: list[str],
    text: str | None,
    result_timeout: float = RESULT_TIMEOUT_S,
) -> Answered:
    """Deliver the answer. Raises UsageError (exit 2), Refused / Unsupported (exit 1)."""
    if choices and text is not None:
        raise UsageError("give either CHOICE... or --text, not both")
    if not choices and text is None:
        raise UsageError("give the answer: an option number or label, or --text TEXT")
    if spec is None and call is not None:
        holders = [v for v in snapshot.sessions if any(q.tool_call_id == call for q in v.pending)]
        if len(holders) == 1:
            spec = holders[0].ref.key
        elif not holders:
            raise Refused(f"tool call {clean(call, 60)} is not waiting (it was answered, or never asked)")
    view, question = pick(snapshot, spec)
    if call is not None:
        found = [q for q in view.pending if q.tool_call_id == call]
        if not found:
            gone = any(q.tool_call_id == call for q in view.abandoned)
            raise Refused(
                f"tool call {clean(call, 60)} is not waiting"
                + (" (the pi that asked has stopped)" if gone else " (it was answered, or never asked here)")
            )
        question = found[0]
    if question is None:
        if view.abandoned:
            raise Refused(f"the pi that asked has stopped; resume it with: {clean(resume_hint(view))}")
        raise Refused("this session has no question waiting")
    through = by_channel(options, view, question, choices, text, result_timeout)
    if through is not None:
        return through
    if question.tool not in _GUESS:
        raise Unsupported(
            f"no key map for the {clean(question.tool, 40)} tool: answer it in the terminal (pi-notifier goto)"
        )
    plan(_GUESS[question.tool], question, choices or None, text)  # bad usage shows before anything else

    location = locate_sessions([view], with_windows=False).get(view.ref.key)
    if location is None:
        raise Refused(f"no running pi has this session; resume it with: {clean(resume_hint(view))}")
    if location.tmux is None:
        raise Refused("this pi does not run in tmux, so keys cannot be delivered: use pi-notifier goto")
    pane = location.tmux

    session = SessionFile(options, view.ref.key)
    if not session.pending(question.tool_call_id):
        raise Refused("the question is no longer waiting (answered or cancelled meanwhile)")
    dialog = dialog_of(pane, question.tool)
    if dialog is None:
        raise Refused(f"the question's dialog is not on screen in tmux pane {clean(pane.pane)}")
    reason = check_screen(dialog, question)
    if reason:
        raise Refused(reason)
    steps = plan(dialog.variant, question, choices or None, text)
    if text is not None and not any("Type something." in line for line in dialog.lines):
        raise Unsupported("this dialog has no free-text row")

    for i, step in enumerate(steps):
        if i > 0 and dialog_of(pane, question.tool) is None:
            raise Refused("the dialog closed before the answer was complete; check the terminal")
        if i == 0 and not session.pending(question.tool_call_id):  # last look right before typing
            raise Refused("the question is no longer waiting (answered or cancelled meanwhile)")
        if not send(pane, step):
            raise Refused(f"tmux could not send keys to pane {clean(pane.pane)}")
        if step.expect is not None:
            expect = clean(step.expect).casefold()[:40]

            def shows(expect: str = expect) -> bool:
                d = dialog_of(pane, question.tool)
                return d is not None and expect in " ".join(d.lines).casefold()

            if not _wait(shows, STEP_TIMEOUT_S):
                raise Refused("the dialog did not move on as expected; finish it in the terminal")

    if not _wait(lambda: not session.pending(question.tool_call_id), result_timeout):
        raise Refused(f"keys were sent but the session file recorded no answer within {result_timeout:g}s")
    done = session.resolved.get(question.tool_call_id)
    return Answered(question, done.outcome if done else None, done.answer if done else None)


# ---- through the companion extension ----


def channel_dialog(session_file: str, question: Question) -> tuple[str, ExtDialog] | None:
    """The open extension dialog that is this question (its socket too), if its pi has one."""
    real = os.path.realpath(session_file)
    for sock, d in all_open_dialogs():
        if not d.session_file or os.path.realpath(d.session_file) != real:
            continue
        if (
            question.kind == "dialog"
            and d.kind == question.dialog
            and (d.tool_call_id or d.id) == question.tool_call_id
        ):
            return sock, d
        if question.kind == "question" and d.kind == "custom" and d.tool_call_id == question.tool_call_id:
            return sock, d
    return None


def dialog_value(d: ExtDialog, choices: list[str], text: str | None) -> str | bool:
    """The exact value a select / confirm / input dialog gets for CHOICE or --text (UsageError)."""
    if d.kind == "input":
        if text is None:
            raise UsageError("this dialog asks for a text: give it with --text TEXT")
        return text
    if text is not None or len(choices) != 1:
        raise UsageError(f"this {d.kind} dialog takes one choice, not --text")
    choice = choices[0]
    if d.kind == "confirm":
        yes, no = ("yes", "y", "true", "1"), ("no", "n", "false", "2")
        if choice.strip().lower() in yes + no:
            return choice.strip().lower() in yes
        raise UsageError("this confirm dialog takes yes or no")
    options = list(d.options or ())
    if choice.isdigit() and 1 <= int(choice) <= len(options):
        return options[int(choice) - 1]
    for same in (
        lambda o: o == choice,
        lambda o: clean(o) == clean(choice),
        lambda o: clean(o).casefold() == clean(choice).casefold(),
    ):
        hits = [o for o in options if same(o)]
        if len(hits) == 1:
            return hits[0]
    listed = ", ".join(clean(o, 40) for o in options[:8])
    raise UsageError(f"{clean(choice, 60)!r} is not one of the options ({listed})")


def by_channel(
    options: EngineOptions,
    view: SessionView,
    question: Question,
    choices: list[str],
    text: str | None,
    result_timeout: float,
) -> Answered | None:
    """Answer through the extension; ``None`` when this pi has no channel for the question."""
    found = channel_dialog(view.ref.key, question)
    if found is None:
        if question.kind == "dialog":
            raise Refused("the dialog is no longer open (answered or cancelled meanwhile)")
        return None
    sock, d = found
    if d.kind == "editor":
        raise Unsupported(
            "an editor dialog cannot be answered from here: answer it in the terminal (pi-notifier goto)"
        )
    if d.remote is None:
        raise Unsupported("this pi only announces its dialogs: answer it in the terminal (pi-notifier goto)")
    if d.kind == "custom":
        return _by_keys(options, view, question, sock, d, choices, text, result_timeout)
    value = dialog_value(d, choices, text)
    result = answer_dialog(sock, d.id, value)
    if not result.ok:
        raise Refused(clean(result.error or "pi did not take the answer", 200))
    said = ("Yes" if value else "No") if isinstance(value, bool) else value
    return Answered(question, "answered", said)


def _keys_of(step: Step) -> list[str]:
    if step.literal is None:
        return list(step.keys)
    # typed text: never taken for a key name ("up", "enter")
    return list(step.literal) if step.literal.lower() in protocol.KEYS else [step.literal]


def _by_keys(
    options: EngineOptions,
    view: SessionView,
    question: Question,
    sock: str,
    d: ExtDialog,
    choices: list[str],
    text: str | None,
    result_timeout: float,
) -> Answered:
    """A question tool's own dialog: the same checked plan as in tmux, its keys forwarded to the
    component, its mirrored screen checked instead of the pane's."""
    if question.tool not in _GUESS:
        raise Unsupported(f"no key map for the {clean(question.tool, 40)} tool: answer it in the terminal")
    plan(_GUESS[question.tool], question, choices or None, text)  # bad usage shows before anything else
    dialog = find_dialog("\n".join(d.screen or ()), question.tool)
    if dialog is None:
        raise Refused("the question's dialog does not show what pi-notifier knows how to answer")
    reason = check_screen(dialog, question)
    if reason:
        raise Refused(reason)
    steps = plan(dialog.variant, question, choices or None, text)
    if text is not None and not any("Type something." in line for line in dialog.lines):
        raise Unsupported("this dialog has no free-text row")
    session = SessionFile(options, view.ref.key)
    if not session.pending(question.tool_call_id):
        raise Refused("the question is no longer waiting (answered or cancelled meanwhile)")
    for step in steps:
        result = answer_dialog(sock, d.id, keys=_keys_of(step))
        if not result.ok:
            raise Refused(f"pi did not take the keys: {clean(result.error, 200)}")
        if step.expect is not None:
            expect = clean(step.expect).casefold()[:40]

            def shows(expect: str = expect, first: tuple[str, ...] | None = result.screen) -> bool:
                screen = first if first is not None else _screen(sock, d.id)
                return screen is not None and expect in clean(" ".join(screen)).casefold()

            if not shows() and not _wait(lambda: shows(first=None), STEP_TIMEOUT_S):
                raise Refused("the dialog did not move on as expected; finish it in the terminal")
    if not _wait(lambda: not session.pending(question.tool_call_id), result_timeout):
        raise Refused(f"keys were sent but the session file recorded no answer within {result_timeout:g}s")
    done = session.resolved.get(question.tool_call_id)
    return Answered(question, done.outcome if done else None, done.answer if done else None)


def _screen(sock: str, dialog_id: str) -> tuple[str, ...] | None:
    for path, d in all_open_dialogs():
        if path == sock and d.id == dialog_id:
            return d.screen
    return None


# ---- for the window, notification actions and the control channel ----


def answer_line(
    config: Config,
    snapshot: Snapshot,
    session: str,
    call: str,
    choices: list[str],
    text: str | None,
    timeout: float = RESULT_TIMEOUT_S,
) -> tuple[int, str]:
    """``pi-notifier answer`` for the desktop: (the CLI's exit code, one line to show). A remote
    session (``@host:file``) is answered by pi-notifier on that machine, through ssh."""
    from notifier.app import goto, remotes
    from notifier.engine.options import engine_options

    remote = remotes.split(config, session)
    if remote is not None:
        args = ["--call", call, *(["--text", text] if text is not None else []), *choices]
        try:
            code, out, err = remotes.answer_remote(*remote, [*args, "--timeout", f"{timeout:g}"], timeout)
        except remotes.RemoteRefused as exc:
            return 1, clean(exc)
        said = (out if code == 0 else err).strip().splitlines()
        return code, clean(said[-1] if said else f"exit code {code}", 300)
    try:
        done = answer(engine_options(config), snapshot, session, call, choices, text, timeout)
    except (goto.BadSession, UsageError) as exc:
        return 2, clean(exc)
    except (Refused, Unsupported) as exc:
        return 1, clean(exc)
    except Exception as exc:  # never into the UI as a traceback
        log.warning("answer failed: %s", clean(repr(exc), 200))
        return 1, f"not answered ({clean(exc, 160)}): answer it in the terminal"
    if done.outcome not in (None, "answered"):
        return 1, f"pi recorded the question as {done.outcome}: {clean(done.answer or '', 200)}"
    return 0, f"answered: {clean(done.answer or '(recorded)', 300)}"
