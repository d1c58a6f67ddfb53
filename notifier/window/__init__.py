"""The pending-questions window: a Tk process of its own (:mod:`.window`), drawn from a typed view
model of the snapshot (:mod:`.view`, pure)."""
