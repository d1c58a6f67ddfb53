"""A scripted OpenAI-compatible chat server on loopback for driving the real pi CLI in tests:
a prompt "bash: COMMAND" is answered with a call to the `bash` tool running COMMAND (for permission
gates); a prompt "ask: FILE" with a call to the `question` tool with the arguments that JSON file
holds (a question of the test's own); a prompt "say: TEXT" is answered with TEXT; every other new
prompt with a call to the `question` tool (or the tool named by the MOCK_TOOL environment variable:
`questionnaire`), with the arguments MOCK_ARGS holds as JSON if set; a tool result gets "Thanks".
With MOCK_THEN (JSON arguments), the first tool result after a prompt is answered with a second
call of the same tool, with those arguments (a next question, at once), and its result with "Thanks".
A request without tools (an extension calling the model itself: qna's question extraction,
handoff's prompt) is answered with a text, MOCK_TEXT_DELAY seconds later (default 0: the loader it
shows is seen for that long).
It prints its port once it listens."""

import json
import os
import sys
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

ARGS: dict[str, Any] = {
    "question": "Which database should we use?",
    "options": [{"label": "PostgreSQL"}, {"label": "SQLite", "description": "file <b>based</b> & small"}],
}

QUESTIONNAIRE: dict[str, Any] = {
    "questions": [
        {
            "id": "db",
            "label": "Database",
            "prompt": "Which database should we use?",
            "options": [{"value": "pg", "label": "PostgreSQL"}, {"value": "sqlite", "label": "SQLite"}],
        },
        {
            "id": "lang",
            "label": "Language",
            "prompt": "Which language for the scripts?",
            "options": [{"value": "py", "label": "Python"}, {"value": "sh", "label": "Shell"}],
        },
    ]
}
TOOL = os.environ.get("MOCK_TOOL", "question")
TEXT_DELAY = float(os.environ.get("MOCK_TEXT_DELAY") or 0)
EXTRACTED = "Q: Which database should we use?\nA: "
TOOL_ARGS = json.loads(os.environ["MOCK_ARGS"]) if os.environ.get("MOCK_ARGS") else QUESTIONNAIRE if TOOL == "questionnaire" else ARGS
THEN = json.loads(os.environ["MOCK_THEN"]) if os.environ.get("MOCK_THEN") else None


def chunk(delta: dict[str, Any], finish: str | None = None) -> dict[str, Any]:
    return {
        "id": "mock",
        "object": "chat.completion.chunk",
        "created": 0,
        "model": "mock-model",
        "choices": [{"index": 0, "delta": delta, "finish_reason": finish}],
    }


def _text(content: object) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "".join(p.get("text", "") for p in content if isinstance(p, dict))
    return ""


def _results_since_prompt(msgs: list[dict[str, Any]]) -> int:
    last_user = max((i for i, m in enumerate(msgs) if m.get("role") == "user"), default=-1)
    return sum(1 for m in msgs[last_user + 1 :] if m.get("role") == "tool")


class H(BaseHTTPRequestHandler):
    def log_message(self, format: str, *args: Any) -> None:
        pass

    def do_POST(self) -> None:
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        msgs = body.get("messages", [])
        last = msgs[-1] if msgs else {}
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.end_headers()
        out = []
        text = _text(last.get("content")).strip()
        if not body.get("tools"):
            time.sleep(TEXT_DELAY)  # (the test's stand-in for a model that takes its time)
            out.append(chunk({"role": "assistant", "content": EXTRACTED}))
            out.append(chunk({}, "stop"))
        elif text.startswith("say:") and last.get("role") == "user":
            out.append(chunk({"role": "assistant", "content": text[4:].strip()}))
            out.append(chunk({}, "stop"))
        elif last.get("role") == "tool" and THEN is not None and _results_since_prompt(msgs) == 1:
            n = sum(1 for m in msgs if m.get("role") == "tool") + 1
            call = {"index": 0, "id": f"call_n{n}", "type": "function", "function": {"name": TOOL, "arguments": json.dumps(THEN)}}
            out.append(chunk({"role": "assistant", "tool_calls": [call]}))
            out.append(chunk({}, "tool_calls"))
        elif last.get("role") == "tool":
            out.append(chunk({"role": "assistant", "content": "Thanks, noted."}))
            out.append(chunk({}, "stop"))
        else:
            n = sum(1 for m in msgs if m.get("role") == "tool") + 1
            args: dict[str, Any]  # the tool call's arguments (sent as JSON)
            if text.startswith("bash:"):
                name, args, call_id = "bash", {"command": text[5:].strip()}, f"call_b{n}"
            elif text.startswith("ask:"):
                with open(text[4:].strip(), encoding="utf-8") as f:
                    name, args, call_id = "question", json.load(f), f"call_q{n}"
            else:
                name, args, call_id = TOOL, TOOL_ARGS, f"call_q{n}"
            out.append(
                chunk(
                    {
                        "role": "assistant",
                        "tool_calls": [
                            {
                                "index": 0,
                                "id": call_id,
                                "type": "function",
                                "function": {"name": name, "arguments": json.dumps(args)},
                            }
                        ],
                    }
                )
            )
            out.append(chunk({}, "tool_calls"))
        usage = {
            "id": "mock",
            "object": "chat.completion.chunk",
            "created": 0,
            "model": "mock-model",
            "choices": [],
            "usage": {"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15},
        }
        for c in out + [usage]:
            self.wfile.write(b"data: " + json.dumps(c).encode() + b"\n\n")
        self.wfile.write(b"data: [DONE]\n\n")


server = ThreadingHTTPServer(("127.0.0.1", int(sys.argv[1]) if len(sys.argv) > 1 else 0), H)
print(server.server_address[1], flush=True)
server.serve_forever()
