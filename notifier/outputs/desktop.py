"""Desktop notifications: the output fed by the engine's transitions and turn changes. It asks the
pure :class:`notifier.core.planner.Planner` what to raise and withdraw (quiet hours:
:mod:`notifier.core.planner`), and delivers that on a worker thread (D-Bus replies never hold up the
engine): the app's one outputs thread (:class:`~notifier.system.supervisor.Worker`, shared
with the tray and the window), kept running by its supervisor: if it fails it
runs again (back-off, said once) with what is queued and what the planner knows (already notified
questions stay quiet); only the message it was handling then is dropped.

- the backend: D-Bus (:mod:`notifier.outputs.dbus`), else plyer (under WSL: Windows' own toast
  through PowerShell, else plyer), else nothing (the tray alone), chosen where it can really
  deliver (:mod:`notifier.outputs.backends`).
- the screen (:class:`Screen`): what the server shows for the planner's handles, the server coming,
  going and coming back (what was showing is shown again), and the record of what is on screen
  (:class:`Bubbles`, in the store), so that a run after a crash re-uses a bubble still on screen
  (``replaces_id``) or closes it once its questions are over, never adds a second one.
- what a notification says and offers: :mod:`notifier.outputs.render`.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from functools import partial
from typing import TYPE_CHECKING, Any

from notifier.config import Config
from notifier.core.codec import question_token
from notifier.core.commands import Answer, Command, Focus, Goto, Show, Snooze
from notifier.core.model import (
    Action,
    Notice,
    QuestionKey,
    Snapshot,
    Withdraw,
    key_of,
    split_key,
)
from notifier.core.planner import Planner, Silences, in_quiet_hours, next_quiet_change, parse_quiet_hours
from notifier.core.text import markup
from notifier.outputs.backends import TRAY_ALONE, choose_backend
from notifier.outputs.dbus import Backend, BackendError, DBusBackend, ServerGone
from notifier.outputs.render import ANSWER_PREFIX, REPLY, TURNS, Message, option_actions, render, takes_text
from notifier.store import Store
from notifier.system.focus import FocusFollower, items_focused
from notifier.system.log import LogOnce
from notifier.system.paths import session_address
from notifier.system.supervisor import Worker

if TYPE_CHECKING:
    from notifier.engine import Batch

log = logging.getLogger(__name__)

SNOOZE_S = 15 * 60
MAX_WAIT_S = 60.0
RECONNECT_S = 30.0  # after the session bus itself went away, look for it again this often
INTENT = -1  # the id recorded for a notification asked for whose id the server has not said yet
DISMISSED = -2  # the id the questions are recorded under whose notification the user dismissed

_BOOTTIME = getattr(time, "CLOCK_BOOTTIME", None)  # (Linux)


# ---- what is on screen ----

class Bubbles:
    """The record of what is on screen, kept in the store: which bubble (the server's id) shows
    which questions, written with the Notify; and, at start-up, the bubbles a run before ours
    left on screen (``leftovers``: re-used in place or closed, never shown beside)."""

    def __init__(self, store: Store) -> None:
        """``store``: where the bubbles are recorded (in memory only: nothing left over)."""
        self.store = store
        self.leftovers: dict[int, set[QuestionKey]] = {}  # a run before ours showed these (id → questions)
        self.dismissed: set[QuestionKey] = set()  # questions whose notification the user dismissed (or it expired)

    def adopt(self, server_key: str) -> None:
        """The notifications a run before ours showed on this very server (``server_key``) become
        ours to close; the records of other servers went with them."""
        if not server_key:
            return
        for (shown_on, nid), keys in self.store.bubbles().items():
            if shown_on == server_key and nid == DISMISSED:
                self.dismissed = set(keys)
            elif shown_on == server_key and nid != INTENT:
                self.leftovers[nid] = set(keys)
            elif shown_on == server_key:  # (killed inside the Notify call: that bubble, if any, has no known id)
                log.warning("a run before this one stopped while showing a notification for %d questions;"
                            " if it is on screen, it cannot be closed from here", len(keys))
        self.store.keep_bubbles_of(server_key)
        self.store.drop_bubbles(server_key, INTENT)

    def leftovers_to_close(self, pending: set[QuestionKey]) -> list[int]:
        """The left-over notifications none of whose questions is pending now (the engine's first
        snapshot). A remote host's questions are not known yet then (its link is still
        connecting): they stay until those questions end."""
        shown = {k for keys in self.leftovers.values() for k in keys}
        return self.ended({k for k in shown if k not in pending and split_key(k[0])[0] is None})

    def ended(self, keys: set[QuestionKey]) -> list[int]:
        """These questions ended: the left-over notifications with none of their questions left
        (no longer left over: to be closed)."""
        for left in self.leftovers.values():
            left -= keys
        self.dismissed -= keys
        return self._pop([nid for nid, left in self.leftovers.items() if not left])

    def _pop(self, nids: list[int]) -> list[int]:
        for nid in nids:
            del self.leftovers[nid]
        return nids

    def take(self, keys: list[QuestionKey]) -> int | None:
        """The left-over notification that shows the most of ``keys`` (None: none shows any): it
        is no longer left over, but the one to replace with what shows them now."""
        wanted = set(keys)
        best = max(self.leftovers, key=lambda nid: len(self.leftovers[nid] & wanted), default=None)
        if best is None or not self.leftovers[best] & wanted:
            return None
        del self.leftovers[best]
        return best

    def sharing(self, keys: list[QuestionKey]) -> list[int]:
        """The left-over notifications that show one of ``keys`` (shown anew now: to be closed)."""
        return self._pop([nid for nid, left in self.leftovers.items() if left & set(keys)])

    def stopped(self, server_key: str) -> None:
        """Ours are closed; those a run before ours left, still asked, stay on screen (recorded):
        the next run closes them."""
        if server_key:
            with self.store.together():
                self.store.drop_bubbles(server_key)
                for nid, keys in [*self.leftovers.items(), (DISMISSED, self.dismissed)]:
                    if keys:
                        self.store.put_bubble(server_key, nid, keys)


@dataclass
class Shown:
    """What one of the planner's handles shows: its notice now, and the server's notification
    (0: not on screen)."""

    notice: Notice
    server_id: int = 0
    closed: bool = False  # the user dismissed it (or it expired): a change to it is not shown


class Screen:
    """What the notification server shows for the planner's handles (``shown``): a notice shown,
    replaced in place or closed, the server going and coming back (what was showing is shown
    again), and the record of it all (:class:`Bubbles`)."""

    def __init__(
        self,
        choose: Callable[[], tuple[Backend, str]],
        clock: Callable[[], float],
        show_text: bool,
        backend: Backend | None = None,
        store: Store | None = None,
        instead: str = TRAY_ALONE,
    ) -> None:
        """``store``: where the notifications on screen are recorded, so that the run after a
        crash closes those whose question was answered, and the questions shown (None: memory)."""
        self._choose = choose
        self.store = Store(None) if store is None else store
        self.bubbles = Bubbles(self.store)
        self.instead = instead  # what shows questions while notifications cannot (for the log)
        self.clock = clock
        self.show_text = show_text
        self.backend = backend
        self.shown: dict[int, Shown] = {}  # by the planner's handle
        self.reconnect_at: float | None = None
        self._say_once = LogOnce(log)  # a backend that failed, by name
        self._ever_online = False
        self._told_down = False  # the user was told notifications are not shown (until they are back)
        self._asking_again = False  # reconnect_at is for asking an odd server again (not a lost bus)

    def start(self) -> None:
        """Choose the backend (unless one was given) and say once whether it can show anything."""
        if self.backend is None:
            self.backend, why = self._choose()
            if self.backend.online:
                self._ever_online = True
                log.info("notifications: %s", why)
            else:
                log.warning("%s", why)  # told once; the server appearing later is logged too
                if self.backend.name == "none" and session_address() is not None:
                    self.reconnect_at = self.clock() + RECONNECT_S  # a bus that is not up yet
                self._ask_again(self.clock())
        # what a run before ours (which crashed: nobody closed it) left on this very server
        self.bubbles.adopt(self._server_key())

    def _server_key(self) -> str:
        backend = self.backend
        return backend.server_key if backend is not None and backend.online else ""

    def close_leftovers(self, pending: set[QuestionKey]) -> None:
        """The questions pending now (the engine's first snapshot): a notification left by a
        run before ours for questions no longer pending is closed
        (:meth:`Bubbles.leftovers_to_close`)."""
        for nid in self.bubbles.leftovers_to_close(pending):
            self._close(nid)

    def ended(self, keys: set[QuestionKey]) -> None:
        """These questions ended (answered, abandoned, gone): a notification left by a run before
        ours closes when none of its questions is left."""
        dismissed = len(self.bubbles.dismissed)
        for nid in self.bubbles.ended(keys):
            self._close(nid)
        if len(self.bubbles.dismissed) != dismissed:
            self._recorded(DISMISSED, sorted(self.bubbles.dismissed) or None)

    def _close(self, server_id: int) -> None:
        """Take one notification of the server's off screen, and out of the record."""
        backend = self.backend
        if server_id and backend is not None and backend.online:
            self._call_backend(lambda: backend.close(server_id))
            self._recorded(server_id, None)

    def _recorded(self, server_id: int, keys: list[QuestionKey] | None) -> None:
        """Record (``keys``) or forget (None) one notification on the server's screen
        (``server_id`` :data:`INTENT`: one asked for, its id not known yet)."""
        server_key = self._server_key()
        if not server_key or not server_id:
            return
        if keys is None:
            self.store.drop_bubbles(server_key, server_id)
        else:
            self.store.put_bubble(server_key, server_id, keys)

    def stop(self) -> None:
        """Withdraw what is showing and let the backend go."""
        backend = self.backend
        if backend is not None:
            if backend.online:
                server_key = self._server_key()
                for shown in list(self.shown.values()):
                    if shown.server_id:
                        try:
                            backend.close(shown.server_id)
                        except BackendError:
                            break
                self.bubbles.stopped(server_key)
            backend.shutdown()

    def closed(self, server_id: int) -> None:
        """The server's notification ``server_id`` was dismissed by the user or expired: it stays
        closed, also across a restart (its questions recorded as dismissed, not as on screen)."""
        for shown in self.shown.values():
            if shown.server_id == server_id and not shown.closed:
                shown.closed = True
                self.bubbles.dismissed |= set(shown.notice.question_keys)
                with self.store.together():
                    self._recorded(server_id, None)
                    self._recorded(DISMISSED, sorted(self.bubbles.dismissed))

    def withdraw(self, handle: int) -> None:
        """Take a handle's notification off screen for good (not shown again if the server comes
        back): the question ended, or the user snoozed it from the bubble (a resident notification
        stays after an action: snoozing is the user saying "not now")."""
        shown = self.shown.pop(handle, None)
        if shown is not None:
            self._close(shown.server_id)

    def put(self, notice: Notice) -> None:
        """Show a notice for its handle (replacing what that shows); what waits for an answer is
        shown again when the server comes back. An update (:attr:`Notice.update`) changes only a
        bubble on screen: where its handle shows none (skipped, snoozed from the bubble, the server
        gone, a backend that cannot replace), nothing pops up for it."""
        if notice.update:
            current = self.shown.get(notice.handle)
            if current is not None:
                current.notice = notice  # (what the server is shown if it comes back)
                if current.server_id and not current.closed:
                    self.show(current)
            return
        shown = self.shown.setdefault(notice.handle, Shown(notice))
        shown.notice = notice
        if notice.restored and set(notice.question_keys) <= self.bubbles.dismissed:
            shown.closed = True  # (dismissed before a restart: its next reminder raises it)
            return
        self.show(shown)

    def tell(self, title: str, body: str) -> None:
        """A passing notification of its own (not a question's: never shown again)."""
        backend = self.backend
        if backend is not None and backend.online:
            message = Message(
                markup(title, 120, entities=False), markup(body, 600, entities=backend.markup), actions=()
            )
            self._call_backend(lambda: backend.show(message, 0))

    def showing(self, server_id: int) -> Notice | None:
        """The notice the server's notification ``server_id`` shows (None: not one of ours)."""
        return next((s.notice for s in self.shown.values() if s.server_id == server_id), None)

    def show(self, shown: Shown) -> None:
        """Put one notice on screen (replacing what its handle shows); remembered as notified only
        once a server took it, so a question nobody saw is announced again after a restart.

        What may be on screen is in the file before the call (the bubble replaced, or an intent
        whose id the reply brings) and the id right after, both written now, in this thread: a
        kill before or after the call leaves the next run what it needs to re-use or close the
        bubble (a kill inside the call, while the server picks the id, leaves only the intent).
        A change to what is on screen, or a put-back of what was before a restart (in place, or
        anew where no bubble was left: the app closes its bubbles when it quits), is not heard:
        the question was announced once."""
        backend = self.backend
        if backend is None or not backend.online:
            return
        keys = shown.notice.question_keys
        replaces, taken = self._claim(shown)
        message = render(shown.notice, self.show_text, backend.markup)
        if shown.notice.restored or (replaces and shown.notice.update):
            message = replace(message, silent=True)
        self._recorded(replaces or INTENT, keys)
        self.store.commit()
        server_id = self._call_backend(lambda: backend.show(message, replaces))
        self._record_shown(shown, replaces, server_id)
        if server_id is None:
            if taken and backend.online:
                shown.server_id, shown.closed = taken, False
            return
        for nid in self.bubbles.sharing(keys):  # (this one shows them now)
            self._close(nid)

    def _claim(self, shown: Shown) -> tuple[int, int]:
        """``(replaces, taken)``: the bubble the notice is drawn in, and which of that was taken
        from what a run before ours left (0: none).

        A bubble left on screen with these questions is re-used, not a second one popping up.
        It is drawn anew, so that it reads what waits now and its buttons are ours (a server may
        send a click only to the connection that showed the bubble: dunst does). Should the
        server, still there, refuse to draw it anew (Plasma's "too many similar notifications"),
        it still shows them, as recorded, and the notice closes it with them (:meth:`show`); a
        server gone took it along."""
        if shown.server_id or not self._server_key():
            return shown.server_id, 0
        taken = self.bubbles.take(shown.notice.question_keys) or 0
        return taken, taken

    def _record_shown(self, shown: Shown, replaces: int, server_id: int | None) -> None:
        """After the call: the intent gives way to the id the server gave (one transaction), and
        the questions are notified."""
        keys = shown.notice.question_keys
        with self.store.together():
            if not replaces:
                self._recorded(INTENT, None)
            if server_id is not None:
                shown.server_id, shown.closed = server_id, False  # (on screen again, whatever it was)
                if server_id != replaces:  # (a new bubble: the one replaced was closed meanwhile)
                    if replaces:
                        self._recorded(replaces, None)
                    self._recorded(server_id, keys)
                self.store.mark_notified(keys)  # a server took these questions
                if self.bubbles.dismissed & set(keys):  # (on screen again)
                    self.bubbles.dismissed -= set(keys)
                    self._recorded(DISMISSED, sorted(self.bubbles.dismissed) or None)
        self.store.commit()  # (in the file before anything else)

    def _call_backend(self, fn: Callable[[], Any]) -> Any:
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
        if server_key := self._server_key():  # (what it showed went with it)
            self.store.drop_bubbles(server_key)
        self._screen_gone()
        if backend is not None:
            backend.online = False  # (until :meth:`Backend.probe` finds one)
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
            self._screen_gone()
            if server_key := self._server_key():  # (only its records are kept: the old one's went with it)
                self.store.keep_bubbles_of(server_key)
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

    def _screen_gone(self) -> None:
        """What the server showed is gone (it went away, or another took over)."""
        self.bubbles.leftovers.clear()
        self.bubbles.dismissed.clear()
        for shown in self.shown.values():
            shown.server_id = 0

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
        old, self.backend = self.backend, backend
        if old is not None:
            old.shutdown()
        self.reconnect_at = None
        self._told_down = not backend.online
        log.warning("notifications: the session bus is back; %s", why)
        if backend.online:
            self.show_again()

    def show_again(self) -> None:
        for shown in list(self.shown.values()):
            if shown.notice.kind not in TURNS:  # (what waits for an answer)
                self.show(shown)


# ---- the output ----

def boot_clock() -> float:
    """Seconds on a clock nobody sets that runs on while the machine sleeps (Linux's boot time;
    elsewhere the monotonic clock): a snooze until 08:00 ends at 08:00 and a reminder due 10
    minutes after the question comes at once after a longer sleep, however long it slept."""
    return time.monotonic() if _BOOTTIME is None else time.clock_gettime(_BOOTTIME)


class Notifier:
    """Fed by the engine thread; does its own timing (settle, reminders) on a worker thread.

    Whether notifications can be shown is decided once at start (and logged once); after that the
    server coming, going and coming back arrive as events and are logged once each way. What is
    showing when the server goes away is shown again when it is back."""

    def __init__(
        self,
        config: Config,
        store: Store | None = None,
        *,
        execute: Callable[[Command], object] = lambda command: None,
        backend: Backend | None = None,
        clock: Callable[[], float] = boot_clock,
        wall: Callable[[], float] = time.time,
        instead: str | None = None,
        worker: Worker,
    ) -> None:
        """``execute``: carries out what the user asks of a notification, as the app's commands:
        ``Goto`` (the default action, "Go to session"), ``Answer`` (an option's button, a text
        typed into it), ``Snooze`` ("Snooze 15 min"), ``Show`` (the window). ``backend``: the one to
        use (else chosen at start). ``clock`` times every duration (settle, reminders, snoozes,
        reconnecting: by default a clock that runs on while the machine sleeps); ``wall`` only tells a question's age
        from its time, the time of day (quiet hours) and when a snooze ends in the store.
        ``instead``: what shows questions while notifications cannot (said in the log; None: the
        tray icon). ``worker``: the thread it runs on (the app's one outputs thread, which the app
        starts; its failures are recorded where the worker's supervisor records them)."""
        self.instead = TRAY_ALONE if instead is None else instead
        self.execute = execute
        self.config = config
        self.store = Store(None) if store is None else store  # (None: memory, for this run)
        self.clock = clock
        self.wall = wall
        self.show_text = bool(config["notifications.show_text"])
        self.quiet_window = parse_quiet_hours(config["quiet_hours"])
        self.planner = Planner(
            settle_s=config["settle_ms"] / 1000.0,
            remind_after_s=tuple(m * 60.0 for m in config["remind_after"]),
            notified=self.store.notified(),
            reminded=self.store.reminders(),
            notify_on=frozenset(s for s in config["notify_on"] if s in ("idle", "failed")),
        )
        self._screen = Screen(self._choose, clock, self.show_text, backend, self.store, self.instead)
        self._stop = threading.Event()
        self._tick_at: float | None = None  # clock() the worker was asked to wake for the timers
        self._worker = worker
        self._focus = FocusFollower(self._worker) if config["notifications.skip_when_focused"] else None

    def _choose(self) -> tuple[Backend, str]:
        expire = self.config["notifications.expire"]
        dbus = partial(
            DBusBackend,
            on_action=self.on_server_action,
            on_reply=self.on_server_reply,
            on_closed=self.on_server_closed,
            on_server=self._server_event,
            expire=expire,
            sound=self.config["notifications.sound"],
            worker=self._worker,  # (the bus is read there)
        )
        return choose_backend(self.config["notifications.backend"], dbus, expire=expire, instead=self.instead)

    def start(self) -> None:
        """Start on the outputs thread, its first job: the server is looked for there (connecting,
        and asking what it is and can do, are round trips: seconds with a server that stalls),
        never on the thread that starts it (the engine's, as a headless run's turn comes)."""
        self._worker.put(self._start_screen)
        self._worker.add(self)
        if self._focus is not None:  # (what is focused, followed from now on: its events read here)
            self._worker.put(self._focus.start)

    def _start_screen(self) -> None:
        """(The outputs thread.) Look for the server, unless stopped meanwhile; stopped while it
        looked (a server that stalls past the stop's wait), let go of what it found."""
        if self._stop.is_set():
            return
        self._screen.start()
        if self._stop.is_set() and self._screen.backend is not None:
            self._screen.backend.shutdown()

    def stop(self, close: bool = True) -> None:
        """Once. ``close``: False leaves what is on screen (the app that notifies now adopts it)."""
        if self._stop.is_set():
            return
        self._stop.set()  # (what is handed over from now on is dropped)
        self._worker.remove(self)
        if self._focus is not None:
            self._worker.put(self._focus.stop)
        if not self._worker.sync(2.0) and self._focus is not None:  # (what it was doing ends first)
            self._focus.stop()  # (the worker's thread does not run: nothing reads the events)
        if close:
            self._screen.stop()
        elif self._screen.backend is not None:
            self._screen.backend.shutdown()

    # The engine's output protocol (engine thread): hand over, never block.
    def ready(self, info: Any, snapshot: Snapshot) -> None:
        pending = {key_of(view.ref, q) for view, q in snapshot.pending}
        self._put(lambda now: self._screen.close_leftovers(pending))  # what a run before ours left

    def publish(self, batch: Batch) -> None:
        if self._stop.is_set():  # (stopped: nobody would read them)
            return
        self._put(partial(self._batch, batch))

    # Control (any thread): the user's snoozes and mutes, from their keeper (the app).
    def set_silences(self, silences: Silences) -> None:
        self._put(partial(self._silences, silences))

    def set_quiet_hours(self, value: str) -> None:
        """New quiet hours (the config file changed; a value the config accepted)."""
        window = parse_quiet_hours(value)
        self._put(lambda now: setattr(self, "quiet_window", window))  # (what they held: announced as the job ends)

    @property
    def online(self) -> bool:
        """Whether a notification server shows what this notifier raises, now."""
        return self._screen.backend is not None and self._screen.backend.online

    def tell(self, title: str, body: str) -> None:
        """One passing notification (what a click on a notification could not do, and what to do
        instead), from any thread."""
        self._put(lambda now: self._screen.tell(title, body))

    # ---- worker ----

    def _put(self, job: Callable[[float], Any]) -> None:
        """Have the worker run ``job(now)``; the notices and withdrawals it returns are delivered."""
        self._worker.put(partial(self._handle, job))  # (what fails there is the worker's supervisor's)

    # The worker's part: its timers (settle, reminders, quiet hours' end, reconnecting).
    def due_in(self) -> float | None:
        now = self.clock()
        waits = [due - now for due in (self.planner.next_due(), self._screen.reconnect_at) if due is not None]
        if self.planner.quiet_held:  # what quiet hours hold is announced when they end, on time
            wall = self.wall()
            ends = next_quiet_change(self.quiet_window, wall)
            waits.append(MAX_WAIT_S if ends is None else max(0.0, ends - wall) + 0.01)
        # (Capped: quiet hours end at a time of day, on the wall clock.)
        timeout = min(MAX_WAIT_S, max(0.0, min(waits))) if waits else None
        self._tick_at = None if timeout is None else now + timeout
        return timeout

    def run_due(self) -> None:
        """(After the worker's wait: what is due now, if the wait was for it.)"""
        if self._tick_at is not None and self.clock() >= self._tick_at:
            self._handle(lambda now: None)  # (what is due: settle, reminders, quiet hours' end)

    def _handle(self, job: Callable[[float], Any]) -> None:
        """Every job of the notifier's on the outputs thread comes here: ``job`` changes the planner (new
        transitions: what to withdraw at once), then the planner's ``tick`` says what is due now
        (a question past its settle window, a reminder, a start-up summary) and it is delivered."""
        if self._stop.is_set():  # (stopped: what is handed over is dropped)
            return
        now, wall = self.clock(), self.wall()
        reconnect_at = self._screen.reconnect_at
        if reconnect_at is not None and now >= reconnect_at:
            self._screen.reconnect(now)
        actions: list[Notice | Withdraw] = list(job(now) or ())
        quiet = in_quiet_hours(self.quiet_window, wall)
        if quiet:  # quiet hours: turn notices are dropped (questions wait for their reminders)
            actions = [a for a in actions if not (isinstance(a, Notice) and a.kind in TURNS)]
        held, actions = self.planner.quiet_held, actions + self.planner.tick(now, quiet)
        if self.planner.quiet_held > held:
            log.debug("quiet hours: %d question(s) held until they end", self.planner.quiet_held)
        self._deliver(actions)

    def _batch(self, batch: Batch, now: float) -> list[Notice | Withdraw]:
        """One batch of the engine's: its transitions fed to the planner (what ended is withdrawn
        at once); then the pending questions whose pi the board found to wait for a human, maybe
        only now (in this batch, or with no transition at all): no settle window for them (the
        board's judgement, not made again here); then the turns that ended."""
        actions = self.planner.feed(list(batch.transitions), now, self.wall()) if batch.transitions else []
        ended = {key_of(t.session, t.question) for t in batch.transitions if t.kind != "needs_input"}
        if ended:
            self._screen.ended(ended)
        pending = batch.snapshot.pending
        self.planner.known_askers((key_of(v.ref, q) for v, q in pending if v.asker is not None), now)
        return actions + [a for change in batch.turns for a in self.planner.turn(change, now)]

    def _silences(self, silences: Silences, now: float) -> None:
        self.planner.silences = silences.shifted(now - self.wall())  # (snoozes end on our clock)

    def _deliver(self, actions: Sequence[Notice | Withdraw]) -> None:
        if self._screen.backend is None:
            return
        for action in actions:
            if isinstance(action, Withdraw):
                self._screen.withdraw(action.handle)
            elif not action.update and self._focus is not None and items_focused(action.items, self._focus.front):
                continue  # the user is looking at that session (the tray still counts it)
            else:
                self._screen.put(action)
        reminded = self.planner.drain_reminded()
        if reminded:
            self.store.mark_reminded(reminded)

    # ---- server signals (read on the worker, or after a call on its thread; carried out on the worker) ----

    def _server_event(self, event: str) -> None:
        self._put(lambda now: self._screen.on_server(event, now))

    def on_server_action(self, server_id: int, action: str) -> None:
        """The user chose ``action`` on the server's notification ``server_id`` (any thread)."""
        self._put(lambda now: self._clicked(server_id, action))

    def on_server_reply(self, server_id: int, text: str) -> None:
        """The user typed ``text`` into the server's notification ``server_id`` (any thread)."""
        self._put(lambda now: self._clicked(server_id, REPLY, text))

    def on_server_closed(self, server_id: int) -> None:
        """The user dismissed the server's notification ``server_id``, or it expired (any thread)."""
        self._put(lambda now: self._screen.closed(server_id))

    def _clicked(self, server_id: int, action: str, text: str | None = None) -> list[Action]:
        """What the user chose on a notification (``text``: typed into it), as the app's command,
        built now from the notice it shows."""
        notice = self._screen.showing(server_id)
        if notice is None:
            return []  # another application's notification
        sessions = sorted({key[0] for key in notice.question_keys})
        if action == "snooze":
            until = self.wall() + SNOOZE_S  # (kept in the store: wall time)
            for session_key in sessions:
                self.execute(Snooze(until, session_key))  # the app's silences: set_silences() back
            log.info("snoozed %d session(s) for 15 min", len(sessions))
            return self.planner.put_off(notice.handle, self.clock() + SNOOZE_S)  # (back when it ends)
        elif text is not None or action.startswith(ANSWER_PREFIX):
            # an answer as ``answer`` gives it (an option by its row's number, never taken for a
            # label; or the text), only where this very notification offered it: never a dialog's
            item = notice.items[0] if len(notice.items) == 1 and notice.kind not in TURNS else None
            if item is None or not (
                takes_text(item.question, self.show_text)
                if text is not None
                else action in dict(option_actions(item.question, self.show_text))
            ):
                log.warning("ignored the notification's %r: not what it offered", action)
                return []
            choices = () if text is not None else ("#" + action[len(ANSWER_PREFIX) :],)
            self.execute(Answer(*item.key, choices, text, token=question_token(item.question)))
        elif action in ("default", "goto") and len(sessions) == 1:
            self.execute(Goto(*notice.question_keys[0]))
        else:
            session, call = notice.question_keys[0] if notice.question_keys else (None, None)
            self.execute(Show(Focus(session, call) if session and call else None))
        return []
