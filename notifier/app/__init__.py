"""The running app: wiring and lifecycle (:mod:`.runtime`; one app per user and one notifier per
question, :mod:`.instance`; :mod:`.signals`, :mod:`.stopping`), the tray (:mod:`.tray_choice`,
:mod:`.tray_hosts`, :mod:`.tray_follower`) drawn by the UI thread (:mod:`.redraw`), the window
process (:mod:`.window_process`, what it shows beyond the snapshot :mod:`.decorate`; without an
app :mod:`.local`), control requests (:mod:`.requests`), the user's choices (:mod:`.choices`), the
notifier among the engine's sinks (:mod:`.alerts`), extension dialogs (:mod:`.dialog_feed`),
remotes and pushes (:mod:`.remotes`), and its config file followed (:class:`notifier.watch.ConfigFollower`)."""
