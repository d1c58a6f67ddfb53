"""Workarounds that need a dependency's private parts, or the way its pieces fit in one version: one
module per dependency (:mod:`.pystray`), each guarded by the versions it was
checked against and linked to the upstream issue. Nothing else in the app touches a dependency's
private attributes."""
