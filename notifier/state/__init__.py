"""The app's persistent state: the SQLite store (:mod:`.store`) and the saved snoozes and mutes read
without opening it (:mod:`.saved_choices`)."""
