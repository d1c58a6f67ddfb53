"""The user guide and the docs say what exists: every link between them leads to a file and a
heading that are there, and every command line they show is one the parser takes."""

from __future__ import annotations

import contextlib
import io
import re
import shlex
from pathlib import Path

import pytest

from notifier.cli.arguments import build_parser

ROOT = Path(__file__).resolve().parents[2]
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
LINK = re.compile(r"\]\(([^)\s]+)\)")
FENCE = re.compile(r"^```(\w*)\n(.*?)^```", re.M | re.S)


def slug(heading: str) -> str:
    """GitHub's anchor of a heading: lower case, punctuation dropped, spaces as hyphens."""
    text = re.sub(r"[`*_]", "", heading.strip().lower())
    return re.sub(r"[^\w\- ]", "", text).replace(" ", "-")


def anchors(page: Path) -> set[str]:
    text = FENCE.sub("", page.read_text(encoding="utf-8"))
    return {slug(m.group(1)) for m in re.finditer(r"^#+ (.+)$", text, re.M)}


def test_slugs_are_githubs() -> None:
    assert slug("## §2 `run --json` events".lstrip("# ")) == "2-run---json-events"
    assert slug("Remote machines and pushes") == "remote-machines-and-pushes"


@pytest.mark.parametrize("page", PAGES, ids=lambda p: p.name)
def test_every_link_leads_somewhere(page: Path) -> None:
    for target in LINK.findall(page.read_text(encoding="utf-8")):
        if re.match(r"[a-z]+:", target):  # (https: and the like: not checked here)
            continue
        file, _, anchor = target.partition("#")
        dest = (page.parent / file).resolve() if file else page
        assert dest.exists(), f"{page.name} links to {target}, which is not there"
        if anchor and dest.suffix == ".md":
            assert anchor in anchors(dest), f"{page.name} links to {target}: {dest.name} has no such heading"


def shown_commands(text: str) -> list[str]:
    """The command lines a page shows: each ``pi-notifier …`` in a code block of a shell, tmux,
    JSON or INI example, and each inline one that holds no placeholder syntax."""
    found = []
    for lang, body in FENCE.findall(text):
        if lang in ("sh", "tmux", "json", "ini", "toml"):
            for line in body.splitlines():
                code = re.split(r"\s#\s", line, maxsplit=1)[0]  # (a comment: "# what it does")
                found += [m.group(1) for m in re.finditer(r"(?:^|(?<=[\s'\"(=]))pi-notifier((?: [^\n]*)?)", code)]
    for span in re.findall(r"`pi-notifier( [^`]*)?`", text):
        if not re.search(r"[\[|…]|\.\.\.", span):
            found.append(span)
    return found


def argv(rest: str) -> list[str]:
    rest = rest.strip()
    for _ in range(3):  # (a command inside a quoted string: its closing quote and bracket follow)
        try:
            return shlex.split(rest)
        except ValueError:
            rest = rest.rstrip("'\"),")
    return shlex.split(rest)


@pytest.mark.parametrize("page", PAGES, ids=lambda p: p.name)
def test_every_command_shown_parses(page: Path) -> None:
    for rest in shown_commands(page.read_text(encoding="utf-8")):
        words = [w for w in argv(rest) if w != "-"] or ["run"]  # (bare pi-notifier: run)
        if words[0].startswith("run") and "--json" in words and "…" in rest:
            continue
        err = io.StringIO()
        with contextlib.redirect_stderr(err):
            try:
                build_parser(words[0]).parse_args(words)
            except SystemExit as exc:
                assert exc.code == 0, f"{page.name}: 'pi-notifier{rest}' does not parse: {err.getvalue().strip()}"


def test_the_readme_shows_the_commands_it_promises() -> None:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    shown = [argv(rest) for rest in shown_commands(readme)]
    for needed in (["status", "--tmux"], ["status", "--bar"], ["goto", "next"], ["doctor"]):
        assert any(words[: len(needed)] == needed for words in shown), f"the README shows no {needed}"
    assert len(readme.encode()) < 15_000, "the README is the short guide: the reference lives in docs/"
