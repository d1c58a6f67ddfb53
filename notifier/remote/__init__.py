"""Remote hosts: another machine's ``run --json`` stream (usually over OpenSSH) merged into the
board. ``stream`` parses it (pure), ``link`` keeps the command running."""
