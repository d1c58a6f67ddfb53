"""What a running pi shows of itself (pure), for telling pis in one folder apart
(:mod:`notifier.core.owners` weighs it): when a session was created, pi's arguments, its pane.

- **created**: a pi creates its session after it starts, so the header's time (read from the
  UUIDv7 session id, else the file name, :func:`created_at`) is never before its start. A pi that
  started later can have the session only by resuming it.
- **argv** ``--session X`` / ``--session-id X`` where pi's arguments can be read (pi 1.6 and 0.73
  set their process title, so usually they cannot): exact for that session (:func:`names`);
  ``-c`` / ``--resume`` say it resumed some session (:func:`resumes`).
- **screen**: the tmux pane shows the pending question *exactly* (:func:`shows`: the full question
  text as whole lines, every option label ending a line, in the dialog area at the bottom); a
  pane showing pi's empty input box (:func:`idle_editor`: no dialog open) counts against it.
"""

from __future__ import annotations

import posixpath
import re
from collections.abc import Sequence
from datetime import datetime, timezone

from notifier.core.text import clean

# ---- when a session was created ----

_NAME_TIME = re.compile(r"^(\d{4}-\d\d-\d\dT\d\d)-(\d\d)-(\d\d)-(\d{3})Z_")
_UUID7 = re.compile(r"^([0-9a-f]{8})-([0-9a-f]{4})-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$")


def created_at(file: str, session_id: str | None) -> float | None:
    """When pi created the session (its header's time, epoch seconds), from what names it: a
    UUIDv7 session id holds it to the millisecond (pi 0.67.1+), a default file name
    ``<timestamp>_<id>.jsonl`` to the millisecond too; ``None`` where neither tells."""
    m = _UUID7.match(session_id.lower()) if session_id else None
    if m is not None:
        return int(m.group(1) + m.group(2), 16) / 1000.0
    n = _NAME_TIME.match(posixpath.basename(file.replace("\\", "/")))
    if n is not None:
        try:
            at = datetime.strptime(f"{n.group(1)}:{n.group(2)}:{n.group(3)}.{n.group(4)}", "%Y-%m-%dT%H:%M:%S.%f")
        except ValueError:
            return None
        return at.replace(tzinfo=timezone.utc).timestamp()
    return None


# ---- pi's arguments ----

_RESUME_FLAGS = frozenset({"-c", "--continue", "-r", "--resume"})


def _session_args(argv: Sequence[str]) -> tuple[list[str], list[str], bool]:
    """(``--session`` values, ``--session-id`` values, whether it resumes some older session)."""
    named: list[str] = []
    ids: list[str] = []
    resumes = False
    i = 0
    while i < len(argv):
        arg = argv[i]
        key, eq, val = arg.partition("=")
        if key in ("--session", "--session-id"):
            if not eq:
                i += 1
                val = argv[i] if i < len(argv) else ""
            if val:
                (named if key == "--session" else ids).append(val)
                resumes = resumes or key == "--session"
        elif arg in _RESUME_FLAGS:
            resumes = True
        i += 1
    return named, ids, resumes


def resumes(argv: Sequence[str]) -> bool:
    """Whether pi's arguments say it resumed some older session (``-c``, ``--resume``, ``--session``)."""
    return _session_args(argv)[2]


def names(argv: Sequence[str], cwd: str, file: str, session_id: str | None) -> bool:
    """Whether pi's arguments (run in ``cwd``) name this very session (``file``, ``session_id``)."""
    named, ids, _ = _session_args(argv)
    if session_id in ids:
        return True
    for val in named:
        if "/" in val or val.endswith(".jsonl"):
            if posixpath.normpath(posixpath.join(cwd, val)) == posixpath.normpath(file):
                return True
        elif session_id and len(val) >= 4 and session_id.startswith(val):
            return True
    return False


# ---- what a pane shows ----

_RULE = re.compile(r"^[─━═-]{20,}$")


def _rules(raw: list[str]) -> list[int]:
    # (pi's own rules start at column 0; an editor inside a dialog draws its rules indented)
    return [i for i, line in enumerate(raw) if _RULE.match(line.rstrip())]


def _region(screen: str) -> list[str]:
    """The pane's lines (cleaned) from the rule above pi's editor area (where a dialog is drawn)
    down: pi draws a rule above and below its editor, so the dialog is below the second-to-last
    rule at column 0. A screen with fewer rules: all of it."""
    raw = screen.splitlines()
    rules = _rules(raw)
    start = rules[-2] if len(rules) >= 2 else 0
    return [clean(line) for line in raw[start:]]


def _flat(text: str) -> str:
    return " ".join(clean(text).split()).casefold()


def _has_text(lines: list[str], want: str) -> bool:
    """Whether ``want`` is some run of whole lines (wrapped lines joined by a space)."""
    for i in range(len(lines)):
        joined = ""
        for line in lines[i:]:
            if not line:
                break
            joined = f"{joined} {line}" if joined else line
            if joined == want:
                return True
            if len(joined) >= len(want) or not want.startswith(joined):
                break
    return False


def shows(screen: str, text: str, options: Sequence[str] = ()) -> bool:
    """Whether the pane shows this question exactly in its dialog area: the full question text as
    whole lines (wrapped lines joined) and every option label at the end of a line (after its
    number or marker). A look-alike (same beginning, other text or other options) does not."""
    want = _flat(text)
    if not want:
        return False
    lines = [_flat(line) for line in _region(screen)]
    if not _has_text(lines, want):
        return False
    for label in options:
        lab = _flat(label)
        if lab and not any(line == lab or line.endswith(" " + lab) or line.endswith("." + lab) for line in lines):
            return False
    return True


def idle_editor(screen: str) -> bool:
    """Whether the pane shows pi's input box empty: no dialog is open there (a dialog, whatever
    its tool, is drawn in that box). Only this counts against a pi asking a question: a dialog
    that shows its question otherwise (a later tab, a free-text editor) is not judged by its text."""
    raw = screen.splitlines()
    rules = _rules(raw)
    if len(rules) < 2:
        return False
    return not any(line.strip() for line in raw[rules[-2] + 1 : rules[-1]])
