"""What to notify when (pure: time is passed in): the user's silences (snoozes, mutes) and
the words that set them (durations: ``snooze 1h``), quiet hours, what ``status`` says of them,
reminders, and the planner that turns transitions into notices.

**The planner** says when to raise, update and withdraw desktop notifications. A question
resolved within the settle window is never shown (one of a pi known to wait for a human,
``SessionView.asker``: :meth:`Planner.known_askers`, is not held back); one notification per question, never twice for a
session file + toolCallId, also across restarts (``notified``: one notified before and still
waiting goes back on screen at start-up, ``restored``, not as a new one). One judged abandoned
(its bubble withdrawn) and then found waiting again is a question on no screen: announced again.
A burst (≥ 3 within 2 s) becomes one summary: the first two show as they come, and with the third
the first one's bubble becomes the summary (the second's is withdrawn); the questions pending at
start-up, however old, get one too. A summary stays true: a question of it that ends changes it
in place (``Notice.update``: silently), to what still waits; the last one left turns it into
that question's own bubble; none, it is withdrawn. Reminders replace the same notification while
the question waits; that of a question on a summary brings the summary again (one bubble per
question on screen, never two).
Snoozed sessions, muted projects and quiet hours raise nothing (the tray still shows
everything); a question asked meanwhile is announced once when that ends (the snooze ends or is
lifted, the project is unmuted, quiet hours end): :class:`Silences`,
handed in.

Durations run on the caller's monotonic clock, ``now`` (the notifier's runs on while the machine
sleeps, so a snooze until 08:00 ends then): a question's age is read from its
wall-clock time once, when it is fed (``wall``: the wall clock then), and from then on it ages
with ``now`` only, so a wall clock set back or forward (by hand, NTP, a suspended VM) neither
delays nor hastens a reminder; the snoozes handed in are on that clock too
(:meth:`Silences.shifted`).


**Reminders** of a question that waits come at their times after it was *asked*
(``remind_after_s``), so a restart in between neither delays nor repeats one: the counts sent
before it are handed in (``reminded``), and every count that changes is collected for the caller
to persist (:meth:`Planner.drain_reminded`). Reminders whose time passed unsent (the app not
running, the machine asleep, the question first seen at start-up, or muted, snoozed, in quiet
hours) count as sent: only the latest comes, once. The last one is critical.


**Silences**: what the user chose not to hear: snoozes (all, a session, a project) and muted
projects.

One immutable value. The app keeps the current one (``app.SilencesKeeper``: changed under its
lock, from whichever thread asks, and persisted in the store); the planner, the tray and the
window only ever read the value they were handed. Times are absolute and passed in.

**Quiet hours**: a daily window without notifications (the tray icon still changes); and the next
morning, when a snooze "until tomorrow" ends.

The time is passed in (epoch seconds); only the conversion to the local time of day uses
the machine's time zone.

**Silences, said**: what the user has silenced (snoozes and mutes), said for ``status``: one line
of text, and the fields ``status --json`` adds."""

from __future__ import annotations

import contextlib
import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from datetime import datetime, timedelta
from types import MappingProxyType
from typing import Any

from notifier.core.codec import iso
from notifier.core.model import (
    GENERIC_QUESTION,
    Action,
    Item,
    Kind,
    Notice,
    Question,
    QuestionItem,
    QuestionKey,
    Snapshot,
    State,
    Transition,
    TurnChange,
    Withdraw,
    key_of,
)
from notifier.core.text import clean, duration, project_name

# ---- silences ----

def _frozen(values: Mapping[str, float] | None = None) -> Mapping[str, float]:
    return MappingProxyType(dict(values or {}))


@dataclass(frozen=True)
class Silences:
    snooze_all_until: float = 0.0
    sessions: Mapping[str, float] = field(default_factory=_frozen)  # session key → until
    projects: Mapping[str, float] = field(default_factory=_frozen)  # project name → until
    muted: frozenset[str] = frozenset()  # project names (see core.text.project_name)

    def silenced_until(self, item: Item) -> float:
        """Until when a question raises nothing (0: not silenced): snoozed all, its session, or
        its project by either of its names (:attr:`Item.projects`)."""
        by_project = (self.projects.get(p, 0.0) for p in item.projects)
        return max(self.snooze_all_until, self.sessions.get(item.ref.key, 0.0), *by_project)

    def mutes(self, item: Item) -> bool:
        """Whether its project is muted, by either of its names."""
        return not self.muted.isdisjoint(item.projects)

    def snoozed(self, until: float, session: str | None = None, project: str | None = None) -> Silences:
        """Snooze one session, one project, or (both None) everything until ``until`` (resuming
        lifts every snooze: the store forgets them, ``Store.clear_snoozes``)."""
        if session is not None:
            return replace(self, sessions=_frozen({**self.sessions, session: until}))
        if project is not None:
            return replace(self, projects=_frozen({**self.projects, project: until}))
        return replace(self, snooze_all_until=until)

    def running(self, now: float) -> Silences:
        """Without the snoozes that have ended by ``now``."""
        return self._ends(lambda end: end if end > now else 0.0)

    def shifted(self, offset: float) -> Silences:
        """The same choices with every snooze's end moved by ``offset`` (from the wall clock they
        are kept in to a monotonic clock: ``monotonic now - wall now``, taken once)."""
        return self._ends(lambda end: end + offset)

    def _ends(self, change: Callable[[float], float]) -> Silences:
        """Every snooze's end as ``change`` makes it (0: lifted)."""
        def each(ends: Mapping[str, float]) -> Mapping[str, float]:
            return _frozen({k: until for k, end in ends.items() if (until := change(end))})

        everything = change(self.snooze_all_until) if self.snooze_all_until else 0.0
        return replace(self, snooze_all_until=everything, sessions=each(self.sessions), projects=each(self.projects))


# ---- quiet hours ----

QUIET_HOURS_FORMAT = "'HH:MM-HH:MM' such as '22:00-07:30' (start and end differ), or '' for none"

_HHMM = r"([01]?\d|2[0-3]):([0-5]\d)-([01]?\d|2[0-3]):([0-5]\d)"  # (compiled when quiet hours are set)


def parse_quiet_hours(value: str) -> tuple[int, int] | None:
    """'22:00-07:00' → (start minute, end minute) of the day; '' → None. ValueError (saying
    :data:`QUIET_HOURS_FORMAT`) for anything else."""
    if not value:
        return None
    m = re.fullmatch(_HHMM, value.strip())
    window = (int(m[1]) * 60 + int(m[2]), int(m[3]) * 60 + int(m[4])) if m else None
    if window is None or window[0] == window[1]:
        raise ValueError(QUIET_HOURS_FORMAT)
    return window


def _window(value: str, now: float | None = None) -> tuple[int, int] | None:
    """:func:`parse_quiet_hours`, with None (no quiet hours) for a value that does not parse;
    with ``now``: None too unless they are in effect then."""
    with contextlib.suppress(ValueError):
        window = parse_quiet_hours(value)
        return window if now is None or in_quiet_hours(window, now) else None
    return None


def in_quiet_hours(window: tuple[int, int] | None, now: float) -> bool:
    """Whether ``now`` falls in ``window`` (minutes of the local day; it may span midnight)."""
    if window is None:
        return False
    local = datetime.fromtimestamp(now)
    minute = local.hour * 60 + local.minute
    start, end = window
    return start <= minute < end if start < end else (minute >= start or minute < end)


def next_quiet_change(window: tuple[int, int] | None, now: float) -> float | None:
    """The next moment after ``now`` when quiet hours start or end (None: no quiet hours)."""
    if window is None:
        return None
    day = datetime.fromtimestamp(now).replace(hour=0, minute=0, second=0, microsecond=0)
    times = [(day + timedelta(days=d)).replace(hour=m // 60, minute=m % 60) for d in (0, 1, 2) for m in window]
    return min(t.timestamp() for t in times if t.timestamp() > now)


NIGHT_ENDS_H = 4  # until this hour after midnight, "tomorrow" is the morning coming, not the next


def tomorrow_morning(now: float) -> float:
    """08:00 of the next morning, local time ("Until tomorrow"): of this day while the night
    lasts (before 04:00), else of the day after."""
    local = datetime.fromtimestamp(now)
    day = local if local.hour < NIGHT_ENDS_H else local + timedelta(days=1)
    return day.replace(hour=8, minute=0, second=0, microsecond=0).timestamp()


def quiet_hours_obj(value: str, now: float) -> dict[str, Any]:
    """``status --json``'s ``quiet_hours`` (docs/contract.md §3): while the quiet hours of
    ``value`` (the config's text) are in effect at ``now``, ``{"hours": "22:00-07:30", "until":
    <ISO-8601 UTC>}``; else null (also for a value that does not parse)."""
    window = _window(value, now)
    if window is None:
        return {"quiet_hours": None}
    return {"quiet_hours": {"hours": value.strip(), "until": iso(next_quiet_change(window, now))}}


def quiet_hours_line(obj: object) -> str:
    """`status`'s line while quiet hours are in effect (with its newline), from the status
    object's ``quiet_hours`` (:func:`quiet_hours_obj`, the app's or our own); "" otherwise."""
    if not isinstance(obj, dict) or not isinstance(obj.get("hours"), str):
        return ""
    hours = clean(obj["hours"], 20)
    window = _window(hours)
    until = f" until {_hhmm(window[1])}" if window else ""
    return f"Quiet hours{until} ({hours}): no notifications; the tray still counts.\n"


def _hhmm(minute: int) -> str:
    return f"{minute // 60:02d}:{minute % 60:02d}"


def quiet_hours_note(value: str, now: float) -> str:
    """"quiet hours until 07:30" while the quiet hours of ``value`` (the config's text) are in
    effect at ``now``; "" otherwise (also for a value that does not parse)."""
    window = _window(value, now)
    return f"quiet hours until {_hhmm(window[1])}" if window else ""


# ---- silences, said ----

def silenced_obj(silences: Silences, now: float) -> dict[str, Any]:
    """``{"snoozed": {"all": ISO|null, "sessions": {file: ISO}, "projects": {name: ISO}},
    "muted": [project…]}``: the snoozes still running at ``now`` and the muted projects."""
    p = silences.running(now)
    return {
        "snoozed": {
            "all": iso(p.snooze_all_until) if p.snooze_all_until else None,
            "sessions": {k: iso(v) for k, v in sorted(p.sessions.items())},
            "projects": {k: iso(v) for k, v in sorted(p.projects.items())},
        },
        "muted": sorted(p.muted),
    }


def silenced_line(silences: Silences, snapshot: Snapshot, now: float) -> str:
    """"snoozed: everything for 14 min, session blog 1d2e3a4b for 1 h 00 min; muted: shop", or
    "" when nothing is silenced."""
    from notifier.core.commands import short_id  # (here: the command vocabulary is for commands)

    p = silences.running(now)
    names = {v.ref.key: v for v in snapshot.sessions}
    snoozes = []
    if p.snooze_all_until:
        snoozes.append(f"everything for {duration(p.snooze_all_until - now)}")
    for key, until in sorted(p.sessions.items()):
        v = names.get(key)
        what = (
            f"{project_name(v.ref.name, v.ref.cwd, v.ref.host)} {short_id(v.ref.id) or ''}".strip() if v
            else clean(key, 80)
        )
        snoozes.append(f"session {what} for {duration(until - now)}")
    snoozes += [f"project {clean(name, 80)} for {duration(until - now)}" for name, until in sorted(p.projects.items())]
    parts = ["snoozed: " + ", ".join(snoozes)] if snoozes else []
    if p.muted:
        parts.append("muted: " + ", ".join(clean(m, 80) for m in sorted(p.muted)))
    return "; ".join(parts)


_UNITS = {"s": 1, "sec": 1, "m": 60, "min": 60, "h": 3600, "d": 86400}
_PART = re.compile(r"(\d+(?:\.\d+)?)\s*(d|h|min|m|sec|s)")
MAX_SNOOZE_S = 7 * 86400.0


def parse_duration(text: str, limit: float | None = MAX_SNOOZE_S) -> float | None:
    """Seconds in "90s", "15m", "15min", "1h", "2h30m", "1d" or a bare number of minutes; "off"
    or none at all ("0", "0m"): 0 (resume). None for anything else (or more than ``limit``, a week)."""
    t = text.strip().lower()
    if t == "off":
        return 0.0
    if re.fullmatch(r"\d+(?:\.\d+)?", t):
        seconds = float(t) * 60
    else:
        parts = _PART.findall(t)
        if not parts or _PART.sub("", t).strip():
            return None
        seconds = sum(float(n) * _UNITS[u] for n, u in parts)
    return seconds if limit is None or seconds <= limit else None  # (0, "0m", "0s": 0, resume)


DEFAULT_SNOOZE_S = 15 * 60.0  # as the notification's "Snooze 15 min"
DURATIONS = "90s, 15m, 1h, 2h30m, 1d, a number of minutes (up to a week), tomorrow, or off"


def snooze_words(words: list[str], now: float) -> tuple[str | None, float]:
    """``snooze [WHAT] [DURATION]``'s words → (WHAT, None for everything; seconds, 0 resumes).
    DURATION is what :func:`parse_duration` reads or "tomorrow" (until 08:00 the next morning,
    local time); none: 15 min. ValueError (one line, saying what is wrong) for anything else."""
    words = list(words)
    seconds = DEFAULT_SNOOZE_S
    last = words[-1].strip().lower() if words else ""
    if last == "tomorrow":
        words.pop()
        seconds = tomorrow_morning(now) - now
    elif words and (found := parse_duration(last)) is not None:
        words.pop()
        seconds = found
    elif words and parse_duration(last, limit=None) is not None:
        raise ValueError(f"a snooze lasts at most {duration(MAX_SNOOZE_S)}: for longer, 'mute' the project")
    second = words[-1].strip().lower() if len(words) == 2 else ""
    if second and second != "tomorrow" and parse_duration(second, limit=None) is None:
        raise ValueError(not_duration(words[-1]))
    if len(words) > 1:
        raise ValueError("snooze takes [WHAT] [DURATION]: e.g. 'snooze blog 1h', 'snooze all tomorrow', 'snooze off'")
    return (words[0] if words else None), seconds


def not_duration(word: str) -> str:
    return f"{clean(word, 40)!r} is not a DURATION ({DURATIONS})"


# ---- the planner ----

GROUP_S = 0.05  # questions due this close together are raised together (so a burst groups)
# A summary brought again for a reminder of one of its questions counts the reminders of the
# others due this soon as given with it: one summary heard, not one for each of a burst's questions.
SUMMARY_REMINDERS_S = 60.0
BURST_N, BURST_WINDOW_S = 3, 2.0  # this many questions within this many seconds: one summary


@dataclass
class _Shown:
    item: Item
    handle: int
    reminders_sent: int = 0


@dataclass
class Planner:
    settle_s: float = 0.25
    remind_after_s: Sequence[float] = (600.0, 1800.0)
    notified: set[QuestionKey] = field(default_factory=set)
    reminded: dict[QuestionKey, int] = field(default_factory=dict)  # reminders sent before a restart
    # The user's snoozes and mutes: handed in by their keeper (the app), read here, never changed.
    silences: Silences = field(default_factory=Silences)
    notify_on: frozenset[State] = frozenset()  # also 'idle' and/or 'failed' turns

    def __post_init__(self) -> None:
        self._waiting: dict[QuestionKey, tuple[Item, float]] = {}
        self._startup: list[Item] = []
        self._shown: dict[QuestionKey, _Shown] = {}
        self._recent: list[tuple[float, QuestionKey]] = []
        self._handles = 0
        self._summary: int | None = None  # the burst's summary on screen (one of the groups)
        # The summaries on screen (handle → "burst" or "startup"); their questions are those
        # ``_shown`` on that handle.
        self._groups: dict[int, Kind] = {}
        self._quiet_held: list[Item] = []
        self._restored = set(self.notified)  # notified before a restart: reminders carry on
        self._restoring: list[Item] = []  # of those, still waiting: their bubbles go back on screen
        self._put_back: set[QuestionKey] = set()  # of those, held by quiet hours: put back when they end
        self.remind_after_s = tuple(sorted(self.remind_after_s))
        self._reminded_now: dict[QuestionKey, int] = {}  # counts changed, not yet drained
        self._put_off: dict[QuestionKey, bool] = {}  # snoozed from their bubble → whether the snooze was seen

    def _reminders_passed(self, key: QuestionKey, sent: int, waited: float) -> int:
        """The reminders counted as sent for a question that has waited ``waited`` and had
        ``sent``: every one whose time has come (those missed asleep or silenced too)."""
        passed = sum(1 for after in self.remind_after_s if waited >= after)
        if passed <= sent:
            return sent
        self._reminded_now[key] = passed
        return passed

    def drain_reminded(self) -> dict[QuestionKey, int]:
        """Reminder counts changed since the last call, for the caller to persist (so a restart
        neither repeats a reminder nor loses the next one)."""
        out, self._reminded_now = self._reminded_now, {}
        return out

    # ---- input ----

    def feed(self, transitions: Iterable[Transition], now: float, wall: float | None = None) -> list[Action]:
        """``now``: the planner's (monotonic) clock; ``wall``: the wall clock at the same moment,
        to tell a question's age from its time (None: ``now`` is the wall clock)."""
        out: list[Action] = []
        changed: dict[int, None] = {}  # summaries some of whose questions ended
        for t in transitions:
            age = max(0.0, (now if wall is None else wall) - t.question.asked_at)
            item = Item(key_of(t.session, t.question), t.session, t.question, now - age)
            if t.kind == "needs_input":
                if item.key in self._restored and item.key not in self._shown:
                    # notified before a restart: its bubble is put back, its reminders go on
                    self._restored.discard(item.key)
                    self._shown[item.key] = _Shown(item, 0, self.reminded.get(item.key, 0))
                    self._restoring.append(item)
                    continue
                if item.key in self.notified or item.key in self._shown:
                    continue
                if t.initial:
                    self._startup.append(item)
                else:
                    # The settle window is for a pi that cannot wait for a human (`pi -p`: its
                    # question tool returns at once); a pi known to wait (its TUI) is notified as
                    # soon as that is known (:meth:`known_askers`).
                    self._waiting[item.key] = (item, now + self.settle_s)
            else:  # resolved or abandoned: never show it, withdraw what is showing
                handle = self._drop(item.key)
                if handle in self._groups:
                    changed[handle] = None
                elif handle:
                    out.append(Withdraw(handle))
        for handle in changed:  # (a summary: what still waits, once for the whole batch)
            out += self._several(handle, now, update=True)
        return out

    def known_askers(self, keys: Iterable[QuestionKey], now: float) -> None:
        """These questions' pis were found (after they asked) to wait for a human: one still in
        its settle window is due now, as it would have been had that been known when it was asked."""
        for key in keys:
            waiting = self._waiting.get(key)
            if waiting is not None and waiting[1] > now:
                self._waiting[key] = (waiting[0], now)

    def _drop(self, key: QuestionKey) -> int:
        """Forget ``key`` (resolved or abandoned); the handle of the bubble it was on (0: none)."""
        # (a question judged abandoned can wait again when its pi is seen once more: it is then
        # a question on no screen, and notified as any other)
        self.notified.discard(key)
        self._waiting.pop(key, None)
        self._put_off.pop(key, None)
        self._restored.discard(key)
        self._startup = [i for i in self._startup if i.key != key]
        self._restoring = [i for i in self._restoring if i.key != key]
        self._put_back.discard(key)
        self._quiet_held = [i for i in self._quiet_held if i.key != key]
        shown = self._shown.pop(key, None)
        return 0 if shown is None else shown.handle  # 0: nothing on screen (muted, quiet, restored)

    def put_off(self, handle: int, until: float) -> list[Action]:
        """The user snoozed bubble ``handle`` from the bubble itself: it is withdrawn, and its
        questions still waiting at ``until`` (and not snoozed or muted otherwise) are announced again."""
        for key in [k for k, s in self._shown.items() if s.handle == handle]:
            self.notified.discard(key)
            self._waiting[key] = (self._shown.pop(key).item, until)
            self._put_off[key] = False
        self._groups.pop(handle, None)
        if self._summary == handle:
            self._summary = None
        return [Withdraw(handle)]

    def turn(self, change: TurnChange, now: float) -> list[Action]:
        """A live session finished its turn or failed (only if asked for with notify_on)."""
        if change.state not in self.notify_on:
            return []
        placeholder = Question(f"turn-{change.at}", "", (QuestionItem(GENERIC_QUESTION),), change.at)
        item = Item((change.session.key, placeholder.tool_call_id), change.session, placeholder)
        if self._silenced(item, now):
            return []
        kind: Kind = "failed" if change.state == "failed" else "idle"
        return [Notice(self._new_handle(), kind, (item,))]

    # ---- time ----

    def _new_handle(self) -> int:
        self._handles += 1
        return self._handles

    def _off_screen(self, item: Item) -> bool:
        """Notified (or held) but not on screen: muted, in quiet hours, or notified before a restart."""
        return item.key in self._shown and self._shown[item.key].handle == 0

    def _silenced(self, item: Item, now: float) -> bool:
        """Snoozed, or its project muted: it waits, unannounced, until that ends."""
        silences = self.silences
        return silences.mutes(item) or silences.silenced_until(item) > now

    def _due(self, now: float) -> tuple[list[Item], list[Item]]:
        """The questions found at start-up and those settled, to be raised now. One asked while
        snoozed or muted waits, and is asked once when the snooze ends (or is lifted) or the
        project is unmuted."""
        due: list[Item] = []
        for key, (item, when) in list(self._waiting.items()):
            silenced = self._silenced(item, now)
            if key in self._put_off:  # (its snooze in the silences, then lifted early: due now)
                self._put_off[key] = self._put_off[key] or silenced
                when = 0.0 if self._put_off[key] and not silenced else when
            if when <= now + GROUP_S and not silenced:
                del self._waiting[key]
                self._put_off.pop(key, None)
                due.append(item)
        startup, self._startup = self._unless_silenced(self._startup, now), []
        return startup, due

    def tick(self, now: float, quiet: bool = False) -> list[Action]:
        """Everything due at ``now``; ``quiet``: inside quiet hours."""
        startup, due = self._due(now)
        if quiet:  # nothing is raised; what arrives is announced once when they end
            self._hold_in_quiet(startup + due)
            return self._reminders(now, quiet)
        startup = self._unless_silenced(self._quiet_over(), now) + startup  # quiet hours over: announced now
        self.notified.update(i.key for i in startup + due)
        out = self._announce(startup, now) if startup else []
        if due:
            self._recent = [(t, k) for t, k in self._recent if now - t <= BURST_WINDOW_S and k in self._shown]
            if len(self._recent) + len(due) >= BURST_N:
                out += self._burst(due, now)
            else:
                for item in due:
                    out += self._show_single(item, now)
        # (the reminders first: one due now puts a restored question back on screen itself)
        out += self._reminders(now, quiet)
        restoring = [i for i in self._restoring if self._off_screen(i)]
        # one snoozed or muted stays off screen, its bubble put back (not heard) when that ends
        self._restoring = [i for i in restoring if self._silenced(i, now)]
        restored = [i for i in restoring if not self._silenced(i, now)]
        return out + self._announce(restored, now, restored=True) if restored else out

    def _hold_in_quiet(self, items: list[Item]) -> None:
        """Quiet hours: ``items`` are held, to be announced when they end; and what was on screen
        before a restart, to be put back then."""
        for item in items:
            self._shown[item.key] = _Shown(item, 0)
            self._quiet_held.append(item)
        back = [i for i in self._restoring if self._off_screen(i)]
        self._quiet_held += back
        self._put_back |= {i.key for i in back}
        self._restoring = []

    def _quiet_over(self) -> list[Item]:
        """Quiet hours are over (or were not on): what they held to announce; what they held of
        the bubbles before a restart goes back to be put back."""
        held, self._quiet_held = [i for i in self._quiet_held if self._off_screen(i)], []
        self._restoring += [i for i in held if i.key in self._put_back]
        held = [i for i in held if i.key not in self._put_back]
        self._put_back.clear()
        return held

    def _unless_silenced(self, items: list[Item], now: float) -> list[Item]:
        """Of ``items`` (off screen), those to show now; one snoozed or muted waits, unannounced,
        and is announced once that ends."""
        out: list[Item] = []
        for item in items:
            if self._silenced(item, now):
                self._shown.pop(item.key, None)
                self._waiting[item.key] = (item, 0.0)
            else:
                out.append(item)
        return out

    def _announce(self, items: list[Item], now: float, restored: bool = False) -> list[Action]:
        """What start-up found, or the bubbles of questions notified before a restart (``restored``;
        muted, snoozed or inside quiet hours: left off screen, their reminders come as before) back
        on screen: one like the question's own (saying how long it has waited), or one summary."""
        handle = self._new_handle()
        for item in items:
            if restored:
                self._shown[item.key].handle = handle
            else:
                self._show(item, handle, now)
        if len(items) == 1:
            waited = max(0.0, now - items[0].since)
            return [Notice(handle, "question", (items[0],), waited_s=waited, restored=restored)]
        self._groups[handle] = "startup"
        return self._several(handle, now, restored=restored)

    def _show_single(self, item: Item, now: float) -> list[Action]:
        handle = self._show(item, self._new_handle(), now)
        self._recent.append((now, item.key))
        return [Notice(handle, "question", (item,))]

    def _show(self, item: Item, handle: int, now: float) -> int:
        """Put ``item`` on bubble ``handle``, its reminders already due counted as sent."""
        self._shown[item.key] = _Shown(item, handle, self._reminders_passed(item.key, 0, now - item.since))
        return handle

    def _burst(self, items: list[Item], now: float) -> list[Action]:
        """The questions of a burst on one summary: the first single of it becomes the summary (in
        place), the others are withdrawn; later ones join it."""
        out: list[Action] = []
        for _, key in self._recent:  # fold the singles of this burst into the summary
            shown = self._shown.get(key)
            if shown is None or not shown.handle or shown.handle == self._summary:
                continue
            if self._summary is None:
                self._summary = shown.handle
            else:
                out.append(Withdraw(shown.handle))
                shown.handle = self._summary
        if self._summary is None:
            self._summary = self._new_handle()
        self._groups[self._summary] = "burst"
        for item in items:
            self._show(item, self._summary, now)
            self._recent.append((now, item.key))
        return out + self._several(self._summary, now)

    def _several(
        self, handle: int, now: float, *, update: bool = False, critical: bool = False, restored: bool = False
    ) -> list[Action]:
        """The one way a summary is drawn: what its bubble ``handle`` says now, of the questions on
        it still waiting. ``update``: some of them ended (the same bubble, changed in place,
        silently); one left: that question's own bubble, in the same place (its text, its answers);
        none: withdrawn."""
        items = tuple(sorted((s.item for s in self._shown.values() if s.handle == handle), key=lambda i: i.since))
        if len(items) > 1:
            return [Notice(handle, self._groups[handle], items, critical=critical, restored=restored, update=update)]
        del self._groups[handle]
        if handle == self._summary:
            self._summary = None
        if not items:
            return [Withdraw(handle)]
        waited = max(0.0, now - items[0].since)
        return [Notice(handle, "question", items, waited_s=waited, critical=critical, update=update)]

    def _reminders(self, now: float, quiet: bool) -> list[Action]:
        out: list[Action] = []
        summaries: dict[int, bool] = {}  # summaries a question of which is reminded → the last reminder
        after = self.remind_after_s
        due = {  # (the summaries one of whose questions has a reminder due now)
            s.handle for s in self._shown.values()
            if s.handle in self._groups and sum(1 for a in after if now - s.item.since >= a) > s.reminders_sent
        }  # fmt: skip
        for shown in self._shown.values():
            if not quiet and self._silenced(shown.item, now):
                continue  # (snoozed or muted: a reminder due meanwhile comes when that ends)
            waited = now - shown.item.since
            if shown.handle in due and shown.reminders_sent < len(after) and waited < after[shown.reminders_sent]:
                # (another's reminder brings the summary: this one's next, due within the minute, with it)
                waited = min(waited + SUMMARY_REMINDERS_S, after[shown.reminders_sent])
            sent = self._reminders_passed(shown.item.key, shown.reminders_sent, waited)
            if sent == shown.reminders_sent:
                continue
            shown.reminders_sent = sent
            if quiet:
                continue
            last = sent >= len(self.remind_after_s)
            if shown.handle in self._groups:  # one of a summary: the summary comes again (once)
                summaries[shown.handle] = summaries.get(shown.handle, False) or last
                continue
            if shown.handle == 0:  # (off screen: its own bubble now)
                shown.handle = self._new_handle()
            out.append(Notice(shown.handle, "reminder", (shown.item,), waited_s=waited, critical=last))
        for handle, last in summaries.items():
            out += self._several(handle, now, critical=last)
        return out

    def next_due(self) -> float | None:
        """The next moment :meth:`tick` has something to do (``None``: nothing until new input).
        A snoozed question is due when its snooze ends, as the silences say now; a muted one
        when it is unmuted (new silences, new input)."""
        silences = self.silences
        times = [  # (a muted one: when the silences change, which is new input)
            max(when, silences.silenced_until(item))
            for item, when in self._waiting.values()
            if not silences.mutes(item)
        ]
        if self._startup:
            times.append(0.0)
        times += [silences.silenced_until(i) for i in self._restoring if not silences.mutes(i)]  # (0: now)
        after = self.remind_after_s
        times += [  # (a snoozed one's reminder: when the snooze ends; a muted one's: when unmuted)
            max(s.item.since + after[s.reminders_sent], silences.silenced_until(s.item))
            for s in self._shown.values()
            if s.reminders_sent < len(after) and not silences.mutes(s.item)
        ]
        return min(times) if times else None

    @property
    def quiet_held(self) -> int:
        """How many questions quiet hours hold now (announced once they end)."""
        return len(self._quiet_held)
