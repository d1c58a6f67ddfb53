"""``pi-notifier history``: the questions asked, how long each waited, how it ended (``--json``:
docs/contract.md §4)."""

from __future__ import annotations

import argparse
import math
import sys
import time
from datetime import datetime

from notifier.config import Config, ConfigError
from notifier.core.codec import dumps, history_obj, parse_iso
from notifier.core.text import clean, duration, project_name


def _local_minute(stamp: str) -> str:
    """An ``iso`` time (always 2000–2200) as local "YYYY-MM-DD HH:MM"."""
    seconds = parse_iso(stamp)
    if seconds is None:
        return stamp[:16].replace("T", " ")
    return datetime.fromtimestamp(seconds).strftime("%Y-%m-%d %H:%M")


MAX_SINCE_DAYS = 36500


def _days(given: str | None) -> float | None:
    """``--since DAYS``: a number of days (a "d" after it is fine: "7d"), 0 to MAX_SINCE_DAYS."""
    if given is None:
        return None
    text = given.strip().lower()
    try:
        days = float(text[:-1] if text.endswith("d") else text)
    except ValueError:
        days = math.nan
    if not (math.isfinite(days) and 0 <= days <= MAX_SINCE_DAYS):
        raise ConfigError(f"command line: '--since' takes a number of days from 0 to {MAX_SINCE_DAYS}, such as 7")
    return days


def cmd_history(args: argparse.Namespace, config: Config) -> int:
    from notifier.app import open_store

    days = _days(args.since)
    store = open_store()
    try:
        since = time.time() - days * 86400 if days is not None else None
        data = history_obj(store.history(since))
        recorded = len(store.history(None)) if since is not None and not data["questions"] else 0
    finally:
        store.close()
    if args.json:
        sys.stdout.write(dumps(data) + "\n")
        return 0
    rows = data["questions"]
    if not rows:
        if recorded:  # (--since 0 with questions recorded said "No questions recorded yet.")
            sys.stdout.write(
                f"No questions in the last {days:g} days ({recorded} recorded in all; a larger --since shows them).\n"
            )
        else:
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
