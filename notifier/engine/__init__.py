"""The engine: one thread that owns the session files and the board (:mod:`.loop`, :mod:`.files`),
the liveness probe (:mod:`.liveness`), what it hands its sinks (:mod:`.sinks`), and the one-shot read
without the thread (:mod:`.scan`, :mod:`.follow`)."""
