"""Extension dialogs on the board (issue 11): what the companion pi extension announces becomes a
pending question of its session, ``kind: "dialog"``.

The :class:`~notifier.companion.watcher.CompanionWatcher` reads every pi's socket on threads of its
own; each event is carried to the engine thread with :meth:`Engine.call`, which alone changes the
board. A ``dialog`` is added
(keyed by socket and dialog id), ``closed`` resolves it, a lost connection (pi gone) abandons its
dialogs, and a ``hello`` (on every (re)connect) brings the board in line with what pi shows now.
A question tool's own ``custom`` dialog is that question (already read from the session file): it
is not shown twice. A dialog not known to wait for a human (a loader while an extension calls the
model) is not on the board: nobody is told of it. A dialog pi shows before it has a session file
(project trust at start-up) belongs to that pi, known by its process and folder
(:func:`notifier.core.dialogs.startup_key`), until its session starts.
"""

from __future__ import annotations

import logging
import os
import time
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

from notifier.companion.sockets import list_sockets
from notifier.core.dialogs import add_dialogs, startup_key
from notifier.core.model import (
    GENERIC_QUESTION,
    Option,
    Outcome,
    Question,
    QuestionItem,
    SessionRef,
    Snapshot,
    Transition,
)
from notifier.core.text import clean
from notifier.pi.catalog import QuestionCatalog
from notifier.sessions import EngineOptions

# ``status`` imports this module (with_open_dialogs): the engine and the companion's watcher
# (watchdog) are never on its path, and its channel and protocol only when a pi has a socket; so
# they are imported where they are used (tests/processes/test_imports.py).
if TYPE_CHECKING:
    from notifier.companion.protocol import Dialog
    from notifier.engine import Engine

log = logging.getLogger(__name__)


def lines_of(text: str) -> list[str]:
    """Multi-line text for the window: every line sanitized, the lines kept."""
    return [clean(line) for line in text.splitlines()]


def question_of(d: Dialog, now: float) -> Question:
    """The pending question a dialog is: ``text`` = its title (one line, as every JSON text), the
    full title (and a gate's whole command) line by line in ``detail``, for the window."""
    title = d.title or ""
    lines = lines_of(title)
    command = d.command
    if command and clean(command) not in clean(title):  # the gate's title does not show it all
        lines += ["", "Command:", *lines_of(command)]
    text = clean(title) or clean(command) or GENERIC_QUESTION
    detail = "\n".join(lines).strip("\n") or None
    item = QuestionItem(text=text, detail=detail, options=tuple(Option(clean(o)) for o in d.options or ()))
    return Question(
        tool_call_id=d.tool_call_id or d.id,
        tool=clean(d.tool, 60) or "dialog",
        items=(item,),
        asked_at=d.at if d.at is not None else now,
        kind="dialog",
        dialog=d.kind,
    )


def is_own_dialog(d: Dialog, catalog: QuestionCatalog) -> bool:
    """A question tool's own dialog (its custom component, or the select / input it falls back
    to): the question itself, read from the session file (a question tool by its name, or by its
    arguments' shape, as the file's call is judged)."""
    if d.tool_call_id is None or d.tool is None:
        return False
    return d.tool in catalog or catalog.kind(d.tool, d.tool_input) is not None


def _inside(path: str, roots: Sequence[str], itself: bool = False) -> bool:
    real = os.path.realpath(path)
    for root in roots:
        top = os.path.realpath(root).rstrip(os.sep)
        if real.startswith(top + os.sep) or (itself and real == top):
            return True
    return False


def ref_of(d: Dialog, roots: Sequence[str]) -> SessionRef | None:
    """The session a dialog belongs to, when its file is in one of the watched folders; before pi
    has a session, its pi (by process and folder), when its sessions will go to a watched folder."""
    if d.session_file:
        return SessionRef(d.session_file, None, d.cwd, None) if _inside(d.session_file, roots) else None
    if d.pid is not None and d.session_dir and _inside(d.session_dir, roots, itself=True):
        return SessionRef(startup_key(d.pid), None, d.cwd, None)
    return None


def counts(d: Dialog, catalog: QuestionCatalog) -> bool:
    """Whether a dialog is a pending question on the board: it waits for a human, and it is not
    a question tool's own dialog (that question is read from the session file)."""
    return d.waits and not is_own_dialog(d, catalog)


class DialogFeed:
    """The companion extension's events → the board, on the engine thread."""

    def __init__(
        self, engine: Engine, folder: str | None = None, wall: Callable[[], float] = time.time
    ) -> None:
        self.engine = engine
        self.wall = wall
        self.started = wall()
        self._files: dict[str, str | None] = {}  # socket → the session file its pi said it writes
        self._bye: set[str] = set()  # sockets whose pi said it closes its session
        from notifier.companion.watcher import CompanionWatcher

        self.watcher = CompanionWatcher(self._event, folder)

    @classmethod
    def attach(cls, engine: Engine, folder: str | None = None) -> DialogFeed | None:
        """Start following the extension's sockets for ``engine``; ``None`` if it cannot here."""
        feed = cls(engine, folder)
        try:
            feed.watcher.start()
        except Exception as exc:  # no runtime folder, no inotify left: everything else still works
            log.warning(
                "cannot follow the companion pi extension (%s); dialogs are not shown", clean(exc, 200)
            )
            return None
        return feed

    def stop(self) -> None:
        self.watcher.stop()

    def _event(self, path: str, event: object) -> None:
        from notifier.companion.protocol import Bye, Closed, Dialog, Hello
        from notifier.companion.watcher import Disconnected

        if isinstance(event, (Hello, Dialog, Closed, Disconnected, Bye)):
            self.engine.call(lambda: self.apply(path, event))

    def apply(self, path: str, event: object) -> list[Transition]:
        """On the engine thread: change the board; the transitions (the engine hands them to
        every sink)."""
        from notifier.companion.protocol import Bye, Closed, Dialog, Hello
        from notifier.companion.watcher import Disconnected

        board, now = self.engine.board, self.wall()
        out: list[Transition] = []
        if isinstance(event, Bye):
            self._bye.add(path)
        if isinstance(event, Hello):
            self._files[path] = event.session_file
            self._bye.discard(path)
            open_ids = {d.id for d in event.dialogs if d.waits}
            for src in board.dialogs.sources(path):
                if src[1] not in open_ids:  # closed while we were not connected: how, we cannot know
                    out += board.dialogs.close(src, "superseded", now)
            for d in event.dialogs:
                out += self._add(path, d, now, initial=d.at is not None and d.at < self.started)
        elif isinstance(event, Dialog):
            out += self._add(path, event, now, initial=False)
        elif isinstance(event, Closed):
            outcome: Outcome = event.outcome
            answer = clean(event.answer) if outcome == "answered" and event.answer is not None else None
            out += board.dialogs.close((path, event.id), outcome, now, answer)
        elif isinstance(event, Disconnected):  # pi quit (or reloaded: its new socket says hello)
            for src in board.dialogs.sources(path):
                out += board.dialogs.close(src, None, now)
            file = self._files.pop(path, None)
            if path not in self._bye and file:  # it died in the middle of its session
                board.local.pi_gone(file)
            self._bye.discard(path)
        return out

    def _add(self, path: str, d: Dialog, now: float, initial: bool) -> list[Transition]:
        ref = ref_of(d, self.engine.options.roots)
        if ref is None or not counts(d, self.engine.options.catalog):
            return []
        return self.engine.board.dialogs.open((path, d.id), ref, question_of(d, now), now, initial)


def with_open_dialogs(snapshot: Snapshot, options: EngineOptions, folder: str | None = None) -> Snapshot:
    """``snapshot`` (a one-shot scan: ``status``, ``answer``) with the dialogs pi shows right now."""
    if not list_sockets(folder):
        return snapshot  # no pi has the extension loaded (nothing to connect to)
    from notifier.companion.channel import all_open_dialogs

    now = time.time()
    found = []
    for _path, d in all_open_dialogs(folder):
        ref = ref_of(d, options.roots)
        if ref is not None and counts(d, options.catalog):
            found.append((ref, question_of(d, now)))
    return add_dialogs(snapshot, found) if found else snapshot
