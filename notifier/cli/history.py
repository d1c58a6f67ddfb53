"""``pi-notifier history``: the questions asked, how long each waited, how it ended (``--json``:
docs/contract.md §4)."""

from __future__ import annotations

import argparse
import math
import time
from datetime import datetime

from notifier.cli.parser import out
from notifier.config import Config, ConfigError
from notifier.core.codec import dumps, history_obj
from notifier.core.text import clean, duration, project_name

MAX_SINCE_DAYS = 36500
HEAD = "ASKED             PROJECT                    WAITED  OUTCOME      QUESTION"


def _days(given: str) -> float:
    """``--since DAYS``: a number of days (a "d" after it is fine: "7d"), 0 to MAX_SINCE_DAYS."""
    text = given.strip().lower().removesuffix("d")
    try:
        days = float(text)
    except ValueError:
        days = math.nan
    if not (math.isfinite(days) and 0 <= days <= MAX_SINCE_DAYS):
        raise ConfigError(f"command line: '--since' takes a number of days from 0 to {MAX_SINCE_DAYS}, such as 7")
    return days


def cmd_history(args: argparse.Namespace, config: Config) -> int:
    from notifier.app import open_store

    days = None if args.since is None else _days(args.since)
    store = open_store()
    try:
        data = history_obj(store.history(None if days is None else time.time() - days * 86400))
        recorded = len(store.history(None)) if days is not None and not data["questions"] else 0
    finally:
        store.close()
    if args.json:
        out(dumps(data), "\n")
        return 0
    if not data["questions"]:
        if recorded:  # (--since 0 with questions recorded said "No questions recorded yet.")
            out(f"No questions in the last {days:g} days ({recorded} recorded in all; a larger --since shows them).\n")
        else:
            out("No questions recorded yet" + (f" in the last {days:g} days" if days else "") + ".\n")
        return 0
    lines = [HEAD]
    for q in data["questions"]:
        project = project_name(q["session"]["name"], q["session"]["cwd"], q["session"]["host"])  # ("devbox · …")
        waited = duration(q["waited_s"]) if q["waited_s"] is not None else "-"
        outcome = clean(q["outcome"], 11) or "pending"
        asked = datetime.fromisoformat(q["asked_at"].replace("Z", "+00:00")).astimezone()  # (codec.iso's, local)
        lines.append(f"{asked:%Y-%m-%d %H:%M}  {clean(project, 24):<24}  {waited:>7}  {outcome:<11}  "
                     f"{clean(q['question']['text'], 60)}")
    count, median, longest = (data["summary"][k] for k in ("count", "median_wait_s", "longest_wait_s"))
    lines.append(f"{count} question{'s' if count != 1 else ''}")
    if median is not None:
        lines[-1] += f" · median wait {duration(median)} · longest {duration(longest)}"
    out("\n".join(lines), "\n")
    return 0
