"""Secrets in push URLs, masked wherever the app prints or logs them (issue 22, "Secrets").

An apprise URL carries its secret anywhere: a password (``mailto://user:pass@host``), a token as
the "host" (``tgram://123456:ABCDEF/987``), a topic as the path (``ntfys://ntfy.example/topic``:
whoever knows the topic reads the pushes). So a URL keeps only its scheme and a host that is
plainly a host name (dotted, or an address); everything else becomes ``…``. In free text (log
records, apprise's own included) every URL is masked so, and so is each secret part of the
configured URLs wherever it appears alone (a topic in a JSON payload, a path in an error)."""

from __future__ import annotations

import re
from collections.abc import Iterable

MASK = "…"
MIN_PART = 6  # shorter parts are masked inside URLs only (alone, "push" or "987" would hide words)

_URL = re.compile(r"\b[A-Za-z][A-Za-z0-9+.-]*://(?:\[[^\]\s]*\])?[^\s'\"<>()\[\]{},]*")
_SPLIT = re.compile(r"([A-Za-z][A-Za-z0-9+.-]*)://([^/?#]*)(.*)", re.DOTALL)
_HOST = re.compile(r"(?:\[[0-9A-Fa-f:.]+\]|[A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)+|localhost)(?::[0-9]{1,5})?")
_SEPARATORS = re.compile(r"[/:@?&=#;,+]+")


def _plain_host(hostport: str) -> str | None:
    """``host[:port]`` when it is plainly a host name or address, not a token posing as one."""
    return hostport if _HOST.fullmatch(hostport) else None


def mask_url(url: str) -> str:
    """``url`` with only its scheme and a plain host name kept: ``ntfys://ntfy.example/…``,
    ``tgram://…``, ``mailto://…@smtp.example``."""
    split = _SPLIT.fullmatch(url.strip())
    if split is None:
        return MASK
    scheme, netloc, tail = split.groups()
    _userinfo, at, hostport = netloc.rpartition("@")
    host = _plain_host(hostport)
    if host is None:
        return f"{scheme}://{MASK}"
    return f"{scheme}://" + (f"{MASK}@" if at else "") + host + (f"/{MASK}" if tail.strip("/") else "")


def secret_parts(url: str) -> set[str]:
    """What of ``url`` may be secret on its own: the URL, all of it after the scheme, and each
    part of that but a plain host name, when long enough to be told from words (:data:`MIN_PART`)."""
    split = _SPLIT.fullmatch(url.strip())
    if split is None:
        return {url.strip()} - {""}
    _scheme, netloc, tail = split.groups()
    host = _plain_host(netloc.rpartition("@")[2]) or ""
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
        parts = set(self._parts)
        for url in urls:
            parts |= secret_parts(url)
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
