"""What the notification server shows for the sink's planner handles, and the server coming,
going and coming back: what was showing when it went away is shown again when it is back. The
record of what is on screen, and of what a run before ours left there, is :mod:`.bubbles`.

Used on the sink's worker thread only (``start`` before it runs, ``stop`` after it ended)."""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Any

from notifier.core.model import Item, Key, Notice
from notifier.core.text import markup
from notifier.sinks.notify.backend import Backend, BackendError, NullBackend, ServerGone
from notifier.sinks.notify.bubbles import Bubbles
from notifier.sinks.notify.choose import TRAY_ALONE
from notifier.sinks.notify.render import Message, render
from notifier.system.log import LogOnce
from notifier.system.paths import session_address

log = logging.getLogger(__name__)

RECONNECT_S = 30.0  # after the session bus itself went away, look for it again this often
FLUSH_S = 0.5  # how long a shown notification waits for its record to be written (a crash right after)


class Screen:
    def __init__(
        self,
        choose: Callable[[], tuple[Backend, str]],
        clock: Callable[[], float],
        show_text: bool,
        on_shown: Callable[[list[Key]], None] | None = None,
        backend: Backend | None = None,
        store: Any = None,
        instead: str = TRAY_ALONE,
    ) -> None:
        """``store``: where the notifications on screen are recorded (:class:`~notifier.store.Store`'s
        bubbles), so that the run after a crash closes those whose question was answered."""
        self._choose = choose
        self.store = store
        self.bubbles = Bubbles(store)
        self.instead = instead  # what shows questions while notifications cannot (for the log)
        self.clock = clock
        self.show_text = show_text
        self.on_shown = on_shown  # a server took these questions: remember them as notified
        self.backend = backend
        self.why = ""
        self.handles: dict[int, int] = {}  # planner handle → server id (0: not on screen)
        self.keys: dict[int, list[Key]] = {}  # planner handle → question keys
        self.notices: dict[int, Notice] = {}  # planner handle → the question notice it shows now
        self.reconnect_at: float | None = None
        self._say_once = LogOnce(log)  # a backend that failed, by name
        self._ever_online = False
        self._told_down = False  # the user was told notifications are not shown (until they are back)
        self._asking_again = False  # reconnect_at is for asking an odd server again (not a lost bus)

    def start(self) -> None:
        """Choose the backend (unless one was given) and say once whether it can show anything."""
        if self.backend is None:
            self.backend, self.why = self._choose()
            if self.backend.online:
                self._ever_online = True
                log.info("notifications: %s", self.why)
            else:
                log.warning("%s", self.why)  # told once; the server appearing later is logged too
                if isinstance(self.backend, NullBackend) and session_address() is not None:
                    self.reconnect_at = self.clock() + RECONNECT_S  # a bus that is not up yet
                self._ask_again(self.clock())
        # what a run before ours (which crashed: nobody closed it) left on this very server
        self.bubbles.adopt(self._owner())

    def _owner(self) -> str:
        backend = self.backend
        return backend.owner if backend is not None and backend.online else ""

    def settle_orphans(self, pending: set[Key]) -> None:
        """The questions pending now (the engine's first snapshot): a notification left by a
        run before ours for questions no longer pending is closed (:meth:`Bubbles.over`)."""
        for nid in self.bubbles.over(pending):
            self._close_orphan(nid)

    def ended(self, keys: set[Key]) -> None:
        """These questions ended (answered, abandoned, gone): a notification left by a run before
        ours closes when none of its questions is left."""
        for nid in self.bubbles.ended(keys):
            self._close_orphan(nid)

    def _close_orphan(self, nid: int) -> None:
        self.bubbles.forget(nid)
        backend = self.backend
        if backend is not None and self._owner():
            self.safe(lambda: backend.close(nid))
            self._recorded(nid, None)

    def _recorded(self, server_id: int, keys: list[Key] | None) -> None:
        self.bubbles.record(self._owner(), server_id, keys)

    def stop(self) -> None:
        """Withdraw what is showing and let the backend go."""
        backend = self.backend
        if backend is not None:
            if backend.online:
                owner = self._owner()
                for server_id in list(self.handles.values()):
                    if server_id:
                        try:
                            backend.close(server_id)
                        except BackendError:
                            break
                self.bubbles.stopped(owner)
            backend.shutdown()

    def withdraw(self, handle: int) -> None:
        server_id = self.handles.pop(handle, 0)
        self.keys.pop(handle, None)
        self.notices.pop(handle, None)
        backend = self.backend
        if server_id and backend is not None and backend.online:
            self.safe(lambda: backend.close(server_id))
            self._recorded(server_id, None)

    def put(self, notice: Notice) -> None:
        """Show a notice for its handle (replacing what that shows); what waits for an answer is
        shown again when the server comes back."""
        if notice.kind not in ("idle", "failed"):
            self.notices[notice.handle] = notice
        self.keys[notice.handle] = [i.key for i in notice.items]
        self.handles.setdefault(notice.handle, 0)
        if notice.restored and self._adopted(notice):
            return
        self.show(notice)

    def _adopted(self, notice: Notice) -> bool:
        """A bubble put back after a restart that a run before ours (which crashed) left on screen
        already: that one is the handle's, not a second one."""
        nid = self.bubbles.claim(self._owner(), {i.key for i in notice.items})
        if nid is not None:
            self.handles[notice.handle] = nid
        return nid is not None

    def dismiss(self, handle: int, server_id: int) -> None:
        """Take a handle's notification off screen for good (snoozed from the bubble)."""
        # a resident notification stays after an action: snoozing is the user saying "not now"
        self.handles[handle] = 0
        self.notices.pop(handle, None)  # not shown again if the server comes back
        backend = self.backend
        if backend is not None and backend.online:
            self.safe(lambda: backend.close(server_id))
            self._recorded(server_id, None)

    def tell(self, title: str, body: str) -> None:
        """A passing notification of its own (not a question's: never shown again)."""
        backend = self.backend
        if backend is not None and backend.online:
            message = Message(
                markup(title, 120, entities=False), markup(body, 600, entities=backend.markup), actions=()
            )
            self.safe(lambda: backend.show(message, 0))

    def handle_for(self, server_id: int) -> int | None:
        for handle, sid in list(self.handles.items()):
            if sid == server_id:
                return handle
        return None

    def keys_of(self, handle: int) -> list[Key]:
        """The questions the handle's notification shows (none: not one of ours)."""
        return self.keys.get(handle, [])

    def question_of(self, handle: int) -> Item | None:
        """The one question the handle's notification asks (None: a group, a turn's, not ours)."""
        notice = self.notices.get(handle)
        return notice.items[0] if notice is not None and len(notice.items) == 1 else None

    def show(self, notice: Notice) -> None:
        """Put one notice on screen (replacing what its handle shows); remembered as notified only
        once a server took it, so a question nobody saw is announced again after a restart."""
        backend = self.backend
        if backend is None or not backend.online:
            return
        message = render(notice, self.show_text, backend.markup)
        keys = [i.key for i in notice.items]
        replaces = self.handles.get(notice.handle, 0)
        if not replaces and self._owner():  # a bubble a run before ours left with these questions:
            replaces = self.bubbles.take(keys) or 0  # re-used, not a second one popping up
        if replaces:  # (its id known: recorded before the call, so a crash in it loses nothing)
            self._recorded(replaces, keys)
        server_id = self.safe(lambda: backend.show(message, replaces))
        if server_id is None:
            return
        self.handles[notice.handle] = server_id
        if server_id != replaces:  # (a new bubble: the one replaced was closed meanwhile)
            if replaces:
                self._recorded(replaces, None)
            self._recorded(server_id, keys)
        if self.on_shown is not None:
            self.on_shown(keys)
        if self.store is not None:  # (what is on screen is in the file before anything else)
            self.store.flush(FLUSH_S)
        for nid in self.bubbles.sharing(keys):  # (this one shows them now)
            self._close_orphan(nid)

    def safe(self, fn: Callable[[], Any]) -> Any:
        try:
            return fn()
        except ServerGone as exc:
            self.went_away(exc.what, self.clock())
            return None
        except BackendError as exc:
            name = self.backend.name if self.backend else "?"
            self._say_once("", name, "notifications through %s failed (%s); trying again with the next one", name, exc)
            return None

    # ---- the server coming and going ----

    def went_away(self, what: str, now: float) -> None:
        backend = self.backend
        was_online = backend is not None and backend.online
        self.bubbles.server_gone(self._owner())
        if backend is not None:
            backend.went_away()
        self.handles = dict.fromkeys(self.handles, 0)  # those bubbles went with the server
        if what == "bus":
            if self.reconnect_at is None or self._asking_again:
                self._asking_again = False
                if self._told_down:  # the server usually goes first (it was on that bus): told already
                    log.debug("the session bus closed too; looking for it every %d s", RECONNECT_S)
                else:
                    log.warning("the session bus went away — %s until it is back", self.instead)
                self._told_down = True
            self.reconnect_at = now + RECONNECT_S
        elif was_online:
            log.warning("the notification server went away — %s until one is back", self.instead)
            self._told_down = True

    def on_server(self, event: str, now: float) -> None:
        backend = self.backend
        if event in ("down", "lost"):
            self.went_away("bus" if event == "lost" else "server", now)
            return
        if backend is None or not backend.connected:
            return  # (only a bus connection reports the server coming)
        was_online = backend.online
        if not backend.probe():  # (a new owner that does not answer: asked again later)
            self._ask_again(now)
        else:  # a new owner: another server, or the same one restarted
            self.handles = dict.fromkeys(self.handles, 0)
            self.bubbles.new_server(self._owner())  # (the old one's went with it)
            if was_online:
                what = "another notification server took over"
            elif self._ever_online:
                what = "the notification server is back"
            else:
                what = "a notification server appeared"
            self._ever_online = True
            self._told_down = False
            log.warning("notifications: %s: %s", what, backend.describe())
            self.show_again()

    def _ask_again(self, now: float) -> None:
        """A server owns the name but its answers were no use (still starting, stuck): ask it
        again in a while, in case it comes round without a restart."""
        backend = self.backend
        if backend is not None and backend.found == "odd" and self.reconnect_at is None:
            self.reconnect_at = now + RECONNECT_S
            self._asking_again = True

    def reconnect(self, now: float) -> None:
        """The bus went away: try once more (quietly; coming back is logged once). On a bus still
        there whose server answered oddly, ask that server again."""
        current = self.backend
        if current is not None and current.connected and not current.online:
            self.reconnect_at = None
            self._asking_again = False
            self.on_server("up", now)
            return
        backend, why = self._choose()
        if not backend.connected:  # (still no bus: only a bus connection follows the server)
            backend.shutdown()
            self.reconnect_at = now + RECONNECT_S
            return
        old, self.backend, self.why = self.backend, backend, why
        if old is not None:
            old.shutdown()
        self.reconnect_at = None
        self._told_down = not backend.online
        log.warning("notifications: the session bus is back; %s", why)
        if backend.online:
            self.show_again()

    def show_again(self) -> None:
        for notice in list(self.notices.values()):
            self.show(notice)
