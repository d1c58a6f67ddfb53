"""``pi-notifier answer``: answer a waiting pi's question from here: through the companion
extension when that pi has it (exact for select / confirm / input, keys forwarded to a custom
dialog such as a question tool's, never an editor: ``answer_channel``), else by keys into its tmux
pane (``answer_tmux``). Both take the session file as the judge (``answer_session``).
"""

from __future__ import annotations

import logging

from notifier.actions import goto, over_ssh
from notifier.actions.answer_channel import by_channel
from notifier.actions.answer_session import RESULT_TIMEOUT_S, Answered
from notifier.actions.answer_tmux import by_tmux
from notifier.actions.goto import Refused, pick, resume_advice
from notifier.config import Config
from notifier.core.model import Question, Snapshot, question_token
from notifier.core.text import clean
from notifier.pi.keymaps import Unsupported, UsageError
from notifier.sessions import EngineOptions, engine_options

log = logging.getLogger(__name__)

__all__ = ["RESULT_TIMEOUT_S", "Answered", "answer", "answer_line"]


def answer(
    options: EngineOptions,
    snapshot: Snapshot,
    spec: str | None,
    call: str | None,
    choices: list[str],
    text: str | None,
    result_timeout: float = RESULT_TIMEOUT_S,
    token: str | None = None,
) -> Answered:
    """Deliver the answer (to the question ``call``, or with ``token``, or else the one ``spec``
    names). Raises UsageError (exit 2), Refused / Unsupported (exit 1)."""
    if choices and text is not None:
        raise UsageError("give either CHOICE... or --text, not both")
    if not choices and text is None:
        raise UsageError("give the answer: an option number or label, or --text TEXT")
    if call is None and token is not None:
        call, spec = _by_token(snapshot, spec, token)
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
            raise Refused(f"the pi that asked has stopped; {resume_advice(view)}")
        raise Refused("this session has no question waiting")
    if token is not None and question_token(question) != token:
        raise Refused(f"the question waiting is no longer the one shown: it asks {_named(question)}; nothing was typed")
    through = by_channel(options, view, question, choices, text, result_timeout)
    if through is not None:
        return through
    return by_tmux(options, view, question, choices, text, result_timeout, snapshot.sessions)


def _named(q: Question) -> str:
    return f"{clean(q.text, 80)!r} (call {clean(q.tool_call_id, 60)}, token {question_token(q)})"


def _by_token(snapshot: Snapshot, spec: str | None, token: str) -> tuple[str, str]:
    """(the call, its session) of the waiting question with ``token`` (in the session ``spec``
    names, if given); Refused, naming what waits instead, when none has it."""
    views = [pick(snapshot, spec)[0]] if spec is not None else list(snapshot.sessions)
    found = [(q, v) for v in views for q in v.pending if question_token(q) == token]
    if len(found) == 1:
        q, v = found[0]
        return q.tool_call_id, v.ref.key
    waiting = [q for v in views for q in v.pending]
    instead = f"; waiting now: {_named(waiting[0])}" if waiting else "; no question waits now"
    raise Refused(f"no question waiting is the one shown (token {clean(token, 40)}){instead}; nothing was typed")


# ---- for the window, notification actions and the control channel ----


def answer_line(
    config: Config,
    snapshot: Snapshot,
    session: str,
    call: str,
    choices: list[str],
    text: str | None,
    timeout: float = RESULT_TIMEOUT_S,
    token: str | None = None,
) -> tuple[int, str]:
    """``pi-notifier answer`` for the desktop: (the CLI's exit code, one line to show). A remote
    session (``@host:file``) is answered by pi-notifier on that machine, through ssh."""
    if token is not None:  # what the user saw must be what waits, before anything goes anywhere
        shown = [q for v in snapshot.sessions if v.ref.key == session for q in v.pending if q.tool_call_id == call]
        if shown and question_token(shown[0]) != token:
            return 1, f"not answered: the question waiting is no longer the one shown ({_named(shown[0])})"
    remote = over_ssh.split(config, session)
    if remote is not None:
        args = ["--call", call, *(["--text", text] if text is not None else []), *choices]
        try:
            code, out, err = over_ssh.answer_remote(*remote, [*args, "--timeout", f"{timeout:g}"], timeout)
        except over_ssh.RemoteRefused as exc:
            return 1, clean(exc)
        said = (out if code == 0 else err).strip().splitlines()
        return code, clean(said[-1] if said else f"exit code {code}", 300)
    try:
        done = answer(engine_options(config), snapshot, session, call, choices, text, timeout, token)
    except (goto.BadSession, UsageError) as exc:
        return 2, clean(exc)
    except (Refused, Unsupported) as exc:
        return 1, clean(exc)
    except Exception as exc:  # never into the UI as a traceback
        log.warning("answer failed: %s", clean(repr(exc), 200))
        return 1, f"not answered ({clean(exc, 160)}): answer it in the terminal"
    note = f" (note: {clean(done.note, 300)})" if done.note else ""
    if done.outcome not in (None, "answered"):
        return 1, f"pi recorded the question as {done.outcome}: {clean(done.answer or '', 200)}{note}"
    return 0, f"answered: {clean(done.answer or '(recorded)', 300)}{note}"
