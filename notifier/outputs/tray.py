"""The tray output: the icon (pystray), its menu and tooltip, drawn from the immutable snapshot
the engine hands it (:class:`Redraw`, one of the engine's outputs: it keeps the last snapshot it
was handed), with the user's choices (snoozes, mutes) and what
failed. Clicks and menu entries become commands (``core/commands.py``) for the app to carry out.

- :class:`UiState`: what is drawn (snapshot, silences, health).
- Icons: drawn with Pillow from the shipped artwork (resources/glyph.png, the π mark), at the size
  asked (crisp at 16–64 px). States: idle, working, needs (count badge 1–9, 9+), snoozed, abandoned.
- Menu and tooltip (pure): the entries and the command each gives, and when either next reads
  differently. Ages are in whole minutes, so the labels change at most once a minute; each
  update changes only what reads differently (icon, tooltip, menu). A menu whose labels alone
  changed (an age tick) is relabelled where it was built (``compat.relabel``: the GTK backends),
  never sent again whole: a host re-reads a new menu whole and one open on it closes (XFCE's
  panel). Where a new label is a new menu (other backends), the menu says when each question
  was asked instead of its age, so it changes only when a question comes or goes.
- Backends (:func:`tray_backend`): `gtk` on X11 when PyGObject imports (menu + left-click action),
  `appindicator` where a StatusNotifierItem host runs (KDE, GNOME with the AppIndicator extension,
  Wayland; no left-click action, so the menu carries everything) unless that host also draws XEmbed
  icons itself (XFCE's panel: `gtk`, so a click opens the window), `xorg` as the last resort (no
  menu: a click opens the window; it runs only while an XEmbed tray host is there, followed by
  ``tray_hosts.HostFollower``), native on macOS and Windows. No display at all: no tray. Whatever
  needs pystray's private parts is in ``notifier/compat.py``.
"""

from __future__ import annotations

import contextlib
import functools
import io
import logging
import math
import os
import sys
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal, NamedTuple, Protocol

from PIL import Image, ImageDraw, ImageFont

from notifier import compat, resources
from notifier.config import Config
from notifier.core.commands import Clear, Command, Focus, Goto, Mute, Quit, Show, Snooze
from notifier.core.model import Question, SessionView, Snapshot
from notifier.core.planner import Silences, next_quiet_change, parse_quiet_hours, quiet_hours_note, tomorrow_morning
from notifier.core.text import clean, duration, offline_note, project_name
from notifier.outputs.tray_hosts import NO_HOST_WHY, HostFollower, HostLog, Hosts, look
from notifier.system.supervisor import FailureLog, Stop, Worker
from notifier.system.window_manager import has_display

if TYPE_CHECKING:
    from notifier.engine import Batch

# Lazy imports here: gi is optional (PyGObject), pystray only once PYSTRAY_BACKEND is chosen.

log = logging.getLogger(__name__)
ICON_SIZE = 64
XORG_STOP_GRACE_S = 1.0  # then the window is destroyed from outside (compat.destroy_window)


@dataclass(frozen=True, slots=True)
class UiState:
    snapshot: Snapshot = field(default_factory=Snapshot)
    silences: Silences = field(default_factory=Silences)
    health: tuple[str, ...] = ()  # one line per part that failed (``FailureLog.lines``)

    def snoozed_until(self, now: float) -> float | None:
        """When the snooze of everything ends, while it lasts (None: not snoozed)."""
        until = self.silences.snooze_all_until
        return until if until > now else None


# ---- icons ----

IconState = Literal["idle", "working", "needs", "snoozed", "abandoned"]

COLORS: dict[str, tuple[int, int, int, int]] = {
    "idle": (74, 85, 104, 255),  # slate
    "working": (38, 110, 200, 255),  # blue
    "needs": (214, 48, 49, 255),  # red
    "snoozed": (120, 120, 120, 255),  # grey
    "abandoned": (176, 122, 28, 255),  # amber
}
BADGE = (255, 255, 255, 255)
BADGE_TEXT = (190, 30, 30, 255)


@functools.lru_cache(maxsize=4)
def _glyph(size: int) -> Image.Image:
    with Image.open(io.BytesIO(resources.read_bytes("glyph.png"))) as img:
        base: Image.Image = img.convert("RGBA")
    lanczos = getattr(Image, "Resampling", Image).LANCZOS  # Image.Resampling: Pillow ≥ 9.1
    return base.resize((size, size), lanczos)


@functools.lru_cache(maxsize=16)
def _font(px: int) -> ImageFont.FreeTypeFont | ImageFont.ImageFont:
    for name in ("DejaVuSans-Bold.ttf", "Arial Bold.ttf", "arialbd.ttf", "Helvetica-Bold.ttf"):
        with contextlib.suppress(OSError):
            return ImageFont.truetype(name, px)
    try:
        return ImageFont.load_default(size=px)
    except TypeError:  # Pillow < 10.1
        return ImageFont.load_default()


def badge_text(count: int) -> str:
    return "9+" if count > 9 else str(max(count, 0))


@functools.lru_cache(maxsize=64)
def icon_image(state: IconState, count: int = 0, size: int = 64) -> Image.Image:
    """The tray image for ``state``; ``count`` is shown as a badge in the ``needs`` state."""
    img = Image.new("RGBA", (size, size), (0, 0, 0, 0))
    d = ImageDraw.Draw(img)
    pad = max(1, size // 32)
    box, radius = (pad, pad, size - 1 - pad, size - 1 - pad), max(2, size // 5)
    d.rounded_rectangle(box, radius=radius, fill=COLORS[state])
    text = badge_text(count) if state == "needs" and count > 0 else ""
    if text and size < 24:  # too small for mark and badge: the count alone, as large as it fits
        font = _font(max(7, int(size * (0.85 if len(text) == 1 else 0.62))))
        d.text((size / 2, size / 2 + 0.5), text, fill=BADGE, font=font, anchor="mm")
        return img
    mark = int(size * 0.78)
    offset = (size - mark) // 2
    img.alpha_composite(_glyph(mark), (offset - (size // 10 if state == "needs" else 0), offset + size // 16))
    if state == "abandoned":
        d.rounded_rectangle(box, radius=radius, outline=(255, 214, 102, 255), width=max(1, size // 16))
    elif text or state == "snoozed":  # a white disc in the corner: the count ringed in red, or a grey "z"
        one = len(text) == 1
        r = max(5, int(size * (0.26 if one else 0.30))) if text else max(4, size // 5)
        cx, cy = size - r - 1, r + 1
        ring = COLORS["needs"] if text else None
        d.ellipse((cx - r, cy - r, cx + r, cy + r), fill=BADGE, outline=ring, width=max(1, size // 32))
        font = _font(max(7, int(r * (1.5 if not text else 1.45 if one else 1.1))))
        d.text((cx, cy + 1), text or "z", fill=BADGE_TEXT if text else COLORS["snoozed"], font=font, anchor="mm")
    return img


WORKING_RECENT_S = 600.0  # "working": a session in that state that changed within this (10 minutes)


def state_for(pending: int, abandoned: int, working: bool, snoozed: bool) -> IconState:
    """Which icon the tray shows: while everything is snoozed, the snooze (grey, "z"; the count
    is in the tooltip): a red icon would ask for what the user chose not to hear yet. Otherwise
    needs-answer wins until every live question is resolved."""
    if snoozed:
        return "snoozed"
    if pending:
        return "needs"
    if abandoned:
        return "abandoned"
    return "working" if working else "idle"


# ---- menu and tooltip ----

MENU_TEXT = 48
MENU_MAX = 12

@dataclass(frozen=True)
class Click:
    """What a menu entry gives when clicked at ``now``: ``make(*args)``, or ``make(now, *args)``
    for a command that depends on the click's time (``timed``). Plain data, so a menu is told
    apart from the one drawn without building a command: commands are built at the click."""

    make: Callable[..., Command]
    args: tuple[Any, ...] = ()
    timed: bool = False

    def __call__(self, now: float) -> Command:
        return self.make(now, *self.args) if self.timed else self.make(*self.args)


@dataclass(frozen=True)
class Entry:
    """One menu line. ``action``: what it gives when clicked (None = disabled)."""

    label: str
    action: Click | None = None
    default: bool = False
    children: tuple[Entry, ...] = field(default_factory=tuple)
    separator: bool = False


SEPARATOR = Entry("", separator=True)


def _show_question(key: str, call: str) -> Command:
    return Show(Focus(key, call))  # (built at the click, as every command: not at each redraw)


def _snooze_for(now: float, seconds: float | None) -> Command:
    """Snooze every session for ``seconds`` from the click (0: resume; None: until tomorrow morning)."""
    if seconds is None:
        return Snooze(tomorrow_morning(now))
    return Snooze(now + seconds if seconds > 0 else 0.0)


def age(seconds: float) -> str:
    """A question's age in the menu, in whole minutes ("<1 min", "4 min", "2 h 05 min")."""
    return "<1 min" if seconds < 60 else duration(seconds)  # (NaN is not: "?")


def menu_clock(snapshot: Snapshot, now: float) -> float:
    """The moment every age in the menu is told at: the oldest listed question's last whole
    minute. The ages all tick over together, when the oldest turns a minute (its age exact, the
    others' behind by less than one), so the menu's labels change at most once a minute however
    many questions wait."""
    listed = [*snapshot.pending, *snapshot.abandoned, *((v, q) for v in snapshot.sessions for q in v.offline)]
    oldest = min((q.asked_at for _, q in listed), default=now)
    if not math.isfinite(oldest) or oldest > now:
        return now
    return oldest + math.floor((now - oldest) / 60) * 60


def asked(at: float, now: float) -> str:
    """When a question was asked, on the clock ("asked 14:02"; another day: "asked Mon 07 Dec
    14:02"): what a menu says in place of an age where it is never relabelled (:class:`Tray`)."""
    try:
        when, today = time.localtime(at), time.localtime(now)
    except (OverflowError, OSError, ValueError):  # (NaN, or out of the platform's range)
        return "asked ?"
    return "asked " + time.strftime("%H:%M" if when[:3] == today[:3] else "%a %d %b %H:%M", when)


def question_label(view: SessionView, q: Question, told: float, ages: bool = True) -> str:
    """``told``: the menu's clock (:func:`menu_clock`); ``ages``: the question's age, else
    when it was asked (:func:`asked`; ``told`` is then now)."""
    project = project_name(view.ref.name, view.ref.cwd, view.ref.host)
    when = age(told - q.asked_at) if ages else asked(q.asked_at, told)
    label = f"{clean(project, 40)} — {clean(q.text, MENU_TEXT)} ({when})"
    return label + offline_note(view.ref.host, view.offline_since)


def next_redraw(state: UiState, now: float) -> float | None:
    """When the icon, menu or tooltip next read differently with nothing else changed: the
    menu clock's next minute while a question waits (their ages; abandoned questions alone tick
    nothing: the menu is not re-sent each minute for them); the snooze's time left (the tooltip's,
    by the second in its last two minutes) and its end; a session's "working" going stale
    (:data:`WORKING_RECENT_S`). None: nothing ticks (no timer)."""
    snapshot, snoozed_until = state.snapshot, state.snoozed_until(now)
    times: list[float] = []
    if snapshot.pending or any(v.offline for v in snapshot.sessions):  # (abandoned ones: aged as it is redrawn)
        times.append(menu_clock(snapshot, now) + 60)
    if snoozed_until is not None:  # a time left, counting down to its end
        left = snoozed_until - now
        step = 1 if left < 120 else 60 if left < 86400 else 86400
        times.append(now + (left - math.floor(left / step) * step or step))
    stale = (v.updated_at + WORKING_RECENT_S for v in snapshot.sessions if v.state == "working")
    times += [t for t in stale if t > now]
    return min(times, default=None)


def title(state: UiState, now: float, quiet_hours: str = "") -> str:
    """``quiet_hours``: the config's quiet hours (said while in effect)."""
    pending, snoozed_until = state.snapshot.pending, state.snoozed_until(now)
    sessions = len({v.ref.key for v, _ in pending})
    if not pending:
        text = "pi-notifier: no questions waiting"
    elif sessions == 1:
        ref, n = pending[0][0].ref, len(pending)
        text = f"{project_name(ref.name, ref.cwd, ref.host)} needs an answer" + (f" ({n} questions)" if n > 1 else "")
    else:
        text = f"{sessions} pi sessions need answers"
    if snoozed_until is not None:
        text += f" — snoozed for {duration(snoozed_until - now)}"
    if quiet := quiet_hours_note(quiet_hours, now):
        text += f" — {quiet}"
    return clean(text, 120) + (f" — ⚠ {clean(state.health[0], 120)}" if state.health else "")


def menu(state: UiState, now: float, ages: bool = True) -> tuple[Entry, ...]:
    """``ages``: each question with its age (by the minute), else when it was asked (a menu
    that reads the same until a question comes or goes)."""
    snapshot, pending = state.snapshot, state.snapshot.pending
    told = menu_clock(snapshot, now) if ages else now

    def listed(pairs: Sequence[tuple[SessionView, Question]], goto: bool = False) -> list[Entry]:
        """Each question of ``pairs``: clicked, the window shows it (``goto``: its terminal)."""
        keys = [((v.ref.key, q.tool_call_id), question_label(v, q, told, ages)) for v, q in pairs[:MENU_MAX]]
        return [Entry(label, Click(Goto if goto else _show_question, key)) for key, label in keys]

    entries = listed(pending) or [Entry("No questions waiting")]
    if len(pending) > MENU_MAX:
        entries.append(Entry(f"… {len(pending) - MENU_MAX} more", Click(Show)))
    if pending:  # the terminal (tmux pane) of each waiting pi, one click away
        entries.append(Entry("Go to session", children=tuple(listed(pending, goto=True))))
    entries += listed([(v, q) for v in snapshot.sessions for q in v.offline])
    if snapshot.abandoned:
        entries += [SEPARATOR, Entry("Abandoned (the pi that asked has stopped)"), *listed(snapshot.abandoned)]
        entries.append(Entry("Clear abandoned", Click(Clear)))
    snoozes = [("15 minutes", 15 * 60), ("1 hour", 3600), ("Until tomorrow", None)]
    if state.snoozed_until(now) is not None:
        snoozes.append(("Resume notifications now", 0))
    snooze = tuple(Entry(label, Click(_snooze_for, (seconds,), timed=True)) for label, seconds in snoozes)
    entries += [SEPARATOR, Entry("Snooze all", children=snooze)]
    if state.silences.muted:
        unmute = [Entry(clean(p, 40), Click(Mute, (p, False))) for p in sorted(state.silences.muted)]
        entries.append(Entry("Unmute", children=tuple(unmute)))
    return (*entries, Entry("Open window", Click(Show), default=True), Entry("Quit", Click(Quit)))


def relabelled(was: Sequence[Entry], now: Sequence[Entry]) -> bool:
    """Whether the menu ``now`` is ``was`` with new labels only: the same entries, each doing
    what it did (its action, submenu, place), so a menu already built is changed in place."""
    return len(was) == len(now) and all(
        (a.action, a.default, a.separator) == (b.action, b.default, b.separator)
        and relabelled(a.children, b.children)
        for a, b in zip(was, now, strict=True)
    )


# ---- backend ----


def _gi(version: str, *names: str) -> bool:
    """Whether PyGObject imports and has one of the typelibs ``names`` at ``version``."""
    try:
        import gi
    except ImportError:
        return False
    for name in names:
        with contextlib.suppress(ValueError):
            gi.require_version(name, version)
            return True
    return False


def tray_backend(preference: str, sni_host: bool = False, one_host: bool = False) -> tuple[str | None, str]:
    """(pystray backend or None for no tray, the reason in one line). ``sni_host``: a
    StatusNotifierItem watcher is on the session bus now; ``one_host``: one program holds both
    that watcher and the XEmbed tray (``tray_hosts.py`` looks). Such a host (XFCE's panel)
    draws an XEmbed icon itself and gives it the left click, which its StatusNotifierItems never
    get there: gtk. An XEmbed tray held by another program beside a watcher (KDE's
    xembedsniproxy) only relays into it: the watcher's own kind, appindicator."""
    if preference == "none":
        return None, "the tray is turned off (tray.backend = 'none')"
    if sys.platform == "darwin" or sys.platform.startswith("win"):
        return "native", "the native tray of this system"
    if not has_display():
        return None, "no display (DISPLAY and WAYLAND_DISPLAY are unset)"
    if preference != "auto":
        return preference, f"tray.backend = '{preference}'"
    gtk = _gi("3.0", "Gtk")
    has_x = bool(os.environ.get("DISPLAY"))
    if gtk and has_x and one_host:
        return "gtk", "X11 with PyGObject, and the tray host draws XEmbed icons itself: menu and left-click action"
    if gtk and sni_host and _gi("0.1", "AyatanaAppIndicator3", "AppIndicator3"):
        return "appindicator", "a StatusNotifierItem host is running (menu; no left-click action)"
    if gtk and has_x:
        return "gtk", "X11 with PyGObject: menu and left-click action"
    if has_x:  # (no PyGObject: with it, X11 is gtk's)
        return "xorg", "plain X11 tray (no PyGObject: the 'gtk' extra gives a menu); a click opens the window"
    return None, "Wayland without a StatusNotifierItem host"


def _import_pystray(backend: str) -> Any:
    """pystray, with ``backend`` (pystray reads PYSTRAY_BACKEND once, at its first import). The
    variable is set for that import only: the processes the app starts (the window, a terminal
    goto opens) must not inherit it."""
    before = os.environ.get("PYSTRAY_BACKEND")
    if backend != "native":
        os.environ["PYSTRAY_BACKEND"] = backend
    try:
        import pystray
    finally:
        if before is None:
            os.environ.pop("PYSTRAY_BACKEND", None)
        else:
            os.environ["PYSTRAY_BACKEND"] = before
    return pystray


class Look(NamedTuple):
    """What the icon shows: its badge (state, count: the image drawn), tooltip and menu (plain
    values: one told apart from the one drawn by ``==``)."""

    badge: tuple[IconState, int]
    title: str
    entries: tuple[Entry, ...]


class Tray:
    """The icon, on the outputs thread's states. The xorg backend runs only while an XEmbed tray
    host is there (``hosts``): without one it would log a traceback at every change; when a host
    comes, a new icon docks in it, and when it goes, that icon's loop is ended. The GTK backends
    follow hosts themselves."""

    def __init__(self, backend: str, execute: Callable[[Command], object], hosts: HostFollower | None = None) -> None:
        self.pystray = _import_pystray(backend)
        compat.keep_sigint()
        compat.no_notifier_connection()
        compat.quiet_dock_failures()
        self.backend = backend
        self.execute = execute
        self.hosts = hosts
        # what is to be shown now (until the first update: nothing waits), and what the icon shows
        self._want = self._drawn = Look(("idle", 0), "pi-notifier", menu(UiState(), time.time()))
        self._lock = threading.Lock()
        self._live = backend != "xorg"  # may the icon be changed now (an xorg one: only while it runs)
        self._running: tuple[Any, threading.Event] | None = None  # the icon whose loop runs, its end
        self.icon = self._new_icon()
        # Ages in the menu where new labels change the menu already built (the GTK backends);
        # elsewhere a new label is a new menu (a menu open closes): each says when it was asked.
        self.ages = compat.relabels(self.icon)

    def _new_icon(self) -> Any:
        """(With the lock held, or before the loop runs.)"""
        self._drawn = self._want
        icon = self.pystray.Icon(
            "pi-notifier",
            icon=icon_image(*self._want.badge, ICON_SIZE),
            title=self._want.title,
            menu=self.pystray.Menu(self._items),
        )
        if self.backend == "xorg":
            compat.dock_once(icon)
            compat.accept_clicks(icon)  # (before the loop runs: only its thread uses its connection)
            compat.calls_over_own_connection(icon)
        return icon

    # ---- menu ----

    def _items(self) -> Any:
        """(pystray calls it when it builds the menu: at the start, and at each update_menu.)"""
        return [self._item(e) for e in self._want.entries]

    def _item(self, entry: Entry) -> Any:
        p = self.pystray
        if entry.separator:
            return p.Menu.SEPARATOR
        if entry.children:
            return p.MenuItem(entry.label, p.Menu(*[self._item(c) for c in entry.children]))
        action = entry.action
        if action is None:
            return p.MenuItem(entry.label, None, enabled=False)
        return p.MenuItem(entry.label, lambda icon, item: self.execute(action(time.time())), default=entry.default)

    # ---- state ----

    def update(self, ui: UiState, quiet_hours: str = "") -> None:
        """Called from the outputs thread with each new state (and when an age in the menu ticks
        over). An xorg icon whose loop does not run (no tray host) is not touched: the next one
        starts with what is shown now. ``quiet_hours``: the config's, said while in effect."""
        now, snapshot = time.time(), ui.snapshot
        pending = snapshot.pending_count
        working = any(s.state == "working" and s.updated_at > now - WORKING_RECENT_S for s in snapshot.sessions)
        state = state_for(pending, len(snapshot.abandoned), working, ui.snoozed_until(now) is not None)
        want = Look((state, pending if state == "needs" else 0), title(ui, now, quiet_hours), menu(ui, now, self.ages))
        with self._lock:
            self._want = want
            if not self._live:
                return
            was, self._drawn = self._drawn, want
            if want.badge != was.badge:
                self.icon.icon = icon_image(*want.badge, ICON_SIZE)
            if want.title != was.title:
                self.icon.title = want.title
            # The menu only when it reads differently, and new labels alone on the menu already
            # built (``compat.relabel``): a menu built again is a new menu to the tray host, which
            # reads it whole again (a menu open on XFCE's panel closes).
            if self.icon.HAS_MENU and want.entries != was.entries and not (
                relabelled(was.entries, want.entries) and compat.relabel(self.icon)
            ):
                self.icon.update_menu()

    # ---- loop ----

    def run(self, on_ready: Callable[[], None], stop: Stop) -> None:
        """The icon's loop, on the main thread, until ``stop`` is set (whoever sets it ends the
        loop: :meth:`Stop.then`); then the hosts are no longer followed. Every backend but xorg
        docks by itself: one loop. An xorg icon runs while an XEmbed tray host is there: a new icon
        (and loop) each time one comes; its loop is ended by the tray host going (seen where the
        follower is read: the outputs thread) or by the app stopping."""
        hosts = self.hosts
        try:
            if self.backend != "xorg" or hosts is None:
                stop.then(self._end)
                self._run_icon(self.icon, on_ready, stop.is_set)
                return

            def end_on_stop() -> None:
                hosts.wake()
                self._end()

            stop.then(end_on_stop)
            hosts.listen(lambda now: self._end() if now.xembed is None else None)

            def over() -> bool:
                return stop.is_set() or hosts.hosts.xembed is None

            first = True
            while hosts.wait(lambda now: now.xembed is not None, stop):
                if not first:
                    with self._lock:
                        self.icon = self._new_icon()
                first = False
                self._run_icon(self.icon, on_ready, over)
        finally:
            if hosts is not None:
                hosts.close()

    def _run_icon(self, icon: Any, on_ready: Callable[[], None], over: Callable[[], bool]) -> None:
        """One icon's loop, until it is ended (:meth:`_end`, from whoever stops it). pystray runs
        ``setup`` on a thread of its own once the loop runs; it returns at once (that thread
        ends), ending the loop itself only if it is ``over()`` already (a stop that came before
        this icon was running, so :meth:`_end` found nothing to end)."""
        ended = threading.Event()

        def setup(icon: Any) -> None:
            icon.visible = True
            with self._lock:
                self._live = True
                self._running = (icon, ended)
            on_ready()  # (draws what changed before this icon ran)
            if over():
                self._end()

        try:
            icon.run(setup=setup)
        finally:
            ended.set()
            with self._lock:
                self._live = False
                self._running = None

    def _end(self) -> None:
        """End the running icon's loop, once (any thread; nothing when none runs): no change is
        sent to a loop that is ending (it would wait forever); an xorg loop that does not end
        within the grace has its window destroyed."""
        with self._lock:
            running, self._running = self._running, None
            self._live = False
        if running is None:
            return
        icon, ended = running
        wid = compat.window_id(icon)
        threading.Thread(target=self._stop, args=(icon,), name="pi-notifier-tray-stopping", daemon=True).start()
        if wid is not None and not ended.wait(XORG_STOP_GRACE_S):  # (only xorg's is waited for)
            log.debug("the xorg tray loop did not end %.0f s after stop: its window is destroyed", XORG_STOP_GRACE_S)
            compat.destroy_window(wid)

    @staticmethod
    def _stop(icon: Any) -> None:
        with contextlib.suppress(Exception):  # (pystray's GTK backends may fail on the way out: nothing to do then)
            icon.stop()


# ---- the output that draws ----


class WindowFeed(Protocol):
    """The open windows (``app.WindowProcess``): each is pushed the snapshot."""

    @property
    def subscribers(self) -> Sequence[object]:
        """The open windows now (none: nothing to push)."""

    def push(self, snapshot: Snapshot, silences: Silences) -> None: ...


class Redraw:
    """The tray and the window are drawn from the app's one outputs thread (``worker``, made by
    the app, which the notifier runs on too, and started by it), never from the engine thread.

    One of the engine's outputs: it keeps the snapshot each call hands it (and never asks for one),
    marks the UI as changed, and the worker then builds one :class:`UiState` of that snapshot, the
    silences and the health, draws the tray and pushes the snapshot to the window (coalesced). A
    change that is no snapshot (the silences, the health, quiet hours) is :meth:`changed`. It wakes
    by itself when the tray's ages or quiet hours next read differently. A failure is the worker's
    supervisor's: said once, drawn again at the next change."""

    def __init__(
        self, window: WindowFeed, config: Config, health: FailureLog, stop: threading.Event, worker: Worker
    ) -> None:
        """Wired once; the icon, ``tray``, is set by the app before ``worker`` starts (None: none,
        or it stopped). The user's choices (:meth:`set_silences`), the quiet hours (:meth:`set_quiet_hours`)
        and what failed (``health``'s listener) are handed to it, as the snapshots are."""
        self.window = window
        self.tray: Any = None
        self.silences = Silences()
        self.health: tuple[str, ...] = ()
        self.quiet_hours: str = config["quiet_hours"]  # (:meth:`set_quiet_hours` as the file changes)
        self.snapshot = Snapshot()  # the last one the engine sent
        self._stop = stop
        self._dirty = threading.Event()
        self._due: float | None = None  # time.monotonic() the tray next reads differently by itself
        self.worker = worker
        self.worker.add(self)
        health.listen(self.set_health)

    def changed(self) -> None:
        """Something the tray or window shows changed (any thread): drawn soon, never waited for."""
        self._dirty.set()
        self.worker.wake()

    def set_silences(self, silences: Silences) -> None:
        """The user's choices changed (their keeper's listener)."""
        self.silences = silences
        self.changed()

    def set_quiet_hours(self, value: str) -> None:
        """New quiet hours (the config file changed; a value the config accepted)."""
        self.quiet_hours = value
        self.changed()

    def set_health(self, lines: tuple[str, ...]) -> None:
        """What failed changed (``FailureLog``'s listener, any thread)."""
        self.health = lines
        self.changed()

    # The engine's output protocol: each new snapshot is kept, and is something changed.
    def ready(self, info: object, snapshot: Snapshot) -> None:
        self.snapshot = snapshot
        self.changed()

    def publish(self, batch: Batch) -> None:
        self.snapshot = batch.snapshot
        self.changed()

    # The worker's part: a change, the tray's next age tick.
    def due_in(self) -> float | None:
        return None if self._due is None else self._due - time.monotonic()

    def run_due(self) -> None:
        if self._stop.is_set():
            return
        changed = self._dirty.is_set()
        if changed:
            self._dirty.clear()  # (before the draw reads the snapshot: a change after it is drawn next)
        if changed or (self._due is not None and time.monotonic() >= self._due):
            wake_in = self.draw(push_window=changed)  # (a delay: a wall clock set back changes no wait)
            self._due = None if wake_in is None else time.monotonic() + wake_in

    def draw(self, push_window: bool) -> float | None:
        """Draw the tray (and, ``push_window``: push to the window); returns how long until the tray's
        ages or quiet hours next read differently (None: not before the next change)."""
        state = UiState(self.snapshot, self.silences, self.health)
        if push_window and self.window.subscribers:
            self.window.push(state.snapshot, state.silences)
        tray = self.tray
        if tray is None:
            return None
        quiet = self.quiet_hours
        tray.update(state, quiet)
        now = time.time()
        times = [next_redraw(state, now), next_quiet_change(parse_quiet_hours(quiet), now)]
        due = min((t for t in times if t is not None), default=None)
        return None if due is None else max(0.0, due - now)


# ---- the app's tray, and doctor's line ----


def make_tray(config: Config, act: Callable[[Command], object]) -> Tray | None:
    """A tray icon whose menu calls ``act`` (drawn by :class:`Redraw`); ``None`` when no
    tray can be shown here (said in the log). A backend that fails to start never raises. With
    no tray host the icon waits for one: the app carries on with notifications and the window."""
    follower: HostFollower | None = None
    hosts = Hosts()
    if config["tray.backend"] != "none" and has_display() and os.name == "posix" and sys.platform != "darwin":
        follower = HostFollower(HostLog())
        hosts = follower.start()  # (followed on the outputs thread from App.start)
    backend, why = tray_backend(config["tray.backend"], sni_host=hosts.sni is not None, one_host=hosts.one)
    try:
        if backend is None:
            log.info("no tray icon: %s", why)
        else:
            tray = Tray(backend, act, hosts=follower)
            log.debug("tray: %s — %s", backend, why)
            return tray
    except Exception as exc:  # pystray or its toolkit cannot start here
        log.warning("no tray icon (%s backend failed: %s)", backend, exc)
    if follower is not None:
        follower.close()
    return None


def doctor_line(config: Config) -> str:
    """``doctor``'s tray line: the backend, and the tray host really found (the X selection's
    owner, the StatusNotifierWatcher's owner, both asked now). OK only when a host that backend
    can show in answered."""
    hosts, unasked = (Hosts(), []) if not has_display() or sys.platform == "darwin" else look()
    backend, why = tray_backend(config["tray.backend"], sni_host=hosts.sni is not None, one_host=hosts.one)
    head = f"tray: {backend or 'none'} — {why}"
    if backend is None or backend == "native":
        return f"[{'ok  ' if backend else 'note'}] {head}"
    usable = hosts.xembed if backend in ("xorg", "gtk") else hosts.xembed or hosts.sni
    if usable:
        return f"[ok  ] {head}; tray host: {hosts.describe()}"
    if hosts.sni:  # an SNI watcher only, and a backend that cannot talk to it
        return (
            f"[FAIL] {head}; tray host: {hosts.describe()} only, which the {backend} backend cannot"
            " use (install the 'gtk' extra and the Ayatana AppIndicator typelib)"
        )
    detail = "; ".join(unasked) if unasked else NO_HOST_WHY
    return f"[note] {head}; tray host: none ({detail}): the icon appears when one starts"
