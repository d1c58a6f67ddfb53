"""The engine's outputs, each fed the transitions and a snapshot: the ``run --json`` lines
(:mod:`.jsonout`), the question history (:mod:`.history`), desktop notifications (:mod:`.notify`)
and pushes to a phone or chat (:mod:`.push`)."""
