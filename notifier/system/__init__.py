"""The machine around the app: its folders (:mod:`.paths`), the process table (:mod:`.processes`),
outside programs (:mod:`.programs`), tmux (:mod:`.tmux`), where a pi runs (:mod:`.locate`; as
``status`` shows it, :mod:`.status_locations`), the desktop's window managers and focus
(:mod:`.desktop`, :mod:`.focus`, :mod:`.x11`, :mod:`.swayipc`, :mod:`.kwin`, :mod:`.hyprland`),
autostart entries (:mod:`.autostart`), saying each problem once (:mod:`.logonce`), secrets kept out
of the log (:mod:`.log_filter`), and keeping a part running (:mod:`.supervisor`)."""
