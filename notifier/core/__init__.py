"""The pure core (no files, threads, clock or UI; time is passed in), one concept a module:
:mod:`.model` (the immutable values and messages), :mod:`.codec` (the one bounded JSON codec of
them), :mod:`.text` (the one sanitizer, secrets masking, shell quoting), :mod:`.reducer` (one
session's state from pi's events), :mod:`.owners` (which pi owns which session: the evidence),
:mod:`.board` (every session, the liveness judgement, snapshots), :mod:`.planner` (what to notify
when) and :mod:`.commands` (the one command vocabulary)."""
