"""Never into the next question: `answer --call A 2` runs while the user answers A in the terminal
at many timings, and pi asks a look-alike B ("Delete the database?", the same rows as A's "Delete
the branch?") the instant A is answered. B never receives a key meant for A, and what `answer` says
is what happened: "answered" only when pi recorded A as it chose, else one line saying what it
typed, with "may have gone" when a key could have reached what pi shows now.

The pi is a stand-in (`lookalike_pi.py`) in tmux that logs every key with the question on screen
when it came; the user's key is the keypad's Enter (told apart from `answer`'s Enter by that alone).
The user presses just before `answer`'s first key is expected (the window the old driver lost in:
its later keys went to whatever dialog fitted), or just after that key reached A."""

from __future__ import annotations

import json
import os
import random
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from ..conftest import ROOT, wait_for
from .pi_harness import Tmux
from .test_goto_answer import no_x

STAND_IN = Path(__file__).with_name("lookalike_pi.py")
OURS = ("Down", "Enter")  # what `answer` sends for option 2; the user's key is "KPEnter"


@dataclass
class StandIn:
    tmux: Tmux
    pane: str
    sessions: Path
    keys: Path

    def log(self) -> list[dict[str, Any]]:
        text = self.keys.read_text()
        return [json.loads(x) for x in text[: text.rfind("\n") + 1].splitlines() if x.strip()]  # (whole lines)

    def results(self) -> dict[str, str]:
        """Each answered call's toolResult text."""
        out = {}
        for p in self.sessions.rglob("*.jsonl"):
            for line in p.read_text().splitlines():
                m = json.loads(line).get("message") or {}
                if m.get("role") == "toolResult":
                    out[m["toolCallId"]] = m["content"][0]["text"]
        return out

    def waiting(self, call: str) -> bool:
        text = "".join(p.read_text() for p in self.sessions.rglob("*.jsonl"))
        return f'"{call}"' in text and call not in self.results()


SAID = {"question": "User selected: 2. Delete", "list": "User selected: Delete"}  # A answered "Delete"


def start_stand_in(tmp_path: Path, server: Tmux, layout: str = "question") -> StandIn:
    sessions, project, bin_dir, keys = tmp_path / "sessions", tmp_path / "project", tmp_path / "bin", tmp_path / "keys.jsonl"
    for d in (sessions, project, bin_dir):
        d.mkdir(exist_ok=True)
    keys.touch()
    pi = bin_dir / "pi"  # (named so: it is taken for a pi)
    pi.write_text(f"#!{sys.executable}\n" + STAND_IN.read_text())
    pi.chmod(0o755)
    server(
        "new-session", "-d", "-s", "race", "-x", "100", "-y", "30", "-c", str(project),
        "-e", f"STAND_IN_SESSIONS={sessions}", "-e", f"STAND_IN_KEYS={keys}", "-e", f"STAND_IN_LAYOUT={layout}",
        str(pi), check=True,
    )  # fmt: skip
    pane = server("list-panes", "-t", "race", "-F", "#{pane_id}").split()[0]
    wait_for(lambda: "Delete the branch?" in server.capture(pane), 20, "the stand-in's first question")
    return StandIn(server, pane, sessions, keys)


def one_round(
    pi: StandIn, n: int, rng: random.Random, mode: str, firsts: list[float], gaps: list[float]
) -> dict[str, Any]:
    """Round ``n``: `answer --call call_An 2` with the user's Enter on A at a random moment:
    ``mode`` "before": in the 60 ms before `answer`'s first key is expected (``firsts``: how long
    after its start it came in the rounds before); "after": after its first key reached A, before
    its second is expected (``gaps``: how long after the first it came before; the machine's load
    decides it). What each side did: the keys each question received, the CLI's exit and words,
    the results."""
    a, b = f"call_A{n}", f"call_B{n}"
    wait_for(lambda: pi.waiting(a) and "Delete the branch?" in pi.tmux.capture(pi.pane), 20, f"question {a}")
    env = no_x()
    env.pop("PYTHONUNBUFFERED", None)
    since = len(pi.log())
    if mode == "before":
        expected = sorted(firsts)[len(firsts) // 2] if firsts else 0.5
        delay = max(0.0, expected - rng.uniform(0.0, 0.06))
    else:
        delay = rng.uniform(0.0, 1.2 * (sorted(gaps)[len(gaps) // 2] if gaps else 0.025))
    started = time.monotonic()
    cli = subprocess.Popen(
        [sys.executable, "-m", "notifier", "answer", "--call", a, "2", "--timeout", "5", "--sessions-dir", str(pi.sessions)],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env, cwd=ROOT,
    )  # fmt: skip
    pressed = None
    while cli.poll() is None:
        if pressed is None:
            ours = [e for e in pi.log()[since:] if e["key"] in OURS]
            at = started + delay if mode == "before" else (ours[0]["t"] + delay if ours else None)
            if at is not None and time.monotonic() >= at:
                pi.tmux("send-keys", "-t", pi.pane, "KPEnter")
                pressed = time.monotonic()
        time.sleep(0.0005)
    out, err = cli.communicate()
    if pressed is None:  # `answer` was done first: the user's Enter now goes to B, as it would
        pi.tmux("send-keys", "-t", pi.pane, "KPEnter")
    pi.tmux("send-keys", "-t", pi.pane, "F5")  # the round ends: every key before it has been taken
    ended = wait_for(lambda: [i for i, e in enumerate(pi.log()) if i >= since and e["key"] == "F5"], 10, "the round's end")
    log = pi.log()[since : ended[0]]
    assert [e["key"] for e in log].count("KPEnter") == 1
    times = [e["t"] for e in log if e["key"] in OURS]
    firsts += [t - started for t in times][:1]
    gaps += [times[1] - times[0]] if len(times) == 2 else []
    return {
        "a_keys": [e["key"] for e in log if e["q"] == a],
        "b_keys": [e["key"] for e in log if e["q"] == b],
        # keys of `answer` that B received although tmux already showed B when they were sent
        "b_seen": [e["key"] for e in log if e["q"] == b and e["key"] in OURS and not e["blind"]],
        "rc": cli.returncode,
        "out": out,
        "err": err,
        "results": pi.results(),
        "a": a,
        "b": b,
        "mode": mode,
        "delay": delay,
    }


@pytest.mark.parametrize("layout", ["question", "list"])
def test_no_key_meant_for_a_reaches_the_look_alike_next_question(tmp_path: Path, tmux_server: Tmux, layout: str) -> None:
    """(``list``: a tool without a key map, its dialog read as a list: the same binding.)"""
    pi = start_stand_in(tmp_path, tmux_server, layout)
    rng = random.Random(int(os.environ.get("PI_NOTIFIER_RACE_SEED", "29")))
    firsts: list[float] = []
    gaps: list[float] = []
    rounds = [one_round(pi, n, rng, "before" if n % 2 else "after", firsts, gaps) for n in range(1, 41)]
    blind: list[dict[str, Any]] = []
    for r in rounds:
        ours_in_a = [k for k in r["a_keys"] if k in OURS]
        ours_in_b = [k for k in r["b_keys"] if k in OURS]
        said = r["err"].strip()
        # No key is typed for A once B is on screen: a key of `answer` reaches B only if it was
        # typed before tmux had B drawn (the user's key already read by pi, B not yet drawn:
        # the gap no terminal tool can close), and then `answer` says a key may have gone there.
        assert not r["b_seen"], r
        if ours_in_b:
            blind.append(r)
            assert "may have gone" in said, r
        if r["rc"] == 0:
            # "answered" only when pi recorded A as `answer` chose, by `answer`'s own keys
            assert r["results"][r["a"]] == SAID[layout] and ours_in_a[:1] == ["Down"], r
            assert r["out"].strip() == f"answered: {SAID[layout]}", r
            # and B, answered by the user meanwhile, is named as something to check
            late = r["b"] in r["results"] and r["b_keys"]
            assert not said or (late and said.startswith("pi-notifier: note:") and "may have gone" in said), r
            assert ours_in_a == ["Down", "Enter"] or ours_in_b == ["Enter"], r
            continue
        assert r["rc"] == 1 and said.count("\n") == 0 and "Traceback" not in said, r
        mine = ours_in_a + ours_in_b  # (every key `answer` typed: a key typed blind reached B)
        if not mine:
            assert "nothing was typed" in said or "not waiting" in said, r
        else:  # it says exactly what it typed
            assert f"typed for this question: {', '.join(mine)}" in said or (
                f"typed for this question before: {', '.join(mine)}" in said
            ) or f"(typed: {', '.join(mine)})" in said, r
    answered = [r for r in rounds if r["rc"] == 0]
    raced = [r for r in rounds if "KPEnter" in r["a_keys"] and any(k in OURS for k in r["a_keys"])]
    # the race was run: `answer` won some rounds, and in others the user answered A while it typed
    assert answered and raced, [(r["rc"], r["a_keys"], r["b_keys"]) for r in rounds]
    print(f"\n{len(rounds)} rounds: {len(answered)} answered, {len(raced)} raced, {len(blind)} with a key typed blind into B")


def test_answer_takes_the_token_of_what_was_shown(tmp_path: Path, tmux_server: Tmux) -> None:
    """`status --json` gives each question a token; `answer --token` answers that question only,
    and once pi asks the look-alike B instead, the same token is refused, naming what waits."""
    pi = start_stand_in(tmp_path, tmux_server)
    d = ["--sessions-dir", str(pi.sessions)]
    env = no_x()

    def status() -> list[dict[str, Any]]:
        got = subprocess.run([sys.executable, "-m", "notifier", "status", "--json", *d], capture_output=True, text=True, env=env, cwd=ROOT)
        return [q for s in json.loads(got.stdout)["sessions"] for q in s["pending"]]

    def answer(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run([sys.executable, "-m", "notifier", "answer", *args, *d], capture_output=True, text=True, env=env, cwd=ROOT)

    wait_for(lambda: pi.waiting("call_A1"), 20, "question A")
    (a,) = wait_for(status, 20, "A in status")
    assert a["tool_call_id"] == "call_A1" and len(a["token"]) == 16
    bad = answer("--token", "0" * 16, "2")
    assert bad.returncode == 1 and "nothing was typed" in bad.stderr and "call_A1" in bad.stderr
    done = answer("--token", a["token"], "2")
    assert done.returncode == 0 and done.stdout == "answered: User selected: 2. Delete\n", done.stderr
    assert pi.results()["call_A1"] == "User selected: 2. Delete"
    wait_for(lambda: pi.waiting("call_B1") and "Delete the database?" in pi.tmux.capture(pi.pane), 20, "question B")
    (b,) = wait_for(status, 20, "B in status")
    assert b["token"] != a["token"]
    keys = len(pi.log())
    again = answer("--token", a["token"], "2")  # what the caller was shown is no longer what waits
    assert again.returncode == 1 and "Delete the database?" in again.stderr and "nothing was typed" in again.stderr
    assert "call_B1" not in pi.results() and len(pi.log()) == keys
    # without --call or --token: the question waiting now, named
    named = answer("1")
    assert named.returncode == 0 and named.stdout.splitlines() == [
        f"question: Delete the database? (call call_B1, token {b['token']})",
        "answered: User selected: 1. Keep",
    ]


def test_with_the_real_pi_the_next_question_never_records_a_choice_of_answer(tmp_path: Path, tmux_server: Tmux) -> None:
    """The same race with the real pi 1.6.0 and its `question` tool: A "Delete the branch?", then at
    once (the scripted model asks it as soon as A's result comes) B "Delete the database?", the same
    rows. The user's Enter on A comes at random, before `answer`'s first key or just after its Down
    was drawn. B never records "Delete" (`answer`'s choice, which only its Down could reach) unless
    `answer` said a key may have gone there, and "answered" means pi recorded A as chosen."""
    from .pi_harness import need, scripted_model, start_pi
    from .test_goto_answer import pending

    v = need("1.6.0")
    rows = [{"label": "Keep"}, {"label": "Delete"}]
    a_args, b_args = {"question": "Delete the branch?", "options": rows}, {"question": "Delete the database?", "options": rows}
    rng = random.Random(int(os.environ.get("PI_NOTIFIER_RACE_SEED", "29")))
    env = no_x()
    env.pop("PYTHONUNBUFFERED", None)
    rounds: list[dict[str, Any]] = []
    seen_b: set[str] = set()
    moves: list[float] = []
    with scripted_model("question", a_args, then=b_args) as port:
        pi = start_pi(tmp_path, v, port, v.example("question.ts"), server=tmux_server)
        d = ["--sessions-dir", str(pi.sessions)]
        for n in range(1, 17):
            pi.prompt(f"round {n}")
            wait_for(lambda: _asks(pi.screen(), "Delete the branch?"), 30, "question A")
            (a,) = wait_for(lambda: pending(pi), 20, "A in status")
            started = time.monotonic()
            # (before: around when `answer`'s Down was drawn in the rounds before)
            delay = rng.uniform(0.3, 1.05) * (sorted(moves)[len(moves) // 2] if moves else 0.3)
            cli = subprocess.Popen(
                [sys.executable, "-m", "notifier", "answer", "--call", a["tool_call_id"], "2", "--timeout", "5", *d],
                stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env, cwd=ROOT,
            )  # fmt: skip
            pressed, moved_at = False, None
            while cli.poll() is None:
                if not pressed and n % 2 and moved_at is None and "> 2. Delete" in pi.screen():
                    moved_at = time.monotonic()  # `answer`'s Down drawn in A: press just after it
                    moves.append(moved_at - started)
                    delay = moved_at - started + rng.uniform(0.0, 0.008)
                if not pressed and (n % 2 == 0 or moved_at is not None) and time.monotonic() - started >= delay:
                    pi.keys("Enter")
                    pressed = True
                time.sleep(0.0005)
            out, err = cli.communicate()
            if not pressed:
                pi.keys("Enter")  # (the user's Enter after `answer` was done: to whatever pi shows)

            def settled(a_id: str = a["tool_call_id"]) -> list[str] | None:
                """Both questions' results, once B was answered or shows its dialog (then dismissed)."""
                found = {m["toolCallId"]: m["content"][0]["text"] for m in _results(pi)}
                b_ids = [c for c in [*found, *(q["tool_call_id"] for q in pending(pi))] if c.startswith("call_n") and c not in seen_b]
                if a_id not in found or not b_ids:
                    return None
                if b_ids[-1] not in found:
                    pi.keys("Escape")
                    return None
                seen_b.add(b_ids[-1])
                return [found[a_id], found[b_ids[-1]]]

            got = wait_for(settled, 30, "both questions' ends")
            wait_for(lambda: "Thanks" in pi.screen(), 20, "pi's reply")
            rounds.append({"rc": cli.returncode, "out": out, "err": err, "a": got[0], "b": got[1], "n": n})
    for r in rounds:
        said = r["err"].strip()
        if r["b"] == "User selected: 2. Delete":  # only `answer`'s Down could have put B's cursor there
            assert "may have gone" in said, r
        if r["rc"] == 0:
            assert r["a"] == "User selected: 2. Delete" and r["out"].strip() == "answered: User selected: 2. Delete", r
        else:
            assert r["rc"] == 1 and said.count("\n") == 0 and "Traceback" not in said, r
    print(f"\nreal pi: {len(rounds)} rounds, {sum(r['rc'] == 0 for r in rounds)} answered,",
          f"{sum(r['a'] == 'User selected: 1. Keep' for r in rounds)} answered first by the user")  # fmt: skip


def _asks(screen: str, text: str) -> bool:
    from notifier.pi.screens import find_dialog

    dialog = find_dialog(screen)
    return dialog is not None and f" {text}" in dialog.raw


def _results(pi: Any) -> list[dict[str, Any]]:
    entries = [json.loads(x) for x in pi.session_text().splitlines() if x.strip()]
    return [e["message"] for e in entries if (e.get("message") or {}).get("role") == "toolResult"]
