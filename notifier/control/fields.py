"""The one error a handler raises for a request it cannot read: the client gets its message as
the error. (Request fields are checked once, by :func:`notifier.core.commands.parse`.)"""

from __future__ import annotations


class BadRequest(ValueError):
    """A request that cannot be read, or a field of the wrong type or shape (a handler may raise
    it); the client gets the message as its error."""
