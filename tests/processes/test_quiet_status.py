"""Quiet hours in effect, from a real config.toml (this test's own XDG_CONFIG_HOME): `status
--json` says them in ``quiet_hours`` and the text of `status` in its line, when `status` reads
the files itself and when the running app answers (the app's own: it follows its config file)."""

from __future__ import annotations

import json
import os
import time
from datetime import datetime
from pathlib import Path
from typing import Any

from notifier.control import request

from ..app_process import AppProcess
from ..conftest import cli, wait_for
from ..writer import append, ask, header, user
from .test_lifecycle import headless_env


def _reply(req: dict[str, Any]) -> dict[str, Any]:
    """The running app's reply to ``req`` (it is running: no reply fails the test)."""
    reply = request(req)
    assert reply is not None, "the app stopped answering"
    return reply


def _window_around_now() -> str:
    """Quiet hours from two hours ago to two hours ahead (local time; across midnight too)."""
    local = datetime.now()
    minute = local.hour * 60 + local.minute
    start, end = (minute - 120) % 1440, (minute + 120) % 1440
    return f"{start // 60:02d}:{start % 60:02d}-{end // 60:02d}:{end % 60:02d}"


def _status(sessions: Path, *more: str) -> tuple[dict[str, Any], str]:
    args = ("--liveness", "off", "--sessions-dir", str(sessions), *more)
    done = cli("status", "--json", *args, env=headless_env())
    assert done.returncode == 0, done.stderr
    text = cli("status", *args, env=headless_env())
    assert text.returncode == 0, text.stderr
    return json.loads(done.stdout), text.stdout


def test_quiet_hours_in_effect_in_status_from_a_scan_and_from_the_app(tmp_path: Path) -> None:
    hours = _window_around_now()
    folder = Path(os.environ["XDG_CONFIG_HOME"]) / "pi-notifier"
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "config.toml").write_text(f'quiet_hours = "{hours}"\n')
    sessions = tmp_path / "s"
    append(sessions / "--p--" / "a.jsonl", header("/nowhere/blog"), user(), ask("q1", "Which?"))
    end = hours.split("-")[1]
    line = f"Quiet hours until {end} ({hours}): no notifications; the tray still counts."

    scanned, text = _status(sessions)
    assert scanned["pending"] == 1 and scanned["quiet_hours"]["hours"] == hours
    until = datetime.fromisoformat(scanned["quiet_hours"]["until"].replace("Z", "+00:00"))
    assert time.time() + 3600 < until.timestamp() <= time.time() + 2 * 3600 + 60
    assert until.astimezone().strftime("%H:%M") == end
    assert line in text.splitlines()

    plain = tmp_path / "plain.toml"  # a status of its own config without quiet hours …
    plain.write_text("")
    assert _status(sessions, "--config", str(plain))[0]["quiet_hours"] is None

    app = AppProcess("run", "--no-notify", "--liveness", "off", "--sessions-dir", str(sessions), env=headless_env())
    with app:
        ask_app = {"cmd": "status", "roots": [str(sessions)], "liveness": "off", "question_tools": []}
        wait_for(lambda: (r := request(ask_app)) and r.get("ok") and r["status"]["pending"] == 1, 20, "the app")
        # … is told the app's quiet hours while the app answers: the app is what notifies
        from_app, text = _status(sessions, "--config", str(plain))
        assert from_app["quiet_hours"] == scanned["quiet_hours"]
        assert line in text.splitlines()
        assert [s["file"] for s in from_app["sessions"]] == [s["file"] for s in scanned["sessions"]]
        # the app follows its config file: quiet hours removed there are gone from its answer
        (folder / "config.toml").write_text("")
        wait_for(lambda: _reply(ask_app)["status"]["quiet_hours"] is None, 20, "quiet hours off")
        assert "Quiet hours" not in _status(sessions)[1]
        assert app.proc.poll() is None
