"""The command line: ``main``, every command's arguments and what the commands share
(:mod:`.parser`), and one module per command (or per few commands of one concept: ``snooze``,
``mute`` and ``unmute``; ``goto`` and ``show``; ``autostart`` and ``pi-extension``), imported only
when it runs: its arguments in, its exit code out."""
