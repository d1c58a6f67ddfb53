"""Text for people (pure): the one sanitizer for untrusted strings, the masking of secrets in
push URLs, and commands for people to paste into a shell.

**The sanitizer.** Every string that came from a session file goes through :func:`clean` before it reaches a
notification, a menu, a window, a log line or JSON output. Outputs that render markup use
:func:`markup` on top of it (entities, or look-alike characters where markup should not render);
outputs with little room use ``limit``.

What goes: terminal escape sequences, C0/C1 control characters, bidi embeddings, overrides,
isolates and marks (Trojan-source text cannot reorder what is shown), and the invisible format
characters that can disguise text (zero-width space, word joiner, invisible operators, BOM,
Mongolian vowel separator, Hangul fillers, unpaired tag characters, noncharacters). Lone
surrogates (undecodable bytes in file names) become U+FFFD. What stays: the zero-width joiner and
non-joiner, variation selectors and emoji tag sequences, so 👩‍💻, ❤️, 🏴󠁧󠁢󠁳󠁣󠁴󠁿 and Indic conjuncts survive.

An escape sequence goes whole only when it is well-formed; a lone ESC goes alone and the text
after it stays. :func:`clean` is for prose: a command for people to paste is never passed
through it (collapsing spaces or dropping a character inside quotes changes what it runs); it
is built by :func:`join`, whose lines :func:`clean` leaves as they are.


**Secrets** in push URLs are masked wherever the app prints or logs them (issue 22, "Secrets").

An apprise URL carries its secret anywhere: a password (``mailto://user:pass@host``), a token as
the "host" (``tgram://123456:ABCDEF/987``), a topic as the path (``ntfys://ntfy.example/topic``:
whoever knows the topic reads the pushes). So a URL keeps only its scheme and a host that is
plainly a host name (dotted, or an address); everything else becomes ``…``. In free text (log
records, apprise's own included) every URL is masked so, and so is each secret part of the
configured URLs wherever it appears alone (a topic in a JSON payload, a path in an error).

**Commands to paste** (:func:`join`): an argv made into one line that parses back to it
(``shlex.split(line) == argv``), or refused with a reason.

Every argument is checked before anything is quoted. One that holds a character which would make
the line shown differ from the line run is refused, with a one-line reason naming the argument
(and the character's code point, never the untrusted text): the caller then says why no command
is offered. Refused are:

- control characters: C0 (NUL, ESC, TAB, line feed …), DEL and C1: a terminal acts on them, a
  paste can end or inject lines, a bracketed-paste end (ESC [ 201 ~) lets the rest run;
- format characters (category Cf): bidi embeddings, overrides, isolates and marks (they reorder
  what is seen, Trojan-source style), zero-width spaces and joiners, the BOM, tag characters;
- line and paragraph separators, and every space but U+0020 (NBSP, em space, ideographic space …
  look like a plain space but are not one, and :func:`clean` makes them one);
- surrogates (a file name that is not UTF-8 cannot be typed back), private-use, unassigned
  and noncharacter code points (shown as a box, an icon or nothing), and the invisible fillers
  :func:`clean` removes (Hangul fillers, Khmer inherent vowels).

That is: every character :meth:`str.isprintable` accepts, but those fillers. A name that fails
is no mistake to work around (a folder or tmux session named with an escape sequence is an
attack or an accident): nothing is offered to paste, and the user is told which name and why.

What passes is quoted with :func:`shlex.quote`, with one refinement: a run of spaces inside
quotes is written ``'a '' b'`` (the quote closed and reopened between the spaces), so no line
holds two spaces in a row. ``clean(line) == line`` therefore holds for every line made here:
a message that carries a command may go through the sanitizer, as all prose does, unchanged."""

from __future__ import annotations

import math
import re
import shlex
import unicodedata
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import datetime

# ---- the sanitizer ----

# Only well-formed sequences go whole (ECMA-48 §5.3–5.6, ECMA-35 §13), as a terminal would
# consume them; an ESC that starts none goes alone, and what follows it stays as text. So
# nothing printable is eaten that is not part of a sequence: ESC + a quote loses only the ESC
# (a quote is never a sequence's second byte), which keeps a quoted name in prose readable.
#   CSI      ESC [ (or 0x9b), parameters 0x30-0x3F, intermediates 0x20-0x2F, a final 0x40-0x7E
#   strings  OSC ESC ] (0x9d) to BEL or ST; DCS ESC P, SOS ESC X, PM ESC ^, APC ESC _ (8-bit
#            0x90 0x98 0x9e 0x9f) to ST (ESC \ or 0x9c). A string cut by an ESC that is not ST, a
#            C1 control, or the end of the text is not well-formed: its ESC goes alone, its text
#            stays. (No string holds ESC or C1, so each is scanned once: linear time whatever
#            the text, where a string that could run over another one's start would not be.)
#   nF       ESC + intermediates 0x20-0x2F + a final 0x30-0x7E, as far as terminals implement
#            them (xterm's list): charset designations ESC ( ) * + - . / (or $ and one of them)
#            + a final, ESC $ @/A/B, line attributes ESC # 3-8, ESC % @/G, ESC SP F/G/L/M/N. Other
#            intermediates (! " & ' ,) and finals name nothing a terminal does: the ESC goes
#            alone (so "word ESC next" keeps " next").
#   Fp/Fe/Fs ESC + one byte 0x30-0x7E (ESC 7, ESC D, ESC c, ESC \ as a lone ST), except the
#            introducers [ ] P X ^ _ above, which only go with the rest of their sequence.
_ESCAPES = r"""(?x)
    (?:\x1b\[|\x9b)[0-?]*[ -/]*[@-~]                          # CSI
  | (?:\x1b\]|\x9d)[^\x07\x1b\x80-\x9f]*(?:\x07|\x1b\\|\x9c)        # OSC ... BEL or ST
  | (?:\x1b[PX^_]|[\x90\x98\x9e\x9f])[^\x1b\x80-\x9f]*(?:\x1b\\|\x9c)  # DCS, SOS, PM, APC ... ST
  | \x1b(?:\$?[()*+\-./][0-~]|\$[@AB]|[#][3-8]|%[@G]|[ ][FGLMN])  # nF
  | \x1b[0-OQ-WYZ\\`-~]                                      # Fp, Fe, Fs
    """
# (A lone ESC is left to _REMOVE, with the other C0 controls.)
# Everything else that goes (in the Basic Multilingual Plane; the few outside it below).
# Whitespace controls (TAB, LF, CR, FF, VT, FS–US, NEL) are not here: they become spaces, so
# words stay apart.
# (UNSEEN and UNSEEN_ASTRAL: the characters not shown, as ranges of a character class;
# codec.dumps escapes the same ones.)
UNSEEN = (
    "\u00ad\u061c\u115f\u1160\u17b4\u17b5\u180e"  # soft hyphen, ALM, Hangul fillers, Khmer, MVS
    "\u200b\u200e\u200f\u202a-\u202e"  # ZWSP, LRM/RLM, embeddings and overrides
    "\u2060-\u206f"  # word joiner, invisible operators, isolates, deprecated format controls
    "\u3164\ufdd0-\ufdef\ufeff\uffa0\ufff0-\ufffb\ufffe\uffff"  # filler, nonchars, BOM, annotations
)
# … and C0 (but whitespace), DEL, C1 (but NEL)
_REMOVE = re.compile("[\x00-\x08\x0e-\x1b\x7f-\x84\x86-\x9f" + UNSEEN + "]")
# Outside the BMP: format controls, unassigned ignorables, noncharacters, and tag characters
# unless they form an emoji tag sequence (🏴 + a subdivision id in tag letters/digits + CANCEL
# TAG), which is kept whole: other tags are invisible "ASCII smuggling". Emoji (U+1F000–1FAFF)
# are outside the cheap first test, so ordinary text never runs the exact one.
_RARE_ASTRAL = re.compile("[\U0001bca0-\U0001d17a\U0001fffe-\U0010ffff]")
UNSEEN_ASTRAL = (
    "\U0001bca0-\U0001bca3\U0001d173-\U0001d17a"  # shorthand and musical format controls
    "\U000e0000-\U000e00ff\U000e01f0-\U000e0fff"  # tags; (variation selectors E0100–E01EF stay)
    + "".join(f"{chr(p * 0x10000 + 0xFFFE)}{chr(p * 0x10000 + 0xFFFF)}" for p in range(1, 17))
)
_REMOVE_ASTRAL = "(\U0001f3f4[\U000e0030-\U000e0039\U000e0061-\U000e007a]{2,7}\U000e007f)|[" + UNSEEN_ASTRAL + "]"
_ESCAPE_START = re.compile("[\x1b\x80-\x9f]")
_SURROGATE = re.compile("[\ud800-\udfff]")
_JOINERS = "\u200c\u200d"
# A joiner next to a space joins nothing: it goes (after the spaces are collapsed).
_LOOSE_JOINER = "[\u200c\u200d]+ [\u200c\u200d]*| [\u200c\u200d]+"
# Nothing to attach to: joiners at either end, variation selectors at the start.
_LEADING = (
    " " + _JOINERS + "".join(map(chr, range(0xFE00, 0xFE10))) + "".join(map(chr, range(0xE0100, 0xE01F0)))
)
_TRAILING = " " + _JOINERS

ELLIPSIS = "…"


def clean(value: object, limit: int | None = None) -> str:
    """Plain, single-line text: escapes and invisible controls removed, whitespace collapsed.

    ``None`` becomes ``""``; other non-strings are converted with ``str``. With ``limit`` the
    result is cut (at a character-cluster boundary) to at most ``limit`` characters, ending with
    an ellipsis when cut. Never raises, and ``clean(clean(x)) == clean(x)``.
    """
    if value is None:
        return ""
    text = value if isinstance(value, str) else _str(value)
    if not (text.isascii() and text.isprintable()) or "  " in text or text[:1] == " " or text[-1:] == " ":
        text = _clean(text)
    if limit is not None and len(text) > limit:
        text = cut(text, limit)
    return text


def _str(value: object) -> str:
    try:
        return str(value)
    except Exception:  # a hostile __str__, or an int too long to print
        return f"<{type(value).__name__}>"


def _clean(text: str) -> str:
    if _ESCAPE_START.search(text) is not None:
        text = re.sub(_ESCAPES, "", text)
    text = _SURROGATE.sub("\ufffd", text)
    text = _REMOVE.sub("", text)
    if _RARE_ASTRAL.search(text) is not None:
        text = re.sub(_REMOVE_ASTRAL, r"\1", text)
    # Every kind of whitespace (U+2028, U+2029, U+0085 and FS–US included) collapses to one space.
    text = " ".join(text.split())
    if " \u200d" in text or "\u200d " in text or " \u200c" in text or "\u200c " in text:
        text = " ".join(re.sub(_LOOSE_JOINER, " ", text).split())
    return text.lstrip(_LEADING).rstrip(_TRAILING)


def _extends(prev: str, ch: str) -> bool:
    """Whether ``ch`` belongs to the same user-perceived character as ``prev`` before it (a
    practical subset of UAX #29: marks, joiners, selectors, modifiers, tags, conjuncts)."""
    if prev == "\u200d":
        return True  # ZWJ sequences (👩‍💻) and Indic half-forms
    if ch in _JOINERS or "\ufe00" <= ch <= "\ufe0f" or "\U000e0020" <= ch <= "\U000e01ef":
        return True
    if "\U0001f3fb" <= ch <= "\U0001f3ff":
        return True  # skin tone modifiers
    if unicodedata.category(ch) in ("Mn", "Mc", "Me"):
        return True
    return unicodedata.combining(prev) == 9 and unicodedata.category(ch) == "Lo"  # virama + consonant


def cut(text: str, limit: int) -> str:
    """``text`` shortened to at most ``limit`` characters ending in an ellipsis, never inside a
    character cluster (no half emoji, no dangling joiner, no lone regional indicator)."""
    if len(text) <= limit:
        return text
    if limit <= 0:
        return ""
    k = max(limit - 1, 0)
    while k > 0 and _extends(text[k - 1], text[k]):
        k -= 1
    if k and _is_ri(text[k]) and _is_ri(text[k - 1]):
        run = k
        while run and _is_ri(text[run - 1]):
            run -= 1
        if (k - run) % 2:
            k -= 1  # do not split a flag (a pair of regional indicators)
    return text[:k].rstrip(" " + _JOINERS) + ELLIPSIS


def _is_ri(ch: str) -> bool:
    return "\U0001f1e6" <= ch <= "\U0001f1ff"


def markup(value: object, limit: int | None = None, *, entities: bool = True) -> str:
    """:func:`clean`, then escape ``& < >`` (and quotes) so no tag or link from the model is markup.

    ``entities=False`` is for targets that should show text as it is but might render markup
    anyway (notification servers that do not advertise it): ``& < >`` become the look-alikes
    ``＆ ‹ ›``, so no tag, entity or link can form and the text still reads naturally."""
    return clean(value, limit).translate(_ENTITIES if entities else _LOOK_ALIKES)


_ENTITIES = str.maketrans({"&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;"})
_LOOK_ALIKES = str.maketrans({"&": "＆", "<": "‹", ">": "›"})


def project_name(name: str | None, cwd: str | None, host: str | None = None) -> str:
    """What the user calls a session: its name if set, else the last folder of its cwd; with
    the remote's name before it for a session on another machine ("devbox · webshop")."""
    if host:
        return f"{clean(host, 64)} · {project_name(name, cwd)}"
    return clean(name, 80) or clean(last_folder(cwd), 80) or "pi"


def project_names(name: str | None, cwd: str | None, host: str | None = None) -> tuple[str, str]:
    """The names a session's project is muted or snoozed by: the one it is shown by
    (:func:`project_name`) and its folder's ("webshop" holds back every session in it, named or not)."""
    return project_name(name, cwd, host), project_name(None, cwd, host)


def offline_note(host: str | None, since: float | None) -> str:
    """" — devbox offline since 10:02" for a remote session whose link is down since ``since``
    ("" while it is up: ``since`` None)."""
    if since is None:
        return ""
    return f" — {clean(host, 40)} offline since {datetime.fromtimestamp(since).strftime('%H:%M')}"


def last_folder(path: str | None) -> str | None:
    """The last folder of a path, / or \\ separated (None: none)."""
    parts = [p for p in re.split(r"[/\\]", path or "") if p]
    return parts[-1] if parts else None


def duration(seconds: float) -> str:
    """How long, for people: "45 s", "4 min", "2 h 05 min", "3 d" (nonsense values: "?")."""
    try:
        if not math.isfinite(seconds) or seconds > 1e10:  # over three centuries: a broken clock
            return "?"
        s = max(0, int(seconds))
    except (TypeError, ValueError, OverflowError):
        return "?"
    if s < 60:
        return f"{s} s"
    if s < 3600:
        return f"{s // 60} min"
    if s < 86400:
        return f"{s // 3600} h {s % 3600 // 60:02d} min"
    return f"{s // 86400} d"


def number(text: str) -> int | None:
    """``text`` as a non-negative integer when it is ASCII digits only, else ``None``. (``str.isdigit``
    also takes "¹" and "٣", which ``int`` refuses or reads as another number.)"""
    return int(text) if text.isascii() and text.isdigit() else None


# ---- secrets ----

MASK = "…"
MIN_PART = 6  # shorter parts are masked inside URLs only (alone, "push" or "987" would hide words)

_URL = re.compile(r"\b[A-Za-z][A-Za-z0-9+.-]*://(?:\[[^\]\s]*\])?[^\s'\"<>()\[\]{},]*")
_SPLIT = re.compile(r"([A-Za-z][A-Za-z0-9+.-]*)://([^/?#]*)(.*)", re.DOTALL)
# host[:port] when it is plainly a host name or address
_HOST = re.compile(r"(?:\[[0-9A-Fa-f:.]+\]|[A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)+|localhost)(?::[0-9]{1,5})?")
_SEPARATORS = re.compile(r"[/:@?&=#;,+]+")


def mask_url(url: str) -> str:
    """``url`` with only its scheme and a plain host name kept: ``ntfys://ntfy.example/…``,
    ``tgram://…``, ``mailto://…@smtp.example``."""
    split = _SPLIT.fullmatch(url.strip())
    if split is None:
        return MASK
    scheme, netloc, tail = split.groups()
    _userinfo, at, host = netloc.rpartition("@")
    if not _HOST.fullmatch(host):  # (a token posing as a host)
        return f"{scheme}://{MASK}"
    return f"{scheme}://" + (f"{MASK}@" if at else "") + host + (f"/{MASK}" if tail.strip("/") else "")


def secret_parts(url: str) -> set[str]:
    """What of ``url`` may be secret on its own: the URL, all of it after the scheme, and each
    part of that but a plain host name, when long enough to be told from words (:data:`MIN_PART`)."""
    split = _SPLIT.fullmatch(url.strip())
    if split is None:
        return {url.strip()} - {""}
    _scheme, netloc, tail = split.groups()
    host = netloc.rpartition("@")[2]
    host = host if _HOST.fullmatch(host) else ""
    name = re.sub(r":[0-9]{1,5}$", "", host)
    rest = netloc + tail
    parts = {url.strip(), rest}
    parts |= {p for p in _SEPARATORS.split(rest) if len(p) >= MIN_PART and p not in (host, name)}
    return parts - {"", host}


class Masker:
    """Masks URLs and the known secret parts in text (thread-safe to read once built)."""

    def __init__(self, urls: Iterable[str] = ()) -> None:
        self._parts: set[str] = set()
        self._pattern: re.Pattern[str] | None = None
        self.add(urls)

    def add(self, urls: Iterable[str]) -> None:
        parts = self._parts.union(*map(secret_parts, urls))
        if parts != self._parts:
            self._parts = parts
            alternatives = "|".join(re.escape(p) for p in sorted(parts, key=len, reverse=True))
            self._pattern = re.compile(rf"(?<![A-Za-z0-9_-])(?:{alternatives})(?![A-Za-z0-9_-])")

    def __call__(self, text: str) -> str:
        if "://" in text:
            text = _URL.sub(lambda m: mask_url(m.group(0)), text)
        pattern = self._pattern
        if pattern is not None:
            text = pattern.sub(MASK, text)
        return text


# ---- commands to paste ----

# Not Cc/Cf but removed by clean(): Hangul fillers, Khmer inherent vowels, Mongolian vowel separator.
_INVISIBLE = frozenset("\u115f\u1160\u17b4\u17b5\u180e\u3164\uffa0")
_BIDI = frozenset("\u061c\u200e\u200f\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069")
_SPACE_RUN = re.compile(" (?= )")


class Unsafe(ValueError):
    """An argument that cannot be shown in a command to paste. ``str()``: one line saying which
    argument and what it holds (a code point, never the untrusted text itself)."""


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
    bad = next((ch for ch in text if not ch.isprintable() or ch in _INVISIBLE), None)
    return None if bad is None else f"{_what(bad)} (U+{ord(bad):04X})"


_CONTROLS = {"\x1b": "an escape character", "\x00": "a NUL character", "\t": "a tab"}
_CONTROLS.update(dict.fromkeys("\n\r\x0b\x0c\x85", "a line break"))
_CATEGORIES = {
    "Zl": "a line break",
    "Zp": "a line break",
    "Zs": "a space that is not a plain space",
    "Cs": "a byte that is not UTF-8",
    "Co": "a private-use character",
    "Cn": "an unassigned code point or noncharacter",
}


def _what(ch: str) -> str:
    cat = unicodedata.category(ch)
    if cat == "Cc":
        return _CONTROLS.get(ch, "a control character")
    if cat == "Cf":
        return "a bidirectional control" if ch in _BIDI else "an invisible format character"
    return _CATEGORIES.get(cat, "an invisible character")


def check(word: Word, position: int = 0) -> str:
    """The argument's text, once it is known to be safe; else :class:`Unsafe`. A plain ``str``
    is named by its ``position`` (1-based) in the command."""
    what, value = (word.what, word.value) if isinstance(word, Arg) else (f"argument {position}", word)
    why = why_unsafe(value) if isinstance(value, str) else "no text"
    if why is not None:
        raise Unsafe(f"{what} holds {why}")
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
