"""`answer` drives a pi-ask form (`ask_user_question`) to its end in the real pi 1.6.0: the rows
as pi-ask draws them (recommended first), questions shown only when their `showWhen` holds,
optional ones skipped, several picks, a typed answer, then the Review tab's final Enter; what
pi-ask recorded is the answer given. pi-ask itself is not served by the npm registry here:
`extensions/ask_stand_in.ts` draws its screen and takes its keys (see there)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from ..conftest import wait_for
from .pi_harness import PiSession, Tmux, need, scripted_model, start_pi
from .test_goto_answer import pending, run

STAND_IN = Path(__file__).with_name("extensions") / "ask_stand_in.ts"


def opts(*labels: str, recommended: str | None = None) -> list[dict[str, Any]]:
    return [{"value": x.lower(), "label": x, **({"recommended": True} if x == recommended else {})} for x in labels]


ONE = {"questions": [{"id": "db", "header": "DB", "question": "Which database?", "options": opts("Postgres", "SQLite", "DuckDB", recommended="DuckDB")}]}
FORM = {
    "questions": [
        {"id": "db", "header": "DB", "question": "Which database?", "options": opts("Postgres", "SQLite")},
        {"id": "pool", "header": "Pool", "question": "Pool size?", "options": opts("Small", "Large"),
         "showWhen": {"questionId": "db", "equals": "postgres"}},
        {"id": "extras", "header": "Extras", "question": "Anything else?", "options": opts("Docs", "Tests", "CI"),
         "multiSelect": True, "required": False},
        {"id": "when", "header": "When", "question": "By when?", "options": opts("Today", "Later"), "required": False},
    ]
}


def details(pi: PiSession, n: int) -> dict[str, Any]:
    def found() -> list[dict[str, Any]]:
        entries = [json.loads(x) for x in pi.session_text().splitlines() if x.strip()]
        return [e["message"] for e in entries if (e.get("message") or {}).get("role") == "toolResult"]

    wait_for(lambda: len(found()) >= n, 20, "pi-ask's tool result")
    said: dict[str, Any] = found()[n - 1]["details"]
    return said


def test_a_recommended_row_comes_first_and_a_text_is_kept(tmp_path: Path, tmux_server: Tmux) -> None:
    v = need("1.6.0")
    with scripted_model("ask_user_question", ONE) as port:
        pi = start_pi(tmp_path, v, port, STAND_IN, server=tmux_server)
        d = ["--sessions-dir", str(pi.sessions)]
        pi.ask("Space select/toggle")
        wait_for(lambda: pending(pi), 20, "the pending question")
        assert pending(pi)[0]["options"] == ["DuckDB", "Postgres", "SQLite"]
        done = run("answer", "2", *d)
        assert done.returncode == 0, done.stderr
        assert details(pi, 1)["answers"] == [{"questionId": "db", "selectedValues": ["postgres"]}]
        wait_for(lambda: not pending(pi) and "Thanks" in pi.session_text(), 20, "pi's reply")

        pi.ask("Space select/toggle")
        wait_for(lambda: pending(pi), 20, "the question again")
        typed = run("answer", "--text=CockroachDB; maybe", *d)
        assert typed.returncode == 0, typed.stderr
        assert details(pi, 2)["answers"] == [{"questionId": "db", "selectedValues": [], "customText": "CockroachDB; maybe"}]


def test_a_form_is_driven_to_its_end(tmp_path: Path, tmux_server: Tmux) -> None:
    v = need("1.6.0")
    with scripted_model("ask_user_question", FORM) as port:
        pi = start_pi(tmp_path, v, port, STAND_IN, server=tmux_server)
        d = ["--sessions-dir", str(pi.sessions)]
        pi.ask("Space select/toggle")
        wait_for(lambda: pending(pi), 20, "the pending form")
        bad = run("answer", "Postgres", "Large", *d)  # the third question is asked too
        assert bad.returncode == 2 and "too few" in bad.stderr
        done = run("answer", "Postgres", "Large", "1,3", "-", *d)  # "By when?" skipped
        assert done.returncode == 0, done.stderr
        assert details(pi, 1) == {
            "version": 1,
            "status": "submitted",
            "answers": [
                {"questionId": "db", "selectedValues": ["postgres"]},
                {"questionId": "pool", "selectedValues": ["large"]},
                {"questionId": "extras", "selectedValues": ["docs", "ci"]},
            ],
        }
        wait_for(lambda: not pending(pi) and "Thanks" in pi.session_text(), 20, "pi's reply")

        pi.ask("Space select/toggle")
        wait_for(lambda: pending(pi), 20, "the form again")
        before = pi.screen()
        # pi-ask takes Enter on a multi-choice row as that row: skipping "Anything else?" is refused
        refused = run("answer", "SQLite", "-", "Later", *d)
        assert refused.returncode == 1 and "cannot skip" in refused.stderr and pi.screen() == before
        done = run("answer", "SQLite", "Tests", "Later", *d)  # no pool question for SQLite
        assert done.returncode == 0, done.stderr
        assert details(pi, 2)["answers"] == [
            {"questionId": "db", "selectedValues": ["sqlite"]},
            {"questionId": "extras", "selectedValues": ["tests"]},
            {"questionId": "when", "selectedValues": ["later"]},
        ]
