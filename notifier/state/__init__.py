"""The app's persistent state: what it remembers (:mod:`.store`) in a SQLite file no caller waits for
(:mod:`.database`), and the saved snoozes and mutes read without opening it (:mod:`.saved_choices`)."""
