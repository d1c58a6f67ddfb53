"""The user guide and the docs say what exists: every link between them leads to a file and a
heading that are there, and every command line they show is one the parser takes."""

from __future__ import annotations

import ast
import builtins
import contextlib
import functools
import io
import re
import shlex
import tokenize
from pathlib import Path

import pytest

from notifier.cli.parser import build_parser

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
    """The arguments of a command shown, without a shell's redirections (``>/dev/null``)."""
    rest = rest.strip()
    for _ in range(3):  # (a command inside a quoted string: its closing quote and bracket follow)
        try:
            return [w for w in shlex.split(rest) if not re.match(r"\d*>", w)]
        except ValueError:
            rest = rest.rstrip("'\"),")
    return [w for w in shlex.split(rest) if not re.match(r"\d*>", w)]


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


# ---- every module, file and name the docs and the code's own text cite is there ----

PACKAGE = ROOT / "notifier"
SUBPACKAGES = sorted(p.name for p in PACKAGE.iterdir() if (p / "__init__.py").exists())
# ``notifier/…`` or ``tests/…`` (a file or folder of the repository), and ``core/board.py`` or
# `core/codec` (in backticks) as the docs write a module of a package
TOP = r"(?:\.\./)?(?:notifier|tests|bench|packaging|assets|\.ci)"
SHORT = "|".join(SUBPACKAGES)
CITED_PATH = re.compile(
    rf"(?<![\w/.-])(?:{TOP}/[\w/.-]*\w|(?:{SHORT})/[\w/-]*\.py\b|(?<=`)(?:{SHORT})/[\w/]*\w(?=`))"
)
MADE = ("bench/out",)  # (made by a run: not in the repository)
CITED_NAME = re.compile(rf"(?<=`)((?:{SHORT})/[\w/]*\w)\.([A-Za-z_]\w*(?:\.\w+)*)(?=`)")  # `core/text.clean`
FILE_TYPES = {"py", "ts", "md", "json", "jsonl", "toml", "sqlite3", "png", "svg", "desktop", "service"}
CITED_DOTTED = re.compile(r"(?<![\w./-])notifier(?:\.\w+)+")
ROLE = re.compile(r":(mod|func|class|meth|attr|data|exc|obj):`(?:[^`<]*<)?~?([\w.]+)>?`")
CITING = [
    *PAGES,
    *sorted(PACKAGE.rglob("*.py")),
    *sorted(PACKAGE.rglob("*.ts")),
    *sorted(p for p in (ROOT / "tests").rglob("*.py") if "data" not in p.parts and p != Path(__file__)),
    *sorted((ROOT / "bench").rglob("*.py")),
]


def module_file(dotted: str) -> Path | None:
    base = ROOT.joinpath(*dotted.split("."))
    return next((f for f in (base.with_suffix(".py"), base / "__init__.py") if f.exists()), None)


def members(node: ast.Module | ast.ClassDef | ast.If | ast.Try) -> dict[str, ast.AST | None]:
    """The names a module or class defines (classes with their node, to look further in)."""
    found: dict[str, ast.AST | None] = {}
    handlers = [s for h in getattr(node, "handlers", []) for s in h.body]
    for n in node.body + getattr(node, "orelse", []) + handlers:
        if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            found[n.name] = n if isinstance(n, ast.ClassDef) else None
        elif isinstance(n, (ast.Assign, ast.AnnAssign)):
            targets = n.targets if isinstance(n, ast.Assign) else [n.target]
            found |= {x.id: None for t in targets for x in ast.walk(t) if isinstance(x, ast.Name)}
        elif isinstance(n, (ast.Import, ast.ImportFrom)):
            found |= {(a.asname or a.name).split(".")[0]: None for a in n.names}
        elif isinstance(n, (ast.If, ast.Try)):
            found |= members(n)
    if isinstance(node, ast.ClassDef):  # (and what its methods set on self)
        stored = [x for x in ast.walk(node) if isinstance(x, ast.Attribute) and isinstance(x.ctx, ast.Store)]
        for x in stored:
            if getattr(x.value, "id", "") == "self":
                found.setdefault(x.attr, None)
    return found


def lookup(node: ast.AST | None, names: list[str], where: str) -> str | None:
    """What of ``names`` is not defined in ``node`` (a module), each in the one before it."""
    for name in names:
        if not isinstance(node, (ast.Module, ast.ClassDef)):
            return None  # (an attribute of a value or a function's: not followed)
        found = members(node)
        if name not in found and not (name.startswith("__") and name.endswith("__")):
            return f"{where} has no {name}"
        node, where = found.get(name), f"{where}.{name}"
    return None


@functools.cache
def parsed(text: str) -> ast.Module:
    """``text`` parsed, once: a module is cited from many files (and a file cites many names)."""
    return ast.parse(text)


@functools.cache
def methods(text: str) -> set[str]:
    """The names the classes of the module ``text`` define."""
    return {name for c in ast.walk(parsed(text)) if isinstance(c, ast.ClassDef) for name in members(c)}


def missing(dotted: str) -> str | None:
    """What of ``notifier.x.y.Name.attr`` is not there (None: all of it is): the longest prefix
    that is a module, then each name defined in it (and in a class it names)."""
    parts = dotted.split(".")
    for n in range(len(parts), 0, -1):
        if file := module_file(".".join(parts[:n])):
            return lookup(parsed(file.read_text(encoding="utf-8")), parts[n:], ".".join(parts[:n]))
    return "no such module"


def texts(file: Path, text: str) -> list[tuple[int, str]]:
    """A page whole; of Python, only what is written for a reader: its strings and comments."""
    if file.suffix != ".py":
        return [(1, text)]
    tokens = tokenize.generate_tokens(io.StringIO(text).readline)
    return [(t.start[0], t.string) for t in tokens if t.type in (tokenize.COMMENT, tokenize.STRING)]


def stale_citations(file: Path, text: str | None = None) -> list[str]:
    """Each module, file or name ``file`` (or ``text``, as if it were that file) cites that does
    not exist, as ``line: what (why)``."""
    text = file.read_text(encoding="utf-8") if text is None else text
    rel = file.relative_to(ROOT).with_suffix("")
    own = ".".join(rel.parts[:-1] if rel.name == "__init__" else rel.parts)
    own = own if rel.parts[0] == "notifier" else ""
    package = own if rel.name == "__init__" else own.rpartition(".")[0]
    bad = []
    for line, part in texts(file, text):
        for path in CITED_PATH.findall(part):
            path = path.removeprefix("../")
            target = PACKAGE / path if path.split("/")[0] in SUBPACKAGES else ROOT / path
            if path.startswith(MADE):
                continue
            if not (target.exists() or target.with_name(target.name + ".py").exists()):
                bad.append(f"{line}: {path} (no such file)")
        for module, name in CITED_NAME.findall(part):
            dotted = f"notifier.{module.replace('/', '.')}.{name}"
            if name.split(".")[0] not in FILE_TYPES and (why := missing(dotted)):
                bad.append(f"{line}: {module}.{name} ({why})")
        for dotted in CITED_DOTTED.findall(part):
            if why := missing(dotted):
                bad.append(f"{line}: {dotted} ({why})")
        for role, name in ROLE.findall(part):
            if name.startswith(".") and package:  # relative to the module's package, as Sphinx reads it
                up = len(name) - len(name.lstrip(".")) - 1
                name = ".".join(package.split(".")[: len(package.split(".")) - up] + [name.lstrip(".")])
            elif not name.startswith("notifier"):  # a name of the module itself (or of the standard library)
                if role == "mod" or not own or name.split(".")[0] in dir(builtins):
                    continue
                if "." not in name and name in methods(text):
                    continue  # (a method of one of its classes)
                if why := lookup(parsed(text), name.split("."), own):
                    bad.append(f"{line}: :{role}:`{name}` ({why})")
                continue
            if role == "mod":
                why = None if module_file(name) else "no such module"
            else:
                why = missing(name)
            if why:
                bad.append(f"{line}: :{role}:`{name}` ({why})")
    return bad


def test_a_stale_citation_is_found() -> None:
    page = ROOT / "docs" / "probe.md"
    text = (
        "`notifier/core/board.py` `core/reducer.py` `core/codec` `core/text.clean`\n"
        "`notifier.core.board.Board.snapshot`\n"
        "are there; so are `notifier/resources/pi-extension/` and `notifier.core.text.clean`, and\n"
        "`notifier/core/boards.py`, `window/traymenu.py`, `cli/tray`, `core/text.scrub`,\n"
        "`notifier.core.board.Board.set_processes`, `notifier.engine.supervise`,\n"
        "[a test](../tests/unit/test_boards.py) are not.\n"
    )
    assert stale_citations(page, text) == [
        "1: notifier/core/boards.py (no such file)",
        "1: window/traymenu.py (no such file)",
        "1: cli/tray (no such file)",
        "1: tests/unit/test_boards.py (no such file)",
        "1: core/text.scrub (notifier.core.text has no scrub)",
        "1: notifier.core.board.Board.set_processes (notifier.core.board.Board has no set_processes)",
        "1: notifier.engine.supervise (notifier.engine has no supervise)",
    ]
    module = ROOT / "notifier" / "pi" / "probe.py"
    code = (
        '"""Relative to its package: :mod:`.outcomes` is there, :mod:`.tail` is not; a name of its\n'
        'own: :func:`here`, :meth:`Probe.there`, :class:`str`; not :func:`gone`."""\n'
        "def here(): ...\n"
        "class Probe:\n"
        "    def there(self): ...\n"
        "notifier_tail = 'notifier/tail.py'  # (code itself is not read, its strings are)\n"
        "# a comment is: notifier.pi.gone\n"
    )
    assert stale_citations(module, code) == [
        "1: :mod:`notifier.pi.tail` (no such module)",
        "1: :func:`gone` (notifier.pi.probe has no gone)",
        "7: notifier.pi.gone (notifier.pi has no gone)",
    ]


@pytest.mark.parametrize("file", CITING, ids=lambda p: str(p.relative_to(ROOT)))
def test_every_cited_module_and_file_is_there(file: Path) -> None:
    bad = stale_citations(file)
    assert not bad, f"{file.relative_to(ROOT)} cites what is not there:\n" + "\n".join(bad)


def test_testing_md_lists_what_ci_installs() -> None:
    """docs/testing.md §6 names every package ``.ci/run`` installs, and no other."""
    script = (ROOT / ".ci" / "run").read_text(encoding="utf-8")
    command = re.search(r"^\s*apt-get install (.*?)(?<!\\)$", script, re.M | re.S)
    assert command, ".ci/run installs nothing with apt-get"
    words = command.group(1).replace("\\\n", " ").split()
    installed = [w for w in words if not w.startswith("-") and "::" not in w]  # (not its options)
    page = (ROOT / "docs" / "testing.md").read_text(encoding="utf-8")
    section = page[page.index("## §6") :]
    listed = re.search(r"`--no-install-recommends`:\s*`([^`]+)`", section)
    assert listed, "docs/testing.md §6 lists no packages"
    assert listed.group(1).split() == installed
    npm = re.findall(r"(@?[\w.-]+(?:/[\w.-]+)?@\d[\w.]*)", script)  # (name@version, pinned)
    assert npm, ".ci/run installs nothing with npm"
    unnamed = [package for package in npm if f"`{package}`" not in section]
    assert not unnamed, f"docs/testing.md §6 does not name {unnamed}, which .ci/run installs"
