"""The running app: wiring and lifecycle, the user's choices, control requests, signals and
stopping (:mod:`.runtime`); one app per user and who notifies (:mod:`.instance`); the window
process and what it shows beyond the snapshot (:mod:`.window_process`); the tray (:mod:`.tray_choice`,
:mod:`.tray_hosts`, :mod:`.tray_follower`) drawn by the UI thread (:mod:`.redraw`), and its config
file followed (:mod:`.config_follow`)."""
