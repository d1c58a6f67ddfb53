"""``doctor``'s checks of pi's extensions: the companion extension (installed, current, loaded), and
the running pis that load extensions whose dialogs leave nothing in the session file (only the
companion shows those). Each check is ``(ok, detail)``; ok None is a note."""

from __future__ import annotations

import os
from typing import Any

import psutil

from notifier import APP_NAME
from notifier.cli import pi_extension
from notifier.config.load import Config
from notifier.core.text import clean
from notifier.pi.catalog import QuestionCatalog
from notifier.pi.parse import dialog_kinds, extension_args, listed_extensions
from notifier.system import paths
from notifier.system.processes import pi_processes
from notifier.system.tmux import tmux, tmux_pane_of

# pi's own question tools (examples/extensions): their dialog is the question, read from the file
_QUESTION_ONLY = frozenset({"question.ts", "questionnaire.ts"})


def companion() -> tuple[bool | None, str]:
    """The optional companion pi extension, as ``pi-extension status`` sees it. Never a FAIL: pi
    and pi-notifier work without it (dialogs such as permission gates are then not shown)."""
    st = pi_extension.status()
    if not st.installed:
        state = f"not installed (optional; install: {APP_NAME} pi-extension install)"
    elif st.current:
        state = f"installed and current ({clean(st.path)})"
    else:
        state = f"installed but not this version's copy (update: {APP_NAME} pi-extension install)"
    loaded = f"loaded by {len(st.loaded)} running pi process(es)"
    if st.unreachable:
        loaded += f", {len(st.unreachable)} socket(s) not answering"
    return (True if st.installed and st.current else None), f"{state}; {loaded}"


def unseen_dialogs(config: Config) -> tuple[bool | None, str]:
    """Each running pi that loads an extension with dialogs (``ctx.ui.select`` questions,
    permission gates) but not the companion: those dialogs leave nothing in the session file."""
    with_companion = {item.pid for item in pi_extension.status().loaded}
    catalog = QuestionCatalog(config["question_tools"])
    blind: list[str] = []
    for proc in pi_processes():
        if proc.pid in with_companion:
            continue
        try:
            argv = psutil.Process(proc.pid).cmdline()
        except (psutil.Error, OSError):
            continue
        names = None if any(pi_extension.is_ours(a) for a in argv) else _dialog_extensions(proc, argv, catalog)
        if names:  # (None: it loads the companion, its socket not up yet or not answering)
            blind.append(f"pi {proc.pid} in {clean(proc.cwd, 80)} ({clean(', '.join(names), 160)})")
    if not blind:
        return True, (
            "no running pi is known to load an extension with dialogs without the companion extension "
            "(such dialogs leave nothing in the session file; only the companion shows them)"
        )
    return None, (
        f"not shown for {'; '.join(blind)}: dialogs of extensions (ctx.ui.select, confirm, input, custom; "
        f"a name with ? may open some) leave nothing in the session file; install the companion "
        f"({APP_NAME} pi-extension install) and /reload"
    )


def _dialog_extensions(proc: Any, argv: list[str], catalog: Any) -> list[str] | None:
    """The extensions of one running pi that open dialogs (a name with ``?``: listed in its
    banner, its source not found, so it may); None when it loads the companion."""
    names: list[str] = []
    read: set[str] = set()  # the names of the extensions whose source was read
    listed = _banner_extensions(proc)
    for path in _extension_files(proc.cwd, argv, proc.env):
        index = os.path.basename(path) in ("index.ts", "index.js")
        name = os.path.basename(os.path.dirname(path) if index else path)
        try:
            with open(path, encoding="utf-8", errors="replace") as fh:
                source = fh.read(1 << 20)
        except OSError:
            continue
        read.add(name)
        if not pi_extension.is_ours(path) and dialog_kinds(source, catalog):
            names.append(name)
    if any(pi_extension.is_ours(n) for n in [*listed, *read]):
        return None
    # pi rewrites its command line (-e paths are gone): the rest of its banner's list is by name
    # only; their sources cannot be read, so whether they open dialogs is not known
    return names + [f"{n}?" for n in listed if n not in read and n not in _QUESTION_ONLY]


def _extension_files(cwd: str, argv: list[str], env: dict[str, str]) -> list[str]:
    """The extension files a running pi loads, as far as its command line and extension folders
    tell (packages named in its settings are not looked into)."""
    named, no_discovery = extension_args(argv)
    found = [os.path.join(cwd, n) for n in named]
    if not no_discovery:
        agent = paths.agent_dir({**os.environ, **env})
        for folder in (os.path.join(agent, "extensions"), os.path.join(cwd, ".pi", "extensions")):
            try:
                entries = [os.path.join(folder, name) for name in sorted(os.listdir(folder))]
            except OSError:
                continue
            found += [e for e in entries if e.endswith((".ts", ".js")) or os.path.isdir(e)]
    out: list[str] = []
    for path in found:  # a folder is its index.ts or index.js
        if os.path.isdir(path):
            index_files = [os.path.join(path, f"index.{x}") for x in ("ts", "js")]
            path = next((i for i in index_files if os.path.isfile(i)), path)
        if os.path.isfile(path) and path not in out:
            out.append(path)
    return out


def _banner_extensions(proc: Any) -> list[str]:
    """The extensions the pi's terminal listed at start-up, when it runs in tmux (whose history
    keeps pi's banner)."""
    pane = tmux_pane_of(proc.env, proc.pid)
    if pane is None:
        return []
    text = tmux(pane.socket, "capture-pane", "-p", "-J", "-S", "-", "-t", pane.pane)
    return listed_extensions(text or "")
