"""``pi-notifier unmute WHAT|all``: a muted project notifies again (the work is
:mod:`notifier.cli.snooze`)."""

from __future__ import annotations

import argparse

from notifier.cli.snooze import carry_out
from notifier.config.load import Config


def cmd_unmute(args: argparse.Namespace, config: Config) -> int:
    return carry_out(config, args.what, mute=False)
