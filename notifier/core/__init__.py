"""The pure core (no files, threads, clock or UI; time is passed in): the model (:mod:`.model`), a
session's state from pi's events (:mod:`.reducer`), the board of every session (:mod:`.board`,
composing :mod:`.local_sessions`, :mod:`.remote_sessions` and :mod:`.dialogs`), which pi owns which
session (:mod:`.pairing`, :mod:`.owners`), when to notify (:mod:`.planner`), the command
vocabulary (:mod:`.commands`), the one serialisation (:mod:`.formats`), the one sanitizer
(:mod:`.text`) and the one bounded JSON parse (:mod:`.jsonbound`). docs/architecture.md §2 lists
every module."""
