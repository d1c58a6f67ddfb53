"""``pi-notifier answer [SESSION] [--call ID] CHOICE... | --text TEXT``: answer a waiting pi from
here (the work is :mod:`notifier.actions.answer`)."""

from __future__ import annotations

import argparse
import sys

from notifier.actions import goto
from notifier.cli.parser import fail, out, say, sessions_of, waiting_remote
from notifier.config import Config
from notifier.core.codec import question_token
from notifier.core.model import Snapshot
from notifier.core.text import clean, number
from notifier.remote import Remote

MAX_TIMEOUT_S = 3600  # answer --timeout: how long to wait for pi to record an answer, at most


def _split_answer_words(words: list[str], snapshot: Snapshot, text: bool) -> tuple[str | None, list[str]]:
    """[SESSION] CHOICE...: the first word is the session when it names one and more follow (or
    with --text, when it is the only word)."""
    if not words:
        return None, []
    if text or len(words) >= 2:
        try:
            goto.pick(snapshot, words[0])
            return words[0], words[1:]
        except goto.Ambiguous:  # (one line naming the sessions it could be)
            if text or not (number(words[0]) is not None and len(words[0]) <= 3):  # (not an option number)
                raise
        except goto.BadSession:
            if text:
                raise
    return None, words


def _said_of_words(exc: Exception, words: list[str], snapshot: Snapshot, text: bool) -> str:
    """The one line for a CHOICE that is no option: the word was meant as SESSION (alone: a
    session; first of several: nor a session)."""
    said = str(exc)
    if text or not words or not said.startswith(f"no option is called {clean(words[0], 60)!r}"):
        return said
    from notifier.core.commands import label
    from notifier.pi.keys import options_said

    try:
        view, question = goto.pick(snapshot, words[0])
    except (goto.BadSession, goto.Refused):
        return f"{said}; nor is any session called so" if len(words) > 1 else said
    if len(words) > 1:
        return said
    shown = options_said(question.options if question is not None else ())
    return f"{clean(words[0], 60)!r} is a session ({label(view)}): give a CHOICE after it{shown} or --text"


def _session_and_choices(args: argparse.Namespace, snapshot: Snapshot) -> tuple[str | None, list[str]]:
    """SESSION (None: next) and the CHOICEs of ``answer``'s words; ``next`` first is SESSION
    whatever waits here (the question waiting longest may be a remote's). Raises UsageError."""
    from notifier.pi.keys import UsageError

    session: str | None
    if args.words[:1] == ["next"] and (len(args.words) > 1 or args.text is not None):
        session, choices = "next", list(args.words[1:])
    else:
        session, choices = _split_answer_words(list(args.words), snapshot, args.text is not None)
    if args.text is not None and choices:
        raise UsageError("give either CHOICE... or --text, not both")
    return session, choices


def cmd_answer(args: argparse.Namespace, config: Config) -> int:
    """answer [SESSION] [--call ID] CHOICE... | --text TEXT: 0 answered, 1 not delivered, 2 bad usage."""
    from notifier.actions.answer import answer
    from notifier.pi.keys import Unsupported, UsageError

    if not 0 < args.timeout <= MAX_TIMEOUT_S:  # (NaN is none of them)
        return fail(2, f"--timeout takes a number of seconds above 0, up to {MAX_TIMEOUT_S}")
    remote = goto.remote_target(config, args.words[0] if args.words else None)
    if remote is not None:  # devbox:SESSION CHOICE… — answered by pi-notifier on the remote
        return _answer_remote(*remote, args.words[1:], args)
    options, snapshot = sessions_of(config, args.words[0] if args.words else None, dialogs=True)
    try:
        session, choices = _session_and_choices(args, snapshot)
        remote = waiting_remote(config, args.token) if session in (None, "next") else None
        if remote is not None:  # the question waiting longest (or with the token) is a remote's
            return _answer_remote(*remote, choices, args)
        done = answer(options, snapshot, session, args.call, choices, args.text, args.timeout, args.token)
    except UsageError as exc:
        return fail(2, _said_of_words(exc, list(args.words), snapshot, args.text is not None))
    except goto.BadSession as exc:
        return fail(2, exc)
    except (goto.Refused, Unsupported) as exc:
        return fail(1, exc)
    if args.call is None and args.token is None:  # the caller did not name it: say which it was
        q = done.question
        out(f"question: {clean(q.text, 200)} (call {clean(q.tool_call_id, 60)}, token {question_token(q)})\n")
    if done.note:
        say(f"note: {clean(done.note, 400)}")
    if done.outcome not in (None, "answered"):
        return fail(1, f"pi recorded the question as {done.outcome}: {clean(done.answer or '', 200)}")
    out(f"answered: {clean(done.answer or '(recorded)', 300)}\n")
    return 0


def _answer_remote(remote: Remote, spec: str, choices: list[str], args: argparse.Namespace) -> int:
    """``pi-notifier answer`` run by pi-notifier on the remote: its exit code, its output here
    (each line sanitized; its errors named after the remote)."""
    try:
        code, said, err = goto.answer_remote(
            remote, spec, choices, args.timeout, call=args.call, token=args.token, text=args.text
        )
    except goto.RemoteRefused as exc:
        return fail(1, exc)
    out(*(clean(line) + "\n" for line in said.splitlines()))
    if err:
        sys.stderr.write("".join(f"{clean(remote.name)}: {clean(line)}\n" for line in err.splitlines()))
    return code
