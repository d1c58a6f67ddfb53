"""The machine around the app: its folders (:mod:`.paths`), the process table (:mod:`.processes`),
tmux, where a pi runs (:mod:`.locate`), the desktop's window managers and focus (:mod:`.desktop`,
:mod:`.focus`, :mod:`.x11`, :mod:`.swayipc`, :mod:`.kwin`, :mod:`.hyprland`), autostart entries,
saying each problem once (:mod:`.logonce`), and keeping a part running (:mod:`.supervisor`)."""
