"""Commands for people to paste into a shell: an argv made into one line that parses back to it
(``shlex.split(line) == argv``), or refused with a reason. Pure.

Every argument is checked before anything is quoted. One that holds a character which would make
the line shown differ from the line run is refused, with a one-line reason naming the argument
(and the character's code point, never the untrusted text): the caller then says why no command
is offered. Refused are:

- control characters: C0 (NUL, ESC, TAB, line feed …), DEL and C1: a terminal acts on them, a
  paste can end or inject lines, a bracketed-paste end (ESC [ 201 ~) lets the rest run;
- format characters (category Cf): bidi embeddings, overrides, isolates and marks (they reorder
  what is seen, Trojan-source style), zero-width spaces and joiners, the BOM, tag characters;
- line and paragraph separators, and every space but U+0020 (NBSP, em space, ideographic space …
  look like a plain space but are not one, and :func:`notifier.core.text.clean` makes them one);
- surrogates (a file name that is not UTF-8 cannot be typed back), private-use, unassigned
  and noncharacter code points (shown as a box, an icon or nothing), and the invisible fillers
  :func:`~notifier.core.text.clean` removes (Hangul fillers, Khmer inherent vowels).

That is: every character :meth:`str.isprintable` accepts, but those fillers. A name that fails
is no mistake to work around (a folder or tmux session named with an escape sequence is an
attack or an accident): nothing is offered to paste, and the user is told which name and why.

What passes is quoted with :func:`shlex.quote`, with one refinement: a run of spaces inside
quotes is written ``'a '' b'`` (the quote closed and reopened between the spaces), so no line
holds two spaces in a row. ``clean(line) == line`` therefore holds for every line made here:
a message that carries a command may go through the sanitizer, as all prose does, unchanged.
"""

from __future__ import annotations

import re
import shlex
import unicodedata
from collections.abc import Sequence
from dataclasses import dataclass

# Not Cc/Cf but removed by clean(): Hangul fillers, Khmer inherent vowels, Mongolian vowel separator.
_INVISIBLE = frozenset("\u115f\u1160\u17b4\u17b5\u180e\u3164\uffa0")
_BIDI = frozenset("\u061c\u200e\u200f\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069")
_SPACE_RUN = re.compile(" (?= )")


class Unsafe(ValueError):
    """An argument that cannot be shown in a command to paste. ``str()``: one line saying which
    argument and what it holds (a code point, never the untrusted text itself)."""

    def __init__(self, what: str, why: str) -> None:
        self.what = what
        self.why = why
        super().__init__(f"{what} holds {why}")


@dataclass(frozen=True)
class Arg:
    """An argument with a name for the reason, should it be refused ("the session's folder")."""

    what: str
    value: str


Word = str | Arg


def why_unsafe(text: str) -> str | None:
    """What in ``text`` keeps it out of a command to paste ("an escape character (U+001B)"), or
    None. Safe is what :meth:`str.isprintable` calls printable (no category C or Z but the
    ASCII space), less the invisible fillers."""
    if text.isprintable() and (text.isascii() or _INVISIBLE.isdisjoint(text)):
        return None
    for ch in text:
        if not ch.isprintable() or ch in _INVISIBLE:
            return f"{_what(ch)} (U+{ord(ch):04X})"
    return None  # pragma: no cover - (the test above said one is there)


def _what(ch: str) -> str:
    cat = unicodedata.category(ch)
    if cat == "Cc":
        if ch == "\x1b":
            return "an escape character"
        if ch == "\x00":
            return "a NUL character"
        if ch in "\n\r\x0b\x0c\x85":
            return "a line break"
        return "a tab" if ch == "\t" else "a control character"
    if cat == "Cf":
        return "a bidirectional control" if ch in _BIDI else "an invisible format character"
    if cat in ("Zl", "Zp"):
        return "a line break"
    if cat == "Zs":
        return "a space that is not a plain space"
    if cat == "Cs":
        return "a byte that is not UTF-8"
    if cat == "Co":
        return "a private-use character"
    if cat == "Cn":
        return "an unassigned code point or noncharacter"
    return "an invisible character"


def check(word: Word, position: int = 0) -> str:
    """The argument's text, once it is known to be safe; else :class:`Unsafe`. A plain ``str``
    is named by its ``position`` (1-based) in the command."""
    what, value = (word.what, word.value) if isinstance(word, Arg) else (f"argument {position}", word)
    if not isinstance(value, str):
        raise Unsafe(what, "no text")
    why = why_unsafe(value)
    if why is not None:
        raise Unsafe(what, why)
    return value


def quote(word: Word, position: int = 0) -> str:
    """One argument, checked and quoted for a POSIX shell (no two spaces in a row)."""
    quoted = shlex.quote(check(word, position))
    return _SPACE_RUN.sub(" ''", quoted) if "  " in quoted else quoted


def join(argv: Sequence[Word]) -> str:
    """The command line for ``argv``: ``shlex.split(join(argv))`` is ``argv``. Raises
    :class:`Unsafe` for the first argument that cannot be shown (or :class:`ValueError` for
    no argument at all)."""
    if not argv:
        raise ValueError("a command needs at least one argument")
    return " ".join(quote(word, n) for n, word in enumerate(argv, 1))


def chain(*argvs: Sequence[Word]) -> str:
    """Commands run one after the other while each succeeds: ``A && B``."""
    return " && ".join(join(argv) for argv in argvs)


def remote_words(argv: Sequence[Word]) -> list[str]:
    """``argv`` for a remote shell behind ssh, which joins its arguments with spaces and hands
    them to that shell: each argument quoted once for it. Put these after ``ssh HOST`` in an
    argv for :func:`join` (which quotes them again, for the local shell)."""
    return [quote(word, n) for n, word in enumerate(argv, 1)]
