"""Reading pi's session files, in bounded memory whatever they hold: which files are sessions
(:mod:`.scanner`), following one as it grows (:mod:`.tail`, :mod:`.readers`), its state at start-up
read from its end (:mod:`.startup_read`), its name further back (:mod:`.names`), and the start-up
scan cache (:mod:`.cache`)."""
