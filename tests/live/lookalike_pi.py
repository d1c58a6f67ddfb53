"""A stand-in pi (run as a program named `pi`) that asks two look-alike questions back to back, for
the race tests of `pi-notifier answer`: A "Delete the branch?" and, the instant A is answered, B
"Delete the database?", both with the rows of pi's example `question` tool (Keep, Delete, Type
something.), drawn as that tool draws them (a rule, the question, the rows with "> " on the
highlighted one, its help line, a rule; pi's footer below). With STAND_IN_LAYOUT=list the tool is `ask_user` and the
rows are drawn as many third-party question tools draw them: unnumbered, "❯ " on the highlighted
one, an "Other (type your own)" row last, another help line; its result says "User selected: LABEL".

Its session file ($STAND_IN_SESSIONS/--stand-in--/session.jsonl) is written as pi writes one: a
header, then per question an assistant message with the tool call and, once answered, its
toolResult. When A is answered, B is drawn and written at once: the screen first and then the file
in odd rounds, the file first in even ones (either order pi could show).

Keys, each logged to $STAND_IN_KEYS as a JSON line {"t": monotonic time, "q": the call shown or
null, "key": its name, "blind": whether it was typed before tmux had the question shown drawn}
before it acts. "blind": once a new question is drawn, the stand-in waits until tmux shows it (its own
capture of the pane), then counts the bytes of input already waiting: those keys were sent before
tmux could show the question, by whoever sent them. Then: Up/Down move, Enter answers with the highlighted row (what
`answer` sends). The keypad's Enter (the terminal is put in keypad application mode, so tmux sends
it as ESC O M) does the same: it is the test's "user" at the terminal, told apart from `answer`'s
keys by this alone. F5 ends the round (B, if still waiting, is recorded as cancelled) and asks the
next round's A.
"""

import fcntl
import json
import os
import struct
import subprocess
import sys
import termios
import time
import tty
import uuid
from typing import Any

SESSIONS, KEYS = os.environ["STAND_IN_SESSIONS"], os.environ["STAND_IN_KEYS"]
ROWS = ["Keep", "Delete"]
TEXTS = {"A": "Delete the branch?", "B": "Delete the database?"}
HELP = " ↑↓ navigate • Enter to select • Esc to cancel"
LAYOUT = os.environ.get("STAND_IN_LAYOUT", "question")
TOOL = "ask_user" if LAYOUT == "list" else "question"
SEQUENCES = {"\x1b[A": "Up", "\x1b[B": "Down", "\x1bOA": "Up", "\x1bOB": "Down", "\r": "Enter", "\x1bOM": "KPEnter", "\x1b[15~": "F5"}

folder = os.path.join(SESSIONS, "--stand-in--")
os.makedirs(folder, exist_ok=True)
path = os.path.join(folder, "session.jsonl")
last_id = None


def now_iso() -> str:
    t = time.time()
    return time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(t)) + f".{int(t * 1000) % 1000:03d}Z"


def append(entry: dict[str, Any]) -> None:
    global last_id
    entry_id = uuid.uuid4().hex[:8]
    line = {"type": "message", "id": entry_id, "parentId": last_id, "timestamp": now_iso(), "message": entry}
    last_id = entry_id
    with open(path, "a") as f:
        f.write(json.dumps(line) + "\n")


def ask(call: str, text: str) -> None:
    args = {"question": text, "options": [{"label": x} for x in ROWS]}
    content = [{"type": "toolCall", "id": call, "name": TOOL, "arguments": args}]
    append({"role": "assistant", "content": content, "stopReason": "toolUse", "timestamp": int(time.time() * 1000)})


def result(call: str, said: str, answer: str | None) -> None:
    details = {"question": "", "options": ROWS, "answer": answer, "wasCustom": False}
    append(
        {
            "role": "toolResult", "toolCallId": call, "toolName": TOOL,
            "content": [{"type": "text", "text": said}], "details": details, "isError": False,
            "timestamp": int(time.time() * 1000),
        }
    )  # fmt: skip


history: list[str] = []
shown: dict[str, Any] | None = None  # {"call", "text", "cursor"}
pending = b""  # input read and not yet taken as keys
blind_left = 0  # of the input from here on, the bytes typed before the question shown was on tmux's screen
rounds = 0


def draw() -> None:
    width, height = os.get_terminal_size(1)
    rule = "─" * width
    dialog: list[str] = []
    if shown is not None and LAYOUT == "list":
        dialog = [rule, f" {shown['text']}", ""]
        for i, label in enumerate([*ROWS, "Other (type your own)"]):
            dialog.append(f"{'❯ ' if i == shown['cursor'] else '  '}{label}")
        dialog += ["", " ↑/↓ move · enter select · esc cancel", rule]
    elif shown is not None:
        dialog = [rule, f" {shown['text']}", ""]
        for i, label in enumerate([*ROWS, "Type something."]):
            dialog.append(f"{'> ' if i == shown['cursor'] else '  '}{i + 1}. {label}")
        dialog += ["", HELP, rule]
    footer = ["/stand-in/project", "mock-model"]
    top = history[-(height - len(dialog) - len(footer) - 1) :]
    body = top + [""] * (height - len(top) - len(dialog) - len(footer)) + dialog + footer
    sys.stdout.write("\x1b[H\x1b[2J" + "\r\n".join(line[:width] for line in body[:height]))
    sys.stdout.flush()


def queued() -> int:
    """The bytes of input waiting to be read."""
    return int(struct.unpack("i", fcntl.ioctl(0, termios.FIONREAD, b"\0\0\0\0"))[0])


def mark_blind() -> None:
    """Once tmux shows the question just drawn (its own capture of the pane says so): the input
    typed before that and not yet taken is blind."""
    global blind_left
    assert shown is not None
    deadline = time.monotonic() + 5
    pane = os.environ["TMUX_PANE"]
    while time.monotonic() < deadline:
        screen = subprocess.run(["tmux", "capture-pane", "-p", "-t", pane], capture_output=True, text=True).stdout
        if f" {shown['text']}" in screen.splitlines():
            break
    blind_left = len(pending) + queued()


def show(kind: str, first: str = "file") -> None:
    """Ask question ``kind`` (A or B) of this round: written, then drawn (``first="screen"``: the
    other way round)."""
    global shown
    call, text = f"call_{kind}{rounds}", TEXTS[kind]
    shown = {"call": call, "text": text, "cursor": 0}
    history.append(f" question {text}")
    if first == "screen":
        draw()
        ask(call, text)
    else:
        ask(call, text)
        draw()
    mark_blind()


def answered(label: str) -> None:
    global shown
    assert shown is not None
    call, kind = shown["call"], shown["call"][5]
    history.append(f" ✓ {label}")
    said = f"User selected: {label}" if LAYOUT == "list" else f"User selected: {ROWS.index(label) + 1}. {label}"
    if kind == "A" and rounds % 2:  # the next question at once: on screen before A's record
        shown = {"call": f"call_B{rounds}", "text": TEXTS["B"], "cursor": 0}
        history.append(f" question {TEXTS['B']}")
        draw()
        mark_blind()
        result(call, said, label)
        ask(shown["call"], TEXTS["B"])
    elif kind == "A":  # or A's record, B's, then B on screen
        result(call, said, label)
        show("B")
    else:
        result(call, said, label)
        shown = None
        draw()


def next_round() -> None:
    global rounds, shown
    if shown is not None:
        result(shown["call"], "User cancelled the selection", None)
        shown = None
    rounds += 1
    append({"role": "user", "content": [{"type": "text", "text": f"round {rounds}"}], "timestamp": int(time.time() * 1000)})
    show("A")


def key(name: str, blind: bool) -> None:
    entry = {"t": time.monotonic(), "q": shown["call"] if shown else None, "key": name, "blind": blind}
    with open(KEYS, "a") as log:
        log.write(json.dumps(entry) + "\n")
    if name == "F5":
        next_round()
        return
    if shown is None:
        return
    if name == "Up":
        shown["cursor"] = max(0, shown["cursor"] - 1)
    elif name == "Down":
        shown["cursor"] = min(len(ROWS), shown["cursor"] + 1)
    elif name in ("Enter", "KPEnter") and shown["cursor"] < len(ROWS):
        answered(ROWS[shown["cursor"]])
        return
    draw()


with open(path, "w") as f:
    header = {"type": "session", "version": 3, "id": str(uuid.uuid4()), "timestamp": now_iso(), "cwd": os.getcwd()}
    f.write(json.dumps(header) + "\n")
saved = termios.tcgetattr(0)
tty.setraw(0)
sys.stdout.write("\x1b=")  # keypad application mode: the keypad's Enter comes as ESC O M
next_round()
BYTES = {seq.encode(): name for seq, name in SEQUENCES.items()}
try:
    while True:
        data = os.read(0, 1024)
        if not data:
            break
        pending += data
        while pending:
            known = next(((len(seq), n) for seq, n in BYTES.items() if pending.startswith(seq)), None)
            if known is None and pending.startswith(b"\x1b") and any(s.startswith(pending) for s in BYTES):
                break  # the rest of a sequence is still to come
            size, name = known or (1, f"other:{pending[:1]!r}")
            blind = blind_left > 0
            blind_left = max(0, blind_left - size)
            pending = pending[size:]
            key(name, blind)
finally:
    termios.tcsetattr(0, termios.TCSADRAIN, saved)
