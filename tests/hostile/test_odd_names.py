"""Folder and file names that are not UTF-8 (byte 0xff), and a cwd with lone surrogates, through
the real CLI: status (text and JSON), run --json, history (text and JSON), the scan cache."""

from __future__ import annotations

import json
import os
import re
import sqlite3
import uuid
from pathlib import Path
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from notifier.core.codec import dumps, status_obj
from notifier.core.model import Question, QuestionItem, SessionRef, SessionView, Snapshot, remote_key
from notifier.core.text import clean
from tests.writer import answer, ask, user

from ..app_process import AppProcess
from ..conftest import cli

CWD = "/home/u/pr\udcffoj\ud800x"  # what JSON "\udcff" / "\ud800" escapes decode to


def strict_json(text: str) -> Any:
    def no_constant(name: str) -> None:
        raise AssertionError(f"{name} is not JSON")

    return json.loads(text, parse_constant=no_constant)


def make_session(root: Path) -> bytes:
    """A pending question in <root>/--p\\xff--/a\\xff.jsonl; returns the file's path as bytes."""
    folder = os.path.join(os.fsencode(root), b"--p\xff--")
    os.makedirs(folder)
    path = os.path.join(folder, b"a\xff.jsonl")
    head = {"type": "session", "version": 3, "id": str(uuid.uuid4()), "timestamp": "2026-01-01T00:00:00Z"}
    head["cwd"] = CWD
    question = json.loads(ask("c1", "Deploy now?"))
    question["message"]["content"][0]["arguments"]["question"] = "Deploy \udcff now?"
    with open(path, "wb") as fh:  # ASCII JSON: the odd characters as escapes, as a JSON writer may
        fh.write(json.dumps(head).encode() + b"\n" + user() + json.dumps(question).encode() + b"\n")
    return path


def test_bytes_in_names_work_everywhere(tmp_path: Path) -> None:
    sessions = tmp_path / "s"
    raw = make_session(sessions)
    name = os.fsdecode(raw)

    for _ in range(2):  # the second time from the scan cache
        text = cli("status", "--liveness", "off", "--sessions-dir", str(sessions))
        assert text.returncode == 0, text.stderr
        assert "Deploy \ufffd now?" in text.stdout and "1 pending question" in text.stdout
        assert "pr\ufffdoj" in text.stdout  # the project (cwd's last folder), sanitized for display
        status = cli("status", "--json", "--liveness", "off", "--sessions-dir", str(sessions))
        assert status.returncode == 0, status.stderr
        data = strict_json(status.stdout)
        (session,) = data["sessions"]
        assert session["file"] == name and os.fsencode(session["file"]) == raw
        assert session["cwd"] == CWD and data["pending"] == 1
        assert session["pending"][0]["text"] == "Deploy \ufffd now?"  # plain text: sanitized
        assert "\\udcff" in status.stdout  # valid UTF-8 JSON, the odd byte as its escape

    with AppProcess(
        "run", "--no-tray", "--json", "--liveness", "off", "--sessions-dir", str(sessions)
    ) as app:
        (event,) = app.wait("needs_input")
        assert event["initial"] and event["session"]["file"] == name and event["session"]["cwd"] == CWD
        app.wait("ready")
        with open(raw, "ab") as fh:
            fh.write(answer("c1", "User selected: 1. A"))
        (done,) = app.wait("resolved")
        assert done["session"]["file"] == name and done["outcome"] == "answered"
        assert not any("Traceback" in line or "Logging error" in line for line in app.stderr)

    hist = cli("history", "--json")
    assert hist.returncode == 0, hist.stderr
    (q,) = strict_json(hist.stdout)["questions"]
    assert q["session"]["file"] == name and q["session"]["cwd"] == CWD and q["outcome"] == "answered"
    shown = cli("history")
    assert shown.returncode == 0 and "pr\ufffdoj" in shown.stdout and "answered" in shown.stdout, shown.stderr

    # the scan cache holds the very same name (not a lossy replacement)
    state = Path(os.environ["XDG_STATE_HOME"]) / "pi-notifier"
    with sqlite3.connect(state / "scan-cache.sqlite3") as db:
        keys = [os.fsdecode(k) for (k,) in db.execute("SELECT path FROM scan")]
    assert name in keys


def test_a_sessions_dir_given_as_bytes_on_the_command_line(tmp_path: Path) -> None:
    root = os.path.join(os.fsencode(tmp_path), b"sess\xfe")
    raw = make_session(Path(os.fsdecode(root)))
    r = cli("status", "--json", "--liveness", "off", "--sessions-dir", os.fsdecode(root))
    assert r.returncode == 0, r.stderr
    assert os.fsencode(strict_json(r.stdout)["sessions"][0]["file"]) == raw


_ODD = "\x00\x1b\"\\\u2028\u202e\udcff\ud800/\U000e0041\U000e007f\U0001d173\u3164\ufffe\U0010ffff"
_names = st.text(alphabet=st.characters() | st.sampled_from(_ODD), max_size=30)


@settings(max_examples=300, deadline=None)
@given(
    st.lists(
        st.tuples(
            _names,
            st.none() | _names,
            st.none() | _names,
            st.none() | _names,
            st.none() | _names,
            st.sampled_from(["idle", "working", "needs_input", "stopped", "starting"]),
            st.sampled_from([None, True, False]),
            st.floats(allow_nan=True, allow_infinity=True) | st.integers(-(10**20), 10**20),
            st.booleans(),
        ),
        max_size=8,
    ),
)
def test_status_json_of_any_names_is_valid_json_that_gives_them_back(rows: list[Any]) -> None:
    """status --json (core/codec.status_obj, then dumps) for names, paths and times of any
    shape: valid UTF-8 JSON, one session per view, each file given back exactly (also when not
    UTF-8), names plain text."""
    views = []
    for file, sid, cwd, name, host, state, alive, updated, asks in rows:
        ref = SessionRef(file if host is None else remote_key(host, file), sid, cwd, name, host)
        q = Question("c", "question", (QuestionItem(name or "?"),), 1.0)
        views.append(SessionView(ref, state, (q,) if asks else (), (), alive, updated))
    text = dumps(status_obj(Snapshot(tuple(views))))
    text.encode("utf-8")
    assert not re.search("[\x7f-\x9f\u2028\u2029\u202a-\u202e\u200b]", text), text  # (escaped: a terminal shows it)
    # … and so is every character the sanitizer drops as unseen (tag characters included)
    assert not [c for c in set(text) if not (c.isascii() or c.isspace()) and clean(f"a{c}a") != f"a{c}a"], text
    out = strict_json(text)
    assert sorted(s["file"] for s in out["sessions"]) == sorted(v.ref.file for v in views)
    assert out["pending"] == sum(len(v.pending) for v in views)
    for s in out["sessions"]:
        assert s["name"] is None or ("\x1b" not in s["name"] and "\x00" not in s["name"])
