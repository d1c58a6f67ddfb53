"""Workarounds that need a dependency's private parts: one module per dependency, each guarded by
the versions it was checked against and linked to the upstream issue. Nothing else in the app
touches a dependency's private attributes."""
