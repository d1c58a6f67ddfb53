"""When to raise, update and withdraw desktop notifications (pure: time is passed in).

A question resolved within the settle window is never shown (one of a pi known to wait for a
human, ``Transition.asker``, is not held back); one notification per question, never twice for a
session file + toolCallId, also across restarts (``notified``: one notified before and still
waiting goes back on screen at start-up, ``restored``, not as a new one). A burst (≥ 3 within
2 s) becomes one summary, and so do the questions pending at start-up, however old. Reminders
(:mod:`notifier.core.reminders`) replace the same notification while the question waits.
Snoozed sessions, muted projects and quiet hours raise nothing (the tray still shows
everything); a question asked meanwhile is announced once when that ends (the snooze ends or is
lifted, the project is unmuted, quiet hours end): :class:`~notifier.core.preferences.Preferences`,
handed in.

Durations run on the caller's monotonic clock, ``now`` (the notifier's runs on while the machine
sleeps, so a snooze until 08:00 ends then): a question's age is read from its
wall-clock time once, when it is fed (``wall``: the wall clock then), and from then on it ages
with ``now`` only, so a wall clock set back or forward (by hand, NTP, a suspended VM) neither
delays nor hastens a reminder; the snoozes handed in are on that clock too
(:meth:`~notifier.core.preferences.Preferences.shifted`).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

from notifier.core.model import (
    GENERIC_QUESTION,
    Question,
    QuestionItem,
    State,
    Transition,
    TurnChange,
)
from notifier.core.notices import Action, Item, Key, Kind, Notice, Withdraw, key_of
from notifier.core.preferences import Preferences
from notifier.core.reminders import Reminders

GROUP_S = 0.05  # questions due this close together are raised together (so a burst groups)


@dataclass
class _Shown:
    item: Item
    handle: int
    reminders_sent: int = 0


@dataclass
class Planner:
    settle_s: float = 0.25
    remind_after_s: Sequence[float] = (600.0, 1800.0)
    burst_n: int = 3
    burst_window_s: float = 2.0
    notified: set[Key] = field(default_factory=set)
    reminded: dict[Key, int] = field(default_factory=dict)  # reminders sent before a restart
    # The user's snoozes and mutes: handed in by their owner (the app), read here, never changed.
    preferences: Preferences = field(default_factory=Preferences)
    notify_on: frozenset[State] = frozenset()  # also 'idle' and/or 'failed' turns

    def __post_init__(self) -> None:
        self._waiting: dict[Key, tuple[Item, float]] = {}
        self._startup: list[Item] = []
        self._shown: dict[Key, _Shown] = {}
        self._recent: list[tuple[float, Key]] = []
        self._handles = 0
        self._summary: int | None = None
        self._summary_keys: set[Key] = set()
        self._groups: dict[int, set[Key]] = {}  # the start-up summaries on screen: their questions
        self._held: list[Item] = []
        self._restored = set(self.notified)  # notified before a restart: reminders carry on
        self._restoring: list[Item] = []  # of those, still waiting: their bubbles go back on screen
        self.reminders = Reminders(self.remind_after_s, self.reminded)

    # ---- input ----

    def feed(self, transitions: Iterable[Transition], now: float, wall: float | None = None) -> list[Action]:
        """``now``: the planner's (monotonic) clock; ``wall``: the wall clock at the same moment,
        to tell a question's age from its time (None: ``now`` is the wall clock)."""
        out: list[Action] = []
        for t in transitions:
            age = max(0.0, (now if wall is None else wall) - t.question.asked_at)
            item = Item(key_of(t.session, t.question), t.session, t.question, now - age)
            if t.kind == "needs_input":
                if item.key in self._restored and item.key not in self._shown:
                    # notified before a restart: its bubble is put back, its reminders go on
                    self._restored.discard(item.key)
                    self._shown[item.key] = _Shown(item, 0, self.reminders.before(item.key))
                    self._restoring.append(item)
                    continue
                if item.key in self.notified or item.key in self._shown:
                    continue
                if t.initial:
                    self._startup.append(item)
                else:
                    # The settle window is for a pi that cannot wait for a human (`pi -p`: its
                    # question tool returns at once); a pi known to wait (its TUI) is notified now.
                    self._waiting[item.key] = (item, now if t.asker is not None else now + self.settle_s)
            else:  # resolved or abandoned: never show it, withdraw what is showing
                out += self._drop(item.key)
        return out

    def known_askers(self, keys: Iterable[Key], now: float) -> None:
        """These questions' pis were found (after they asked) to wait for a human: one still in
        its settle window is due now, as it would have been had that been known when it was asked."""
        for key in keys:
            waiting = self._waiting.get(key)
            if waiting is not None and waiting[1] > now:
                self._waiting[key] = (waiting[0], now)

    def _drop(self, key: Key) -> list[Action]:
        self._waiting.pop(key, None)
        self._restored.discard(key)
        self._startup = [i for i in self._startup if i.key != key]
        self._restoring = [i for i in self._restoring if i.key != key]
        shown = self._shown.pop(key, None)
        if shown is None or shown.handle == 0:  # 0: nothing on screen (muted, quiet, restored)
            return []
        return self._leave(shown.handle, key, always=True)

    def _leave(self, handle: int, key: Key, always: bool = False) -> list[Action]:
        """``key`` no longer on the bubble ``handle``: a summary stays on screen while other
        questions of it wait; the bubble of one question (``always``) goes with it."""
        if handle == self._summary or handle in self._groups:
            members = self._summary_keys if handle == self._summary else self._groups[handle]
            members.discard(key)
            if members:
                return []
            if handle == self._summary:
                self._summary = None
            else:
                del self._groups[handle]
            return [Withdraw(handle)]
        return [Withdraw(handle)] if always else []

    def turn(self, change: TurnChange, now: float) -> list[Action]:
        """A live session finished its turn or failed (only if asked for with notify_on)."""
        if change.state not in self.notify_on:
            return []
        placeholder = Question(f"turn-{change.at}", "", (QuestionItem(GENERIC_QUESTION),), change.at)
        item = Item((change.session.key, placeholder.tool_call_id), change.session, placeholder)
        if self._muted(item) or self._silenced_until(item) > now:
            return []
        kind: Kind = "failed" if change.state == "failed" else "idle"
        return [Notice(self._new_handle(), kind, (item,))]

    # ---- time ----

    def _new_handle(self) -> int:
        self._handles += 1
        return self._handles

    def _silenced_until(self, item: Item) -> float:
        return self.preferences.silenced_until(item.ref.key, item.project)

    def _muted(self, item: Item) -> bool:
        return self.preferences.is_muted(item.project)

    def _off_screen(self, item: Item) -> bool:
        """Notified (or held) but not on screen: muted, in quiet hours, or notified before a restart."""
        return item.key in self._shown and self._shown[item.key].handle == 0

    def _held_back(self, item: Item, now: float) -> bool:
        """Snoozed, or its project muted: it waits, unannounced, until that ends."""
        return self._muted(item) or self._silenced_until(item) > now

    def _due(self, now: float) -> tuple[list[Item], list[Item]]:
        """The questions found at start-up and those settled, to be raised now. One asked while
        snoozed or muted waits, and is asked once when the snooze ends (or is lifted) or the
        project is unmuted."""
        due: list[Item] = []
        for key, (item, when) in list(self._waiting.items()):
            if when <= now + GROUP_S and not self._held_back(item, now):
                del self._waiting[key]
                due.append(item)
        startup: list[Item] = []
        for item in self._startup:
            if self._held_back(item, now):
                self._waiting[item.key] = (item, 0.0)
            else:
                startup.append(item)
        self._startup = []
        return startup, due

    def tick(self, now: float, quiet: bool = False) -> list[Action]:
        """Everything due at ``now``; ``quiet``: inside quiet hours."""
        startup, due = self._due(now)
        if quiet:  # nothing is raised; what arrives is announced once when they end
            for item in startup + due:
                self._shown[item.key] = _Shown(item, 0)
                self._held.append(item)
            return self._reminders(now, quiet) + self._restore(now, quiet)
        held, self._held = [i for i in self._held if self._off_screen(i)], []
        for item in held:  # quiet hours over: announced now, or when a snooze or mute of it ends
            if self._held_back(item, now):
                del self._shown[item.key]
                self._waiting[item.key] = (item, 0.0)
            else:
                startup.insert(0, item)
        self.notified.update(i.key for i in startup + due)
        out: list[Action] = []
        if len(startup) == 1:
            out += self._show_single(startup[0], now, "question", late=True)
        elif startup:
            handle = self._new_handle()
            for item in startup:
                self._shown[item.key] = _Shown(item, handle, self.reminders.passed(item.key, now - item.since))
            self._groups[handle] = {i.key for i in startup}
            out.append(Notice(handle, "startup", tuple(startup)))
        if due:
            self._recent = [(t, k) for t, k in self._recent if now - t <= self.burst_window_s and k in self._shown]
            if len(self._recent) + len(due) >= self.burst_n:
                out += self._burst(due, now)
            else:
                for item in due:
                    out += self._show_single(item, now, "question")
        # (the reminders first: one due now puts a restored question back on screen itself)
        return out + self._reminders(now, quiet) + self._restore(now, quiet)

    def _restore(self, now: float, quiet: bool) -> list[Action]:
        """The bubbles of questions notified before a restart, back on screen: one like the
        question's own (saying how long it has waited), or one summary for several. Muted,
        snoozed or inside quiet hours: left off screen (their reminders come as before)."""
        restoring, self._restoring = self._restoring, []
        items = [i for i in restoring if self._off_screen(i) and not self._muted(i) and self._silenced_until(i) <= now]
        if quiet or not items:
            return []
        handle = self._new_handle()
        for item in items:
            self._shown[item.key].handle = handle
        if len(items) == 1:
            waited = max(0.0, now - items[0].since)
            return [Notice(handle, "question", (items[0],), waited_s=waited, restored=True)]
        self._groups[handle] = {i.key for i in items}
        return [Notice(handle, "startup", tuple(sorted(items, key=lambda i: i.since)), restored=True)]

    def _show_single(self, item: Item, now: float, kind: Kind, late: bool = False) -> list[Action]:
        """``late``: found at start-up, so the notice says how long it has waited."""
        handle = self._new_handle()
        self._shown[item.key] = _Shown(item, handle, self.reminders.passed(item.key, now - item.since))
        self._recent.append((now, item.key))
        waited = max(0.0, now - item.since) if late else 0.0
        return [Notice(handle, kind, (item,), waited_s=waited)]

    def _burst(self, items: list[Item], now: float) -> list[Action]:
        out: list[Action] = []
        if self._summary is None:  # (its keys are empty then: see _drop)
            self._summary = self._new_handle()
        for _, key in self._recent:  # fold the singles of this burst into the summary
            shown = self._shown.get(key)
            if shown is not None and shown.handle != self._summary and shown.handle:
                out.append(Withdraw(shown.handle))
                shown.handle = self._summary
                self._summary_keys.add(key)
        for item in items:
            self._shown[item.key] = _Shown(item, self._summary)
            self._summary_keys.add(item.key)
            self._recent.append((now, item.key))
        members = tuple(self._shown[k].item for k in self._summary_keys if k in self._shown)
        out.append(Notice(self._summary, "burst", tuple(sorted(members, key=lambda i: i.since))))
        return out

    def _reminders(self, now: float, quiet: bool) -> list[Action]:
        out: list[Action] = []
        for shown in self._shown.values():
            waited = now - shown.item.since
            sent = self.reminders.due(shown.item.key, shown.reminders_sent, waited)
            if sent is None:
                continue
            shown.reminders_sent = sent
            if quiet or self._muted(shown.item) or self._silenced_until(shown.item) > now:
                continue
            if shown.handle == 0 or shown.handle == self._summary or shown.handle in self._groups:
                out += self._leave(shown.handle, shown.item.key)  # (one of a summary: its own now)
                shown.handle = self._new_handle()
            last = self.reminders.last(sent)
            out.append(Notice(shown.handle, "reminder", (shown.item,), waited_s=waited, critical=last))
        return out

    def next_due(self) -> float | None:
        """The next moment :meth:`tick` has something to do (``None``: nothing until new input).
        A snoozed question is due when its snooze ends, as the preferences say now; a muted one
        when it is unmuted (new preferences, new input)."""
        times = [
            max(when, self._silenced_until(item)) for item, when in self._waiting.values() if not self._muted(item)
        ]  # (a muted one: when the preferences change, which is new input)
        if self._startup or self._restoring:
            times.append(0.0)
        for shown in self._shown.values():
            at = self.reminders.next_at(shown.item.since, shown.reminders_sent)
            if at is not None:
                times.append(at)
        return min(times) if times else None

    @property
    def held(self) -> int:
        """How many questions quiet hours hold back now."""
        return len(self._held)
