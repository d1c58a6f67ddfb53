from __future__ import annotations

from notifier.core.text import clean, markup, project_name


def test_clean_strips_escapes_controls_and_collapses_space() -> None:
    raw = "\x1b[1;31mHello\x1b[0m\x1b]0;title\x07 \x1b]8;;http://x\x1b\\link\x1b]8;;\x1b\\\n\tworld\u2028\u2029\x00\x7f\u202e!"
    assert clean(raw) == "Hello link world !"


def test_clean_limit_and_none() -> None:
    assert clean(None) == ""
    assert clean("abcdefghij", 5) == "abcd…"
    assert clean(42) == "42"


def test_markup_escapes_tags_links_and_entities() -> None:
    out = markup('<b>bold</b> & <a href="http://evil">x</a>')
    assert "<" not in out and ">" not in out and '"' not in out
    assert out.startswith("&lt;b&gt;bold&lt;/b&gt; &amp; &lt;a href=&quot;")


def test_markup_without_entities_uses_look_alikes() -> None:
    out = markup('<b>bold</b> &amp; \x1b[31m"x"', entities=False)
    assert out == '‹b›bold‹/b› ＆amp; "x"'


def test_project_name() -> None:
    assert project_name(None, "/home/a/proj/") == "proj"
    assert project_name("My \x1b[31mrun", "/x") == "My run"
    assert project_name(None, None) == "pi"
    assert project_name(None, "C:\\Users\\me\\proj") == "proj"
