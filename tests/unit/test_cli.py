"""The command line's parts that need no process: where sessions are by default, a did-you-mean
for every config key, status text from the status object. (The commands run for real: usage
and config errors, status, goto, snooze: tests/processes/test_cli.py.)"""

from __future__ import annotations

import json
import logging
from pathlib import Path

import pytest

from notifier.system import paths


def test_default_sessions_dir_precedence(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    home = str(tmp_path)
    assert paths.default_sessions_dir({"HOME": home}) == f"{home}/.pi/agent/sessions"
    assert (
        paths.default_sessions_dir({"HOME": home, "PI_CODING_AGENT_DIR": "~/agent"})
        == f"{home}/agent/sessions"
    )
    agent = tmp_path / "agent"
    agent.mkdir()
    (agent / "settings.json").write_text(json.dumps({"sessionDir": "~/flat"}))
    env = {"HOME": home, "PI_CODING_AGENT_DIR": str(agent)}
    assert paths.default_sessions_dir(env) == f"{home}/flat"
    env["PI_CODING_AGENT_SESSION_DIR"] = "/explicit"
    assert paths.default_sessions_dir(env) == "/explicit"
    del env["PI_CODING_AGENT_SESSION_DIR"]
    (agent / "settings.json").write_text(json.dumps({"sessionDir": f"file://{home}/url%20sessions"}))
    assert paths.default_sessions_dir(env) == f"{home}/url sessions"  # (as pi takes a file URL)
    (agent / "settings.json").write_text(json.dumps({"sessionDir": "~/flat/../flat2/"}))
    assert paths.default_sessions_dir(env) == f"{home}/flat2"
    (agent / "settings.json").write_text(json.dumps({"sessionDir": "rel-sess"}))
    with caplog.at_level(logging.WARNING):  # (relative: each pi's own folder, unknown here; said)
        assert paths.default_sessions_dir(env) == f"{agent}/sessions"
    assert "sessionDir 'rel-sess' is relative" in caplog.text
    (agent / "settings.json").write_text("{broken")
    assert (
        paths.default_sessions_dir({"HOME": home, "PI_CODING_AGENT_DIR": str(agent)}) == f"{agent}/sessions"
    )


def test_where_a_running_pi_writes_its_sessions(tmp_path: Path) -> None:
    """pi's order for a running pi (doctor says which pis write where nothing watches):
    ``--session PATH``, ``--session-dir``, PI_CODING_AGENT_SESSION_DIR, its project's
    ``sessionDir`` then the agent dir's (relative: from its own folder), the default."""
    home, project = str(tmp_path), tmp_path / "proj"
    (project / ".pi").mkdir(parents=True)
    agent = tmp_path / "agent"
    agent.mkdir()
    env = {"HOME": home, "PI_CODING_AGENT_DIR": str(agent)}

    def where(argv: list[str], env: dict[str, str] = env) -> str | None:
        return paths.sessions_dir_of(str(project), argv, env)

    assert where([]) == f"{agent}/sessions"
    (agent / "settings.json").write_text(json.dumps({"sessionDir": "~/global"}))
    assert where([]) == f"{home}/global"
    (project / ".pi" / "settings.json").write_text(json.dumps({"sessionDir": "here/s"}))
    assert where([]) == f"{project}/here/s"  # (the project's, relative to its folder)
    assert where([], {**env, "PI_CODING_AGENT_SESSION_DIR": "~/env"}) == f"{home}/env"
    assert where(["--session-dir", "flag", "--model", "x"]) == f"{project}/flag"
    assert where(["--session", "../keep/one.jsonl", "--session-dir", "/x"]) == f"{tmp_path}/keep"
    assert where(["--session", "0190abcd"]) == f"{project}/here/s"  # (an id: found in its usual folder)
    assert where(["--no-session"]) is None
    assert paths.sessions_dir_of(str(tmp_path), [], {"HOME": home}) == f"{home}/.pi/agent/sessions"
    # a relative agent folder is the pi's own folder's, not the asking process's
    assert paths.sessions_dir_of(str(tmp_path), [], {"HOME": home, "PI_CODING_AGENT_DIR": ".agent"}) == (
        f"{tmp_path}/.agent/sessions"
    )


def test_every_config_key_has_a_did_you_mean() -> None:
    """A typo of any key (a letter dropped, two swapped, one doubled) is answered with that key."""
    from notifier.config import KEYS, suggest

    for key in KEYS:
        name = key.rsplit(".", 1)[-1]
        head = key[: len(key) - len(name)]
        typos = {head + name[:-1], head + name[1] + name[0] + name[2:], head + name + name[-1]}
        for typo in typos - set(KEYS):
            assert suggest(typo, KEYS) == key, typo
    assert suggest("zzz", KEYS) is None


def test_config_errors_of_tables_say_where_a_key_belongs(tmp_path: Path) -> None:
    """A table written as a value, a top-level key written under a table (TOML puts every key
    after ``[notifications]`` into it), a misspelled key of a ``[[remotes]]`` table: one line
    saying what was meant."""
    import pytest

    from notifier.config import (  # (in parentheses: the codemod leaves it whole)
        ConfigError,
        load,
    )

    cases = {
        "notifications = 5\n": "'notifications' must be a table: [notifications] with keys such as backend",
        "push = 'ntfy://x'\n": "'push' must be a table: [push] with keys such as urls",
        "[notifications]\nshow_text = false\nquiet_hours = '22:00-07:00'\n": (
            "unknown key 'notifications.quiet_hours' (did you mean 'quiet_hours'? a key after"
            " [notifications] is read as part of it: put top-level keys before the first [table])"
        ),
        "[[remotes]]\nnam = 'dev'\nssh = 'dev'\n": "'remotes': unknown key 'nam' in [[remotes]] 1 (did you mean 'name'?)",
        "[[remotes]]\nname = 'dev'\nssh = 'dev'\nquiet_hours = '22:00-07:00'\n": (
            "'remotes': unknown key 'quiet_hours' in [[remotes]] 1 (did you mean the top-level"
            " 'quiet_hours'? a key after [[remotes]] is read as part of it: put top-level keys before the first [table])"
        ),
    }
    for body, said in cases.items():
        cfg = tmp_path / "c.toml"
        cfg.write_text(body)
        with pytest.raises(ConfigError) as info:
            load(str(cfg), explicit=True)
        assert said in str(info.value) and "\n" not in str(info.value), (body, str(info.value))


def test_status_text_is_rendered_from_the_status_object() -> None:
    """The table of ``status`` comes from the status object (the running app's reply or a scan of
    our own, alike): waits from each question's ``asked_at``, the tool a working session runs,
    sessions idle for over a day left out (unless --all), a snoozed session named by its project
    (a remote one too), and any string in it sanitized."""
    from datetime import datetime

    from notifier.cli.status import render_status
    from notifier.core.codec import iso, status_obj
    from notifier.core.model import Question, QuestionItem, SessionRef, SessionView, Snapshot, remote_key
    from notifier.core.planner import Silences

    now = 1_700_000_000.0
    q = Question("c1", "question", (QuestionItem("Pick \x1b[31mone?", options=()),), now - 125)
    remote = SessionRef(remote_key("box", "/s/r.jsonl"), "bbbbbbbb-2", "/home/u/shop", None, host="box")
    away = SessionRef(remote_key("far", "/s/f.jsonl"), "dddddddd-4", "/home/u/api", None, host="far")
    unnamed = SessionRef(remote_key("far", "/s/n.jsonl"), None, "/home/u/web", None, host="far")
    views = (
        SessionView(SessionRef("/s/a.jsonl", "aaaaaaaa-1", "/home/u/blog", None), "needs_input", (q,), (), True, now - 125),
        SessionView(remote, "working", (), (), None, now - 5, current_tool="ba\x1b[0msh"),
        SessionView(SessionRef("/s/old.jsonl", "cccccccc-3", "/home/u/old", None), "idle", (), (), None, now - 2 * 86400),
        SessionView(away, "needs_input", (), (), None, now - 60, offline_since=now - 30, offline=(q,)),
        SessionView(unnamed, "working", (), (), None, now - 70),
    )
    status = status_obj(Snapshot(views, now))
    assert status["pending"] == 1 and "offline" not in status["sessions"][0]  # (a link that is up: no such field)
    (gone,) = [s for s in status["sessions"] if s["host"] == "far" and s["file"] == "/s/f.jsonl"]
    assert gone["pending"] == [] and [o["asked_at"] for o in gone["offline"]] == [iso(now - 125)]
    assert gone["offline_since"] == iso(now - 30)
    snoozed = Silences(sessions={remote.key: now + 600})
    lines = render_status(status, now, False, snoozed).splitlines()
    assert lines[1].split() == ["needs_input", "blog", "aaaaaaa1", "2", "min", "Pick", "one?"]
    # a remote's session: its host named, and its ID is what SESSION takes for it
    since = datetime.fromtimestamp(now - 30).strftime("%H:%M")
    assert lines[2].split() == ["offline", "far", "·", "api", "far:ddddddd4", "2", "min", "Pick", "one?", "—", "far",
                                "offline", "since", since]
    assert lines[3].split() == ["working", "box", "·", "shop", "box:bbbbbbb2", "-", "bash"]
    assert lines[4].split() == ["working", "far", "·", "web", "-", "-"]  # (no id yet: none to give)
    assert lines[5] == "5 sessions, 1 pending question (1 session idle for over a day not shown; --all lists them)"
    assert lines[6] == "snoozed: session box · shop bbbbbbb2 for 10 min"
    assert any(line.split()[:2] == ["idle", "old"] for line in render_status(status, now, True).splitlines())


def test_every_command_is_carried_out_by_the_function_named_for_it() -> None:
    from notifier.cli.parser import COMMANDS, handler

    for command, each in COMMANDS.items():
        found = handler(command)
        assert callable(found) and f"{found.__module__}:{found.__name__}" == f"notifier.cli.{each.handler}"


def test_doctor_never_says_the_tray_icon_shows_what_its_tray_line_says_it_cannot(monkeypatch: object) -> None:
    """No notification server: the notifications line says what is left. "The tray icon alone"
    only where the tray line says an icon is shown now; with no tray host (a display, but no
    tray running yet) or no tray at all, the other ways."""
    import pytest

    from notifier.cli import doctor
    from notifier.config import Config
    from notifier.outputs import backends
    from notifier.outputs import tray as tray_choice

    mp = pytest.MonkeyPatch()
    try:
        mp.setenv("DISPLAY", ":5")
        mp.setattr(backends, "doctor_line", lambda config: f"[FAIL] notifications: no notification server — {backends.TRAY_ALONE}")
        for tray, alone in (
            ("[ok  ] tray: gtk — X11; tray host: XEmbed tray (trayer)", True),
            ("[note] tray: gtk — X11; tray host: none (no session bus): the icon appears when one starts", False),
            ("[note] tray: none — no display", False),
        ):
            mp.setattr(tray_choice, "doctor_line", lambda config, line=tray: line)
            notifications, shown_tray = doctor._extras(Config())
            assert shown_tray == tray
            assert (backends.TRAY_ALONE in notifications) is alone, notifications
            if not alone:
                assert "with no tray icon either, pi-notifier status, run --json, the window" in notifications
    finally:
        mp.undo()


def test_a_tray_host_missing_for_want_of_a_bus_is_said_once() -> None:
    from notifier.outputs import tray_hosts
    from notifier.outputs.dbus import BusError

    said = tray_hosts.no_bus(BusError("no session bus (DBUS_SESSION_BUS_ADDRESS is not set)"))
    assert said == "no session bus (DBUS_SESSION_BUS_ADDRESS is not set)"
    assert tray_hosts.no_bus(OSError("refused")) == "no session bus (refused)"


def test_a_misspelled_value_says_what_it_probably_meant(tmp_path: Path) -> None:
    """A value of a key with a few choices gets a did-you-mean too, and a true or false written
    in quotes says to drop them."""
    import pytest

    from notifier.config import (  # (in parentheses: the codemod leaves it whole)
        ConfigError,
        load,
    )

    cases = {
        "[tray]\nbackend = 'gkt'\n": "'tray.backend' must be one of 'auto', 'gtk', 'appindicator', 'xorg', 'none' (did you mean 'gtk'?)",
        "[notifications]\nbackend = 'DBus'\n": "(did you mean 'dbus'?)",
        "liveness = 'of'\n": "(did you mean 'off'?)",
        "notify_on = ['idel']\n": "'notify_on' must be a list of 'needs_input', 'idle', 'failed' (did you mean 'idle'?)",
        "[notifications]\nshow_text = 'false'\n": "'notifications.show_text' must be true or false (without quotes: false)",
        "[push]\nwhen = 'awy'\n": "(did you mean 'away'?)",
    }
    for body, said in cases.items():
        cfg = tmp_path / "c.toml"
        cfg.write_text(body)
        with pytest.raises(ConfigError) as info:
            load(str(cfg), explicit=True)
        assert said in str(info.value), (body, str(info.value))
    cfg = tmp_path / "c.toml"
    cfg.write_text("[tray]\nbackend = 'qqqqqq'\n")
    with pytest.raises(ConfigError) as info:
        load(str(cfg), explicit=True)
    assert "did you mean" not in str(info.value)  # (nothing close: no guess)


def test_quit_takes_no_arguments_and_has_its_handler(capsys: pytest.CaptureFixture[str]) -> None:
    """``quit`` is parsed as a command of its own (``--config`` and ``-v`` as every command),
    carried out by its handler; anything more is bad usage: one line, exit 2."""
    from notifier.cli.parser import build_parser, handler, main
    from notifier.cli.quit import cmd_quit

    args = build_parser("quit").parse_args(["quit", "-v"])
    assert (args.command, args.config, args.verbose) == ("quit", None, True)
    assert handler("quit") is cmd_quit
    assert "stop the running app" in build_parser().format_help()
    for bad in (["quit", "now"], ["quit", "--sessions-dir", "x"], ["quit", "--json"]):
        with pytest.raises(SystemExit) as info:
            main(bad)
        assert info.value.code == 2
        err = capsys.readouterr().err
        assert err.startswith("pi-notifier: unrecognized arguments") and err.count("\n") == 1, err


def test_each_key_row_holds_its_default_and_reads_values_its_one_way() -> None:
    """Every key's range is a row of data read by one checker: each default is in its range, and
    the same rules hold for every key of a shape (a single value of the file is a list of one; a
    glob's brackets must close; lists are deduplicated or sorted as the row says)."""
    from notifier.config import KEYS, SCHEMA, Invalid

    for key in SCHEMA:
        assert key.check(key.default) == key.default, key.name
    tools = KEYS["question_tools"]
    assert tools.check("ask") == ["ask"] and tools.check(["a", "b", "a"]) == ["a", "b"]
    for good in ("mcp__*__ask*", "[!a]x", "a]", "[]", "ask?"):
        assert tools.check([good]) == [good], good
    for bad in ("[x", "[[x]]", "a b", "", "x" * 129, "a\x1b"):
        with pytest.raises(Invalid):
            tools.check([bad])
    assert KEYS["remind_after"].check([30, 10, 10.0]) == [10.0, 30.0]
    assert KEYS["notify_on"].check(["idle"]) == ["idle", "needs_input"]
    remote = {"name": "dev", "command": "ssh dev"}  # (inside a table, a list is a list)
    with pytest.raises(Invalid, match="'command' in \\[\\[remotes\\]\\] 1 must be"):
        KEYS["remotes"].check([remote])
    with pytest.raises(Invalid, match="relative"):
        KEYS["sessions_dirs"].check(["here"])
