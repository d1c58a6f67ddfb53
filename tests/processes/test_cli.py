"""The command line run for real (``python -m notifier …``): usage and config errors are one
line on stderr, exit code 2, never a traceback (bad config values key by key:
tests/hostile/test_config.py); status, history, goto, snooze and mute without the app."""

from __future__ import annotations

import json
import re
import subprocess
import sys
import time
from contextlib import closing
from pathlib import Path

import pytest

from ..conftest import ROOT, cli
from ..writer import header, user


@pytest.mark.parametrize(
    ("args", "fragment"),
    [
        (["run", "--bogus"], "unrecognized arguments"),
        (["status", "--bogus"], "unrecognized arguments: --bogus (see 'pi-notifier status --help')"),
        (["status", "--liveness", "maybe"], "invalid choice"),
        (["frobnicate"], "invalid choice"),
        (["history", "--since", "x"], "takes a number of days"),
        (["status", "--json", "--tmux"], "not allowed with argument"),  # (one output at a time)
        (["status", "--tmux", "--bar"], "not allowed with argument"),
        (["quit", "now"], "unrecognized arguments"),
        (["quit", "--all"], "unrecognized arguments"),
        (["answer", "--timeout", "nan", "1"], "--timeout takes"),  # (NaN waited for ever)
        (["answer", "--timeout", "inf", "1"], "--timeout takes"),
        (["answer", "--timeout", "-1", "1"], "--timeout takes"),
        (["answer", "s", "--call", "c1", "-x"], "unrecognized arguments"),  # (a dash word needs `--`)
        (["status", "--sessions-dir", "pyproject.toml"], "is a file, not a folder"),  # (cwd: the repo)
        (["status", "--sessions-dir", "a\x1b[31m"], "without control characters"),
    ],
)
def test_bad_usage_is_one_line_exit_2(args: list[str], fragment: str) -> None:
    r = cli(*args)
    assert r.returncode == 2
    assert len(r.stderr.strip().splitlines()) == 1 and fragment in r.stderr
    assert "Traceback" not in r.stderr


@pytest.mark.parametrize(
    "args",
    [
        ["status", "--\x1b]0;owned\x07x"],  # unrecognized: argparse names it as typed
        ["--\x1b[2J\x1b[31mred"],
        ["status", "--sessions-dir", "a", "b\x1b[1A\rc"],
        ["run", "--question-tool"],
    ],
)
def test_usage_errors_never_echo_escape_sequences(args: list[str]) -> None:
    r = cli(*args)
    assert r.returncode == 2 and len(r.stderr.strip().splitlines()) == 1
    assert "\x1b" not in r.stderr and "\x07" not in r.stderr and "\r" not in r.stderr


def test_answer_parses_in_the_contracts_order_and_any_other(tmp_path: Path) -> None:
    """`answer SESSION --call ID CHOICE` (docs/contract.md) and the words after the options both
    reach the command: here it refuses, as it should, a call that is not waiting."""
    session = tmp_path / "s.jsonl"
    session.write_bytes(header() + user())
    said = set()
    for args in (
        [str(session), "--call", "c1", "2"],
        [str(session), "2", "--call", "c1"],
        ["--call", "c1", str(session), "2"],
        [str(session), "--call", "c1", "--", "-x"],  # after `--`, a choice may start with a dash
        ["--call", "c1", "--", str(session), "--text"],
    ):
        r = cli("answer", *args)
        assert "unrecognized" not in r.stderr and "Traceback" not in r.stderr, args
        said.add((r.returncode, r.stderr))
    assert len(said) == 1 and "c1" in next(iter(said))[1]


def test_missing_explicit_config(tmp_path: Path) -> None:
    r = cli("status", "--config", str(tmp_path / "nope.toml"))
    assert r.returncode == 2 and "does not exist" in r.stderr


def test_config_file_adds_tool_and_folder(tmp_path: Path) -> None:
    sessions = tmp_path / "s"
    (sessions / "--p--").mkdir(parents=True)
    from tests.writer import ask, header, user

    (sessions / "--p--" / "a.jsonl").write_bytes(
        header() + user() + ask("c", tool="my_tool", args={"question": "Mine?"})
    )
    cfg = tmp_path / "c.toml"
    cfg.write_text(f"sessions_dirs = ['{sessions}']\nquestion_tools = ['my_tool']\nliveness = 'off'\n")
    r = cli("status", "--json", "--config", str(cfg))
    assert r.returncode == 0, r.stderr
    data = json.loads(r.stdout)
    assert data["pending"] == 1 and data["sessions"][0]["pending"][0]["text"] == "Mine?"
    shown = cli("config", "--config", str(cfg))
    assert 'question_tools = ["my_tool"]' in shown.stdout and str(cfg) in shown.stdout


def test_status_human_table(tmp_path: Path) -> None:
    from tests.writer import ask, header, user

    (tmp_path / "--p--").mkdir()
    (tmp_path / "--p--" / "a.jsonl").write_bytes(
        header("/home/u/myproj") + user() + ask("c", "Ship \x1b[31mit\x1b[0m?")
    )
    r = cli("status", "--liveness", "off", "--sessions-dir", str(tmp_path))
    assert r.returncode == 0
    assert (
        "needs_input" in r.stdout
        and "myproj" in r.stdout
        and "Ship it?" in r.stdout
        and "\x1b" not in r.stdout
    )
    assert "1 session, 1 pending question" in r.stdout


def test_status_says_what_it_skipped_once_and_logs_more_with_verbose(tmp_path: Path) -> None:
    """``status`` says a problem once, in the usual form, and ``-v`` adds the debug lines."""
    import os

    from tests.writer import ask, header, user

    (tmp_path / "--p--").mkdir()
    (tmp_path / "--p--" / "a.jsonl").write_bytes(header() + user() + ask("c1"))
    os.mkfifo(tmp_path / "--p--" / "fifo.jsonl")
    quiet = cli("status", "--liveness", "off", "--sessions-dir", str(tmp_path))
    assert quiet.returncode == 0 and "1 pending question" in quiet.stdout
    said = [line for line in quiet.stderr.splitlines() if "fifo.jsonl" in line]
    assert len(said) == 1 and said[0].startswith("pi-notifier: ") and "a FIFO" in said[0], quiet.stderr
    assert "scanned" not in quiet.stderr  # (a debug line)
    verbose = cli("status", "-v", "--liveness", "off", "--sessions-dir", str(tmp_path))
    assert "pi-notifier: scanned 1 session files" in verbose.stderr, verbose.stderr


@pytest.mark.parametrize("json_out", [True, False])
def test_a_reader_that_stops_reading_gets_no_traceback(tmp_path: Path, json_out: bool) -> None:
    """`status --json | head -c 10`: the rest of the output has nowhere to go; that is no error
    to show (nothing on stderr; exit code 1 where Python noticed, as it does for --json)."""
    import os
    import subprocess
    import sys

    from tests.writer import ask, header, user

    from ..conftest import ROOT

    sessions = tmp_path / "s"
    for i in range(1500):  # (far more output than a pipe holds: the write meets the closed pipe)
        folder = sessions / f"--p{i}--"
        folder.mkdir(parents=True)
        (folder / "a.jsonl").write_bytes(header(f"/p/{i}") + user() + ask(f"q{i}", "Which one? " * 6))
    args = ["status", "--all", "--liveness", "off", "--sessions-dir", str(sessions)] + (["--json"] if json_out else [])
    env = dict(os.environ, XDG_STATE_HOME=str(tmp_path / "state"))
    proc = subprocess.Popen(
        [sys.executable, "-m", "notifier", *args], stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env, cwd=ROOT
    )
    assert proc.stdout is not None and proc.stderr is not None
    assert proc.stdout.read(10)
    proc.stdout.close()
    err = proc.stderr.read()
    assert proc.wait(timeout=60) in (0, 1)
    assert err == b""


@pytest.mark.parametrize("where", ["stderr closed", "a full disk", "stdout closed"])
def test_status_where_its_output_cannot_go(tmp_path: Path, where: str) -> None:
    """No traceback whatever the output is: a closed stderr changes nothing, an output that
    cannot be written is one line and exit code 1."""
    import os
    import subprocess
    import sys

    from tests.writer import ask, header, user

    from ..conftest import ROOT

    sessions = tmp_path / "s" / "--p--"
    sessions.mkdir(parents=True)
    (sessions / "a.jsonl").write_bytes(header("/p") + user() + ask("q1", "Which?"))
    env = {k: v for k, v in os.environ.items() if k != "PYTHONUNBUFFERED"}
    env["XDG_STATE_HOME"] = str(tmp_path / "state")
    args = [sys.executable, "-m", "notifier", "status", "--json", "--liveness", "off", "--sessions-dir", str(tmp_path / "s")]
    out = tmp_path / "out.json"
    with open("/dev/full" if where == "a full disk" else out, "wb") as target:
        closed = {"stderr closed": 2, "stdout closed": 1}.get(where)
        r = subprocess.run(
            args,
            stdout=target,
            stderr=subprocess.PIPE,
            env=env,
            cwd=ROOT,
            timeout=60,
            preexec_fn=(lambda: os.close(closed)) if closed is not None else None,  # noqa: PLW1509
        )
    if where == "stderr closed":
        assert r.returncode == 0 and json.loads(out.read_text())["pending"] == 1
    else:
        assert r.returncode == 1
        assert r.stderr.decode().splitlines() == [
            "pi-notifier: cannot write the output ("
            + ("No space left on device" if where == "a full disk" else "there is no standard output")
            + ")"
        ]


A_ID = "01a232c1-5e1b-7a4d-9c2e-6f0b1d2e3a4b"
B_ID = "01a232c1-9d70-7f21-8b3c-0a1b2c3d4e5f"  # started a minute after A: the same first 8 digits


def _two_blogs(tmp_path: Path) -> Path:
    from tests.writer import ask, header, user

    sessions = tmp_path / "s" / "--blog--"
    sessions.mkdir(parents=True)
    (sessions / "a.jsonl").write_bytes(header("/home/u/blog", A_ID) + user() + ask("c1", "Which?"))
    (sessions / "b.jsonl").write_bytes(header("/home/u/blog", B_ID) + user() + ask("c2", "Which?"))
    return tmp_path / "s"


def test_status_shows_short_ids_that_tell_sessions_apart(tmp_path: Path) -> None:
    r = cli("status", "--liveness", "off", "--sessions-dir", str(_two_blogs(tmp_path)))
    assert r.returncode == 0
    assert r.stdout.splitlines()[0].split() == ["STATE", "PROJECT", "ID", "WAITING", "QUESTION"]
    assert "1d2e3a4b" in r.stdout and "2c3d4e5f" in r.stdout


@pytest.mark.parametrize("command", [["answer", "blog", "2"], ["goto", "blog"], ["answer", "01a232c1", "2"]])
def test_an_ambiguous_session_is_one_line_naming_the_candidates(tmp_path: Path, command: list[str]) -> None:
    r = cli(*command, "--liveness", "off", "--sessions-dir", str(_two_blogs(tmp_path)))
    assert r.returncode == 2, r
    assert r.stderr.count("\n") == 1 and "matches 2 sessions" in r.stderr
    assert "blog 1d2e3a4b" in r.stderr and "blog 2c3d4e5f" in r.stderr and "--text" not in r.stderr


def test_a_project_name_picks_its_session(tmp_path: Path) -> None:
    """`answer blog 2` takes 'blog' as the session (it said "no option is called 'blog'"); the
    session has no live pi, so the answer is refused with what to do instead."""
    from tests.writer import ask, header, user

    folder = tmp_path / "s" / "--blog--"
    folder.mkdir(parents=True)
    (folder / "a.jsonl").write_bytes(header("/home/u/blog", A_ID) + user() + ask("c1", "Which?"))
    r = cli("answer", "blog", "2", "--liveness", "off", "--sessions-dir", str(tmp_path / "s"))
    assert "no option is called" not in r.stderr and r.returncode == 1, r


def test_goto_a_session_file_outside_the_watched_folders(tmp_path: Path) -> None:
    from tests.writer import ask, header, user

    elsewhere = tmp_path / "copied" / "x.jsonl"
    elsewhere.parent.mkdir()
    elsewhere.write_bytes(header("/home/u/blog", A_ID) + user() + ask("c1", "Which?"))
    (tmp_path / "watched").mkdir()
    r = cli("goto", str(elsewhere), "--sessions-dir", str(tmp_path / "watched"))
    assert r.returncode == 1 and r.stderr.count("\n") == 1, r
    assert "no running pi has this session; resume it with: cd /home/u/blog && pi --session " in r.stderr
    assert str(elsewhere) in r.stderr


def test_snooze_and_mute_take_a_session_file_anywhere(tmp_path: Path) -> None:
    """As goto and answer do: a session file outside the watched folders, also as a path
    relative to the current folder."""
    from tests.writer import ask, header, user

    elsewhere = tmp_path / "copied" / "x.jsonl"
    elsewhere.parent.mkdir()
    elsewhere.write_bytes(header("/home/u/shop", A_ID) + user() + ask("c1", "Which?"))
    args = ("--liveness", "off", "--sessions-dir", str(_two_blogs(tmp_path)))
    snoozed = cli("snooze", str(elsewhere), "1h", *args)
    assert snoozed.returncode == 0 and snoozed.stdout.startswith("snoozed session shop 1d2e3a4b for 1 h"), snoozed
    muted = subprocess.run(
        [sys.executable, "-m", "notifier", "mute", "copied/x.jsonl", *args], capture_output=True, text=True, cwd=tmp_path
    )
    assert muted.returncode == 0 and muted.stdout.startswith("muted project shop"), muted


def test_snooze_mute_without_the_app_are_saved_and_status_says_them(tmp_path: Path) -> None:
    sessions = _two_blogs(tmp_path)
    args = ("--liveness", "off", "--sessions-dir", str(sessions))
    s = cli("snooze", "1d2e3a4b", "2h", *args)
    assert s.returncode == 0 and s.stdout.startswith("snoozed session blog 1d2e3a4b for 2 h 00 min"), s
    assert s.stdout.endswith(" (saved: pi-notifier is not running; it applies when it starts)\n"), s  # (nothing runs)
    assert cli("mute", "blog", *args).stdout.startswith("muted project blog")
    text = cli("status", *args).stdout.splitlines()[-1]
    assert text.startswith("snoozed: session blog 1d2e3a4b for 1 h 59 min") or "for 2 h 00 min" in text
    assert text.endswith("; muted: blog")
    bad = cli("snooze", "blog", "1h", "extra", *args)
    assert bad.returncode == 2 and bad.stderr.count("\n") == 1
    for too_long in ("8d", "200h"):  # a duration, but longer than a snooze lasts: said so, not "no such project"
        long = cli("snooze", "blog", too_long, *args)
        assert long.returncode == 2 and "a snooze lasts at most 7 d" in long.stderr and long.stderr.count("\n") == 1
    unknown = cli("mute", "nothing-like-it", *args)
    assert unknown.returncode == 2 and "no project or session is called 'nothing-like-it'" in unknown.stderr
    assert cli("unmute", "blog", *args).stdout.startswith("unmuted project blog")
    assert cli("snooze", "1d2e3a4b", "off", *args).returncode == 0
    assert json.loads(cli("status", "--json", *args).stdout)["snoozed"]["sessions"] == {}


def test_a_snooze_or_mute_that_cannot_be_saved_says_so(tmp_path: Path) -> None:
    """No app runs and the state folder cannot be made (its parent is a file): not "saved" and
    exit 0, but exit 1 and one line saying why and what to do; nothing is said saved after."""
    import os

    args = ("--liveness", "off", "--sessions-dir", str(_two_blogs(tmp_path)))
    blocked = tmp_path / "state-is-a-file"
    blocked.write_text("")
    env = {**os.environ, "XDG_STATE_HOME": str(blocked)}
    for command in (["snooze", "all", "1h"], ["mute", "blog"]):
        r = cli(*command, *args, env=env)
        assert r.returncode == 1 and r.stdout == "" and r.stderr.count("\n") == 1, r
        assert "not saved" in r.stderr and "Not a directory" in r.stderr, r
    assert "snoozed" not in cli("status", *args, env=env).stdout


def test_a_snooze_while_another_process_holds_the_store_is_saved_once_it_lets_go(tmp_path: Path) -> None:
    """Another process holds the state store (a write under way) as `snooze` saves: it waits for
    it, and says saved only when it is: exit 0, and status says the snooze."""
    import os
    import sqlite3
    import threading

    args = ("--liveness", "off", "--sessions-dir", str(_two_blogs(tmp_path)))
    assert cli("mute", "blog", *args).returncode == cli("unmute", "blog", *args).returncode == 0  # (a store)
    path = Path(os.environ["XDG_STATE_HOME"]) / "pi-notifier" / "state.sqlite3"
    held, done = threading.Event(), threading.Event()

    def hold() -> None:
        with closing(sqlite3.connect(path, timeout=5, isolation_level=None)) as db:
            db.execute("BEGIN EXCLUSIVE")
            held.set()
            done.wait(2.0)  # (let go when snooze is under way: a second at most)
            db.execute("ROLLBACK")

    holder = threading.Thread(target=hold)
    holder.start()
    assert held.wait(5)
    timer = threading.Timer(1.5, done.set)
    timer.start()
    try:
        r = cli("snooze", "all", "1h", *args)
    finally:
        done.set()
        holder.join()
    assert r.returncode == 0 and r.stdout.startswith("snoozed every session for 1 h 00 min"), r
    assert "not saved" not in r.stderr, r
    assert "snoozed: everything" in cli("status", *args).stdout


def test_mute_or_snooze_a_folder_holds_back_its_named_sessions_too(tmp_path: Path) -> None:
    """Two named sessions in the folder webshop: `mute webshop` mutes the folder (every session in
    it, named or not), not the project of whichever session the name picked."""
    from tests.writer import ask, header, line, user

    sessions = tmp_path / "s" / "--webshop--"
    sessions.mkdir(parents=True)
    for name, sid, call in (("billing refactor", A_ID, "c1"), ("checkout", B_ID, "c2")):
        named = line({"type": "session_info", "name": name})
        (sessions / f"{call}.jsonl").write_bytes(header("/home/u/webshop", sid) + named + user() + ask(call, "Which?"))
    args = ("--liveness", "off", "--sessions-dir", str(tmp_path / "s"))
    muted = cli("mute", "webshop", *args)
    assert muted.returncode == 0 and muted.stdout.startswith("muted project webshop"), muted
    assert json.loads(cli("status", "--json", *args).stdout)["muted"] == ["webshop"]
    snoozed = cli("snooze", "webshop", "1h", *args)
    assert snoozed.returncode == 0 and snoozed.stdout.startswith("snoozed project webshop for 1 h"), snoozed


def test_answer_says_when_a_word_is_a_session_not_a_choice(tmp_path: Path) -> None:
    """`answer 1d2e3a4b` (a session, no CHOICE) and `answer nothing 1` (a first word that names
    neither a session nor an option) say so, in one line, rather than only "no option is
    called"."""
    args = ("--liveness", "off", "--sessions-dir", str(_two_blogs(tmp_path)))
    alone = cli("answer", "1d2e3a4b", *args)
    assert alone.returncode == 2 and alone.stderr.count("\n") == 1, alone
    assert "'1d2e3a4b' is a session (blog 1d2e3a4b): give a CHOICE after it (options: 1. A, 2. B) or --text" in alone.stderr
    neither = cli("answer", "nothing", "1", *args)
    assert neither.returncode == 2 and neither.stderr.count("\n") == 1, neither
    assert "no option is called 'nothing'" in neither.stderr and "nor is any session" in neither.stderr


def test_snooze_durations_that_are_odd_are_said_as_such(tmp_path: Path) -> None:
    """A last word that reads as a duration but is none ("1w", "forever") is said to be no
    DURATION, not taken for a project nobody has; "0m" resumes like "0"; a snooze ending on
    another day says which."""
    sessions = _two_blogs(tmp_path)
    args = ("--liveness", "off", "--sessions-dir", str(sessions))
    for words in (["1w"], ["forever"], ["blog", "1w"], ["blog", "2x"], ["1d2e3a4b", "1e3"], ["-1"]):
        r = cli("snooze", *words, *args)
        assert r.returncode == 2 and r.stderr.count("\n") == 1, r
        assert f"'{words[-1]}' is not a DURATION (90s, 15m, 1h, 2h30m, 1d" in r.stderr, r.stderr
    for zero in ("0m", "0s"):
        r = cli("snooze", "blog", zero, *args)
        assert r.returncode == 0 and r.stdout.startswith("resumed project blog"), r
    week = cli("snooze", "blog", "7d", *args)
    assert week.returncode == 0 and re.search(r"for 7 d \(until \w{3} \d{1,2} \w{3} \d\d:\d\d\)", week.stdout), week
    # the README's forms: `snooze all tomorrow`, `snooze PROJECT tomorrow`; until 04:00 "tomorrow"
    # is this morning, said without its day (the rule: test_silences.py, tomorrow_morning)
    for what in ("all", "blog", "1d2e3a4b"):
        night = time.localtime().tm_hour < 4
        r = cli("snooze", what, "tomorrow", *args)
        day = r"" if night else r"\w{3} \d{1,2} \w{3} "
        if night != (time.localtime().tm_hour < 4):  # (04:00 passed meanwhile: either is right)
            day = f"({day})?"
        assert r.returncode == 0 and re.search(rf"\(until {day}08:00\)", r.stdout), r
    snoozed = json.loads(cli("status", "--json", *args).stdout)["snoozed"]
    assert snoozed["all"] and list(snoozed["projects"]) == ["blog"] and len(snoozed["sessions"]) == 1, snoozed


def test_quiet_hour_typo_says_did_you_mean(tmp_path: Path) -> None:
    cfg = tmp_path / "c.toml"
    cfg.write_text("quiet_hour = '22:00-07:00'\n")
    r = cli("status", "--config", str(cfg), "--sessions-dir", str(tmp_path))
    assert r.returncode == 2 and "unknown key 'quiet_hour' (did you mean 'quiet_hours'?)" in r.stderr


def test_history_since_0_does_not_say_nothing_was_recorded(private_dirs: Path) -> None:
    import os

    from notifier.app import open_store
    from notifier.core.model import Question, QuestionItem, SessionRef, Transition

    store = open_store(os.path.join(os.environ["XDG_STATE_HOME"], "pi-notifier"))
    ref = SessionRef("/s/a.jsonl", A_ID, "/home/u/blog", None)
    asked = time.time() - 3 * 86400
    store.record([Transition("needs_input", ref, Question(f"c{i}", "question", (QuestionItem("Which?"),), asked + i), asked + i) for i in range(8)])
    store.close()
    since0 = cli("history", "--since", "0")
    assert since0.returncode == 0 and "No questions recorded yet" not in since0.stdout
    assert "No questions in the last 0 days (8 recorded in all" in since0.stdout
    assert "8 questions" in cli("history").stdout
    for week in ("7", "7d", " 7D", "7.0"):  # (a "d" after the number of days is fine)
        assert "8 questions" in cli("history", "--since", week).stdout, week
    assert "No questions in the last 1 days" in cli("history", "--since", "1d").stdout


def test_doctor_with_no_bus_and_no_display_does_not_promise_a_tray_icon(tmp_path: Path) -> None:
    import os

    env = {k: v for k, v in os.environ.items() if k not in ("DISPLAY", "WAYLAND_DISPLAY", "DBUS_SESSION_BUS_ADDRESS")}
    r = cli("doctor", "--sessions-dir", str(tmp_path), env=env)
    lines = {line.split(":")[0]: line for line in r.stdout.splitlines()}
    assert "tray: none" in lines["[note] tray"]
    said = lines["[FAIL] notifications"]
    assert "tray icon alone" not in said and "with no tray icon either, pi-notifier status, run --json and a status bar" in said


def test_doctor_says_which_folder_it_cannot_read(tmp_path: Path) -> None:
    """A project folder doctor cannot read is said (its sessions are not seen), not counted as
    fine (it said "[ok] sessions folder … (0 session files in 2 folders)"). As root, doctor runs
    without the capabilities that ignore permissions."""
    import os
    import shutil

    if os.geteuid() == 0 and shutil.which("setpriv") is None:
        pytest.skip("running as root without setpriv (util-linux) to drop the capabilities that ignore permissions")
    locked = tmp_path / "--locked--"
    locked.mkdir()
    locked.chmod(0)
    drop = ["setpriv", "--bounding-set", "-dac_override,-dac_read_search", "--"] if os.geteuid() == 0 else []
    try:
        r = subprocess.run([*drop, sys.executable, "-m", "notifier", "doctor", "--sessions-dir", str(tmp_path)],
                           capture_output=True, text=True, timeout=60, cwd=ROOT)  # fmt: skip
    finally:
        locked.chmod(0o755)
    assert f"[FAIL] sessions folder: cannot read {locked} (Permission denied): its sessions are not seen" in r.stdout
    assert r.returncode != 0


def test_doctor_names_the_pis_that_write_where_nothing_watches(tmp_path: Path) -> None:
    """Real processes that look like pi (a script named ``pi``), each writing its sessions
    elsewhere by pi's own rules: doctor names those whose folder is not watched (their questions
    are never seen) and says how to watch it; the ones writing into a watched folder, and one
    that writes nothing, are not named."""
    import os

    from ..conftest import wait_for

    if not os.path.isdir("/proc/self"):
        pytest.skip("no /proc")
    sessions, agent = tmp_path / "sessions", tmp_path / "agent"
    sessions.mkdir()
    agent.mkdir()
    pi = tmp_path / "bin" / "pi"
    pi.parent.mkdir()
    pi.write_text(f"#!{sys.executable}\nimport sys\nsys.stdin.read()\n")
    pi.chmod(0o755)
    settings = tmp_path / "set" / ".pi" / "settings.json"
    settings.parent.mkdir(parents=True)
    settings.write_text(json.dumps({"sessionDir": "its-own"}))
    env = {**os.environ, "PI_CODING_AGENT_DIR": str(agent), "XDG_STATE_HOME": str(tmp_path / "state")}
    env.pop("PI_CODING_AGENT_SESSION_DIR", None)
    runs = {  # name → (its folder, its arguments, its own environment's additions)
        "flag": (tmp_path, ["--session-dir", "elsewhere"], {}),
        "variable": (tmp_path, [], {"PI_CODING_AGENT_SESSION_DIR": str(sessions / "flat")}),
        "settings": (settings.parent.parent, [], {}),
        "watched": (tmp_path, ["--session-dir", str(sessions)], {}),
        "none": (tmp_path, ["--no-session", "--session-dir", "nowhere"], {}),
    }
    procs = {name: subprocess.Popen([str(pi), *argv], cwd=cwd, env={**env, **more}, stdin=subprocess.PIPE)
             for name, (cwd, argv, more) in runs.items()}  # fmt: skip
    try:
        started = lambda: all(str(pi).encode() in Path(f"/proc/{p.pid}/cmdline").read_bytes() for p in procs.values())  # noqa: E731
        wait_for(started, 10, "the pis started")
        r = cli("doctor", "--sessions-dir", str(sessions), env=env)
        said = {line.split(" is not watched")[0]: line for line in r.stdout.splitlines() if " is not watched, " in line}
        flag, own = said[f"[note] sessions folder: {tmp_path}/elsewhere"], settings.parent.parent / "its-own"
        assert f"pi {procs['flag'].pid} in {tmp_path} writes its sessions there" in flag
        assert f"pi {procs['settings'].pid} in {own.parent} write" in said[f"[note] sessions folder: {own}"]
        assert "its questions are not seen; watch it too (--sessions-dir" in flag
        for name in ("variable", "watched", "none"):
            assert not any(f"pi {procs[name].pid} " in line for line in said.values()), name
    finally:
        for p in procs.values():
            p.kill()
            p.wait()


def test_status_looks_at_processes_only_with_liveness(tmp_path: Path) -> None:
    """A real process named pi runs in the session's folder: with liveness auto ``status --json``
    finds it (alive, its location); with ``--liveness off`` no process is looked at: alive and
    location stay null (tests, files copied from elsewhere). The text says the same question."""
    import os
    import shutil
    import subprocess

    from tests.writer import append, ask, header, user

    from ..conftest import wait_for

    if not os.path.isdir("/proc/self"):
        pytest.skip("no /proc")
    project, sessions = tmp_path / "project", tmp_path / "sessions"
    project.mkdir()
    pi = tmp_path / "bin" / "pi"
    pi.parent.mkdir()
    shutil.copy(shutil.which("sleep") or "/bin/sleep", pi)
    proc = subprocess.Popen([str(pi), "60"], cwd=project)
    try:
        wait_for(lambda: Path(f"/proc/{proc.pid}/cmdline").read_bytes().startswith(str(pi).encode()), 10, "pi started")
        append(sessions / "s.jsonl", header(str(project)), user(), ask("q1", "Which one?"))
        env = {**os.environ, "XDG_STATE_HOME": str(tmp_path / "state"), "XDG_CONFIG_HOME": str(tmp_path / "cfg")}
        args = ("--sessions-dir", str(sessions))
        auto = json.loads(cli("status", "--json", "--liveness", "auto", *args, env=env).stdout)
        (s,) = auto["sessions"]
        assert s["alive"] is True and s["location"] is not None and s["location"]["pid"] == proc.pid
        off = json.loads(cli("status", "--json", "--liveness", "off", *args, env=env).stdout)
        (s,) = off["sessions"]
        assert (s["alive"], s["location"]) == (None, None)
        assert [q["text"] for q in s["pending"]] == ["Which one?"] and off["pending"] == 1
        text = cli("status", "--liveness", "off", *args, env=env).stdout
        assert "Which one?" in text and text.splitlines()[-1] == "1 session, 1 pending question"
    finally:
        proc.kill()
        proc.wait()


def test_a_wayland_desktop_without_xwayland_is_told_how_only_where_it_is_sway(tmp_path: Path) -> None:
    """The window needs X: where the compositor offers no XWayland, the line says so, and how to
    turn it on only on sway (on GNOME or KDE that setting means nothing)."""
    from notifier.system.window_manager import window_display

    env = {"WAYLAND_DISPLAY": "wayland-none", "XDG_RUNTIME_DIR": str(tmp_path)}  # (nobody listens there)
    extra, said = window_display(env)
    assert extra is None and "offers no XWayland" in said and "sway" not in said, said
    extra, said = window_display({**env, "SWAYSOCK": str(tmp_path / "sway-ipc.sock")})
    assert extra is None and "(sway: 'xwayland enable')" in said, said
