"""A question as the user was shown it, in 16 hex digits (its ``token``): a digest of its tool call
id, its tool, and each of its questions' text and option labels, in order (pure).

Every way of answering from outside pi carries the token of what its user saw (the window, a
notification's button, ``answer --token`` from ``status --json``) and is refused when the question
waiting has another: the same call id with another text never happens in pi, but a digest of what
was shown says so without relying on that, and ties an answer to what its user read."""

from __future__ import annotations

import hashlib

from notifier.core.model import Question


def question_token(q: Question) -> str:
    parts = [q.tool_call_id, q.tool]
    for item in q.items:
        parts += ["\x1e", item.text, *(o.label for o in item.options)]
    data = "\x1f".join(parts).encode("utf-8", "backslashreplace")
    return hashlib.sha256(data).hexdigest()[:16]
