"""``pi-notifier history``: the questions asked, how long each waited, how it ended (``--json``:
docs/contract.md §4)."""

from __future__ import annotations

import argparse
import math
import sys
import time
from typing import Any

from notifier.core.text import clean, duration, project_name
from notifier.sinks.jsonout import dumps
from notifier.system.config import Config, ConfigError


def _text(value: Any) -> str | None:
    return value if isinstance(value, str) else None


def _number(value: Any) -> float | None:
    """A stored number that JSON can say (rows of older versions may hold NaN, inf or junk)."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    try:
        number = float(value)
    except OverflowError:
        return None
    return number if math.isfinite(number) else None


def history_obj(rows: list[dict[str, Any]]) -> dict[str, Any]:
    """`history --json` (docs/contract.md §4). Any stored row renders: times out of range are clamped,
    numbers that are not finite are null, names that are not UTF-8 come back as they were."""
    from notifier.sinks.jsonout import iso

    questions: list[dict[str, Any]] = []
    for r in rows:
        options = [o for o in (_text(r.get("options")) or "").split("\x1f") if o]
        waited = _number(r.get("waited_s"))
        waited = waited if waited is not None and 0 <= waited < 1e10 else None
        count = r.get("count")
        questions.append(
            {
                "session": {
                    "id": _text(r.get("session_id")),
                    "file": _text(r.get("file")),
                    "cwd": _text(r.get("cwd")),
                    "name": _text(r.get("name")),
                },
                "question": {
                    "tool_call_id": _text(r.get("call_id")),
                    "tool": _text(r.get("tool")),
                    "text": _text(r.get("text")),
                    "header": _text(r.get("header")),
                    "options": options,
                    "count": count if isinstance(count, int) and not isinstance(count, bool) else None,
                },
                "asked_at": iso(r.get("asked_at")),
                "resolved_at": iso(r["resolved_at"]) if r.get("resolved_at") is not None else None,
                "outcome": _text(r.get("outcome")),
                "waited_s": round(waited, 3) if waited is not None else None,
            }
        )
    waits = sorted(q["waited_s"] for q in questions if q["waited_s"] is not None)
    median = None
    if waits:
        mid = len(waits) // 2
        median = waits[mid] if len(waits) % 2 else round((waits[mid - 1] + waits[mid]) / 2, 3)
    return {
        "questions": questions,
        "summary": {
            "count": len(questions),
            "median_wait_s": median,
            "longest_wait_s": waits[-1] if waits else None,
        },
    }


def _local_minute(stamp: str) -> str:
    """An ``iso`` time (always 2000–2200) as local "YYYY-MM-DD HH:MM"."""
    from datetime import datetime

    try:
        return datetime.fromisoformat(stamp.replace("Z", "+00:00")).astimezone().strftime("%Y-%m-%d %H:%M")
    except (ValueError, OverflowError, OSError):
        return stamp[:16].replace("T", " ")


MAX_SINCE_DAYS = 36500


def cmd_history(args: argparse.Namespace, config: Config) -> int:
    from notifier.app.runtime import open_store

    days = args.since
    if days is not None and not (math.isfinite(days) and 0 <= days <= MAX_SINCE_DAYS):
        raise ConfigError(f"command line: '--since' takes a number of days from 0 to {MAX_SINCE_DAYS}")
    store = open_store()
    try:
        since = time.time() - days * 86400 if days is not None else None
        data = history_obj(store.history(since))
    finally:
        store.close()
    if args.json:
        sys.stdout.write(dumps(data) + "\n")
        return 0
    rows = data["questions"]
    if not rows:
        sys.stdout.write("No questions recorded yet" + (f" in the last {days:g} days" if days else "") + ".\n")
        return 0
    lines = []
    for q in rows:
        project = project_name(q["session"]["name"], q["session"]["cwd"])
        waited = duration(q["waited_s"]) if q["waited_s"] is not None else "-"
        outcome = clean(q["outcome"], 11) or "pending"
        lines.append(
            f"{_local_minute(q['asked_at'])}  {clean(project, 24):<24}  {waited:>7}  {outcome:<11}  "
            f"{clean(q['question']['text'], 60)}"
        )
    summary = data["summary"]
    tail = f"{summary['count']} question{'s' if summary['count'] != 1 else ''}"
    if summary["median_wait_s"] is not None:
        tail += f" · median wait {duration(summary['median_wait_s'])} · longest {duration(summary['longest_wait_s'])}"
    sys.stdout.write(
        "\n".join(
            ["ASKED             PROJECT                    WAITED  OUTCOME      QUESTION", *lines, tail]
        )
        + "\n"
    )
    return 0
