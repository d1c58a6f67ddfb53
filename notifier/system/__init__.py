"""The machine around the app: its folders (:mod:`.paths`), processes and outside programs
(:mod:`.processes`), tmux (:mod:`.tmux`), where a pi runs (:mod:`.locate`, also as ``status``
shows it), the desktop's window managers, one table of backends (:mod:`.window_manager`), what the user
looks at (:mod:`.focus`), autostart entries (:mod:`.autostart`), the logging set-up
(:mod:`.log`: log arguments sanitised, secrets masked, each problem said once), and keeping a
part running (:mod:`.supervisor`)."""
