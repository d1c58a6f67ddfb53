"""The command line: the parser and one module per command."""

from notifier.cli.parser import main

__all__ = ["main"]
