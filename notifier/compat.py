"""The one place a dependency's private parts, or the way its pieces fit in one version, are
relied on. Each workaround is guarded by the versions it was checked against and linked to the
upstream issue; nothing else in the app touches a dependency's private attributes.

**pystray** 0.19 workarounds. Each touches a private attribute, so each is applied only to the
versions it was checked against (``CHECKED``) and only where that attribute is there; on any other
version it does nothing (said once, at debug level) and pystray behaves as upstream made it.

- :func:`keep_sigint`: the GTK backends reset SIGINT to "kill at once" when their loop starts
  (``pystray/_util/gtk.py``), so the app could not withdraw its notifications on Ctrl-C.
- :func:`accept_clicks`: the xorg icon window does not ask for button presses, so a click never
  arrives (https://github.com/moses-palmer/pystray/issues/151).
- :func:`dock_once`: the xorg backend asks the tray to dock its window again on *every* icon
  change; trayer makes a new socket each time and, after a few, leaves the icon 1 px wide (the
  1 px look of https://github.com/moses-palmer/pystray/issues/7, by another road). Measured under
  trayer 1.1.8: 50 changes, a new parent window each time, 1 px wide in 6 of 10 samples; docked
  once, the same parent and 24 px throughout.
- :func:`destroy_window`: without PyGObject, ``Icon.stop()`` sometimes returns while the loop never
  sees its window destroyed (about 1 run in 3 here with no tray host), so the app hung on SIGTERM
  until killed. Destroying the window over a connection of our own ends the loop. Not reported
  upstream that we know of; close to https://github.com/moses-palmer/pystray/issues/94.
- :func:`calls_over_own_connection`: the xorg backend carries a change made from another thread
  (``icon.icon = …``, ``title``, ``visible``, ``stop()``) to its loop by a ClientMessage sent and
  flushed on the *loop's* X connection. python-xlib 0.33 (``Xlib.protocol.display.send_and_recv``)
  lets such a flushing thread return without waking a thread that waits for a reply: when the
  flush coincides with the loop's own round trip (``get_geometry`` as it redraws on the Expose of
  a new tray), the loop waits on that lock for ever, so the icon is never drawn (about 1 start
  in 8 here: "tray host appeared", the window embedded and mapped, never painted). So another
  thread's message goes over a connection of our own and its flush of the loop's connection is
  dropped: only the loop thread uses its connection.
- :func:`no_notifier_connection`: the GTK backends open a D-Bus connection of their own to the
  notification server as the loop starts (``pystray/_util/gtk.py``: ``notify_dbus.Notifier()`` in
  ``_initialize``), used only by ``Icon.notify`` — which the app never calls (its notifications
  are its own, over its one bus client) — and by the ``hide()`` at the loop's end. That connection
  costs a second session-bus client and GLib's ``gdbus`` and ``gmain`` threads in every idle app
  with a GTK tray; the app's own D-Bus client is the one. So the GTK helper is handed a notifier
  that connects to nothing (its ``notify`` says it is not used, its ``hide`` does nothing). The
  AppIndicator backend still talks D-Bus through libappindicator (its host is on the bus).
- :func:`relabel`: the GTK backends (``gtk``, ``appindicator``) build a whole new ``Gtk.Menu`` at
  each ``update_menu()`` (``GtkIcon._create_menu``). The appindicator backend then hands it to
  ``app_indicator_set_menu``, which makes it the root of its dbusmenu server: every entry gets a
  new id and the server says ``LayoutUpdated`` for the root, so the host reads the whole menu
  again, and XFCE's panel (4.18) closes a menu open there — at each age tick of a waiting
  question. The gtk backend keeps an open popup of the old menu, which then reads the old labels
  and is never destroyed. A change of labels alone is made on the ``Gtk.Menu`` already built
  (on GTK's loop, like pystray's own changes): libdbusmenu-gtk follows each item's label and says
  ``ItemsPropertiesUpdated`` for that item alone; the menu open in the host stays open and reads
  the new label. Its items keep their handlers: the caller relabels only a menu whose entries do
  the same as before.
- :func:`quiet_dock_failures`: the xorg backend logs "Failed to dock icon" with a traceback at every
  change while no tray host runs (https://github.com/moses-palmer/pystray/issues/186); the app
  follows the tray host itself and says once when it comes or goes, so these records are dropped.

**watchdog** across the releases the project accepts (``pyproject.toml``: 7.1.1 and newer on Python
3.11+, 4.0 and newer on 3.10, where 7.1 is not published).

- **Events lost.** watchdog 7.1.1 reports an inotify queue overflow as ``EventsLostEvent`` (its
  path is the watched folder: rescan it). Older releases drop the overflow without a word, so
  :func:`events_lost` is ``None`` there and nothing can be caught up (``doctor`` says so).
- **Stop race.** watchdog 7.0 and 7.1.0's inotify emitter can log "InotifyEmitter.queue_events()
  called when the thread is inactive" at ERROR as a watch stops (``on_thread_stop`` drops the
  watch group while the emitter thread is between ``should_keep_running()`` and
  ``queue_events()``). Nothing is lost: the emitter is stopping. Measured: 1 Ctrl-C of
  ``pi-notifier run`` in 15 printed it. 7.1.1 logs it at DEBUG.
- **A folder past the watch limit.** watchdog 7.1.1 logs "Unable to watch %r: %s" for each
  sub-folder it cannot watch; the app says it once for the whole folder
  (:mod:`notifier.watch`), so those records are dropped.

The records are dropped with a logging filter (public logging API; the messages are watchdog's).
"""

from __future__ import annotations

import functools
import logging
import signal
import threading
from typing import TYPE_CHECKING, Any

from notifier.system.log import LogOnce

if TYPE_CHECKING:
    from watchdog.events import FileSystemEvent

# Lazy imports here: Xlib is a Linux-only dependency and this module loads on every OS;
# pystray._util.gtk exists only with pystray's GTK backends.

log = logging.getLogger(__name__)
CHECKED = ("0.19.",)  # the versions these workarounds were written and tested for
_skipped = LogOnce(log, logging.DEBUG)


def version() -> str | None:
    from importlib import metadata  # (here: importlib.metadata costs ~15 ms, and status loads this module)

    try:
        return metadata.version("pystray")
    except metadata.PackageNotFoundError:
        return None


def checked(found: str | None = None) -> bool:
    """Is this pystray (or ``found``) one of the versions the workarounds were checked against?"""
    v = version() if found is None else found
    return v is not None and v.startswith(CHECKED)


def _skip(what: str) -> None:
    _skipped(f"pystray {version()}", what, "%s not applied (checked on %s only)", what, ", ".join(CHECKED))


class _SignalWithoutSigintReset:
    """Stands in for the ``signal`` module inside pystray's GTK helper: the reset of SIGINT to
    its default action is refused, every other call goes through."""

    SIGINT = signal.SIGINT
    SIG_DFL = signal.SIG_DFL

    @staticmethod
    def signal(signum: int, handler: Any) -> Any:
        if signum == signal.SIGINT and handler == signal.SIG_DFL:
            return signal.getsignal(signal.SIGINT)
        return signal.signal(signum, handler)


def _gtk_helper(what: str) -> Any:
    """pystray's GTK helper module where ``what`` applies to it (a checked pystray with the GTK
    backends), else None."""
    if not checked():
        return _skip(what)
    try:
        from pystray._util import gtk as pystray_gtk  # only present with the GTK backends
    except Exception:
        return None
    return pystray_gtk


def keep_sigint() -> None:
    helper = _gtk_helper("keep_sigint")
    if helper is not None and getattr(helper, "signal", None) is signal:
        helper.signal = _SignalWithoutSigintReset


class _NoNotifier:
    """Stands in for pystray's ``notify_dbus.Notifier``: no connection (the app never calls
    ``Icon.notify``; its notifications go through its own bus client)."""

    def notify(self, title: str, message: str, icon: str) -> None:
        log.debug("pystray's own notifications are not used by the app")

    def hide(self) -> None:
        pass


def no_notifier_connection() -> None:
    helper = _gtk_helper("no_notifier_connection")
    if helper is not None and hasattr(getattr(helper, "notify_dbus", None), "Notifier"):
        helper.notify_dbus = type("notify_dbus", (), {"Notifier": _NoNotifier})


def _xorg_window(icon: Any) -> Any:
    """The xorg icon's X window, or None (another backend or version)."""
    return getattr(icon, "_window", None) if checked() and hasattr(icon, "_display") else None


def accept_clicks(icon: Any) -> None:
    """Call before ``run()`` (the loop thread is then the only user of the connection)."""
    window = _xorg_window(icon)
    if window is None:
        return _skip("accept_clicks")
    from Xlib import X

    window.change_attributes(event_mask=X.ExposureMask | X.StructureNotifyMask | X.ButtonPressMask)
    icon._display.flush()  # noqa: SLF001


def dock_once(icon: Any) -> None:
    """Ask the tray to dock the window only while it is not docked. Call before ``run()``."""
    dock = getattr(icon, "_dock_window", None)
    if _xorg_window(icon) is None or dock is None or not hasattr(icon, "_systray_manager"):
        return _skip("dock_once")

    def dock_unless_docked() -> None:
        if not icon._systray_manager:  # noqa: SLF001 (None again once the tray host is gone)
            dock()

    icon._dock_window = dock_unless_docked  # noqa: SLF001


_own: list[Any] = []  # the connection other threads' messages go over (opened once, kept)
_own_lock = threading.Lock()


def calls_over_own_connection(icon: Any) -> None:
    """Call before ``run()``, after anything else done on the icon's connection before it."""
    window = _xorg_window(icon)
    send = getattr(icon, "_send_message", None)
    disp = getattr(icon, "_display", None)
    if window is None or send is None or disp is None:
        return _skip("calls_over_own_connection")
    from Xlib import X, display
    from Xlib.protocol import event

    flush = disp.flush

    def on_loop() -> bool:
        return getattr(icon, "_thread", None) is threading.current_thread()

    def send_message(win: Any, client_type: int, l0: int = 0, l1: int = 0, l2: int = 0, l3: int = 0) -> None:
        if on_loop():
            return send(win, client_type, l0, l1, l2, l3)  # type: ignore[no-any-return]
        with _own_lock:  # (python-xlib is thread-safe on one connection only with Xlib.threaded)
            if not _own:
                _own.append(display.Display())
            own = _own[0]
            own.create_resource_object("window", win.id).send_event(
                event.ClientMessage(
                    window=win.id, client_type=client_type, data=(32, (X.CurrentTime, l0, l1, l2, l3))
                ),
                event_mask=X.NoEventMask,  # (to the window's creator: the loop's connection)
            )
            own.flush()
        return None

    def flush_on_loop_only() -> None:
        if on_loop():
            flush()

    icon._send_message = send_message  # noqa: SLF001
    disp.flush = flush_on_loop_only


def window_id(icon: Any) -> int | None:
    """The X window id of an xorg icon (to destroy it later from another connection), or None."""
    window = _xorg_window(icon)
    return int(window.id) if window is not None else None


def destroy_window(wid: int) -> bool:
    """Destroy the icon window ``wid`` over a new X connection: its loop sees DestroyNotify and
    ends. False when it could not be done (already gone, no display)."""
    from Xlib import display, error

    failed = error.CatchError()
    try:
        disp = display.Display()
        try:
            disp.create_resource_object("window", wid).destroy(onerror=failed)
            disp.sync()
        finally:
            disp.close()
    except Exception as exc:  # (no display, or the request refused at once)
        log.debug("the tray window %#x could not be destroyed: %s", wid, exc)
        return False
    if (refused := failed.get_error()) is not None:
        log.debug("the tray window %#x could not be destroyed: %s", wid, refused)
    return refused is None


def relabels(icon: Any) -> bool:
    """Whether :func:`relabel` can change ``icon``'s menu in place (a checked pystray's GTK
    backends), where it must otherwise be built again (``update_menu``)."""
    helper = _gtk_helper("relabel")
    return helper is not None and isinstance(icon, helper.GtkIcon)


def relabel(icon: Any) -> bool:
    """Make the GTK menu ``icon`` has built read the labels of ``icon.menu`` now, in place: on
    GTK's loop, after the changes already handed to it. Call only when the menu's entries are
    the same but for their labels; one that is not (counted, or of another kind) is built again
    there (``update_menu``). False, and nothing done, where it cannot (another backend or
    version, or no menu built yet): build it again then."""
    if not relabels(icon) or getattr(icon, "_menu_handle", None) is None:  # (set as it is built)
        return False
    from gi.repository import GLib

    def on_loop() -> bool:
        menu = getattr(icon, "_menu_handle", None)  # (the last built, on this loop)
        labels = None if menu is None else _labels(menu, list(icon.menu), type(icon.menu).SEPARATOR)
        if labels is None:
            icon.update_menu()
        for label, item in labels or ():
            if label.get_text() == item.text:
                continue
            if item.default:  # (pystray draws the default entry in bold)
                label.set_markup(f"<b>{GLib.markup_escape_text(item.text)}</b>")
            else:
                label.set_text(item.text)
        return False  # (once)

    GLib.idle_add(on_loop)  # (the loop pystray's own changes are run on, in order)
    return True


def _labels(menu: Any, items: list[Any], separator: Any) -> list[tuple[Any, Any]] | None:
    """Each ``Gtk.Label`` of the ``Gtk.Menu`` ``menu`` with the pystray item (of ``items``, its
    visible ones; ``separator``: pystray's Menu.SEPARATOR) it shows, submenus included; None
    where the menu does not have one item of the same kind per item."""
    from gi.repository import Gtk

    children = menu.get_children()
    if len(children) != len(items):
        return None
    pairs: list[tuple[Any, Any]] = []
    for child, item in zip(children, items, strict=True):
        if isinstance(child, Gtk.SeparatorMenuItem) != (item is separator):
            return None
        if item is separator:
            continue
        label, submenu = child.get_child(), child.get_submenu()
        if not isinstance(label, Gtk.Label) or (submenu is None) != (item.submenu is None):
            return None
        inner = [] if submenu is None else _labels(submenu, list(item.submenu), separator)
        if inner is None:
            return None
        pairs += [(label, item), *inner]
    return pairs


@functools.cache  # (one filter per logger, however often asked)
def _drop(logger: str, *messages: str) -> None:
    """Drop ``logger``'s records of these messages (a filter: public logging API)."""
    logging.getLogger(logger).addFilter(lambda record: record.msg not in messages)


def quiet_dock_failures() -> None:
    """pystray's own logger (the message is pystray 0.19's)."""
    _drop("pystray._base", "Failed to dock icon")


# watchdog
def events_lost() -> type[FileSystemEvent] | None:
    """watchdog's ``EventsLostEvent``, or None where this watchdog has none."""
    import watchdog.events  # (here, not at the top: the logging filter below is for every command)

    found: type[FileSystemEvent] | None = getattr(watchdog.events, "EventsLostEvent", None)
    return found


STOP_RACE = "InotifyEmitter.queue_events() called when the thread is inactive"
UNABLE_TO_WATCH = "Unable to watch %r: %s"


def quiet_stop_race() -> None:
    """Drop watchdog's records that are harmless or said by the app in its own words."""
    _drop("watchdog.observers.inotify", STOP_RACE, UNABLE_TO_WATCH)
