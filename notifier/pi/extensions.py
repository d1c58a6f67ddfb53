"""Which pi extensions open dialogs that only the companion extension can show (pure: text in).

A dialog of ``ctx.ui`` (select, confirm, input, editor, custom) leaves nothing in the session
file: without the companion, a permission gate or a question built on ``ctx.ui.select`` is
invisible to pi-notifier. A question tool of the catalog (its own ``custom`` dialog) is seen from
the session file anyway, so a file that only registers such tools is not counted.
"""

from __future__ import annotations

import re
from collections.abc import Container, Sequence

_DIALOG = re.compile(r"\bui\s*\.\s*(select|confirm|input|editor|custom)\s*(?:<[^>()]*>\s*)?\(")
_TOOL_NAME = re.compile(r"registerTool\s*\(\s*\{[^{}]*?\bname\s*:\s*[\"'`]([\w.:-]+)[\"'`]", re.S)
_OTHER_HOOKS = re.compile(r"\bregisterCommand\s*\(|\bregisterShortcut\s*\(|\bpi\s*\.\s*on\s*\(")


def dialog_kinds(source: str, question_tools: Container[str] = ()) -> list[str]:
    """The kinds of ``ctx.ui`` dialog an extension's source opens (sorted; empty: none, or only
    as a catalog question tool's own dialog)."""
    kinds = sorted(set(_DIALOG.findall(source)))
    if not kinds:
        return []
    tools = _TOOL_NAME.findall(source)
    if tools and all(t in question_tools for t in tools) and not _OTHER_HOOKS.search(source):
        return []
    return kinds


def extension_args(argv: Sequence[str]) -> tuple[list[str], bool]:
    """The extensions a pi command line names (``-e`` / ``--extension``), and whether it turns
    discovery off (``--no-extensions`` / ``-ne``)."""
    paths: list[str] = []
    no_discovery = False
    args = list(argv)
    for i, arg in enumerate(args):
        if arg in ("-e", "--extension") and i + 1 < len(args):
            paths.append(args[i + 1])
        elif arg.startswith("--extension="):
            paths.append(arg.split("=", 1)[1])
        elif arg in ("--no-extensions", "-ne"):
            no_discovery = True
    return paths, no_discovery


def listed_extensions(screen: str) -> list[str]:
    """The extensions pi's start-up banner lists (``[Extensions]`` then the names, comma-separated,
    on indented lines), from a terminal's text; the last such list; empty when none shows."""
    lines = screen.splitlines()
    starts = [i for i, line in enumerate(lines) if line.strip() == "[Extensions]"]
    if not starts:
        return []
    names: list[str] = []
    for line in lines[starts[-1] + 1 :]:
        if not line.strip() or not line.startswith(" ") or line.strip().startswith("["):
            break
        names += [n.strip() for n in line.split(",") if n.strip()]
    return names
