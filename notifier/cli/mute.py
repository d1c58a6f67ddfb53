"""``pi-notifier mute WHAT``: no notification from a project (or a session's project) until
``unmute`` (the work is :mod:`notifier.cli.snooze`)."""

from __future__ import annotations

import argparse

from notifier.cli.snooze import carry_out
from notifier.config.load import Config


def cmd_mute(args: argparse.Namespace, config: Config) -> int:
    return carry_out(config, args.what, mute=True)
