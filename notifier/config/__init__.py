"""The configuration: every key with its default, documentation and range (:mod:`.keys`), and
loading, merging and rendering the TOML file (:mod:`.load`)."""
