"""The running app: wiring and lifecycle, the user's choices, control requests, signals and
stopping (:mod:`.runtime`); one app per user and who notifies (:mod:`.instance`); the window
process and what it shows beyond the snapshot (:mod:`.window_process`). The tray is
:mod:`notifier.outputs.tray` (handed the engine's snapshots); the config file is followed by
:class:`notifier.watch.ConfigFollower`."""
