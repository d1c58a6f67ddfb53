"""What ``status`` imports: it reads sessions and prints them without the app's machinery (UI,
notifications, the engine thread, the socket server, watchdog). Checked in a real process, by
the modules it ends up with."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from ..conftest import ROOT

# Runs the program on ARGS (its main, as ``python -m notifier ARGS`` does, but given the arguments,
# so that a status does not leave the process at once), then writes the names of the modules it
# imported.
PROBE = r"""
import sys
out, args = sys.argv[1], sys.argv[2:]
from notifier.cli.parser import main
try:
    main(args)
except SystemExit as exc:
    code = exc.code
with open(out, "w") as fh:
    fh.write("\n".join(sorted(sys.modules)))
"""

# The app's own machinery, never on the path of a one-shot ``status``: no UI, no notifications,
# no engine thread, no socket server, no watcher.
NOT_FOR_STATUS = [
    "notifier.app",
    "notifier.outputs.tray",
    "notifier.companion",  # (loaded only where a pi with the companion has its socket)
    "notifier.engine",
    "notifier.window",
    "notifier.outputs.desktop",
    "notifier.cli.run",
    "tkinter",
    "pystray",
    "PIL",
    "gi",
    "jeepney",
    "watchdog",
]


def _imported(tmp_path: Path, *args: str) -> tuple[subprocess.CompletedProcess[str], set[str]]:
    out = tmp_path / "modules.txt"
    env = {
        **os.environ,
        "PYTHONPATH": str(ROOT),
        "HOME": str(tmp_path),
        "XDG_CONFIG_HOME": str(tmp_path / "config"),
        "XDG_STATE_HOME": str(tmp_path / "state"),
        "XDG_RUNTIME_DIR": str(tmp_path),
    }
    r = subprocess.run(
        [sys.executable, "-c", PROBE, str(out), *args],
        capture_output=True,
        text=True,
        env=env,
        cwd=tmp_path,
        timeout=60,
    )
    return r, set(out.read_text().split("\n"))


def _unwanted(modules: set[str], prefixes: list[str]) -> list[str]:
    return sorted(m for m in modules if any(m == p or m.startswith(p + ".") for p in prefixes))


@pytest.mark.parametrize("json_out", [True, False])
def test_status_imports_only_what_it_needs(tmp_path: Path, json_out: bool) -> None:
    from tests.writer import ask, header, user

    sessions = tmp_path / "sessions"
    (sessions / "--p--").mkdir(parents=True)
    (sessions / "--p--" / "a.jsonl").write_bytes(header() + user() + ask("c1"))
    args = ["status", "--liveness", "off", "--sessions-dir", str(sessions)] + (["--json"] if json_out else [])
    for run in ("cold", "warm"):  # without the scan cache, then with it
        r, modules = _imported(tmp_path, *args)
        assert r.returncode == 0, r.stderr
        if json_out:
            assert json.loads(r.stdout)["pending"] == 1, run
            assert "notifier.core.commands" not in modules, run  # (the command vocabulary: commands only)
        else:
            assert "1 pending question" in r.stdout, run
        assert "notifier.sessions" in modules  # (it did read them: the scan and its cache)
        assert _unwanted(modules, NOT_FOR_STATUS) == [], run




def test_the_app_imports_the_answer_machinery_only_to_answer(tmp_path: Path) -> None:
    """Every `run` imports the app; answering (checked keys into a pi's terminal, what pi
    recorded) is imported only when a goto or an answer is carried out."""
    out = tmp_path / "modules.txt"
    probe = "import sys\nimport notifier.app, notifier.cli.run\nopen(sys.argv[1], 'w').write('\\n'.join(sys.modules))"
    r = subprocess.run(
        [sys.executable, "-c", probe, str(out)],
        capture_output=True,
        text=True,
        env={**os.environ, "PYTHONPATH": str(ROOT), "HOME": str(tmp_path)},
        cwd=tmp_path,
        timeout=60,
    )
    assert r.returncode == 0, r.stderr
    modules = set(out.read_text().split("\n"))
    assert "notifier.app" in modules and "notifier.engine" in modules
    answering = ["notifier.actions.answer", "notifier.pi.keys", "notifier.pi.screens", "notifier.pi.records"]
    assert _unwanted(modules, answering) == []
