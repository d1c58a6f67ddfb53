"""A stand-in for a pi process (its name is `pi`, so it is recognised as one): on start it writes
a real captured session file (question pending) into $FAKE_PI_SESSIONS with its own cwd, fresh
timestamps and a fresh UUIDv7 session id (whose time tells a session made now from one resumed),
shows a line on its terminal, and waits."""

import json
import os
import sys
import time
from datetime import datetime, timezone

src, out = sys.argv[1], os.environ["FAKE_PI_SESSIONS"]
now = time.time()
iso = datetime.fromtimestamp(now, timezone.utc).isoformat(timespec="milliseconds").replace("+00:00", "Z")
lines = []
with open(src) as fh:
    for raw in fh:
        entry = json.loads(raw)
        entry["timestamp"] = iso
        if entry.get("type") == "session":
            entry["cwd"] = os.getcwd()
            ms, rand = int(now * 1000), os.urandom(10).hex()
            entry["id"] = f"{ms >> 16:08x}-{ms & 0xFFFF:04x}-7{rand[:3]}-{8 | int(rand[3], 16) & 3:x}{rand[4:7]}-{rand[7:19]}"
        if isinstance(entry.get("message"), dict) and "timestamp" in entry["message"]:
            entry["message"]["timestamp"] = int(now * 1000)
        lines.append(json.dumps(entry))
folder = os.path.join(out, "--fake--")
os.makedirs(folder, exist_ok=True)
with open(os.path.join(folder, "fake-session.jsonl"), "w") as fh:
    fh.write("\n".join(lines) + "\n")
print("fake pi is waiting for an answer", flush=True)
time.sleep(3600)
