"""A remote that floods: prints the run --json stream as fast as its pipe takes it.

``python flood_remote.py big N``: N questions of ~48 KB, each in a session of its own, never
answered. ``python flood_remote.py small N``: N small events (questions asked and answered at
once, 50 sessions). Then it waits for its input to close (as ``run --stop-on-eof`` does)."""

from __future__ import annotations

import json
import sys

AT = "2026-12-01T00:00:00.000Z"


def main() -> None:
    mode, n = sys.argv[1], int(sys.argv[2])
    out = sys.stdout
    out.write(json.dumps({"event": "ready", "at": AT, "sessions": 0, "pending": 0, "scan_s": 0.0}) + "\n")
    pad = "x" * 48_000 if mode == "big" else ""
    try:
        for i in range(n if mode == "big" else n // 2):
            session = {
                "id": f"s{i}",
                "file": f"/flood/{i if mode == 'big' else i % 50}.jsonl",
                "cwd": "/flood",
                "name": None,
            }
            question = {
                "tool_call_id": f"c{i}",
                "tool": "question",
                "text": f"Flood {i}? {pad}",
                "header": None,
                "options": ["Yes", "No"],
                "count": 1,
            }
            out.write(
                json.dumps(
                    {
                        "event": "needs_input",
                        "at": AT,
                        "initial": False,
                        "session": session,
                        "question": question,
                    }
                )
                + "\n"
            )
            if mode == "small":
                out.write(
                    json.dumps(
                        {
                            "event": "resolved",
                            "at": AT,
                            "session": session,
                            "question": question,
                            "outcome": "answered",
                            "answer": "Yes",
                            "waited_s": 0.1,
                        }
                    )
                    + "\n"
                )
        out.flush()
        sys.stdin.read()
    except (BrokenPipeError, KeyboardInterrupt):
        pass


if __name__ == "__main__":
    main()
