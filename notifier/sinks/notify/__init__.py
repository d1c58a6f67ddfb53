"""Desktop notifications: a sink fed by the engine's transitions.

Linux talks to ``org.freedesktop.Notifications`` directly through jeepney (ids, replace, close,
actions, urgency). Without a session bus or server it falls back to plyer, then to nothing (the
tray alone); macOS and Windows use plyer; WSL shows a Windows toast through powershell.exe. Which
notifications to raise, when, and when to withdraw them is decided by the pure
:class:`notifier.core.planner.Planner` (quiet hours: :mod:`notifier.core.planner`); this package
only renders and delivers:

- :mod:`.render`: title and body of a notice (the one sanitizer and its escaping)
- :mod:`.hints`: a ``Notify`` call's actions, hints and timeout; :mod:`.servers`: the actions each
  server shows
- :mod:`.backend`: what a backend offers, the one that shows nothing, their errors
- :mod:`.bus`: one session-bus connection, replies matched by serial (duplicates, strays dropped)
- :mod:`.dbus`: D-Bus through jeepney, following the server; the real round-trip check; its
  signals (:mod:`.server_signals`) and who owns the server's name (:mod:`.name_owner`)
- :mod:`.fallback`: plyer, and powershell.exe toasts on WSL
- :mod:`.choose`: which backend delivers here, and the doctor line
- :mod:`.screen`: what is on screen, shown again when the server comes back; its record in the
  store, and what a run before ours left there (:mod:`.bubbles`)
- :mod:`.sink`: :class:`~.sink.AlertSink`, its worker thread (kept running), the server coming and
  going
"""
