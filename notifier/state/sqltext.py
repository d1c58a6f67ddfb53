"""Any str as SQLite text, also names that are not UTF-8 (the state store's codec,
:mod:`notifier.state.database`).

A file name with bytes that are not UTF-8 is a str with lone surrogates (PEP 383), and so is a
JSON ``"\\udXXX"`` escape. SQLite text must be UTF-8: such a str is stored as a BLOB of its
"surrogatepass" bytes instead, which reads back to the very same str."""

from __future__ import annotations


def to_db(value: object) -> object:
    """A value for an SQL parameter: any str is accepted (see above)."""
    if isinstance(value, str) and not value.isascii():
        try:
            value.encode("utf-8")
        except UnicodeEncodeError:
            return value.encode("utf-8", "surrogatepass")
    return value


def from_db(value: object) -> object:
    """A column value back: BLOBs written by :func:`to_db` are str again."""
    if isinstance(value, bytes):
        return value.decode("utf-8", "surrogatepass")
    return value
