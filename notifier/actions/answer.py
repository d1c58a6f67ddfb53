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
from notifier.config.load import Config
from notifier.core.model import Snapshot
from notifier.core.text import clean
from notifier.engine.options import EngineOptions, engine_options
from notifier.pi.keymaps import Unsupported, UsageError

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
            raise Refused(f"the pi that asked has stopped; {resume_advice(view)}")
        raise Refused("this session has no question waiting")
    through = by_channel(options, view, question, choices, text, result_timeout)
    if through is not None:
        return through
    return by_tmux(options, view, question, choices, text, result_timeout, snapshot.sessions)


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
