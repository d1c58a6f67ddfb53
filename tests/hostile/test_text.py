"""The one sanitizer against hostile text: property tests (hypothesis) and the cases people hit."""

from __future__ import annotations

import re
import unicodedata

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from notifier.core.text import ELLIPSIS, clean, cut, duration, markup, project_name

# What must never survive: C0/C1 controls, ESC, bidi embeddings/overrides/isolates/marks, the
# invisible characters that can disguise text, lone surrogates, noncharacters.
FORBIDDEN = re.compile(
    "[\x00-\x1f\x7f-\x9f\u00ad\u061c\u115f\u1160\u180e\u200b\u200e\u200f\u2028\u2029\u202a-\u202e"
    "\u2060-\u206f\u3164\ufeff\uffa0\ufff9-\ufffb\ud800-\udfff\ufdd0-\ufdef]"
)
HOSTILE_CHARS = (
    "\x00\x07\x08\t\n\r\x0b\x0c\x1b\x1c\x7f\x85\x90\x9b\x9c\x9d"
    "\u00ad\u061c\u180e\u200b\u200c\u200d\u200e\u200f\u2028\u2029\u202a\u202b\u202c\u202d\u202e"
    "\u2060\u2061\u2062\u2063\u2064\u2066\u2067\u2068\u2069\u206a\ufeff\ufe0f\ufe0e\u3164\uffa0"
    "\ufff9\ufffe\uffff\ud800\udcff\udfff\U0001f3f4\U000e0067\U000e0062\U000e007f\U000e0041"
    "\U000e0100\U0001fffe\U0010ffff\U0001d173\U0001f469\U0001f4bb\U0001f3fd\U0001f1e9\U0001f1ea"
    "\u0915\u094d\u0937\u0301[]; ]0P\\"
)
hostile = st.text(alphabet=st.sampled_from(HOSTILE_CHARS) | st.characters(), max_size=200)


@settings(max_examples=600)
@given(hostile)
@example("\x1b]8;;http://x\x1b\\link\x1b]8;;\x1b\\")
@example("a\u200d\x00\u200d \u200db")
@example("x\u200d \u200d \u200dy")
@example("\udcff\u202e")
def test_clean_removes_every_control_and_is_idempotent(raw: str) -> None:
    out = clean(raw)
    assert FORBIDDEN.search(out) is None, ascii(out)
    assert "\x1b" not in out
    assert "  " not in out and out == out.strip()
    assert clean(out) == out
    for ch in out:
        assert unicodedata.category(ch) != "Cs"


@settings(max_examples=400)
@given(hostile, st.integers(min_value=0, max_value=60))
def test_limit_is_a_bound_and_never_leaves_a_dangling_joiner(raw: str, limit: int) -> None:
    out = clean(raw, limit)
    assert len(out) <= limit
    assert clean(out, limit) == out
    if len(clean(raw)) > limit:
        assert out.endswith(ELLIPSIS) or out == ""
    body = out.removesuffix(ELLIPSIS)
    assert not body.endswith(("\u200d", "\u200c", " "))
    assert not out.startswith(("\u200d", "\u200c", "\ufe0f", " "))


@given(st.from_type(object) | st.integers() | st.floats() | st.binary())
def test_clean_never_raises_on_any_value(value: object) -> None:
    assert isinstance(clean(value), str)
    assert isinstance(markup(value, 10), str)


def test_a_hostile_str_method_is_not_our_problem() -> None:
    class Evil:
        def __str__(self) -> str:
            raise RuntimeError("boom")

    assert clean(Evil()) == "<Evil>"
    assert clean(10**5000).startswith("<int>") or clean(10**5000).isdigit()


@pytest.mark.parametrize(
    "keep",
    [
        "👩\u200d💻 writes code",  # ZWJ sequence
        "👨\u200d👩\u200d👧\u200d👦",  # family
        "❤\ufe0f and ☺\ufe0e",  # emoji / text presentation selectors
        "\u0915\u094d\u200d\u0937",  # Devanagari half form with ZWJ
        "\u0915\u094d\u0937\u093e",  # Devanagari conjunct
        "\u0645\u06cc\u200c\u062e\u0648\u0627\u0647\u0645",  # Persian with ZWNJ
        "🏴\U000e0067\U000e0062\U000e0073\U000e0063\U000e0074\U000e007f Scotland",  # emoji tag sequence
        "👍🏽 ok",  # skin tone
        "🇩🇪 flag",
        "葛\U000e0100 ideographic variant",
        "Müller — “quoted” · 日本語 ✓",
    ],
)
def test_joiners_selectors_and_tag_sequences_stay(keep: str) -> None:
    assert clean(keep) == keep
    assert clean(f"  {keep}\n") == keep


@pytest.mark.parametrize(
    ("raw", "shown"),
    [
        # Trojan source: the bidi controls go, so what is shown is the logical order
        (
            "access = \u202e}\u2066 if (isAdmin) \u2069\u2066 begin admins",
            "access = } if (isAdmin) begin admins",
        ),
        ("file\u202egnp.exe", "filegnp.exe"),
        ("a\u200eb\u200fc\u061cd", "abcd"),
        ("pay\u200bpal\u2060\u2062\ufeff\u180e", "paypal"),
        ("ok\U000e0049\U000e0067\U000e006e\U000e006f\U000e0072\U000e0065", "ok"),  # ASCII smuggling in tags
        ("\u3164\uffa0hidden", "hidden"),
        ("bad \udcff name", "bad \ufffd name"),
        ("\x1b[2J\x1b]0;pwned\x07Ship it?", "Ship it?"),
        ("line\u2028break\u0085next\x1ccol", "line break next col"),
        ("\u200d\ufe0f lead and trail \u200d", "lead and trail"),
        ("a \u200d b", "a b"),
        ("\ufdd0\uffff\U0001fffe", ""),
    ],
)
def test_disguising_characters_go(raw: str, shown: str) -> None:
    assert clean(raw) == shown


@pytest.mark.parametrize(
    ("raw", "limit", "out"),
    [
        ("ab👩\u200d💻cd", 5, "ab…"),
        ("ab👩\u200d💻cd", 6, "ab👩\u200d💻…"),
        ("abc👍🏽def", 5, "abc…"),
        ("ab❤\ufe0fcd", 4, "ab…"),
        ("🇩🇪🇫🇷🇮🇹", 4, "🇩🇪…"),
        ("🇩🇪🇫🇷🇮🇹", 3, "🇩🇪…"),
        ("e\u0301e\u0301e\u0301", 4, "e\u0301…"),
        ("\u0915\u094d\u0937\u0915\u094d\u0937", 3, "…"),
        ("word\u200c\u200cmore text", 6, "wor…"),  # ZWNJ extends the "d"
        ("word\u200c\u200cmore text", 7, "word…"),
        ("abcdef", 0, ""),
        ("abcdef", 1, "…"),
    ],
)
def test_limit_cuts_between_characters(raw: str, limit: int, out: str) -> None:
    assert clean(raw, limit) == out
    assert cut(raw, limit) == out


def test_project_name_and_duration_take_anything() -> None:
    assert project_name(None, "/home/u/\udcff\udcfe") == "\ufffd\ufffd"
    assert project_name("\u202e", "/x/\u200b") == "pi"
    for bad in (float("nan"), float("inf"), -float("inf"), 1e300, -5):
        assert duration(bad) in ("?", "0 s")
    assert duration(10**400) == "?"
    assert duration(3725) == "1 h 02 min"


# ---- escape sequences: only well-formed ones go whole; a lone ESC goes alone ----

# The characters that can follow ESC in a sequence (ECMA-48 §5.3–5.6, ECMA-35 §13): the
# introducers of CSI and control strings, the nF intermediates terminals implement, and the
# two-character finals 0x30–0x7E. After any other character an ESC starts nothing.
SEQUENCE_SECOND = set("[]PX^_ #%$()*+-./") | {chr(c) for c in range(0x30, 0x7F)}
no_escape = st.text(
    alphabet=(st.sampled_from(HOSTILE_CHARS) | st.characters()).filter(
        lambda c: c != "\x1b" and not "\x80" <= c <= "\x9f"
    ),
    max_size=40,
)


@settings(max_examples=600)
@given(no_escape, st.characters().filter(lambda c: c not in SEQUENCE_SECOND), no_escape)
@example("/tmp/x", "'", "';touch /tmp/PWNED;#")
@example("say ", '"', "hi\"")
@example("word", " ", "next")
@example("a", "\n", "b")
@example("a", "é", "b")
def test_a_lone_escape_goes_alone(before: str, after_esc: str, rest: str) -> None:
    """Whatever follows a lone ESC is the text's, not the escape's: removing the ESC is all."""
    assert clean(before + "\x1b" + after_esc + rest) == clean(before + after_esc + rest)


def test_esc_before_a_quote_keeps_the_quote() -> None:
    assert clean("/tmp/x\x1b'\x1b';touch /tmp/PWNED;#") == "/tmp/x'';touch /tmp/PWNED;#"
    assert clean("a\x1b'b") == "a'b" and clean('a\x1b"b') == 'a"b'
    assert clean("'/tmp/x\x1b'\"'\"'\x1b'\"'\"';touch'") == "'/tmp/x'\"'\"''\"'\"';touch'"


@pytest.mark.parametrize(
    ("raw", "shown"),
    [
        ("\x1b[1;31mred\x1b[0m", "red"),  # CSI (SGR)
        ("a\x1b[?2004lb", "ab"),  # CSI, private parameters
        ("a\x1b[201~b", "ab"),  # the bracketed-paste end
        ("a\x1b[2 qb", "ab"),  # CSI with an intermediate (DECSCUSR)
        ("a\x9b31mb", "ab"),  # 8-bit CSI
        ("a\x1b]52;c;cHduZWQ=\x07b", "ab"),  # OSC 52 clipboard write, BEL
        ("a\x1b]0;title\x1b\\b", "ab"),  # OSC, ST
        ("a\x9d0;title\x9cb", "ab"),  # 8-bit OSC and ST
        ("a\x1bP1$r0m\x1b\\b", "ab"),  # DCS
        ("a\x1b_hidden\x1b\\b", "ab"),  # APC
        ("a\x1bXsos\x9cb", "ab"),  # SOS, 8-bit ST
        ("a\x1b(Bb", "ab"),  # nF: designate G0
        ("a\x1b$)Cb", "ab"),  # nF: multi-byte designation
        ("a\x1b#8b", "ab"),  # nF: DECALN
        ("a\x1b%Gb", "ab"),  # nF: UTF-8
        ("a\x1b Gb", "ab"),  # nF: S8C1T
        ("a\x1b7b\x1b8", "ab"),  # Fp: save / restore cursor
        ("a\x1bMb", "ab"),  # Fe: reverse index
        ("a\x1bcb", "ab"),  # Fs: full reset
        ("a\x1b\\b", "ab"),  # a lone ST
        # not well-formed: the ESC goes, the text stays
        ("a\x1b]0;title", "a]0;title"),  # a string cut by the end of the text
        ("a\x1b]0;t\x1b[31mb", "a]0;tb"),  # a string cut by another sequence
        ("a\x1bP1$r", "aP1$r"),
        ("a\x1b[", "a["),
        ("a\x1b[31", "a[31"),
        ("a\x1b#9b", "a#9b"),  # ESC # takes 3–8 only
        ("a\x1b(", "a("),
        ("a\x1b next", "a next"),  # ESC SP takes F, G, L, M, N only
        ("a\x1b!b", "a!b"),
        ("a\x1b", "a"),
        ("a\x1b\x1b[31mb", "ab"),
    ],
)
def test_escape_sequences_by_their_grammar(raw: str, shown: str) -> None:
    assert clean(raw) == shown


@pytest.mark.parametrize("unit", ["\x9d", "\x90", "\x98x", "\x9da", "\x1b]", "\x1bPa", "\x1b[", "\x9b1"])
def test_string_introducers_by_the_thousand(unit: str) -> None:
    """Unterminated strings, each running into the next one's start: every introducer goes
    alone and the text stays. (A string that could run over another one's start made this
    quadratic: 100,000 characters took minutes; no string holds ESC or C1 now.)"""
    raw = unit * (100_000 // len(unit))
    assert clean(raw) == clean(raw.replace("\x1b", "").translate({c: None for c in range(0x80, 0xA0)}))
