"""The one sanitizer for untrusted strings (model output, tool arguments, file names, cwd).

Every string that came from a session file goes through :func:`clean` before it reaches a
notification, a menu, a window, a log line or JSON output. Sinks that render markup use
:func:`markup` on top of it (entities, or look-alike characters where markup should not render);
sinks with little room use ``limit``.

What goes: terminal escape sequences, C0/C1 control characters, bidi embeddings, overrides,
isolates and marks (Trojan-source text cannot reorder what is shown), and the invisible format
characters that can disguise text (zero-width space, word joiner, invisible operators, BOM,
Mongolian vowel separator, Hangul fillers, unpaired tag characters, noncharacters). Lone
surrogates (undecodable bytes in file names) become U+FFFD. What stays: the zero-width joiner and
non-joiner, variation selectors and emoji tag sequences, so 👩‍💻, ❤️, 🏴󠁧󠁢󠁳󠁣󠁴󠁿 and Indic conjuncts survive.

An escape sequence goes whole only when it is well-formed; a lone ESC goes alone and the text
after it stays. :func:`clean` is for prose: a command for people to paste is never passed
through it (collapsing spaces or dropping a character inside quotes changes what it runs); it
is built by :mod:`notifier.core.shellcmd`, whose lines :func:`clean` leaves as they are.
"""

from __future__ import annotations

import math
import re
import unicodedata

# The patterns only rare text needs stay strings: compiled (and then kept by ``re``) the first
# time such text comes, not by every command's start-up.

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
_REMOVE = re.compile(
    "["
    "\x00-\x08\x0e-\x1b\x7f-\x84\x86-\x9f"  # C0 (but whitespace), DEL, C1 (but NEL)
    "\u00ad\u061c\u115f\u1160\u17b4\u17b5\u180e"  # soft hyphen, ALM, Hangul fillers, Khmer, MVS
    "\u200b\u200e\u200f\u202a-\u202e"  # ZWSP, LRM/RLM, embeddings and overrides
    "\u2060-\u206f"  # word joiner, invisible operators, isolates, deprecated format controls
    "\u3164\ufdd0-\ufdef\ufeff\uffa0\ufff0-\ufffb\ufffe\uffff"  # filler, nonchars, BOM, annotations
    "]"
)
# Outside the BMP: format controls, unassigned ignorables, noncharacters, and tag characters
# unless they form an emoji tag sequence (🏴 + a subdivision id in tag letters/digits + CANCEL
# TAG), which is kept whole: other tags are invisible "ASCII smuggling". Emoji (U+1F000–1FAFF)
# are outside the cheap first test, so ordinary text never runs the exact one.
_RARE_ASTRAL = re.compile("[\U0001bca0-\U0001d17a\U0001fffe-\U0010ffff]")
_REMOVE_ASTRAL = (
    "(\U0001f3f4[\U000e0030-\U000e0039\U000e0061-\U000e007a]{2,7}\U000e007f)"
    "|[\U0001bca0-\U0001bca3\U0001d173-\U0001d17a"  # shorthand and musical format controls
    "\U000e0000-\U000e00ff\U000e01f0-\U000e0fff"  # tags; (variation selectors E0100–E01EF stay)
    + "".join(f"{chr(p * 0x10000 + 0xFFFE)}{chr(p * 0x10000 + 0xFFFF)}" for p in range(1, 17))
    + "]"
)
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
    text = clean(value, limit)
    if not entities:
        return text.replace("&", "＆").replace("<", "‹").replace(">", "›")
    return (
        text.replace("&", "&amp;")
        .replace("<", "&lt;")
        .replace(">", "&gt;")
        .replace('"', "&quot;")
        .replace("'", "&#39;")
    )


def project_name(name: str | None, cwd: str | None, host: str | None = None) -> str:
    """What the user calls a session: its name if set, else the last folder of its cwd; with
    the remote's name before it for a session on another machine ("devbox · webshop")."""
    if host:
        return f"{clean(host, 64)} · {project_name(name, cwd)}"
    if name:
        cleaned = clean(name, 80)
        if cleaned:
            return cleaned
    if cwd:
        parts = [p for p in re.split(r"[/\\]", cwd) if p]
        if parts:
            return clean(parts[-1], 80) or "pi"
    return "pi"


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


def duration_changes_in(seconds: float) -> float | None:
    """How long until :func:`duration` of an age of ``seconds`` (growing with the clock) says
    something else: within a second for the first minute, then at the next whole minute, then at
    the next whole day. None for what :func:`duration` calls nonsense ("?")."""
    if not isinstance(seconds, (int, float)) or not math.isfinite(seconds) or seconds > 1e10:
        return None
    if seconds < 1:
        return 1 - seconds  # "0 s" (also for an age below zero: a clock set back) until 1 s
    step = 1 if seconds < 60 else 60 if seconds < 86400 else 86400
    return (math.floor(seconds / step) + 1) * step - seconds


def number(text: str) -> int | None:
    """``text`` as a non-negative integer when it is ASCII digits only, else ``None``. (``str.isdigit``
    also takes "¹" and "٣", which ``int`` refuses or reads as another number.)"""
    return int(text) if text.isascii() and text.isdigit() else None
