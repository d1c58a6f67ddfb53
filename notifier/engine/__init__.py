"""The engine: one thread that owns the session files and the board (:mod:`.loop`, :mod:`.files`),
the liveness probe (:mod:`.liveness`), what it hands its sinks (:mod:`.sinks`), what it is told
(:mod:`.options`), and the one-shot read without the thread (:mod:`.scan`, :mod:`.follow`)."""
