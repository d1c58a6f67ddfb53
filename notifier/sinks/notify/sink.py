"""The notification sink: fed by the engine's transitions and turn changes, it asks the pure
:class:`notifier.core.planner.Planner` what to raise and withdraw, and delivers that through the
chosen backend on its own worker thread (D-Bus replies never hold up the engine). It follows the
server coming, going and coming back, and shows again what was on screen. The worker is kept
running by a :class:`~notifier.system.supervisor.Supervisor`: if it fails it runs again (back-off,
said once) with what is queued and what the planner knows (already notified questions stay quiet);
only the message it was handling then is dropped."""

from __future__ import annotations

import logging
import queue
import threading
import time
from collections.abc import Callable, Sequence
from typing import Any

from notifier.config import Config
from notifier.core.commands import Answer, Command, Focus, Goto, Show, Snooze
from notifier.core.model import Notice, Snapshot, Transition, TurnChange, Withdraw, key_of, question_token
from notifier.core.planner import Planner, Preferences, in_quiet_hours, next_quiet_change, parse_quiet_hours
from notifier.core.text import clean
from notifier.sinks.notify.backend import Backend
from notifier.sinks.notify.choose import TRAY_ALONE, choose_backend
from notifier.sinks.notify.render import ANSWER_PREFIX, option_actions, takes_text
from notifier.sinks.notify.screen import Screen
from notifier.system.focus import items_focused
from notifier.system.processes import still_running
from notifier.system.supervisor import FailureLog, Supervisor

log = logging.getLogger(__name__)

SNOOZE_S = 15 * 60
MAX_WAIT_S = 60.0
_BOOTTIME = getattr(time, "CLOCK_BOOTTIME", None)  # (Linux)


def awake_or_asleep() -> float:
    """Seconds on a clock nobody sets that runs on while the machine sleeps (Linux's boot time;
    elsewhere the monotonic clock): a snooze until 08:00 ends at 08:00 and a reminder due 10
    minutes after the question comes at once after a longer sleep, however long it slept."""
    return time.monotonic() if _BOOTTIME is None else time.clock_gettime(_BOOTTIME)


class AlertSink:
    """Fed by the engine thread; does its own timing (settle, reminders) on a worker thread.

    Whether notifications can be shown is decided once at start (and logged once); after that the
    server coming, going and coming back arrive as events and are logged once each way. What is
    showing when the server goes away is shown again when it is back."""

    def __init__(
        self,
        config: Config,
        store: Any = None,
        *,
        execute: Callable[[Command], object] = lambda command: None,
        backend: Backend | None = None,
        clock: Callable[[], float] = awake_or_asleep,
        wall: Callable[[], float] = time.time,
        instead: str | None = None,
        health: FailureLog | None = None,
    ) -> None:
        """``execute``: carries out what the user asks of a notification, as the app's commands:
        ``Goto`` (the default action, "Go to session"), ``Answer`` (an option's button, a text
        typed into it), ``Snooze`` ("Snooze 15 min"), ``Show`` (the window). ``backend``: the one to
        use (else chosen at start). ``clock`` times every duration (settle, reminders, snoozes,
        reconnecting: by default a clock that runs on while the machine sleeps); ``wall`` only tells a question's age
        from its time, the time of day (quiet hours) and when a snooze ends in the store.
        ``instead``: what shows questions while notifications cannot (said in the log; None: the
        tray icon). ``health``: where the worker's failures are recorded (shared with the app)."""
        self.instead = TRAY_ALONE if instead is None else instead
        self.execute = execute
        self.config = config
        self.store = store
        self.clock = clock
        self.wall = wall
        self.show_text = bool(config["notifications.show_text"])
        self.skip_focused = bool(config["notifications.skip_when_focused"])
        self.quiet_window = parse_quiet_hours(config["quiet_hours"])
        self.planner = Planner(
            settle_s=config["settle_ms"] / 1000.0,
            remind_after_s=tuple(m * 60.0 for m in config["remind_after"]),
            notified=store.notified() if store is not None else set(),
            reminded=store.reminders() if store is not None else {},
            notify_on=frozenset(s for s in config["notify_on"] if s in ("idle", "failed")),
        )
        self._inbox: queue.Queue[Any] = queue.Queue()
        self._screen = Screen(
            self._choose,
            clock,
            self.show_text,
            store.mark_notified if store is not None else None,
            backend,
            store,
            self.instead,
        )
        self._stop = threading.Event()
        self._supervisor = Supervisor("notifier", self._stop, health)
        self._thread = threading.Thread(
            target=self._supervisor.run, args=(self._run,), name="pi-notifier-alerts", daemon=True
        )

    def _choose(self) -> tuple[Backend, str]:
        return choose_backend(
            self.config["notifications.backend"],
            on_action=self.on_server_action,
            on_reply=self.on_server_reply,
            on_server=self._server_event,
            expire=self.config["notifications.expire"],
            sound=self.config["notifications.sound"],
            instead=self.instead,
        )

    def start(self) -> None:
        self._screen.start()
        self._thread.start()

    def stop(self, close: bool = True) -> None:
        """Once. ``close``: False leaves what is on screen (the app that notifies now adopts it)."""
        if self._stop.is_set():
            return
        self._stop.set()
        self._inbox.put(None)
        self._thread.join(2)
        if close:
            self._screen.stop()
        elif self._screen.backend is not None:
            self._screen.backend.shutdown()

    # Sink protocol (engine thread): hand over, never block.
    def ready(self, info: Any, snapshot: Snapshot) -> None:
        self._inbox.put(("ready", {key_of(view.ref, q) for view, q in snapshot.pending}))

    def transitions(self, items: Sequence[Transition], snapshot: Snapshot) -> None:
        if self._stop.is_set():  # (stopped: nobody would read them)
            return
        if items:
            self._inbox.put(("transitions", list(items)))
        else:  # the board changed without a transition: a pi found to wait for a human, maybe
            self._inbox.put(("askers", snapshot))

    def turns(self, items: Sequence[TurnChange]) -> None:
        if not self._stop.is_set():
            self._inbox.put(("turns", list(items)))

    # Control (any thread): the user's snoozes and mutes, from their owner (the app).
    def set_preferences(self, preferences: Preferences) -> None:
        self._inbox.put(("preferences", preferences))

    def set_quiet_hours(self, value: str) -> None:
        """New quiet hours (the config file changed; a value the config accepted)."""
        self._inbox.put(("quiet", parse_quiet_hours(value)))

    @property
    def shows(self) -> bool:
        """Whether a notification server shows what this sink raises, now."""
        return self._screen.backend is not None and self._screen.backend.online

    def tell(self, title: str, body: str) -> None:
        """One passing notification (what a click on a notification could not do, and what to do
        instead), from any thread."""
        self._inbox.put(("tell", (title, body)))

    # ---- worker ----

    def _run(self) -> None:
        while not self._stop.is_set():
            due = self.planner.next_due()
            reconnect_at = self._screen.reconnect_at
            if reconnect_at is not None:
                due = reconnect_at if due is None else min(due, reconnect_at)
            # (Capped: quiet hours end at a time of day, on the wall clock.)
            timeout = None if due is None else min(MAX_WAIT_S, max(0.0, due - self.clock()))
            if self.planner.held:  # what quiet hours hold is announced when they end, on time
                wall = self.wall()
                ends = next_quiet_change(self.quiet_window, wall)
                until_end = MAX_WAIT_S if ends is None else min(MAX_WAIT_S, max(0.0, ends - wall) + 0.01)
                timeout = until_end if timeout is None else min(timeout, until_end)
            try:
                msg = self._inbox.get(timeout=timeout)
            except queue.Empty:
                msg = ("tick", None)
            if msg is None:
                return
            self._handle(msg)  # (what fails here is the supervisor's: the worker runs again)

    def _handle(self, msg: tuple[str, Any]) -> None:
        kind, arg = msg
        now, wall = self.clock(), self.wall()
        actions: list[Notice | Withdraw] = []
        reconnect_at = self._screen.reconnect_at
        if reconnect_at is not None and now >= reconnect_at:
            self._screen.reconnect(now)
        if kind == "transitions":
            actions += self.planner.feed([_checked(t) for t in arg], now, wall)
            ended = {key_of(t.session, t.question) for t in arg if t.kind != "needs_input"}
            if ended:
                self._screen.ended(ended)
        elif kind == "ready":  # what a run before ours left on screen for questions now over
            self._screen.settle_orphans(arg)
        elif kind == "askers":  # (their questions need no settle window)
            askers = [(key_of(v.ref, q), v.asker) for v, q in arg.pending if v.asker is not None]
            self.planner.known_askers((k for k, asker in askers if still_running(*asker)), now)
        elif kind == "turns":
            for change in arg:
                actions += self.planner.turn(change, now)
        elif kind == "preferences":
            self.planner.preferences = arg.shifted(now - wall)  # (snoozes end on our clock)
        elif kind == "action":
            self._on_action(*arg)
        elif kind == "reply":
            self._on_reply(*arg)
        elif kind == "server":
            self._screen.on_server(arg, now)
        elif kind == "tell":
            self._screen.tell(*arg)
        elif kind == "quiet":
            self.quiet_window = arg  # (ended now: what they held is announced below)
        quiet = in_quiet_hours(self.quiet_window, wall)
        if quiet:  # quiet hours: turn notices are dropped (questions wait for their reminders)
            actions = [a for a in actions if not (isinstance(a, Notice) and a.kind in ("idle", "failed"))]
        held, actions = self.planner.held, actions + self.planner.tick(now, quiet)
        if self.planner.held > held:
            log.debug("quiet hours: %d question(s) held until they end", self.planner.held)
        self._deliver(actions)

    def _deliver(self, actions: Sequence[Notice | Withdraw]) -> None:
        if self._screen.backend is None:
            return
        for action in actions:
            if isinstance(action, Withdraw):
                self._screen.withdraw(action.handle)
            elif self.skip_focused and items_focused(action.items):
                continue  # the user is looking at that session (the tray still counts it)
            else:
                self._screen.put(action)
        reminded = self.planner.reminders.drain()
        if reminded and self.store is not None:
            self.store.mark_reminded(reminded)

    # ---- server signals (the backend's signal thread; carried out on the worker) ----

    def _server_event(self, event: str) -> None:
        self._inbox.put(("server", event))

    def on_server_action(self, server_id: int, action: str) -> None:
        """The user chose ``action`` on the server's notification ``server_id`` (any thread)."""
        self._inbox.put(("action", (server_id, action)))

    def on_server_reply(self, server_id: int, text: str) -> None:
        """The user typed ``text`` into the server's notification ``server_id`` (any thread)."""
        self._inbox.put(("reply", (server_id, text)))

    def _on_action(self, server_id: int, action: str) -> None:
        handle = self._screen.handle_for(server_id)
        if handle is None:
            return  # another application's notification
        keys = self._screen.keys_of(handle)
        sessions = sorted({k[0] for k in keys})
        if action == "snooze":
            until = self.wall() + SNOOZE_S  # (kept in the store: wall time)
            for session_key in sessions:
                self.execute(Snooze(until, session_key))  # the app's preferences: set_preferences() back
            log.info("snoozed %d session(s) for 15 min", len(sessions))
            self._screen.dismiss(handle, server_id)
            return
        item = self._screen.question_of(handle)
        if action.startswith(ANSWER_PREFIX):
            choice = "#" + action[len(ANSWER_PREFIX) :]  # the row's number, never taken for a label
            # only what this very notification offered: never a dialog's (a gate's) options
            if item is None or action not in {a for a, _ in option_actions(item.question, self.show_text)}:
                log.warning("ignored the notification action %r: not one it offered", clean(action, 40))
                return
            self.execute(Answer(item.key[0], item.key[1], (choice,), token=question_token(item.question)))
            return
        session, call = keys[0] if keys else (None, None)
        if action in ("default", "goto") and len(sessions) == 1 and session is not None:
            self.execute(Goto(session, call))
        else:
            self.execute(Show(Focus(session, call) if session and call else None))

    def _on_reply(self, server_id: int, text: str) -> None:
        """A text typed into the notification: the answer to its question, as ``answer --text``
        gives it; only where this very notification asked for one (never a dialog's, a gate's)."""
        handle = self._screen.handle_for(server_id)
        if handle is None:
            return  # another application's notification
        item = self._screen.question_of(handle)
        if item is None or not takes_text(item.question, self.show_text):
            log.warning("ignored a reply typed into a notification that asked for none")
            return
        self.execute(Answer(item.key[0], item.key[1], text=text, token=question_token(item.question)))


def _checked(t: Transition) -> Transition:
    """``t``, its ``asker`` kept only while that very pi still runs (else the settle window holds:
    whatever asks now is not known to wait for a human)."""
    if t.asker is None or still_running(*t.asker):
        return t
    return Transition(t.kind, t.session, t.question, t.at, t.initial)
