"""The record of the notifications on screen (kept in the store, by server, so that the run after
a crash closes those whose question was answered), and those a run before ours left there: it
ended without closing them, so they are ours to close once their questions are over. Ids are a
server's own (another server, or the same one restarted, starts again at 1): a record names the
server by its unique bus name (``owner``), and another server's records are never used.

Bookkeeping only: the screen (:mod:`.screen`) closes what this says is over."""

from __future__ import annotations

from typing import Any

from notifier.core.model import Key, split_key


class Bubbles:
    def __init__(self, store: Any = None) -> None:
        """``store``: :class:`~notifier.store.Store`'s bubbles, or None (nothing recorded,
        nothing left over)."""
        self.store = store
        self.orphans: dict[int, set[Key]] = {}  # a run before ours showed these (id → questions)

    def adopt(self, owner: str) -> None:
        """The notifications a run before ours showed on this very server (``owner``) become ours
        to close; the records of other servers went with them."""
        if self.store is None or not owner:
            return
        for (server, nid), keys in self.store.bubbles().items():
            if server == owner:
                self.orphans[nid] = set(keys)
        self.store.keep_bubbles_of(owner)

    def record(self, owner: str, server_id: int, keys: list[Key] | None) -> None:
        """Record (``keys``) or forget (None) one notification on ``owner``'s screen."""
        if self.store is None or not owner or not server_id:
            return
        if keys is None:
            self.store.drop_bubbles(owner, server_id)
        else:
            self.store.put_bubble(owner, server_id, keys)

    def over(self, pending: set[Key]) -> list[int]:
        """The left-over notifications none of whose questions is pending now (the engine's first
        snapshot). A remote host's questions are not known yet then (its link is still
        connecting): they stay until those questions end."""
        for keys in self.orphans.values():
            keys -= {k for k in keys if k not in pending and split_key(k[0])[0] is None}
        return [nid for nid, keys in self.orphans.items() if not keys]

    def ended(self, keys: set[Key]) -> list[int]:
        """These questions ended: the left-over notifications with none of their questions left."""
        for left in self.orphans.values():
            left -= keys
        return [nid for nid, left in self.orphans.items() if not left]

    def claim(self, owner: str, keys: set[Key]) -> int | None:
        """The left-over notification that shows all of ``keys`` (a question put back after a
        restart): it is no longer left over, but the one that shows them."""
        for nid, left in list(self.orphans.items()):
            if keys <= left:
                del self.orphans[nid]
                self.record(owner, nid, sorted(left))
                return nid
        return None

    def take(self, keys: list[Key]) -> int | None:
        """The left-over notification that shows the most of ``keys`` (None: none shows any): it
        is no longer left over, but the one to replace with what shows them now."""
        wanted = set(keys)
        best = max(self.orphans, key=lambda nid: len(self.orphans[nid] & wanted), default=None)
        if best is None or not self.orphans[best] & wanted:
            return None
        del self.orphans[best]
        return best

    def forget(self, nid: int) -> None:
        """The left-over notification ``nid`` is closed: no longer left over."""
        self.orphans.pop(nid, None)

    def sharing(self, keys: list[Key]) -> list[int]:
        """The left-over notifications that show one of ``keys`` (shown anew now)."""
        return [nid for nid, left in self.orphans.items() if left & set(keys)]

    def server_gone(self, owner: str) -> None:
        """The server went away (or another took over): what it showed went with it."""
        if owner and self.store is not None:
            self.store.drop_bubbles(owner)
        self.orphans.clear()

    def new_server(self, owner: str) -> None:
        """A new server owns the name: only its records are kept."""
        self.orphans.clear()
        if self.store is not None and owner:
            self.store.keep_bubbles_of(owner)

    def stopped(self, owner: str) -> None:
        """Ours are closed; those a run before ours left, still asked, stay on screen (recorded):
        the next run closes them."""
        if owner and self.store is not None:
            self.store.drop_bubbles(owner)
            for nid, keys in self.orphans.items():
                self.store.put_bubble(owner, nid, keys)
