"""Watching: the sessions folders through watchdog (:mod:`.observer`, typed :mod:`.events` for the
engine), the folders inotify cannot watch (:mod:`.watchlimit`), and the config file
(:mod:`.config_file`)."""
