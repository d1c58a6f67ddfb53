"""Push a question nobody answered at the desk to the phone (or a chat), through apprise.

A question still pending ``push.after`` minutes after it was seen is pushed once, naming host,
project and question (the text only with ``notifications.show_text``); one answered, abandoned or
gone before that is never pushed. Once means once: which questions were pushed is kept in the
state store, so one still pending after a restart (or pending again) is not pushed a second time.
With ``push.when = "away"`` a push waits until the desktop is idle or locked (logind's
IdleHint/LockedHint, else the screensaver; unknown counts as present). As on the desktop, a
question of a muted project, a snoozed one, or one due in quiet hours waits until that ends (it is
looked at again every :data:`AWAY_RECHECK_S`), and one answered while its push waited for its
turn (below) is left out of it.

Bursts collapse as on the desktop: questions due within :data:`GROUP_S` of each other go out as
one push ("3 questions need answers"), and each destination gets at most :data:`RATE_BURST` pushes
at once, then one every :data:`RATE_EVERY_S`; what comes in between is folded into its next push,
which says how many questions it folds.

Everything runs off the engine thread: the engine only hands transitions over (bookkeeping under
a lock); one thread of the output's own decides when and talks to the push services (apprise, with
its own network timeouts), so a slow or failing service never holds up the engine (only later
pushes, which it folds). One log line per kind of failure.
"""

from __future__ import annotations

import contextlib
import heapq
import itertools
import logging
import sys
import threading
import time
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

from notifier.channel import Pace
from notifier.config import Config
from notifier.core.model import Item, Snapshot, Transition, key_of
from notifier.core.planner import Silences, in_quiet_hours, parse_quiet_hours
from notifier.core.text import clean, project_name
from notifier.outputs.dbus import ask
from notifier.store import Store
from notifier.system.log import SECRETS, LogOnce
from notifier.system.supervisor import FailureLog, Supervisor

if TYPE_CHECKING:
    from notifier.engine import Batch

# Lazy imports here: jeepney is a Linux-only dependency and this module loads on every OS;
# apprise (about 120 ms) only once a push is sent, not at every start of the app.

log = logging.getLogger(__name__)
say_once = LogOnce(log)


def _said_once(record: logging.LogRecord) -> bool:
    """apprise's own log lines, each said once a run (a failing service says why at every push;
    one log line per kind of failure). Its INFO lines (every push sent) are below the level the
    app logs it at without -v (cli/parser.py)."""
    return say_once.first("apprise", str(record.msg)[:300])


logging.getLogger("apprise").addFilter(_said_once)

AWAY_RECHECK_S = 30.0  # a push not to be sent now (someone there, muted, snoozed, quiet): looked at again
TEXT_LIMIT = 300
GROUP_S = 2.0  # questions due this close together are pushed as one (the desktop's burst window)
RATE_BURST = 2  # pushes one destination may get at once ...
RATE_EVERY_S = 30.0  # ... then one per this many seconds; the rest is folded into the next
SUMMARY_LINES = 5  # questions named in a push that folds several
MAX_HELD = 1000  # questions one destination's next push may fold (it counts at most these)


def message(t: Transition, show_text: bool) -> tuple[str, str]:
    """Title and body of the push for a question (plain text, sanitized)."""
    ref, q = t.session, t.question
    title = f"{project_name(ref.name, ref.cwd, ref.host)} needs an answer"
    body = clean(q.text, TEXT_LIMIT) if show_text else "A pi session waits for your answer."
    if show_text and q.options:
        body += "\n" + " · ".join(clean(o, 60) for o in q.options[:6])
    if q.count > 1:
        body += f"\n+{q.count - 1} more questions"
    return clean(title, 200), body


def push_text(items: Sequence[Transition], show_text: bool) -> tuple[str, str]:
    """Title and body of one push for several questions (plain text, sanitized): how many,
    the first few by project (and text), how many more; it says how many it folds."""
    if len(items) == 1:
        return message(items[0], show_text)
    title = f"{len(items)} questions need answers"
    lines = []
    for t in items[:SUMMARY_LINES]:
        ref = t.session
        project = project_name(ref.name, ref.cwd, ref.host)
        lines.append(f"{project}: {clean(t.question.text, 80)}" if show_text else project)
    if len(items) > SUMMARY_LINES:
        lines.append(f"+{len(items) - SUMMARY_LINES} more")
    lines.append(f"({len(items)} questions folded into this push)")
    return title, "\n".join(lines)


def desktop_away() -> bool | None:
    """True if the desktop session is idle or locked, False if someone is there, None unknown
    (also off Linux: logind and the screensaver are asked over D-Bus, with jeepney, a dependency
    on Linux only)."""
    if not sys.platform.startswith("linux"):
        return None
    from jeepney import DBusAddress, new_method_call

    session = DBusAddress(
        "/org/freedesktop/login1/session/auto",
        bus_name="org.freedesktop.login1",
        interface="org.freedesktop.DBus.Properties",
    )
    with contextlib.suppress(Exception):  # (no system bus, no logind, no session: the screensaver)
        return any([  # (both asked: either failing means the screensaver is asked)
            ask("SYSTEM", new_method_call(session, "Get", "ss", ("org.freedesktop.login1.Session", prop)))[0][1]
            for prop in ("IdleHint", "LockedHint")
        ])
    saver = DBusAddress(
        "/org/freedesktop/ScreenSaver", bus_name="org.freedesktop.ScreenSaver", interface="org.freedesktop.ScreenSaver"
    )
    try:
        return bool(ask(None, new_method_call(saver, "GetActive"))[0])
    except Exception:
        return None


def send_apprise(urls: Sequence[str], title: str, body: str) -> bool:
    """Push through apprise on this (daemon) thread. apprise sends on a pool of threads of its
    own where it can (several services at once, ``async_mode``; apprise 2 also each service, to
    bound it by its ``service_timeout``, 60 s by default), and the interpreter waits for that
    pool at exit: a push in flight held the app's quit for its HTTP timeouts (4 s and more). Without
    both it sends on the caller's thread, each service bounded by its own connect and read
    timeouts. apprise 1 has no ``service_timeout``."""
    import apprise

    try:
        asset = apprise.AppriseAsset(async_mode=False, service_timeout=0)
    except AttributeError:  # (apprise 1: "an invalid key service_timeout")
        asset = apprise.AppriseAsset(async_mode=False)
    sender = apprise.Apprise(asset=asset)
    for url in urls:
        sender.add(url)
    return bool(sender.notify(title=title, body=body))


class PushOutput:
    def __init__(
        self,
        config: Config,
        store: Store | None = None,
        send: Callable[[Sequence[str], str, str], bool] = send_apprise,
        away: Callable[[], bool | None] = desktop_away,
        clock: Callable[[], float] = time.monotonic,
        rate_burst: int = RATE_BURST,
        rate_every_s: float = RATE_EVERY_S,
        health: FailureLog | None = None,
        turn: Callable[[], bool] = lambda: True,
    ) -> None:
        """``send(urls, title, body)`` is called with one destination at a time; each gets at
        most ``rate_burst`` pushes at once, then one every ``rate_every_s`` (monotonic ``clock``).
        ``turn``: whether this process notifies now (one process notifies each question, pushes
        included: what falls due meanwhile is looked at again later, :meth:`take_turn`)."""
        self.urls = list(config["push.urls"])
        self.rate_burst = rate_burst
        self.rate_every_s = rate_every_s
        SECRETS.add_urls(self.urls)  # (their secrets masked in every log line, apprise's too)
        self.after_s = float(config["push.after"]) * 60.0
        self.only_away = config["push.when"] == "away"
        self.show_text = bool(config["notifications.show_text"])
        self.send = send
        self.turn = turn
        self.away = away
        self.clock = clock
        self.store = store  # where pushed questions are remembered (None: this run only)
        self._lock = threading.Condition()
        self._due: list[tuple[float, int, tuple[str, str]]] = []  # (when, order, key)
        # every question still waiting for an answer (held ones too), by key: one not pushed yet is due later
        self._open: dict[tuple[str, str], Transition] = {}
        self._silences = Silences()  # the user's snoozes and mutes (set_silences)
        self._quiet = parse_quiet_hours(config["quiet_hours"])
        self._pushed: set[tuple[str, str]] = store.pushed() if store is not None else set()
        self._order = itertools.count()  # (a tie-break: first due, first pushed)
        self._stopped = threading.Event()
        self._supervisor = Supervisor("push", self._stopped, health)  # (a failure: run again, said)
        self.sent = 0  # pushes the services accepted (for doctor and tests)
        run = self._supervisor.run
        self._thread = threading.Thread(target=run, args=(self._run,), name="pi-notifier-push", daemon=True)

    def start(self) -> None:
        self._thread.start()

    def stop(self) -> None:
        with self._lock:
            self._stopped.set()
            self._lock.notify_all()

    # ---- the engine thread: only bookkeeping ----

    def ready(self, info: Any, snapshot: Snapshot) -> None:
        pass

    def take_turn(self, store: Store) -> None:
        """This process notifies from now on (a headless run whose turn came): what was pushed
        meanwhile is read again from ``store``, where the process that notified recorded it."""
        with self._lock:
            self.store = store
            self._pushed |= store.pushed()
            self._lock.notify_all()

    def set_silences(self, silences: Silences) -> None:
        with self._lock:
            self._silences = silences

    def set_quiet_hours(self, value: str) -> None:
        """New quiet hours (the config file changed; a value the config accepted)."""
        with self._lock:
            self._quiet = parse_quiet_hours(value)

    def publish(self, batch: Batch) -> None:
        items = batch.transitions
        if not items:
            return
        now = self.clock()
        with self._lock:
            for t in items:
                key = key_of(t.session, t.question)
                if t.kind != "needs_input":
                    self._open.pop(key, None)
                    continue
                if key not in self._open and key not in self._pushed:
                    heapq.heappush(self._due, (now + self.after_s, next(self._order), key))
                self._open.setdefault(key, t)
            self._lock.notify_all()

    # ---- the push thread ----

    def _run(self) -> None:
        held: dict[str, list[Transition]] = {url: [] for url in self.urls}  # folded into the next push
        paces = {url: Pace(1.0 / self.rate_every_s, float(self.rate_burst), self.clock) for url in self.urls}
        while True:
            waits = [paces[url].due() for url in self.urls if held[url]]
            keys = self._next_due(min(waits) if waits else None)
            if keys is None:
                return
            batch = self._take(keys) if keys else []
            for url in self.urls:
                held[url] = (held[url] + batch)[-MAX_HELD:]
                if not held[url] or paces[url].due() > 0:
                    if batch and held[url]:
                        say_once("push", "rate", "pushes come faster than one every %d s; the next push "
                                 "folds them", int(self.rate_every_s), level=logging.INFO)
                    continue
                if not self.turn():  # (another process notifies now: what this one held is its to push)
                    self._put_back(held[url])
                    held[url] = []
                    continue
                paces[url].spend(0)
                with self._lock:  # (those answered while they waited for their turn: left out)
                    items, held[url] = [t for t in held[url] if key_of(t.session, t.question) in self._open], []
                if not items:
                    continue
                if self.store is not None:  # (before it is sent: never twice, even after a crash)
                    for t in items:
                        self.store.mark_pushed(t.session.key, t.question.tool_call_id)
                self._deliver(url, *push_text(items, self.show_text))

    def _put_back(self, items: list[Transition]) -> None:
        """Held questions not pushed by this process after all: due again, looked at later (by
        then recorded as pushed by the process that notified, or still this one's to push)."""
        with self._lock:
            for t in items:
                key = key_of(t.session, t.question)
                self._pushed.discard(key)
                heapq.heappush(self._due, (self.clock() + AWAY_RECHECK_S, next(self._order), key))

    def _next_due(self, limit: float | None) -> list[tuple[str, str]] | None:
        """Wait for the next questions due, still waiting, at most ``limit`` s ([]: none came; None:
        stopped). A burst: everything due within :data:`GROUP_S` of the first goes out as one."""
        end = None if limit is None else time.monotonic() + limit
        with self._lock:
            while not self._stopped.is_set():
                now = self.clock()
                if self._due and self._due[0][0] <= now:
                    keys: list[tuple[str, str]] = []
                    while self._due and self._due[0][0] <= now + GROUP_S:
                        keys.append(heapq.heappop(self._due)[2])
                    # (not answered in time; not pushed meanwhile)
                    keys = [k for k in dict.fromkeys(keys) if k in self._open and k not in self._pushed]
                    if keys:
                        return keys
                    continue
                waits = [self._due[0][0] - now] if self._due else []
                if end is not None:
                    if end <= time.monotonic():
                        return []
                    waits.append(end - time.monotonic())
                self._lock.wait(max(0.0, min(waits)) if waits else None)
            return None

    def _take(self, keys: list[tuple[str, str]]) -> list[Transition]:
        """The questions to push now (no longer due: held for their destination's turn, and
        recorded as pushed as the push that carries them is sent). Not now (looked at again
        later): all of them while another process notifies, in quiet hours or, with
        ``push.when = "away"``, while someone is there; those muted or snoozed."""
        wall = time.time()
        with self._lock:
            silences, quiet = self._silences, in_quiet_hours(self._quiet, wall)
        later = not self.turn() or quiet or (self.only_away and not self._is_away())
        with self._lock:
            batch: list[Transition] = []
            for key in keys:
                t = self._open.get(key)  # (None: answered meanwhile)
                if t is None:
                    continue
                item = Item(key, t.session, t.question)
                if later or silences.mutes(item) or silences.silenced_until(item) > wall:
                    heapq.heappush(self._due, (self.clock() + AWAY_RECHECK_S, next(self._order), key))
                else:
                    batch.append(t)
            self._pushed.update(key_of(t.session, t.question) for t in batch)  # (no longer due)
        return batch

    def _is_away(self) -> bool:
        away = None
        with contextlib.suppress(Exception):
            away = self.away()
        if away is None:
            say_once("push", "away", "cannot tell whether the desktop is idle or locked; treating it as present")
            return False
        return away

    def _deliver(self, url: str, title: str, body: str) -> None:
        try:
            ok = self.send([url], title, body)
        except Exception as exc:
            ok = False
            say_once("push", type(exc).__name__, "pushing a question failed (%s)", exc)
        failed = f"failed {self.urls.index(url)}" if url in self.urls else "failed"
        if ok:
            self.sent += 1
            say_once.forget("push", failed)
        else:
            say_once("push", failed, "a push service did not accept a question (see the apprise log line)")
