"""The pure layer: no process, no socket, no file written outside the temporary folders (tests/pure.py)."""

from ..pure import pure

__all__ = ["pure"]
