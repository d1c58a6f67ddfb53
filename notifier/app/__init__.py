"""The running app: wiring and lifecycle (:mod:`.runtime`), the tray (:mod:`.tray_choice`,
:mod:`.tray_hosts`, :mod:`.tray_follower`), the window process (:mod:`.window_process`), control requests
(:mod:`.requests`), the user's choices (:mod:`.choices`), extension dialogs (:mod:`.dialog_feed`),
remotes and pushes (:mod:`.remotes`)."""
