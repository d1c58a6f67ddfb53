"""The command line: the parser (:mod:`.parser`, ``main``) and one module per command: its
arguments in, its exit code out."""
