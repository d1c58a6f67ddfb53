"""``pi-notifier config``: the effective configuration and where each value came from."""

from __future__ import annotations

import argparse
import sys

from notifier.config.load import Config, render


def cmd_config(args: argparse.Namespace, config: Config) -> int:
    sys.stdout.write(render(config) + "\n")
    return 0
