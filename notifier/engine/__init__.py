"""The engine: one thread that owns the session files and the board (:mod:`.loop`, :mod:`.files`),
the liveness probe (:mod:`.liveness`), its supervision (:mod:`.supervise`), and the one-shot read
without the thread (:mod:`.scan`, :mod:`.follow`)."""
