"""The one sanitizer for untrusted strings (model output, tool arguments, file names, cwd).

Every string that came from a session file goes through :func:`clean` before it reaches a
notification, a menu, a window, a log line or JSON output. Sinks that render markup use
:func:`markup` on top of it; sinks with little room use ``limit``.
"""

from __future__ import annotations

import re

# CSI (ESC [ ... final), OSC (ESC ] ... BEL or ST), DCS/SOS/PM/APC (ESC P/X/^/_ ... ST), and
# two-character escapes (ESC + one char). Also 8-bit C1 forms of CSI (0x9b) and OSC (0x9d).
_ESCAPES = re.compile(
    r"""
    \x1b\[[0-?]*[ -/]*[@-~]            # CSI
  | \x9b[0-?]*[ -/]*[@-~]              # 8-bit CSI
  | (?:\x1b\]|\x9d).*?(?:\x07|\x1b\\|\x9c|$)   # OSC ... BEL or ST
  | (?:\x1b[PX^_]|[\x90\x98\x9e\x9f]).*?(?:\x1b\\|\x9c|$)  # DCS, SOS, PM, APC
  | \x1b[@-Z\\-_]                      # other 2-char escapes
  | \x1b.?                             # a lone ESC (and what it would modify)
    """,
    re.VERBOSE | re.DOTALL,
)
# Control characters (C0 except whitespace that we fold, DEL, C1), bidi overrides and
# zero-width characters that can disguise text.
_CONTROLS = re.compile("[\x00-\x08\x0e-\x1f\x7f-\x9f\u200b-\u200f\u202a-\u202e\u2066-\u2069\ufeff]")
# Every kind of whitespace, including U+2028/U+2029/U+0085, collapses to one space.
_SPACE = re.compile(r"[\s\u2028\u2029\u0085]+")

ELLIPSIS = "…"


def clean(value: object, limit: int | None = None) -> str:
    """Plain, single-line text: escapes and control characters removed, whitespace collapsed.

    ``None`` becomes ``""``; other non-strings are converted with ``str``. With ``limit`` the
    result is cut to at most ``limit`` characters, ending with an ellipsis when cut.
    """
    if value is None:
        return ""
    text = value if isinstance(value, str) else str(value)
    if "\x1b" in text or any("\x80" <= ch <= "\x9f" for ch in text):
        text = _ESCAPES.sub("", text)
    text = _SPACE.sub(" ", text)
    text = _CONTROLS.sub("", text).strip()
    if limit is not None and len(text) > limit:
        text = text[: max(limit - 1, 0)].rstrip() + ELLIPSIS
    return text


def markup(value: object, limit: int | None = None) -> str:
    """:func:`clean`, then escape ``& < >`` (and quotes) so no tag or link from the model is markup."""
    text = clean(value, limit)
    return (
        text.replace("&", "&amp;")
        .replace("<", "&lt;")
        .replace(">", "&gt;")
        .replace('"', "&quot;")
        .replace("'", "&#39;")
    )


def project_name(name: str | None, cwd: str | None) -> str:
    """What the user calls a session: its name if set, else the last folder of its cwd."""
    if name:
        cleaned = clean(name, 80)
        if cleaned:
            return cleaned
    if cwd:
        parts = [p for p in re.split(r"[/\\]", cwd) if p]
        if parts:
            return clean(parts[-1], 80)
    return "pi"


def duration(seconds: float) -> str:
    """How long, for people: "45 s", "4 min", "2 h 05 min", "3 d"."""
    s = max(0, int(seconds))
    if s < 60:
        return f"{s} s"
    if s < 3600:
        return f"{s // 60} min"
    if s < 86400:
        return f"{s // 3600} h {s % 3600 // 60:02d} min"
    return f"{s // 86400} d"
