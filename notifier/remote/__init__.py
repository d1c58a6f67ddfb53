"""Remote hosts: another machine's ``run --json`` stream (usually over OpenSSH) merged into the
board. :mod:`.stream` parses it (pure), :mod:`.link` keeps the command running, :mod:`.inbox`
holds what it read for the engine (bounded, folded and paced)."""
