"""All sessions at once (pure): the board composes its sources and merges them into snapshots.

Each source owns its own state and says which sessions changed: this machine's session files
(:mod:`notifier.core.local_sessions`, with their liveness), sessions on other machines
(:mod:`notifier.core.remote_sessions`) and the dialogs pi shows that are not in a session file
(:mod:`notifier.core.dialogs`). Callers feed the source that owns the thing; every change returns
its transitions. A snapshot builds again only the views of sessions that changed since the last
one; the others are the same objects as before (:mod:`notifier.core.session_views`).
"""

from __future__ import annotations

from notifier.core.dialogs import Dialogs, dialog_view, with_dialogs
from notifier.core.local_sessions import LocalSessions
from notifier.core.model import SessionView, Snapshot
from notifier.core.remote_sessions import RemoteSessions
from notifier.core.session_views import SessionViews


class Board:
    def __init__(self, liveness: bool = True) -> None:
        self.local = LocalSessions(liveness)
        self.remote = RemoteSessions()
        self.dialogs = Dialogs(self.local.ref_of)  # (a dialog's session is named as its file says)
        self._views = SessionViews()

    def view(self, key: str) -> SessionView | None:
        """One session as a snapshot shows it (``None``: not on the board)."""
        remote = self.remote.view(key)
        if remote is not None:
            return remote
        dialogs = self.dialogs.of(key)
        local = self.local.view(key)
        if local is not None:
            return with_dialogs(local, [q for _, q in dialogs])
        if dialogs:  # a session whose file is not read (yet): its dialogs still show
            return dialog_view(dialogs[0][0], [q for _, q in dialogs])
        return None

    def clear_abandoned(self, key: str, tool_call_id: str | None = None) -> bool:
        """The user dismissed an abandoned question (or all of a session's): stop listing it."""
        if key in self.remote:
            return self.remote.clear_abandoned(key, tool_call_id)
        return self.local.clear_abandoned(key, tool_call_id)

    def snapshot(self, now: float) -> Snapshot:
        """The board now: the views of sessions that changed since the last snapshot are built
        again, the others are the same objects as before (shared in chunks, see SessionViews)."""
        changed = self.local.take_changed()
        changed |= self.remote.take_changed() | self.dialogs.take_changed()
        views, local = self._views, self.local
        if self.dialogs or self.remote:
            for key in changed:
                view = self.view(key)
                if view is not None:
                    views.set(key, view)
                else:
                    views.remove(key)
        elif not views:  # the first snapshot, after the start-up scan: all new, in bulk
            views.add_new([(key, view) for key in changed if (view := local.view(key)) is not None])
        else:  # only this machine's sessions (the common case): nothing to merge in
            for key in changed:
                view = local.view(key)
                if view is not None:
                    views.set(key, view)
                else:
                    views.remove(key)
        return Snapshot(views.snapshot(), now)
