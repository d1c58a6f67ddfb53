"""The command line: ``main`` (:mod:`.parser`), every command's options (:mod:`.arguments`), what
the commands share (:mod:`.common`) and one module per command, imported only when it runs: its
arguments in, its exit code out (``doctor``'s checks of pi's extensions: :mod:`.doctor_extensions`)."""
